// Package filtertest makes the filters tests of several packages share (sessions and its
// layouts, filters, analysis): random stable transfer functions, banks of them, a small
// dense filter, random MIMO layers. Its
// constructors panic on error, as they build from values that cannot fail.
package filtertest

import (
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/ssmlab/ssmlab/filters"
)

// RandomTF returns a stable transfer function of order n: poles of modulus ≤ 0.9 in
// conjugate pairs (and one real pole for odd n), a random numerator and direct term.
func RandomTF(rng *rand.Rand, n int) *filters.TransferFunction {
	var poles []complex128
	for len(poles) < n {
		rho, th := 0.3+0.6*rng.Float64(), math.Pi*rng.Float64()
		if n-len(poles) == 1 {
			poles = append(poles, complex(rho*math.Cos(th), 0))
			continue
		}
		p := complex(rho*math.Cos(th), rho*math.Sin(th))
		poles = append(poles, p, complex(real(p), -imag(p)))
	}
	poly := []complex128{1}
	for _, r := range poles {
		next := make([]complex128, len(poly)+1)
		for i, c := range poly {
			next[i] += c
			next[i+1] -= c * r
		}
		poly = next
	}
	a := make([]float64, n)
	b := make([]float64, n)
	for i := range a {
		a[i] = real(poly[i+1])
		b[i] = rng.NormFloat64()
	}
	return must(filters.NewTransferFunction(a, b, rng.NormFloat64()))
}

// TFBank returns a bank of d stable transfer functions of order n, from a fixed seed.
func TFBank(seed uint64, d, n int) *filters.Bank {
	rng := rand.New(rand.NewPCG(seed, 7))
	chans := make([]filters.Filter, d)
	for i := range chans {
		chans[i] = RandomTF(rng, n)
	}
	return must(filters.NewBank(chans))
}

// Dense is an order-3 dense filter with distinct poles, so every form can hold it.
func Dense() *filters.Dense {
	return must(filters.NewDense([][]float64{
		{0.5, -0.3, 0.1},
		{0.3, 0.5, 0.2},
		{0, 0.1, -0.4},
	}, []float64{1, 0.5, 1}, []float64{0.2, 1, -0.7}, 0.1))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// RandomMIMO returns a layer of n modes: radii up to rmax (one at exactly rmax when n > 1),
// every third mode a real pole with real B row and C column, standard normal B, C and D.
func RandomMIMO(rng *rand.Rand, n, in, out int, rmax float64) *filters.MIMO {
	poles := make([]complex128, n)
	b := make([]complex128, n*in)
	c := make([]complex128, out*n)
	d := make([]float64, out*in)
	for k := range poles {
		r := rmax * math.Sqrt(rng.Float64())
		if k == 0 {
			r = rmax
		}
		real := k%3 == 2
		if real {
			poles[k] = complex(r*math.Copysign(1, rng.Float64()-0.3), 0)
		} else {
			poles[k] = cmplx.Rect(r, math.Pi*rng.Float64())
		}
		for i := 0; i < in; i++ {
			b[k*in+i] = complex(rng.NormFloat64(), rng.NormFloat64())
			if real {
				b[k*in+i] = complex(rng.NormFloat64(), 0)
			}
		}
		for o := 0; o < out; o++ {
			c[o*n+k] = complex(rng.NormFloat64(), rng.NormFloat64())
			if real {
				c[o*n+k] = complex(rng.NormFloat64(), 0)
			}
		}
	}
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	return must(filters.NewMIMO(poles, b, c, d, in, out))
}

// MIMOImpulse simulates a MIMO layer: h[o][i][t] = Re Σₖ C_ok·pₖᵗ·B_ki (+ D_oi at t = 0), each
// mode's power by repeated multiplication (error about t·ε, 1e-13 at L = 1024).
func MIMOImpulse(m *filters.MIMO, length int) [][][]float64 {
	n := len(m.Poles)
	h := make([][][]float64, m.Outputs)
	pw := make([]complex128, n)
	for o := range h {
		h[o] = make([][]float64, m.Inputs)
		for i := range h[o] {
			h[o][i] = make([]float64, length)
			for k := range pw {
				pw[k] = m.C[o*n+k] * m.B[k*m.Inputs+i]
			}
			for t := 0; t < length; t++ {
				var s complex128
				for k := range pw {
					s += pw[k]
					pw[k] *= m.Poles[k]
				}
				h[o][i][t] = real(s)
			}
			h[o][i][0] += m.D[o*m.Inputs+i]
		}
	}
	return h
}
