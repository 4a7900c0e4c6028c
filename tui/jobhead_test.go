package tui

import (
	"strings"
	"testing"
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
