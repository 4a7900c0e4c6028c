package tui

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// TestCancelAsks: x on a running job asks first; n (or esc) lets it run, y cancels it
// (issue 21 item 7). A job that is not running is not asked about.
func TestCancelAsks(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "ring")
	cancelled := 0
	j := &job{num: 1, spec: train.Spec{Model: "rtf", Order: 4, Steps: 500}, sourceID: m.sel, status: sessions.JobRunning,
		last: JobProgress{Step: 200, Steps: 500}, cancel: func() { cancelled++ }}
	m.jobs = []*job{j}
	m.setFocus(paneJobs)
	for _, no := range []string{"n", "esc"} {
		keys(t, m, "x")
		c, ok := dialogOf[*confirm](m)
		if !ok || !strings.Contains(c.body, "cancel job #1 (ring → rtf of order 4, at step 200 of 500)") {
			t.Fatalf("x on a running job opened %T %+v", m.dialog, c)
		}
		if !strings.Contains(screen(m), "cancel job #1") {
			t.Errorf("the question is not on screen:\n%s", screen(m))
		}
		keys(t, m, no)
		if m.dialog != nil || cancelled != 0 || j.state() != sessions.JobRunning {
			t.Fatalf("%s: dialog %T, cancelled %d times", no, m.dialog, cancelled)
		}
	}
	keys(t, m, "x", "y")
	if cancelled != 1 || !strings.Contains(m.status.text, "cancelling job #1") {
		t.Errorf("y: cancelled %d times, status %q", cancelled, m.status.text)
	}
	j.status, j.cancel = sessions.JobCancelled, nil
	keys(t, m, "x")
	if m.dialog != nil || !strings.Contains(m.status.text, "job #1 is not running") {
		t.Errorf("x on a cancelled job: dialog %T, status %q", m.dialog, m.status.text)
	}
}

// TestKernelLength: the status line gives a kernel's length, not an order.
func TestKernelLength(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "kernel")
	if want := "added kernel (kernel, length 64)"; m.status.text != want {
		t.Errorf("status %q, want %q", m.status.text, want)
	}
	addPreset(t, m, "ring")
	if want := "added ring (diagonal, order 8)"; m.status.text != want {
		t.Errorf("status %q, want %q", m.status.text, want)
	}
}

// TestQuitAsksWithRunningJob: q with nothing unsaved but a job running asks before quitting,
// since quitting cancels the job and loses its work (it quit at once, cancelling a ladder at
// 25% with no word, where x on the job asks). esc stays; y quits, cancelling it; a job that
// finished meanwhile, its result unsaved, turns y into the question about unsaved work.
func TestQuitAsksWithRunningJob(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	cancelled := 0
	j := &job{num: 1, spec: train.Spec{Model: "rtf", Order: 4, Steps: 500}, status: sessions.JobRunning,
		last: JobProgress{Step: 200, Steps: 500}, cancel: func() { cancelled++ }}
	m.jobs = []*job{j}
	if m.sess.Dirty() {
		t.Fatal("the session has unsaved work to begin with")
	}
	keys(t, m, "q")
	c, ok := dialogOf[*confirm](m)
	if !ok || !strings.Contains(c.body, "1 running job(s) will be cancelled") || m.quitting {
		t.Fatalf("q with a running job: dialog %T %+v, quitting %v", m.dialog, c, m.quitting)
	}
	keys(t, m, "esc")
	if m.quitting || m.dialog != nil || cancelled != 0 {
		t.Fatalf("esc: quitting %v, dialog %T, cancelled %d times", m.quitting, m.dialog, cancelled)
	}

	keys(t, m, "q")
	p, _ := pairZPK(0.9)
	addFilter(t, m, "fit", p) // as a job's result joins the list
	keys(t, m, "y")
	if c, ok := dialogOf[*confirm](m); !ok || !strings.Contains(c.body, "1 unsaved: fit") || m.quitting {
		t.Fatalf("y after a result arrived: dialog %T, quitting %v", m.dialog, m.quitting)
	}
	keys(t, m, "d", "y")
	if !m.quitting || cancelled != 1 {
		t.Errorf("d, y: quitting %v, cancelled %d times", m.quitting, cancelled)
	}

	m = newTestModel(t, 120, 40, nil)
	m.jobs = []*job{{num: 1, status: sessions.JobRunning, cancel: func() { cancelled++ }}}
	keys(t, m, "q", "y")
	if !m.quitting || cancelled != 2 {
		t.Errorf("q, y: quitting %v, cancelled %d times", m.quitting, cancelled)
	}
	// a second ctrl+c always quits
	m = newTestModel(t, 120, 40, nil)
	m.jobs = []*job{{num: 1, status: sessions.JobRunning, cancel: func() { cancelled++ }}}
	keys(t, m, "ctrl+c")
	if _, ok := dialogOf[*confirm](m); !ok || m.quitting {
		t.Fatalf("ctrl+c with a running job: dialog %T, quitting %v", m.dialog, m.quitting)
	}
	keys(t, m, "ctrl+c")
	if !m.quitting || cancelled != 3 {
		t.Errorf("a second ctrl+c: quitting %v, cancelled %d times", m.quitting, cancelled)
	}
}

// TestQuestionsNameTheirKeys: each question (confirm) names every key it takes, once, in
// its key line (the first line of its last paragraph), esc too, and its status-bar hint names
// none the key line does not. The quit question with unsaved work said "… · esc stays" while
// the hint read "answer s, d, n", and took y and c, which nothing named; delete took enter
// and q, and the job's cancel and the inaccurate conversion q, named by none (a question
// takes only the keys it names: question).
func TestQuestionsNameTheirKeys(t *testing.T) {
	// the keys a part of the key line names, before its verb: "n or esc stays", "s saves"
	keyList := regexp.MustCompile(`^((?:(?:[a-z]|esc|ctrl\+c)(?:, | or ))*(?:[a-z]|esc|ctrl\+c)) |^`)
	running := func(m *Model) *job {
		j := &job{num: 1, spec: train.Spec{Model: "rtf", Order: 4, Steps: 500}, sourceID: m.sel, status: sessions.JobRunning,
			last: JobProgress{Step: 200, Steps: 500}, cancel: func() {}}
		m.jobs = append(m.jobs, j)
		return j
	}
	for _, tc := range []struct {
		name string
		ask  func(t *testing.T, m *Model)
	}{
		{"quit with unsaved work", func(t *testing.T, m *Model) { running(m); addPreset(t, m, "ring"); keys(t, m, "q") }},
		{"quit with a running job", func(t *testing.T, m *Model) { running(m); keys(t, m, "q") }},
		{"discard at the quit", func(t *testing.T, m *Model) { addPreset(t, m, "ring"); keys(t, m, "q", "d") }},
		{"open with unsaved work", func(t *testing.T, m *Model) {
			addPreset(t, m, "ring")
			m.openSession("other.ssmlab", sessions.New())
		}},
		{"discard at the open", func(t *testing.T, m *Model) {
			addPreset(t, m, "ring")
			m.openSession("other.ssmlab", sessions.New())
			keys(t, m, "d")
		}},
		{"discard an autosave", func(t *testing.T, m *Model) {
			(&recoverDialog{list: []sessions.AutosaveInfo{{Path: "x.autosave", Err: errors.New("unreadable")}}}).askDiscard(m)
		}},
		{"delete", func(t *testing.T, m *Model) { addPreset(t, m, "ring"); keys(t, m, "x") }},
		{"cancel job", func(t *testing.T, m *Model) {
			addPreset(t, m, "ring")
			running(m)
			m.setFocus(paneJobs)
			keys(t, m, "x")
		}},
		{"inaccurate conversion", func(t *testing.T, m *Model) {
			addFilter(t, m, "b8", crowdedButterTF(t))
			m.setFocus(panePlots)
			keys(t, m, "n", "right") // converts to zpk, inaccurately
		}},
		{"overwrite", func(t *testing.T, m *Model) {
			m.openDialog(overwriteQuestion("x.json exists", ":save PATH writes elsewhere", "not saved", nil))
		}},
		{"save anew", func(t *testing.T, m *Model) { m.openDialog(saveAnewQuestion("x.ssmlab was removed", "x.ssmlab", nil)) }},
		{"read files outside", func(t *testing.T, m *Model) {
			m.sess.Path = filepath.Join(t.TempDir(), "s.ssmlab")
			m.sess.Targets = append(m.sess.Targets, sessions.Target{ID: "t1", Name: "far", Linked: true,
				Err: &sessions.OutsideError{Target: "t1", Path: "../far.npy", File: "/far.npy"}})
			m.askOutside()
		}},
	} {
		m := newTestModel(t, 120, 40, nil)
		tc.ask(t, m)
		c, ok := dialogOf[*confirm](m)
		if !ok {
			t.Errorf("%s: opened %T, status %q", tc.name, m.dialog, m.status.text)
			continue
		}
		takes := map[string]bool{"esc": true}
		for _, ch := range c.choices {
			for _, k := range ch.keys {
				takes[strings.ToLower(k)] = true
			}
		}
		// The key line, the last paragraph's first line: "k, k or k does … · …".
		paras := strings.Split(c.body, "\n\n")
		line, _, _ := strings.Cut(paras[len(paras)-1], "\n")
		named := map[string]int{}
		for _, seg := range strings.Split(line, " · ") {
			ks := keyList.FindStringSubmatch(seg)[1] // "" where the part names none
			for _, k := range strings.Split(strings.ReplaceAll(ks, " or ", ", "), ", ") {
				named[k]++
			}
		}
		for k := range takes {
			if named[k] != 1 {
				t.Errorf("%s: the text names %q %d times, want once (key line %q)", tc.name, k, named[k], line)
			}
		}
		for k := range named {
			if !takes[k] {
				t.Errorf("%s: the text names %q, which the question does not take (key line %q)", tc.name, k, line)
			}
		}
		hint, _ := strings.CutPrefix(c.hint(), "answer ")
		hintKeys, _, _ := strings.Cut(hint, " · ")
		for _, k := range append(strings.Split(hintKeys, ", "), "esc") {
			if named[k] != 1 {
				t.Errorf("%s: the hint %q names %q, which the text does not (key line %q)", tc.name, c.hint(), k, line)
			}
		}
	}
}
