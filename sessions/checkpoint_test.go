package sessions

import (
	"slices"
	"testing"

	"github.com/ssmlab/ssmlab/train/plan"
)

// TestCheckpointLengthOfUnrecordedKernels: a layer whose kernel depends on a length it does
// not record is read at the length distilled at, as import reads it with --length: an S4D
// layer with the dss discretisation (distill refused it, asking for a --length its own
// --length did not feed) and an S4 layer stored without its l_kernel buffer (its C̃ was
// taken as C: 0.5058885 where the module's kernel at l_kernel 64 gives 0.5058848).
func TestCheckpointLengthOfUnrecordedKernels(t *testing.T) {
	for _, c := range []struct {
		file string
		opts map[string]string
	}{
		{"../testdata/layouts/s4d_dss_64.pt", map[string]string{"disc": "dss"}},
		{"../testdata/layouts/s4_32.safetensors", nil},
	} {
		const length = 64
		kernels := func(opts map[string]string) [][]float64 {
			ck, err := OpenCheckpoint(c.file, CheckpointOptions{Options: opts, Length: length})
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			defer ck.Close()
			l := ck.Layers[0]
			ks, err := ck.Kernels(plan.Unit{Prefix: l.Prefix, Lo: 0, Hi: l.Channels, Length: l.Length})
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			return ks
		}
		explicit := map[string]string{"length": "64"}
		for k, v := range c.opts {
			explicit[k] = v
		}
		got, want := kernels(c.opts), kernels(explicit)
		if !slices.EqualFunc(got, want, slices.Equal[[]float64]) {
			t.Errorf("%s: the kernels read at distill's length differ from those read with --length %d", c.file, length)
		}
	}
}
