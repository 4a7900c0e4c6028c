package tui

import (
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
