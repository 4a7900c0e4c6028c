package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestMessageLog: a warning cut to the terminal's width says so, and M shows it whole.
func TestMessageLog(t *testing.T) {
	m := newTestModel(t, 80, 24, nil)
	keys(t, m, "M")
	if got := screen(m); !strings.Contains(got, "no messages yet") {
		t.Fatalf("empty log:\n%s", got)
	}
	keys(t, m, "esc")

	crowded := crowdedDiagonal(t)
	addFilter(t, m, "crowded", crowded)
	st := exportCmd(t, m, filepath.Join(t.TempDir(), "crowded.npz")+" layout=rtf dtype=float32 force")
	if st.level != levelWarn || !strings.HasSuffix(st.text, "sos layout (poles, not polynomial coefficients) may hold it") {
		t.Fatalf("status %v %q", st.level, st.text)
	}
	if got := screen(m); strings.Contains(got, "may hold it") || !strings.Contains(got, "… (M)") {
		t.Fatalf("the status line at 80 columns should be cut and point to the log:\n%s", got)
	}
	keys(t, m, "M")
	got := screen(m)
	if !strings.Contains(got, "messages (2)") || !strings.Contains(got, "opened crowded.json") {
		t.Fatalf("log:\n%s", got)
	}
	// The warning, wrapped, is all there: its words in order.
	words := strings.Fields(strings.ReplaceAll(got, "║", " "))
	if !containsRun(words, strings.Fields(st.text)) {
		t.Errorf("the log lacks the whole warning %q:\n%s", st.text, got)
	}
	keys(t, m, "esc")
	if m.dialog != nil {
		t.Fatal("esc does not close the log")
	}

	// Info lines are not kept; the log keeps the newest maxMessages.
	send(t, m, statusMsg{text: "L = 128 samples"})
	if m.status.level != levelInfo || len(m.messages) != 2 {
		t.Fatalf("an info line was kept: %d messages", len(m.messages))
	}
	for i := range maxMessages + 5 {
		send(t, m, statusMsg{text: fmt.Sprintf("result %d", i), level: levelOK})
	}
	if len(m.messages) != maxMessages || m.messages[0].text != "result 5" || m.messages[maxMessages-1].text != fmt.Sprintf("result %d", maxMessages+4) {
		t.Fatalf("log holds %d, from %q", len(m.messages), m.messages[0].text)
	}
	keys(t, m, "M")
	if got := screen(m); !strings.Contains(got, fmt.Sprintf("result %d", maxMessages+4)) || strings.Contains(got, "result 5\n") {
		t.Fatalf("the log opens on the newest:\n%s", got)
	}
	keys(t, m, "g")
	if got := screen(m); !strings.Contains(got, "result 5") || !strings.Contains(got, "lines below") {
		t.Fatalf("g scrolls to the oldest:\n%s", got)
	}
	keys(t, m, "G", ":")
	if d, ok := dialogOf[*messagesDialog](m); !ok || d.scroll != 0 {
		t.Fatalf("G scrolls back to the newest; other keys do nothing: dialog %T", m.dialog)
	}
}

// containsRun reports whether want occurs in words as a contiguous run.
func containsRun(words, want []string) bool {
	for i := 0; i+len(want) <= len(words); i++ {
		ok := true
		for j, w := range want {
			if words[i+j] != w {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestMessagesNameWhatWasGiven: errors name what the user gave and why it is refused. o on a
// text file said "unsupported array: not a file ssmlab imports" (it is not meant as an
// array, and sessions, which o opens too, were not in the list); a preset's order=1e9 was
// "not an integer" rather than out of range; order=4 order=5 took 5 without a word.
func TestMessagesNameWhatWasGiven(t *testing.T) {
	deps := testDeps(nil)
	deps.Presets = registryPresets{}
	m := New(Options{Deps: deps, ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})

	readme := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(readme, []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runPalette(t, m, "open "+readme)
	if want := readme + ": not a filter, session or array file ssmlab reads: want a session (.ssmlab), a filter or target file (JSON), kernels"; m.status.level != levelError || !strings.HasPrefix(m.status.text, want) {
		t.Errorf("open a text file: status %q, want %q…", m.status.text, want)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"preset butter order=1e9", "order=1e9 is out of range: want integer in [1, 64]"},
		{"preset butter order=4.5", "order=4.5 is not an integer: want an integer in [1, 64]"},
		{"preset butter order=4 order=5", "parameter order is given twice (order=4, order=5)"},
	} {
		runPalette(t, m, tc.cmd)
		if m.status.level != levelError || !strings.Contains(m.status.text, tc.want) {
			t.Errorf(":%s: status %q, want %q", tc.cmd, m.status.text, tc.want)
		}
	}
	if len(m.entries()) != 0 {
		t.Errorf("a refused preset was added: %d items", len(m.entries()))
	}
	p, _ := pairZPK(0.9)
	addFilter(t, m, "pair", p)
	runPalette(t, m, "distill order=4 order=8")
	if !strings.Contains(m.status.text, "parameter order is given twice (order=4, order=8)") || len(m.jobs) != 0 {
		t.Errorf(":distill order=4 order=8: status %q, %d jobs", m.status.text, len(m.jobs))
	}
}

// TestPresetFewerStatesNote: a preset whose filter came out with fewer states than its order
// gives (LRU's modes at phase 0 are real, each kept once) is added with a warning that says
// so and why, as ssmlab preset's note; it was added as "ok" without a word.
func TestPresetFewerStatesNote(t *testing.T) {
	deps := testDeps(nil)
	deps.Presets = registryPresets{}
	m := New(Options{Deps: deps, ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: 200, Height: 40})

	runPalette(t, m, "preset lru order=4 max_phase=0")
	if len(m.entries()) != 1 {
		t.Fatalf("%d items, want the filter added; status %q", len(m.entries()), m.status.text)
	}
	want := "note: lru: the filter has 2 states where order=4 gives 4: max_phase=0"
	if m.status.level != levelWarn || !strings.HasPrefix(m.status.text, "added ") || !strings.Contains(m.status.text, want) {
		t.Errorf("status %v %q, want a warning containing %q", m.status.level, m.status.text, want)
	}
	runPalette(t, m, "preset lru order=4")
	if m.status.level != levelOK || strings.Contains(m.status.text, "note") {
		t.Errorf("a full filter: status %v %q, want ok without a note", m.status.level, m.status.text)
	}
}

// TestPresetShortNames: a preset is listed as its name and its order, separated by "_" where
// the name ends in a digit: cheby1 of order 10 was "cheby110", and order 1 "cheby11"; a
// second copy takes Session.UniqueName's "-2" (analysis QA N7).
func TestPresetShortNames(t *testing.T) {
	deps := testDeps(nil)
	deps.Presets = registryPresets{}
	m := New(Options{Deps: deps, ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: 200, Height: 40})
	for _, c := range []struct{ cmd, want string }{
		{"preset cheby1 order=10", "cheby1_10"},
		{"preset cheby1 order=10", "cheby1_10-2"},
		{"preset butter order=4", "butter4"},
		{"preset hippo-legs order=8", "hippo-legs8"},
	} {
		runPalette(t, m, c.cmd)
		if e := m.selected(); e == nil || e.name != c.want {
			t.Errorf(":%s: status %q, want %q added", c.cmd, m.status.text, c.want)
		}
	}
}
