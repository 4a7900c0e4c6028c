package tui

import (
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// TestJobHeadingKeepsState: a job of a long-named filter keeps its state in the jobs pane's
// heading, the name giving way; the name of a checkpoint's layer (s4d_model:layers.0.layer)
// pushed it off a pane 26 cells wide, so a finished job and one interrupted by a crash read
// alike.
func TestJobHeadingKeepsState(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	f, err := ringDiagonal(4, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "s4d_model:layers.0.layer", f)
	keys(t, m, ":")
	typeText(t, m, "distill order=2")
	keys(t, m, "enter")
	if len(m.jobs) != 1 {
		t.Fatalf("%d jobs, status %q", len(m.jobs), m.status.text)
	}
	var head string
	for _, l := range strings.Split(screen(m), "\n") {
		if i := strings.Index(l, "#1 "); i >= 0 {
			head = l[i:]
			break
		}
	}
	if !strings.Contains(head, " done") || !strings.Contains(head, "#1 s4d") {
		t.Errorf("the job's heading lost its state or its name: %q\n%s", head, screen(m))
	}
}

// TestJobHeadingNamesModel: in the normal layout's jobs pane (26 cells at 120×40) a job's
// heading keeps its model and order, a long name giving way to them: cut from its end, the
// headings of three jobs of hippo-legs64 all read "#n hippo-legs64→rt… done".
func TestJobHeadingNamesModel(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	f, err := ringDiagonal(4, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "hippo-legs64", f)
	m.jobs = []*job{
		{num: 1, spec: train.Spec{Model: "rtf", Order: 16}, sourceID: m.sel, status: sessions.JobDone},
		{num: 2, spec: train.Spec{Model: "rtf", Order: 32}, orders: []int{4, 8, 16, 32}, sourceID: m.sel, status: sessions.JobDone},
		{num: 3, spec: train.Spec{Model: "rotation", Order: 8}, sourceID: m.sel, status: sessions.JobRunning, last: JobProgress{Step: 1, Steps: 10}, cancel: func() {}},
	}
	m.jobsPane.seen = len(m.jobs)
	send(t, m, statusMsg{text: "three jobs"})
	scr := screen(m)
	for _, want := range []string{"#1 hippo-leg…→rtf16 done", "#2 hippo-l…→rtf4…32 done", "#3 hi…→rotation8 running"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the jobs pane lacks %q:\n%s", want, scr)
		}
	}
	// Where even a few cells of the name leave no room, the heading is cut from its end.
	if got := jobHeading(m.jobs[2], "hippo-legs64", 12); got != "#3 hippo-le…" {
		t.Errorf("in 12 cells: %q", got)
	}
	if got := jobHeading(m.jobs[0], "ring", 19); got != "#1 ring→rtf16" {
		t.Errorf("a short name: %q", got)
	}
}

// TestInterruptedJobNotAtStep: a job the session recorded as running, which no workbench
// runs any more, says it was interrupted and is not resumed; it showed "at step 0/500", the
// step of the last save (its start), as if it stood there.
func TestInterruptedJobNotAtStep(t *testing.T) {
	m := newTestModel(t, 140, 40, nil)
	s := sessions.New()
	if _, err := s.AddJob(sessions.Job{Kind: jobKind, Spec: []byte(`{"model":"rtf","order":4,"steps":500}`), Report: []byte(`{"step":0,"steps":500}`), Status: sessions.JobRunning}); err != nil {
		t.Fatal(err)
	}
	m.install(s, "crashed.ssmlab")
	m.setFocus(paneJobs)
	send(t, m, statusMsg{text: "opened"}) // laid out again with the jobs pane focused
	scr := screen(m)
	if !strings.Contains(scr, "interrupted") || strings.Contains(scr, "at step 0/500") || !strings.Contains(scr, "not resumed") {
		t.Errorf("the interrupted job:\n%s", scr)
	}
}

// TestJobProgressSaysOrder: a running job fitted by variable projection says which order and
// channels its loss is of (each channel fits its orders in turn); it said only "loss · step",
// and the loss jumped up whenever a channel fitted its first order.
func TestJobProgressSaysOrder(t *testing.T) {
	m := newTestModel(t, 58, 40, nil) // the focused pane has the window: the lines fit
	addPreset(t, m, "ring")
	running := &job{num: 1, spec: train.Spec{Model: "rtf", Order: 16}, sourceID: m.sel, status: sessions.JobRunning,
		last: JobProgress{Step: 7, Steps: 12, Loss: 3.2e-4, Order: 8, TopOrder: 16, Fitted: 1, Channels: 4}, cancel: func() {}}
	adam := &job{num: 2, spec: train.Spec{Model: "rtf", Order: 4, Init: train.InitZeros, Steps: 500}, sourceID: m.sel, status: sessions.JobRunning,
		last: JobProgress{Step: 200, Steps: 500, Loss: 3.2e-4}, cancel: func() {}}
	m.jobs = []*job{running, adam}
	m.jobsPane.seen = len(m.jobs)
	m.setFocus(paneJobs)
	send(t, m, statusMsg{text: "two jobs"})
	scr := screen(m)
	if !strings.Contains(scr, "loss 3.2e-04 · order 8/16, 1/4 channels · step 7/12") || !strings.Contains(scr, "loss 3.2e-04 · step 200/500") {
		t.Errorf("the jobs' progress:\n%s", scr)
	}
}

// TestEmptyJobsNamesSelection: the empty jobs pane says what D distils, named as the
// selection is, in full in the normal layout's pane (22 and 26 cells); it said "the selected
// filter" of a target's kernels too, cut to "no jobs · D distills …".
func TestEmptyJobsNamesSelection(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := newTestModel(t, size[0], size[1], nil)
		for _, tc := range []struct {
			add  func()
			want string
		}{
			{func() { addKernels(t, m, "k2", [][]float64{{1, 0.5, 0.25, 0.125}, {0, 1, 0, 0.5}}) }, "kernels"},
			{func() { addKernels(t, m, "k1", [][]float64{{1, 0.5, 0.25, 0.125}}) }, "kernel"},
			{func() { addPreset(t, m, "bank") }, "bank"},
			{func() { addPreset(t, m, "ring") }, "filter"},
		} {
			tc.add()
			var line string
			for _, l := range strings.Split(screen(m), "\n") {
				if i := strings.Index(l, "D distills"); i >= 0 {
					line, _, _ = strings.Cut(l[i:], "│")
					line = strings.TrimSpace(line)
				}
			}
			if line != "D distills the "+tc.want && line != "D distills the selected "+tc.want {
				t.Errorf("%dx%d, %s selected: the jobs pane says %q\n%s", size[0], size[1], tc.want, line, screen(m))
			}
		}
	}
}

// TestLadderProgressFitsNormalLayout: a running ladder's order n/TOP and its error fit the
// jobs pane of the normal layout (22 cells at 80x24, 26 at 120x40); the line was cut to
// "loss 3.2e-04 · orde…", and said the order only when the pane was zoomed.
func TestLadderProgressFitsNormalLayout(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := newTestModel(t, size[0], size[1], nil)
		addPreset(t, m, "ring")
		m.jobs = []*job{{num: 1, spec: train.Spec{Model: "rtf", Order: 16}, orders: []int{4, 8, 16}, sourceID: m.sel, status: sessions.JobRunning,
			last: JobProgress{Step: 7, Steps: 12, Loss: 3.2e-4, RelErr: 1.8e-6, Order: 8, TopOrder: 16, Fitted: 1, Channels: 4}, cancel: func() {}}}
		m.jobsPane.seen = len(m.jobs)
		send(t, m, statusMsg{text: "a ladder"})
		if scr := screen(m); !strings.Contains(scr, "order 8/16") || !strings.Contains(scr, "err 1.8e-06") {
			t.Errorf("%dx%d: the ladder's progress lacks its order or error:\n%s", size[0], size[1], scr)
		}
	}
}
