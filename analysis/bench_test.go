package analysis

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// BenchmarkRTFKernel generates the kernels of an RTF layer: D = 1024 channels of order
// n = 64, L = 4096, from (a, b̃, h0) as in training (RTF paper, Alg. 1: FFT of the padded
// coefficients, divide, inverse FFT), on GOMAXPROCS goroutines. bench/rtf_kernel_torch.py
// times PyTorch's CPU path for the same computation.
func BenchmarkRTFKernel(b *testing.B) {
	const d, n, L = 1024, 64, 4096
	rng := rand.New(rand.NewPCG(1, 1))
	a, bt := make([][]float64, d), make([][]float64, d)
	h0 := make([]float64, d)
	for i := range a {
		f := montelTF(rng, n, 0.9)
		a[i], bt[i], h0[i] = f.Den, f.Num, f.H0
	}
	p := NewKernelPlan(n, L)
	dst, err := p.Bank(nil, a, bt, h0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Bank(dst, a, bt, h0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/d, "ns/channel")
}

// modalFilter returns a diagonal filter of order n (even) with poles of radius in
// [0.5, 0.999] at random angles and random residues, as a trained S4D/LRU channel.
func modalFilter(rng *rand.Rand, n int) *filters.Diagonal {
	var poles, res []complex128
	for len(poles) < n {
		p := cmplx.Rect(0.5+0.499*rng.Float64(), math.Pi*rng.Float64())
		r := complex(rng.NormFloat64(), rng.NormFloat64())
		poles = append(poles, p, cmplx.Conj(p))
		res = append(res, r, cmplx.Conj(r))
	}
	f, err := filters.NewDiagonal(poles, res, rng.NormFloat64())
	if err != nil {
		panic(err)
	}
	return f
}

// BenchmarkInteractive measures what the TUI recomputes on every keystroke for one filter of
// order 256, on one core: the impulse response (L = 4096, the default recurrence), the
// frequency response on 1024 points and the poles. "modal" is the form the TUI edits (poles
// already held); "dense" is the honest figure for a full A (an eigendecomposition for the
// poles, O(n²) per sample and per frequency).
func BenchmarkInteractive(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rng := rand.New(rand.NewPCG(2, 2))
	modal := modalFilter(rng, 256)
	dense, _, err := filters.ToDense(modal)
	if err != nil {
		b.Fatal(err)
	}
	rot, _, err := filters.ToRotation(modal)
	if err != nil {
		b.Fatal(err)
	}
	zpk, _, err := filters.ToZPK(modal)
	if err != nil {
		b.Fatal(err)
	}
	w := LinearGrid(1024)
	for _, c := range []struct {
		name string
		f    filters.Filter
	}{{"modal", modal}, {"rotation", rot}, {"zpk", zpk}, {"dense", dense}} {
		b.Run(c.name+"/n=256", func(b *testing.B) {
			h := make([]float64, 4096)
			for b.Loop() {
				if _, err := Impulse(h, c.f, 4096, Recurrence); err != nil {
					b.Fatal(err)
				}
				FreqResponse(c.f, w)
				if _, err := filters.Poles(c.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkImpulseScaling is the README's table of how the impulse algorithms' cost grows
// with the order n and the length L, on one core: recurrence, Vandermonde and scan on a modal
// filter, fft on a transfer function (correction b̃ included).
func BenchmarkImpulseScaling(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, n := range []int{16, 64, 256, 1024} {
		rng := rand.New(rand.NewPCG(3, uint64(n)))
		modal := modalFilter(rng, n)
		tf := montelTF(rng, n, 0.9)
		for _, L := range []int{1 << 10, 1 << 12, 1 << 14, 1 << 16} {
			h := make([]float64, L)
			for _, m := range Methods {
				var f filters.Filter = modal
				if m == FFT {
					f = tf
				}
				b.Run(fmt.Sprintf("%s/n=%d/L=%d", m, n, L), func(b *testing.B) {
					for b.Loop() {
						if _, err := Impulse(h, f, L, m); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkNorms times the O(n³) analyses on a dense random system.
func BenchmarkNorms(b *testing.B) {
	for _, n := range []int{16, 64, 256} {
		f := randomStable(rand.New(rand.NewPCG(4, uint64(n))), n, 0.95)
		b.Run(fmt.Sprintf("H2/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := H2(f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("HSV/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := HankelSV(f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("GroupDelay1024/n=%d", n), func(b *testing.B) {
			w := LinearGrid(1024)
			for b.Loop() {
				if _, err := GroupDelayOf(f, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
