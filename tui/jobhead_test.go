package tui

import (
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
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
