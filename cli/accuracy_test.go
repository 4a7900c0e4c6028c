package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
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

// TestConvertHiPPOLegS64ToZPK: the preset HiPPO-LegS of order 64 converts to zpk within its
// stored numbers' accuracy (measured 6.2e-13, the exact response of the stored zeros, poles
// and gain against the dense one); its cascade was wrong by 3.96 and the conversion failed,
// warning of a rounding-error estimate of 223 (filters' TestZPKCascadeGolden).
func TestConvertHiPPOLegS64ToZPK(t *testing.T) {
	// zpkTol: the eigenvalues of the nearly defective A (basis condition 2.5e19) set the
	// stored numbers' error; ten times what was measured.
	const zpkTol = 1e-11
	dir := t.TempDir()
	in := filepath.Join(dir, "legs.json")
	if r := run(t, "", "preset", "hippo-legs", "order=64", "-o", in); r.code != ExitOK {
		t.Fatal(r)
	}
	r := run(t, "", "convert", in, "--to", "zpk", "-o", filepath.Join(dir, "legs-zpk.json"), "--report", "-")
	if r.code != ExitOK {
		t.Fatal(r)
	}
	var rep filters.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.RelError > zpkTol || strings.Contains(r.stderr, "rounding-error estimate") {
		t.Errorf("relative error %.3g (want ≤ %g), stderr %q", rep.RelError, zpkTol, r.stderr)
	}
}
