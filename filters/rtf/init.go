package rtf

import (
	"math"
	"math/rand/v2"
)

// MontelEps is the 10⁻⁶ the reference implementation's l1_montel constraint adds to its
// denominator.
const MontelEps = 1e-6

// L1Montel writes the reference implementation's l1_montel constraint of a to dst and
// returns it (a nil dst allocates):
//
//	a / (Σ|aᵢ| + |scalar| + 10⁻⁶),
//
// with the layer's learnable scalar (initialised uniform in [0, 1)). Afterwards Σ|aᵢ| < 1,
// Montel's condition (RTF paper, eq. 17 and App. B.2), so every pole lies strictly inside
// the unit circle. It panics if dst is not nil and differs from a in length.
func L1Montel(dst, a []float64, scalar float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(a))
	} else if len(dst) != len(a) {
		panic("rtf: L1Montel length mismatch")
	}
	s := L1MontelNorm(a, scalar)
	for i, x := range a {
		dst[i] = x / s
	}
	return dst
}

// L1MontelNorm is the divisor of L1Montel, Σ|aᵢ| + |scalar| + 10⁻⁶, summed in the
// reference's order.
func L1MontelNorm(a []float64, scalar float64) float64 {
	l1 := 0.0
	for _, x := range a {
		l1 += math.Abs(x)
	}
	return l1 + math.Abs(scalar) + MontelEps
}

// Xavier draws the reference implementation's xavier_init for one channel of order n: every
// aᵢ, then every bᵢ, uniform in [−1/√n, 1/√n]. As the reference notes, the filter can be
// unstable. It panics if n < 1.
func Xavier(rng *rand.Rand, n int) (a, b []float64) {
	if n < 1 {
		panic("rtf: order must be positive")
	}
	s := 1 / math.Sqrt(float64(n))
	return uniforms(rng, n, s), uniforms(rng, n, s)
}

// Montel draws the reference implementation's montel_init for one channel of order n: every
// aᵢ, then every bᵢ, uniform in [−1/n, 1/n], so that Σ|aᵢ| ≤ 1 (Montel's condition, RTF
// paper eq. 17) and every pole lies inside the unit circle. It panics if n < 1.
func Montel(rng *rand.Rand, n int) (a, b []float64) {
	if n < 1 {
		panic("rtf: order must be positive")
	}
	s := 1 / float64(n)
	return uniforms(rng, n, s), uniforms(rng, n, s)
}

// uniforms returns n draws uniform in [−s, s).
func uniforms(rng *rand.Rand, n int, s float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = -s + 2*s*rng.Float64()
	}
	return out
}
