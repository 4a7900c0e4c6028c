package tui

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
)

// These tests run the workbench in a real Bubble Tea program (teatest), with a fake job
// backend, and wait on the rendered output instead of sleeping.

// waitFor waits until the program has drawn text (the bytes drawn since the last wait).
func waitFor(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

func typeKeys(tm *teatest.TestModel, ks ...string) {
	for _, k := range ks {
		tm.Send(keyMsg(k))
	}
}

func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "start.json")
	f, _ := pairZPK(0.8)
	if err := writeDoc(path, filters.Document{Name: "start", Filter: f}); err != nil {
		t.Fatal(err)
	}
	runner := &fakeRunner{block: true}
	m := New(Options{File: path, Deps: testDeps(runner), ProgressInterval: -1, Length: 128, Dir: dir, AutosaveDir: t.TempDir()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))

	// open: the file given on the command line
	waitFor(t, tm, "opened "+path)

	// add a preset from the picker
	typeKeys(tm, "a")
	waitFor(t, tm, "add a preset")
	typeKeys(tm, "enter")
	waitFor(t, tm, "preset pair")
	typeKeys(tm, "enter")
	waitFor(t, tm, "added pair")

	// convert to tf and commit
	typeKeys(tm, "tab", "5")
	waitFor(t, tm, "zpk → tf: rel error")
	typeKeys(tm, "c")
	waitFor(t, tm, "converted zpk → tf")

	// move a pole: the tf filter is converted to zpk first, and the pole moved once it is
	// (the conversion's report first on the line); the next key moves it again
	typeKeys(tm, "tab", "right")
	waitFor(t, tm, "converted tf → zpk")
	typeKeys(tm, "right")
	waitFor(t, tm, "pole →")

	// start a job and cancel it while it runs
	typeKeys(tm, "D")
	waitFor(t, tm, "distil the impulse response of pair")
	typeKeys(tm, "enter")
	waitFor(t, tm, "running")
	typeKeys(tm, "tab", "x")
	waitFor(t, tm, "cancel job #1")
	typeKeys(tm, "y")
	waitFor(t, tm, "cancelled")

	// quit: unsaved work, so it asks; d discards, once y answers the question it asks
	typeKeys(tm, "q")
	waitFor(t, tm, "quit ssmlab?")
	typeKeys(tm, "d")
	waitFor(t, tm, "discard unsaved work?")
	typeKeys(tm, "y")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

	fm := tm.FinalModel(t).(*Model)
	if len(fm.entries()) != 2 {
		t.Errorf("%d entries, want 2", len(fm.entries()))
	}
	e := fm.entries()[1]
	if e == nil || e.form() != "zpk" || len(e.undo) != 4 { // to tf, to zpk, two moves
		t.Errorf("pair: %+v", e)
	}
	if len(fm.jobs) != 1 || fm.jobs[0].state() != sessions.JobCancelled {
		t.Errorf("jobs: %+v", fm.jobs)
	}
}

func TestEndToEndJobFinishesWhileEditing(t *testing.T) {
	runner := &fakeRunner{}
	m := New(Options{Deps: testDeps(runner), ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveDir: t.TempDir()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	tm.Send(statusMsg{text: "ready"})
	waitFor(t, tm, "ready")
	typeKeys(tm, ":")
	for _, r := range "preset ring" {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	typeKeys(tm, "enter")
	waitFor(t, tm, "added ring")
	// the suggested order (the fake runner's 1 + 256 mod 10, at its default length 256)
	// replaces the default 4
	typeKeys(tm, "D")
	waitFor(t, tm, "(suggested)")
	typeKeys(tm, "enter")
	// the UI stays live while the job runs: move a pole meanwhile
	typeKeys(tm, "tab", "tab", "n", "up")
	// The result's entry, which stays in the filters pane; the status line that announces it
	// can be replaced within one frame by the pole move's and never reach the output.
	waitFor(t, tm, "ring~rtf7")
	typeKeys(tm, "tab", "enter")
	waitFor(t, tm, "━ ring~rtf7")
	typeKeys(tm, "q", "d")
	waitFor(t, tm, "discard unsaved work?")
	typeKeys(tm, "y")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	fm := tm.FinalModel(t).(*Model)
	res := fm.selected()
	// the pole moved after the job started: the target is drawn as the job fitted it
	if res == nil || res.origin.Target == "" || fm.plots.data().ovName != "ring (as fitted)" {
		t.Errorf("the result is not shown over its target: %+v", res)
	}
}
