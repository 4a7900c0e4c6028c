package tui

import (
	"path/filepath"
	"strings"
	"testing"
)

// pathArg is the argument index of each command that names a file: the fuzzer's paths are
// moved into a temporary folder, so that a run writes nowhere else.
var pathArg = map[string]bool{"open": true, "load": true, "save": true, "save-session": true, "export": true, "export-plot": true}

// FuzzCommandLine runs a fuzzed line from the : palette on a workbench holding a preset
// filter and, where the line starts a job, runs it: no line panics, a refusal is one
// non-empty line for the status bar, every frame fits the window, and no NaN or Inf reaches
// the screen.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{
		"ladder 4,8,16", "ladder 16,4 steps=3", "distill order=4 steps=3 length=64", "distill orders=2,3 model=rtf",
		"preset pair", "length 128", "length -1", "convert tf", "view zpk", "view diagonal", "plot magnitude",
		"plot polezero", "overlay off", "rename x y", "theme light", "export k.npz layout=s4d dtype=float32",
		"export k.json tf force", "export k.safetensors layout=sos prefix=m.", "export k.pt layout=rtf trunc_len=64 h0=twice",
		"save f.json", "open f.json", "save-session s.ssmlab", "export-plot p.svg", "cancel", "undo", "duplicate",
		"dist model=nope", "preset pair a=", "preset pair =1", "ladder 0", "ladder 4,,8",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 200 {
			return
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return
		}
		switch name := strings.ToLower(fields[0]); {
		case name == "quit" || name == "q" || name == "qu" || name == "qui":
			return // asks, then ends the session
		case pathArg[name] || len(matches(name)) == 1 && pathArg[matches(name)[0].name]:
			if len(fields) > 1 {
				base := strings.ReplaceAll(filepath.Base(fields[1]), "..", "_")
				fields[1] = filepath.Join(t.TempDir(), base)
			}
			line = strings.Join(fields, " ")
		}
		const w, h = 100, 30
		m := newTestModel(t, w, h, nil)
		addPreset(t, m, "pair")
		cmd, err := m.runLine(line)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("%q: error %q is not one line", line, msg)
			}
			return
		}
		runCmd(t, m, cmd, 0)
		checkSize(t, m.View(), w, h)
		s := screen(m)
		for _, bad := range []string{"NaN", "+Inf", "-Inf"} {
			if strings.Contains(s, bad) {
				t.Fatalf("%q on screen after %q:\n%s", bad, line, s)
			}
		}
	})
}
