package plan

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/ssmlab/ssmlab/internal/cputime"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/train"
)

// trainedSource gives the units' kernels from the filters of a trained Hyena model
// (testdata/trained/copy-fixed-layer0.npy: layer 0 of a tiny Hyena LM trained on long-range
// copies, 64 channels of 1024 samples), resampled to the unit's length by linear
// interpolation: the shapes a model trained at that length would have, as far as one can
// guess. (Random-init Hyena filters, presets.Hyena, are nearly low rank and fit in no time.)
type trainedSource map[int][][]float64

func (s trainedSource) Kernels(u Unit) ([][]float64, error) {
	if _, ok := s[u.Length]; !ok {
		af, err := arrays.Open("../../testdata/trained/copy-fixed-layer0.npy")
		if err != nil {
			return nil, err
		}
		defer af.Close()
		a, err := af.Read("")
		if err != nil {
			return nil, err
		}
		var ks [][]float64
		for _, k := range a.Rows() {
			out := make([]float64, u.Length)
			for t := range out {
				x := float64(t) * float64(len(k)-1) / float64(u.Length-1)
				i := min(int(x), len(k)-2)
				out[t] = k[i] + (x-float64(i))*(k[i+1]-k[i])
			}
			ks = append(ks, out)
		}
		s[u.Length] = ks
	}
	return s[u.Length][u.Lo:u.Hi], nil
}

type nowhere struct{}

func (nowhere) Load(Unit) (*UnitResult, error) { return nil, nil }
func (nowhere) Save(*UnitResult) error         { return nil }

// BenchmarkThroughput measures a whole-model distillation's throughput on the CPU for units
// of 16 trained Hyena channels (trainedSource) fitted with the default recipe
// (train.DefaultSpec) at kernel lengths 1024, 4096 and 16384 and orders 16 and 64: channels
// per second of wall time and per second of CPU time (what one core fits, which other load
// on the machine disturbs less), the figures docs/scale.md extrapolates from. GOMAXPROCS (the
// environment variable: -cpu does not reach sub-benchmarks) sets the cores it uses;
// -benchtime 1x is enough at the longer lengths.
func BenchmarkThroughput(b *testing.B) {
	const channels = 16
	src := trainedSource{}
	for _, length := range []int{1024, 4096, 16384} {
		for _, order := range []int{16, 64} {
			b.Run(fmt.Sprintf("L=%d/order=%d", length, order), func(b *testing.B) {
				fit := Fit{Spec: train.DefaultSpec(), Backend: train.CPU{}}
				fit.Spec.Order = order
				units, err := Units([]Layer{{Prefix: "l.", Channels: channels, Length: length}}, order, channels)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := src.Kernels(units[0]); err != nil {
					b.Fatal(err)
				}
				var sum float64
				b.ResetTimer()
				cpu0 := cputime.Process()
				for range b.N {
					res, err := Execute(context.Background(), fit, units, src, nowhere{}, nil)
					if err != nil {
						b.Fatal(err)
					}
					for _, c := range res[0].Channels {
						sum += c.RelError
					}
				}
				cpu := (cputime.Process() - cpu0).Seconds()
				b.ReportMetric(float64(channels*b.N)/b.Elapsed().Seconds(), "channels/s")
				if cputime.Measured && cpu > 0 {
					b.ReportMetric(float64(channels*b.N)/cpu, "channels/cpu-s")
				}
				b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
				b.ReportMetric(sum/float64(channels*b.N), "mean-rel-error")
			})
		}
	}
}
