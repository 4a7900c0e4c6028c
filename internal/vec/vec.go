// Package vec holds the dot product and the multiply-add of float64 vectors that the inner
// loops of train's fits run on (Householder QR, Lanczos, the Gauss–Newton system): fused
// multiply-adds in a fixed order, by AVX2 kernels on amd64 and by Go elsewhere, with the
// same result bit for bit on every machine and build (TestKernelsMatchGo). gonum's
// floats.Dot and floats.AddScaled round every product and run in SSE2 on amd64: on the
// vectors of these fits (32 to 511 entries) 1.3–1.9× slower (BenchmarkDot, BenchmarkAxpy).
package vec

import "math"

// Dot returns Σ x[i]·y[i] over len(x) entries (y at least as long): sixteen lanes of fused
// multiply-adds over the whole blocks of sixteen, lane j taking the entries i ≡ j (mod 16);
// the lanes summed as ((l₀ + l₄) + (l₈ + l₁₂)) per j < 4, those four as (u₀ + u₂) + (u₁ + u₃);
// then the fused sum of the remaining entries added.
func Dot(x, y []float64) float64 {
	y = y[:len(x)]
	if useAsm {
		return dotAVX2(x, y)
	}
	return dotGo(x, y)
}

// Axpy adds a·x to y (y at least as long as x), each entry by one fused multiply-add.
func Axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	if useAsm {
		axpyAVX2(a, x, y)
		return
	}
	axpyGo(a, x, y)
}

func dotGo(x, y []float64) float64 {
	var acc [16]float64
	n := len(x) &^ 15
	for i := 0; i < n; i += 16 {
		xs, ys := x[i:i+16], y[i:i+16]
		for l := range acc {
			acc[l] = math.FMA(xs[l], ys[l], acc[l])
		}
	}
	var u [4]float64
	for j := range u {
		u[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
	}
	r := (u[0] + u[2]) + (u[1] + u[3])
	s := 0.0
	for i := n; i < len(x); i++ {
		s = math.FMA(x[i], y[i], s)
	}
	return r + s
}

func axpyGo(a float64, x, y []float64) {
	for i, v := range x {
		y[i] = math.FMA(a, v, y[i])
	}
}
