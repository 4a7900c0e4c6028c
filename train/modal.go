package train

import (
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/underflow"
)

// modalModel is the modal SSM of Laughing Hyena (RTF paper, §4.4) or, with rotation set, the
// same poles as rotation blocks with explicit input and output vectors. pairs conjugate pairs
// λ = exp(-exp(ν) + iθ) and reals real poles λ = tanh(u); |λ| < 1 for every parameter value.
type modalModel struct {
	pairs, reals int
	length       int
	rotation     bool
	minNu, maxU  float64 // the radius constraint: ν ≥ minNu, |u| ≤ maxU
}

func (m *modalModel) pairSize() int {
	if m.rotation {
		return 6 // ν, θ, b₁, b₂, c₁, c₂
	}
	return 4 // ν, θ, Re r, Im r
}

func (m *modalModel) realSize() int {
	if m.rotation {
		return 3 // u, b, c
	}
	return 2 // u, r
}

func (m *modalModel) numParams() int { return m.pairs*m.pairSize() + m.reals*m.realSize() + 1 }

func (m *modalModel) newWorkspace() workspace { return nil }

func (m *modalModel) pairAt(p []float64, i int) (lambda, r complex128, q []float64) {
	q = p[i*m.pairSize() : (i+1)*m.pairSize()]
	lambda = cmplx.Exp(complex(-math.Exp(q[0]), q[1]))
	if m.rotation {
		r = complex(q[4], -q[5]) * complex(q[2], q[3]) / 2
	} else {
		r = complex(q[2], q[3])
	}
	return lambda, r, q
}

func (m *modalModel) realAt(p []float64, i int) (lambda, r float64, q []float64) {
	off := m.pairs * m.pairSize()
	q = p[off+i*m.realSize() : off+(i+1)*m.realSize()]
	lambda = math.Tanh(q[0])
	if m.rotation {
		r = q[1] * q[2]
	} else {
		r = q[1]
	}
	return lambda, r, q
}

func (m *modalModel) kernel(_ workspace, p, k []float64) {
	clear(k)
	k[0] = p[len(p)-1]
	for i := 0; i < m.pairs; i++ {
		l, r, _ := m.pairAt(p, i)
		pw := 2 * r
		scale := underflow.Scale(pw)
		for t := 1; t < len(k); t++ {
			k[t] += real(pw)
			pw *= l
			if t%underflow.Every == 0 {
				pw = underflow.Complex(pw, scale)
			}
		}
	}
	for i := 0; i < m.reals; i++ {
		l, r, _ := m.realAt(p, i)
		pw := r
		scale := math.Abs(r)
		for t := 1; t < len(k); t++ {
			k[t] += pw
			pw *= l
			if t%underflow.Every == 0 {
				pw = underflow.Real(pw, scale)
			}
		}
	}
}

func (m *modalModel) grad(_ workspace, p, e, g []float64) {
	for i := 0; i < m.pairs; i++ {
		l, r, q := m.pairAt(p, i)
		// S1 = Σ e_t λ^(t-1), S2 = Σ e_t (t-1) λ^(t-1).
		var s1, s2 complex128
		pw := complex(1, 0)
		for t := 1; t < len(e); t++ {
			v := complex(e[t], 0) * pw
			s1 += v
			s2 += complex(float64(t-1), 0) * v
			pw *= l
			if t%underflow.Every == 0 {
				pw = underflow.Complex(pw, 1)
			}
		}
		gq := g[i*m.pairSize() : (i+1)*m.pairSize()]
		rs2 := r * s2
		gq[0] = -2 * math.Exp(q[0]) * real(rs2)
		gq[1] = -2 * imag(rs2)
		gr, gi := 2*real(s1), -2*imag(s1) // ∂/∂Re r, ∂/∂Im r
		if m.rotation {
			b1, b2, c1, c2 := q[2], q[3], q[4], q[5]
			gq[2] = (gr*c1 - gi*c2) / 2
			gq[3] = (gr*c2 + gi*c1) / 2
			gq[4] = (gr*b1 + gi*b2) / 2
			gq[5] = (gr*b2 - gi*b1) / 2
		} else {
			gq[2], gq[3] = gr, gi
		}
	}
	off := m.pairs * m.pairSize()
	for i := 0; i < m.reals; i++ {
		l, r, q := m.realAt(p, i)
		// S1 = Σ e_t λ^(t-1), S2 = Σ e_t (t-1) λ^(t-2).
		var s1, s2 float64
		pw, prev := 1.0, 0.0
		for t := 1; t < len(e); t++ {
			s1 += e[t] * pw
			s2 += e[t] * float64(t-1) * prev
			prev, pw = pw, pw*l
			if t%underflow.Every == 0 {
				pw = underflow.Real(pw, 1)
			}
		}
		gq := g[off+i*m.realSize() : off+(i+1)*m.realSize()]
		gq[0] = r * s2 * (1 - l*l)
		if m.rotation {
			gq[1], gq[2] = s1*q[2], s1*q[1]
		} else {
			gq[1] = s1
		}
	}
	g[len(g)-1] = e[0]
}

// modalMaxNu keeps a pole pair's radius exp(-exp(ν)) above 1.9e-9: a smaller pole only
// shapes k[1] and k[2], and the optimisers would otherwise drive unused pairs towards zero,
// where the pair can no longer be told from a real pole.
const modalMaxNu = 3

// project applies the radius constraint (and modalMaxNu).
func (m *modalModel) project(p []float64) {
	for i := 0; i < m.pairs; i++ {
		q := p[i*m.pairSize():]
		q[0] = math.Min(math.Max(q[0], m.minNu), modalMaxNu)
	}
	off := m.pairs * m.pairSize()
	for i := 0; i < m.reals; i++ {
		q := p[off+i*m.realSize():]
		q[0] = math.Max(-m.maxU, math.Min(m.maxU, q[0]))
	}
}

// modalRealTol is the imaginary part, relative to 1 + |λ|, below which filter writes a pole
// pair as a double real pole (filters.NewDiagonal reads 1e-12 as real).
const modalRealTol = 1e-10

func (m *modalModel) filter(p []float64) (filters.Filter, float64, error) {
	h0 := p[len(p)-1]
	if !m.rotation {
		var poles, res []complex128
		for i := 0; i < m.pairs; i++ {
			l, r, _ := m.pairAt(p, i)
			if math.Abs(imag(l)) <= modalRealTol*(1+cmplx.Abs(l)) {
				// θ at 0 or π: the pair is a double real pole, 2Re(r λ^(t-1)) = 2Re(r)·λ^(t-1)
				// up to rounding, which a real filter stores as two real modes.
				poles = append(poles, complex(real(l), 0), complex(real(l), 0))
				res = append(res, complex(real(r), 0), complex(real(r), 0))
				continue
			}
			poles = append(poles, l, cmplx.Conj(l))
			res = append(res, r, cmplx.Conj(r))
		}
		for i := 0; i < m.reals; i++ {
			l, r, _ := m.realAt(p, i)
			poles = append(poles, complex(l, 0))
			res = append(res, complex(r, 0))
		}
		f, err := filters.NewDiagonal(poles, res, h0)
		return f, 1, err
	}
	n := 2*m.pairs + m.reals
	var blocks []filters.RotationBlock
	var reals, b, c []float64
	for i := 0; i < m.pairs; i++ {
		l, _, q := m.pairAt(p, i)
		blocks = append(blocks, filters.RotationBlock{Radius: cmplx.Abs(l), Angle: q[1]})
		b = append(b, q[2], q[3])
		c = append(c, q[4], q[5])
	}
	var rb, rc []float64
	for i := 0; i < m.reals; i++ {
		l, _, q := m.realAt(p, i)
		reals = append(reals, l)
		rb, rc = append(rb, q[1]), append(rc, q[2])
	}
	b, c = append(b, rb...), append(c, rc...)
	eye := make([][]float64, n)
	for i := range eye {
		eye[i] = make([]float64, n)
		eye[i][i] = 1
	}
	f, err := filters.NewRotation(eye, blocks, reals, b, c, h0)
	return f, 1, err
}

func (m *modalModel) maxRadius(p []float64) float64 {
	rho := 0.0
	for i := 0; i < m.pairs; i++ {
		l, _, _ := m.pairAt(p, i)
		rho = math.Max(rho, cmplx.Abs(l))
	}
	for i := 0; i < m.reals; i++ {
		l, _, _ := m.realAt(p, i)
		rho = math.Max(rho, math.Abs(l))
	}
	return rho
}
