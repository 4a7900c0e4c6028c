package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertOutsideAccuracyFails: a conversion whose measured error is above the documented
// 1e-6, or that makes a stable filter unstable, exits 1 and writes nothing (it warned, wrote
// the file and exited 0); --force writes it with its warnings and exits 0.
func TestConvertOutsideAccuracyFails(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, preset string
		args         []string
		want         string // in the error
	}{
		// An LRU ring of order 384: its tf keeps 5 digits.
		{"error above the limit", "lru", []string{"order=384"}, "relative error 1.09e-05 is above the documented 1e-06"},
		// S4D-Lin channels of order 64: many tf forms put poles outside the circle.
		{"stable made unstable", "s4d-lin", []string{"order=64", "channels=32"}, "form of this stable filter is unstable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, tc.preset+".json")
			if r := run(t, "", append([]string{"preset", tc.preset, "-o", in}, tc.args...)...); r.code != 0 {
				t.Fatal(r)
			}
			out := filepath.Join(dir, tc.preset+"-tf.json")
			r := run(t, "", "convert", in, "--to", "tf", "-o", out)
			if r.code != ExitFailure || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "nothing was written (--force") || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("without --force: %v", r)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("without --force, the output exists (%v)", err)
			}
			// To stdout too: nothing on it.
			if r := run(t, "", "convert", in, "--to", "tf"); r.code != ExitFailure || r.stdout != "" {
				t.Errorf("to stdout without --force: exit %d, %d bytes on stdout", r.code, len(r.stdout))
			}
			r = run(t, "", "convert", in, "--to", "tf", "-o", out, "--force")
			if r.code != ExitOK || !strings.Contains(r.stderr, "warning: ") {
				t.Errorf("with --force: %v", r)
			}
			if _, err := os.Stat(out); err != nil {
				t.Errorf("with --force, no output: %v", err)
			}
		})
	}
}
