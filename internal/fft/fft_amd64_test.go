//go:build !noasm && !amd64.v3

package fft

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// goPath runs f with the Go loops in place of the AVX2 kernels.
func goPath(f func()) {
	defer func(prev bool) { useAsm = prev }(useAsm)
	useAsm = false
	f()
}

// kernelInputs are the test vectors of length n: normal values of mixed magnitude; values
// where most entries are ±0 or ±1; and zeros of either sign. The last two's sums hit signed
// zeros, where a product by the twiddle 1 + 0i, which the Go code skips, would change the
// sign of a zero.
func kernelInputs(rng *rand.Rand, n int) [][]float64 {
	mixed, sparse, zeros := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range mixed {
		mixed[i] = rng.NormFloat64() * math.Pow(10, 6*rng.Float64()-3)
		if rng.IntN(2) == 0 {
			zeros[i] = math.Copysign(0, -1)
		}
		switch rng.IntN(5) {
		case 0:
			sparse[i] = rng.NormFloat64()
		case 1:
			sparse[i] = 1
		case 2:
			sparse[i] = -1
		case 3:
			sparse[i] = math.Copysign(0, -1)
		}
	}
	return [][]float64{mixed, sparse, zeros}
}

func sameBits(t *testing.T, what string, got, want []complex128) {
	t.Helper()
	for i := range want {
		g, w := got[i], want[i]
		if math.Float64bits(real(g)) != math.Float64bits(real(w)) || math.Float64bits(imag(g)) != math.Float64bits(imag(w)) {
			t.Fatalf("%s: entry %d %v, Go loops %v", what, i, g, w)
		}
	}
}

// TestKernelsMatchGo checks that the transforms give the Go loops' results bit for bit with
// the AVX2 kernels, at every power of two from 2 to 2¹⁴: complex forward and inverse (with a
// table of the length, and of four times it, whose twiddles the stages take with a stride),
// real forward and inverse, and the pruned transforms.
func TestKernelsMatchGo(t *testing.T) {
	if !useAsm {
		t.Skip("the Go loops are the kernels on this machine (no AVX2)")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 2; n <= 1<<14; n *= 2 {
		for k, in := range kernelInputs(rng, 2*n) {
			x := asComplex(in)
			for _, tab := range []*Table{NewTable(n), NewTable(4 * n)} {
				for _, inverse := range []bool{false, true} {
					got, want := append([]complex128(nil), x...), append([]complex128(nil), x...)
					tab.Transform(got, make([]complex128, n), inverse)
					goPath(func() { tab.Transform(want, make([]complex128, n), inverse) })
					sameBits(t, fmt.Sprintf("n=%d input %d table %d inverse %v", n, k, tab.n, inverse), got, want)
				}
			}
			if n < 4 {
				continue
			}
			tab := NewTable(n)
			got, want := make([]complex128, n/2+1), make([]complex128, n/2+1)
			tab.RealForward(got, in[:n], make([]complex128, n))
			goPath(func() { tab.RealForward(want, in[:n], make([]complex128, n)) })
			sameBits(t, fmt.Sprintf("n=%d input %d real forward", n, k), got, want)

			c := x[:n/2+1]
			gotSeq, wantSeq := make([]float64, n), make([]float64, n)
			tab.RealInverse(gotSeq, c, make([]complex128, n))
			goPath(func() { tab.RealInverse(wantSeq, c, make([]complex128, n)) })
			sameBits(t, fmt.Sprintf("n=%d input %d real inverse", n, k), asComplex(gotSeq), asComplex(wantSeq))

			for _, m := range []int{1, min(5, n), n / 4, n - 1} {
				buf, work := make([]complex128, n), make([]complex128, n)
				got := tab.ForwardShort(x[:m], buf, work)
				var want []complex128
				goPath(func() { want = tab.ForwardShort(x[:m], make([]complex128, n), make([]complex128, n)) })
				sameBits(t, fmt.Sprintf("n=%d input %d ForwardShort of %d", n, k, m), got, want)

				head, wantHead := make([]complex128, m), make([]complex128, m)
				tab.InverseHead(head, append([]complex128(nil), x[:n]...), work)
				goPath(func() { tab.InverseHead(wantHead, append([]complex128(nil), x[:n]...), work) })
				sameBits(t, fmt.Sprintf("n=%d input %d InverseHead of %d", n, k, m), head, wantHead)
			}
		}
	}
}

// TestStagesMatchGo checks each stage on its own, where a difference in the sign of a zero
// cannot be lost in later sums: every radix-4 stage of sub-transforms of length l ≥ 4 with s
// of them (l·s ≤ 2¹²), the radix-2 stage, the fused stages (radix16, radix8Last) against the two
// stages each stands for, and the real transforms' twiddling, on each input kind several times.
func TestStagesMatchGo(t *testing.T) {
	if !useAsm {
		t.Skip("the Go loops are the kernels on this machine (no AVX2)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1 << 12
	tab := NewTable(n)
	for trial := range 8 {
		for k, in := range kernelInputs(rng, 2*n) {
			x := asComplex(in)
			for l := 4; l <= n; l *= 2 {
				for s := 1; l*s <= n; s *= 2 {
					for _, inverse := range []bool{false, true} {
						got, want := make([]complex128, l*s), make([]complex128, l*s)
						tab.radix4(x, got, l, s, inverse)
						tab.radix4Go(x, want, l, s, inverse)
						sameBits(t, fmt.Sprintf("trial %d input %d radix-4 l=%d s=%d inverse %v", trial, k, l, s, inverse), got, want)
					}
				}
			}
			for s := 1; 2*s <= n; s *= 2 {
				got, want := make([]complex128, 2*s), make([]complex128, 2*s)
				radix2(x, got, s)
				radix2Go(x, want, s)
				sameBits(t, fmt.Sprintf("trial %d input %d radix-2 s=%d", trial, k, s), got, want)
			}
			for l := 16; 2*l <= n; l *= 2 {
				for s := 2; l*s <= n; s *= 2 {
					for _, inverse := range []bool{false, true} {
						got, mid, want := make([]complex128, l*s), make([]complex128, l*s), make([]complex128, l*s)
						tab.radix16(x, got, l, s, inverse)
						tab.radix4Go(x, mid, l, s, inverse)
						tab.radix4Go(mid, want, l/4, 4*s, inverse)
						sameBits(t, fmt.Sprintf("trial %d input %d radix-16 l=%d s=%d inverse %v", trial, k, l, s, inverse), got, want)
					}
				}
			}
			for s := 2; 8*s <= n; s *= 2 {
				for _, inverse := range []bool{false, true} {
					got, mid, want := make([]complex128, 8*s), make([]complex128, 8*s), make([]complex128, 8*s)
					tab.radix8Last(x, got, s, inverse)
					tab.radix4Go(x, mid, 8, s, inverse)
					radix2Go(mid, want, 4*s)
					sameBits(t, fmt.Sprintf("trial %d input %d radix-8 s=%d inverse %v", trial, k, s, inverse), got, want)
				}
			}
			for h := 2; h <= n/2; h *= 2 {
				w := Shared(2 * h).w
				got, want := make([]complex128, h+1), make([]complex128, h+1)
				realForwardPosts(got, x[:h], w)
				realForwardPostsGo(want, x[:h], w)
				sameBits(t, fmt.Sprintf("trial %d input %d real forward h=%d", trial, k, h), got, want)
				got, want = got[:h], want[:h]
				realInversePres(got, x[:h+1], w)
				realInversePresGo(want, x[:h+1], w)
				sameBits(t, fmt.Sprintf("trial %d input %d real inverse h=%d", trial, k, h), got, want)
			}
		}
	}
}

// BenchmarkPaths times the transforms of the Hankel products' and the RTF recipe's sizes by
// the AVX2 kernels and by the Go loops, side by side.
func BenchmarkPaths(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	paths := []struct {
		name string
		run  func(func())
	}{{"go", goPath}, {"avx2", func(f func()) { f() }}}
	for _, n := range []int{1024, 2048, 4096} {
		tab := NewTable(n)
		x := randComplex(rng, n)
		work := make([]complex128, n)
		xr := randReal(rng, n)
		c := make([]complex128, n/2+1)
		r := NewReal(n)
		for _, p := range paths {
			b.Run(fmt.Sprintf("complex/n=%d/%s", n, p.name), func(b *testing.B) {
				p.run(func() {
					for b.Loop() {
						tab.Transform(x, work, false)
					}
				})
			})
			b.Run(fmt.Sprintf("inverse/n=%d/%s", n, p.name), func(b *testing.B) {
				p.run(func() {
					for b.Loop() {
						tab.Transform(x, work, true)
					}
				})
			})
			b.Run(fmt.Sprintf("real/n=%d/%s", n, p.name), func(b *testing.B) {
				p.run(func() {
					for b.Loop() {
						r.Coefficients(c, xr)
					}
				})
			})
			b.Run(fmt.Sprintf("realinverse/n=%d/%s", n, p.name), func(b *testing.B) {
				p.run(func() {
					for b.Loop() {
						r.Sequence(xr, c)
					}
				})
			})
		}
	}
}
