package arrays_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// BenchmarkTorchRead opens a float32 torch.save file on disk (in the page cache) and reads
// every tensor, as an import (Read, converting to float64) or a checkpoint's copy (ReadRaw,
// the bytes as they are) does: one large tensor, and a model's worth of small ones.
func BenchmarkTorchRead(b *testing.B) {
	big := make([]float64, 1<<23) // 32 MiB as float32
	for i := range big {
		big[i] = float64(i%1000) / 1000
	}
	var small []arrays.Named
	for i := range 256 {
		a, _ := arrays.New([]int{64, 64}, big[i*4096:(i+1)*4096])
		small = append(small, arrays.Named{Name: fmt.Sprintf("layers.%d.weight", i), Array: a})
	}
	for _, tc := range []struct {
		name    string
		tensors []arrays.Named
	}{
		{"one-32MiB", []arrays.Named{{Name: "w", Array: arrays.Vector(big)}}},
		{"256x16KiB", small},
	} {
		data, err := arrays.EncodeTorch(tc.tensors, arrays.TorchOptions{DType: arrays.Float32})
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), "m.pt")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		for _, raw := range []bool{false, true} {
			name := tc.name + "/Read"
			if raw {
				name = tc.name + "/ReadRaw"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					af, err := arrays.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					for _, in := range af.Arrays() {
						if raw {
							_, err = af.ReadRaw(in.Name)
						} else {
							_, err = af.Read(in.Name)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					af.Close()
				}
			})
		}
	}
}
