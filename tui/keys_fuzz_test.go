package tui

import (
	"strings"
	"testing"
)

// fuzzKeys is the vocabulary FuzzKeys types from: every pane's keys, the dialogs' keys and a
// few characters for the prompts. "q" and ctrl+c are left out: they end the session.
var fuzzKeys = []string{
	"enter", "tab", "shift+tab", "esc", "up", "down", "left", "right", "backspace", "delete",
	"pgdown", "pgup", "home", "end", "ctrl+u",
	"a", "o", "y", "r", "x", "v", "D", "?", ":", "n", "N", "u", "c", "p", "+", "-", "e", "s",
	"1", "2", "3", "4", "5", "6", "g", "G", "j", "k", "h", "l", " ", "0", ".", "=", "i",
}

// FuzzKeys types a key sequence into the workbench, with a window size picked from the
// input: it never panics, every frame fits the window, and no NaN or Inf reaches the screen.
// Each frame is rendered once and both checks read it: rendering is nearly all of the time
// an input takes (about a millisecond a frame), and rendering twice took 1.6 times as long.
// Every frame is checked, not only the last (which would be 14 times faster), and the
// windows stay large enough to show the numbers the NaN check looks for.
func FuzzKeys(f *testing.F) {
	for _, seed := range []string{"", "\x0f\x00\x00", "\x0f\x00\x00\x01\x26\x00", "\x0f\x00\x00\x24\x00\x00", "\x10\x3a\x0c"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			data = data[:64]
		}
		w, h := 120, 36
		if len(data) > 0 && data[0]%4 == 1 {
			w, h = 60, 20
		}
		m := newTestModel(t, w, h, nil)
		addPreset(t, m, "pair")
		for _, b := range data {
			k := fuzzKeys[int(b)%len(fuzzKeys)]
			_, cmd := m.Update(keyMsg(k))
			if c, ok := dialogOf[*confirm](m); ok && strings.Contains(c.title, "quit") {
				return
			}
			runCmd(t, m, cmd, 0)
			v := m.View()
			checkSize(t, v, w, h)
			s := plain(v)
			for _, bad := range []string{"NaN", "+Inf", "-Inf"} {
				if strings.Contains(s, bad) {
					t.Fatalf("%q on screen after %q:\n%s", bad, data, s)
				}
			}
		}
	})
}
