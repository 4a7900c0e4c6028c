package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// burst is one message holding several runes, as a terminal delivers keys typed (or sent by
// tmux send-keys) faster than it is read.
func burst(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

// TestKeyBurst: a message of several runes acts as each key it holds, in every pane and in
// a dialog's input (issue 21 item 5: "jjj" did not move the selection, seven "]" moved one
// channel); a paste stays text.
func TestKeyBurst(t *testing.T) {
	m := newTestModel(t, 120, 36, nil)
	for _, n := range []string{"2", "4", "6", "8", "10"} {
		addPreset(t, m, "ring")
		m.rename(m.sel, "ring"+n)
	}
	m.setFocus(paneList)
	keys(t, m, "g")
	send(t, m, burst("jjj"))
	if got := m.selected().name; got != "ring8" {
		t.Errorf("after g and the burst jjj the selection is %s, want ring8 (3 down)", got)
	}
	send(t, m, burst("kk"))
	if got := m.selected().name; got != "ring4" {
		t.Errorf("after the burst kk the selection is %s, want ring4", got)
	}

	rows := make([][]float64, 9)
	for i := range rows {
		rows[i] = []float64{1, float64(i) / 10, 0.01}
	}
	addKernels(t, m, "k9", rows)
	send(t, m, burst("]]]]]]]"))
	if e := m.selected(); e.ch != 7 {
		t.Errorf("seven ] in one burst show channel %d, want 7", e.ch)
	}

	// in a prompt, a burst is typed text, as are its keys one by one
	keys(t, m, "r")
	keys(t, m, "ctrl+u")
	send(t, m, burst("abc"))
	keys(t, m, "enter")
	if got := m.selected().name; got != "abc" {
		t.Errorf("a burst typed into the rename prompt named the item %q, want abc", got)
	}
	// a paste into the list is not a series of commands
	send(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("xxq"), Paste: true})
	if m.dialog != nil || m.quitting || len(m.sess.Order()) != 6 {
		t.Errorf("a paste acted as keys: dialog %T, quitting %v, %d items", m.dialog, m.quitting, len(m.sess.Order()))
	}
}
