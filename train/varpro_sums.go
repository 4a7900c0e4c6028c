package train

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/ssmlab/ssmlab/internal/underflow"
)

// The sums over the samples of variable projection (varpro), its O(n·L) work per evaluation:
// the products of the basis with a vector and the residual. Everything else an iteration does
// is O(n²) (the Gram matrix in closed form, the Gauss–Newton system) and stays with the
// driver; sampleSums is where the sums run: cpuSums here, a device's in gpu_varpro.go.
// On amd64 with AVX2, cpuSums hands the pairs, in fours, to kernels that run four poles'
// chains in the lanes of one register (varpro_sums_amd64.s; 4–8× faster on
// BenchmarkVarproSums), each lane doing this file's operations in their order, so that the
// sums are the same bit for bit (TestSumsKernels); the Go loops here are the reference, the
// fallback and the leftover pairs and real poles.

// poleBasis is what the sums need of the poles: each pole (one member of each conjugate pair,
// pairs first, then the real poles) and its logarithm, exact from the parameters (a real
// negative pole's has imaginary part π).
type poleBasis struct {
	mu, w []complex128
	pairs int
}

// sampleSums evaluates varpro's sums over the samples τ = 0…len(x)−1.
type sampleSums interface {
	// project sets v0[p] = Σ x_τ λ_p^τ and, unless v1 is nil, v1[p] = Σ x_τ τ λ_p^(τ−s) (s = 1
	// for a real pole, whose derivative column is shifted, else 0).
	project(b poleBasis, x []float64, v0, v1 []complex128)
	// residual sets e = Φc − y: e_τ = Σ_pairs 2Re((c₂ₚ + i·c₂ₚ₊₁)λ_p^τ) + Σ_reals c_p λ_p^τ − y_τ.
	residual(b poleBasis, c, y, e []float64)
}

// residualProjector is a sampleSums that can also project the residual it computes, as
// project(b, e, v0, v1) would, in the same call: a device saves the round trip the
// projection would make (Levenberg–Marquardt projects the residual of every point it
// accepts, and iterative refinement that of every step). The CPU has no trip to save and
// projects only the residuals it is asked to.
type residualProjector interface {
	residualProject(b poleBasis, c, y, e []float64, v0, v1 []complex128)
}

// CPUSums says how the CPU backend runs variable projection's sums over the samples: "avx2"
// (the kernels of varpro_sums_amd64.s, 4–8× faster) or "go" (the portable loops: other
// processors, the noasm tag, GOAMD64=v3).
func CPUSums() string {
	if sumsAsm {
		return "avx2"
	}
	return "go"
}

// The chains flush what has decayed below underflow.Below of their start (package underflow:
// subnormal numbers run slowly on many processors) every underflow.Every samples: a power,
// which starts at 1, by underflow.Complex(p, 1); a residual's term, which starts at twice a
// residue, relative to that start's underflow.Scale. The kernels flush at the same samples by the
// same tests, so the sums stay the same bit for bit. The package's other chains over the
// samples flush the same way: the modal model's kernel and gradient (every Adam step), its
// Jacobian, and the QR fallback's columns.

// cpuSums is sampleSums on the calling goroutine.
type cpuSums struct{}

// basis is the poles as sampleSums takes them (setPoles first).
func (v *varpro) basis() poleBasis { return poleBasis{mu: v.mu, w: v.w, pairs: v.s.pairs} }

// project computes v0 = Σ x_τ λ^τ and v1 = Σ x_τ τ λ^(τ−s) per pole.
func (v *varpro) project(x []float64) { v.px.project(v.basis(), x, v.v0, v.v1) }

// project0 is project without v1, which only the Gauss–Newton system needs: the residues'
// right-hand sides use v0 alone.
func (v *varpro) project0(x []float64) { v.px.project(v.basis(), x, v.v0, nil) }

// projectResidual is project(v.e), from what residual kept where the sums project the
// residual they compute (residualProjector).
func (v *varpro) projectResidual() {
	if !v.eProjected {
		v.project(v.e)
		return
	}
	copy(v.v0, v.ev0)
	copy(v.v1, v.ev1)
}

// projectResidual0 is project0(v.e), likewise.
func (v *varpro) projectResidual0() {
	if !v.eProjected {
		v.project0(v.e)
		return
	}
	copy(v.v0, v.ev0)
}

// residual writes Φc − y into v.e (and, where the sums can, its projection into ev0, ev1).
func (v *varpro) residual() {
	rp, ok := v.px.(residualProjector)
	if !ok {
		v.px.residual(v.basis(), v.c, v.y, v.e)
		return
	}
	if len(v.ev0) < len(v.v0) {
		v.ev0, v.ev1 = make([]complex128, len(v.v0)), make([]complex128, len(v.v1))
	}
	v.ev0, v.ev1 = v.ev0[:len(v.v0)], v.ev1[:len(v.v1)]
	rp.residualProject(v.basis(), v.c, v.y, v.e, v.ev0, v.ev1)
	v.eProjected = true
}

// project is sampleSums.project on the CPU. Pairs the kernels leave go four or two at a
// time: each sum is its own chain of dependent multiplications, and interleaved chains run
// in about the time of one (the results are the same, term by term).
func (cpuSums) project(b poleBasis, x []float64, v0, v1 []complex128) {
	if v1 == nil {
		project0(b, x, v0)
		return
	}
	p := projectPairs(b, x, v0, v1)
	for ; p+3 < b.pairs; p += 4 {
		var s0, s1 [4]complex128
		pw := [4]complex128{1, 1, 1, 1}
		l := [4]complex128{b.mu[p], b.mu[p+1], b.mu[p+2], b.mu[p+3]}
		for t, xt := range x {
			tf := float64(t)
			for j := range pw {
				q := complex(xt*real(pw[j]), xt*imag(pw[j]))
				s0[j] += q
				s1[j] += complex(tf*real(q), tf*imag(q))
				pw[j] *= l[j]
			}
			if t%underflow.Every == underflow.Every-1 {
				for j := range pw {
					pw[j] = underflow.Complex(pw[j], 1)
				}
			}
		}
		copy(v0[p:p+4], s0[:])
		copy(v1[p:p+4], s1[:])
	}
	for ; p+1 < b.pairs; p += 2 {
		l, m := b.mu[p], b.mu[p+1]
		var a0, a1, b0, b1 complex128
		pa, pb := complex(1, 0), complex(1, 0)
		for t, xt := range x {
			tf := float64(t)
			qa := complex(xt*real(pa), xt*imag(pa))
			qb := complex(xt*real(pb), xt*imag(pb))
			a0 += qa
			b0 += qb
			a1 += complex(tf*real(qa), tf*imag(qa))
			b1 += complex(tf*real(qb), tf*imag(qb))
			pa *= l
			pb *= m
			if t%underflow.Every == underflow.Every-1 {
				pa, pb = underflow.Complex(pa, 1), underflow.Complex(pb, 1)
			}
		}
		v0[p], v1[p], v0[p+1], v1[p+1] = a0, a1, b0, b1
	}
	for ; p < len(b.mu); p++ {
		l := b.mu[p]
		if p < b.pairs {
			var s0, s1 complex128
			pw := complex(1, 0)
			for t, xt := range x {
				tf := float64(t)
				q := complex(xt*real(pw), xt*imag(pw))
				s0 += q
				s1 += complex(tf*real(q), tf*imag(q))
				pw *= l
				if t%underflow.Every == underflow.Every-1 {
					pw = underflow.Complex(pw, 1)
				}
			}
			v0[p], v1[p] = s0, s1
			continue
		}
		r := real(l)
		var s0, s1 float64
		pw, prev := 1.0, 0.0
		for t, xt := range x {
			s0 += xt * pw
			s1 += xt * float64(t) * prev
			prev, pw = pw, pw*r
			if t%underflow.Every == underflow.Every-1 {
				pw = underflow.Real(pw, 1)
			}
		}
		v0[p], v1[p] = complex(s0, 0), complex(s1, 0)
	}
}

// project0 is project without v1 (v0 term by term as project's). Pairs the kernels leave go
// two at a time: four chains' powers, sums and poles (24 parts) do not fit in the 15
// floating-point registers Go allocates, and their spills made the loop 1.5× slower
// (BenchmarkVarproSums). The two-pair loop flushes between chunks of underflow.Every samples (a
// flush after the last chunk changes nothing).
func project0(b poleBasis, x []float64, v0 []complex128) {
	p := projectPairs(b, x, v0, nil)
	for ; p+1 < b.pairs; p += 2 {
		l0, l1 := b.mu[p], b.mu[p+1]
		var s0, s1 complex128
		p0, p1 := complex(1, 0), complex(1, 0)
		for lo := 0; lo < len(x); lo += underflow.Every {
			s0, s1, p0, p1 = project0Two(x[lo:min(lo+underflow.Every, len(x))], l0, l1, s0, s1, p0, p1)
			p0, p1 = underflow.Complex(p0, 1), underflow.Complex(p1, 1)
		}
		v0[p], v0[p+1] = s0, s1
	}
	for ; p < len(b.mu); p++ {
		l := b.mu[p]
		if p < b.pairs {
			var s0 complex128
			pw := complex(1, 0)
			for t, xt := range x {
				s0 += complex(xt*real(pw), xt*imag(pw))
				pw *= l
				if t%underflow.Every == underflow.Every-1 {
					pw = underflow.Complex(pw, 1)
				}
			}
			v0[p] = s0
			continue
		}
		r := real(l)
		var s0 float64
		pw := 1.0
		for t, xt := range x {
			s0 += xt * pw
			pw *= r
			if t%underflow.Every == underflow.Every-1 {
				pw = underflow.Real(pw, 1)
			}
		}
		v0[p] = complex(s0, 0)
	}
}

// project0Two runs project0's two chains over x from powers p0, p1 and sums s0, s1. Not
// inlined: in project0's loop over the chunks the compiler spilled the chains to memory
// (1.4× slower).
//
//go:noinline
func project0Two(x []float64, l0, l1, s0, s1, p0, p1 complex128) (complex128, complex128, complex128, complex128) {
	for _, xt := range x {
		s0 += complex(xt*real(p0), xt*imag(p0))
		s1 += complex(xt*real(p1), xt*imag(p1))
		p0 *= l0
		p1 *= l1
	}
	return s0, s1, p0, p1
}

// residual writes Φc − y into e, the pairs the kernels leave four or two at a time (as
// project; each e_τ gets the same additions, pole by pole, in the same order). The four
// poles are read through l in the loop, not held in locals: eight pole parts and eight power
// parts do not fit in the 15 registers Go allocates, and the spilled powers, part of the
// loop's dependency chain, made it 1.6× slower (BenchmarkVarproSums).
func (cpuSums) residual(b poleBasis, c, y, e []float64) {
	floats.ScaleTo(e, -1, y)
	reals := len(b.mu) - b.pairs
	i := residualPairs(b, c, e)
	for ; i+3 < b.pairs; i += 4 {
		l := (*[4]complex128)(b.mu[i : i+4])
		p0 := complex(2*c[2*i], 2*c[2*i+1])
		p1 := complex(2*c[2*i+2], 2*c[2*i+3])
		p2 := complex(2*c[2*i+4], 2*c[2*i+5])
		p3 := complex(2*c[2*i+6], 2*c[2*i+7])
		s0, s1, s2, s3 := underflow.Scale(p0), underflow.Scale(p1), underflow.Scale(p2), underflow.Scale(p3)
		for t := range e {
			e[t] += real(p0)
			e[t] += real(p1)
			e[t] += real(p2)
			e[t] += real(p3)
			p0 *= l[0]
			p1 *= l[1]
			p2 *= l[2]
			p3 *= l[3]
			if t%underflow.Every == underflow.Every-1 {
				p0, p1, p2, p3 = underflow.Complex(p0, s0), underflow.Complex(p1, s1), underflow.Complex(p2, s2), underflow.Complex(p3, s3)
			}
		}
	}
	for ; i+1 < b.pairs; i += 2 {
		l, m := b.mu[i], b.mu[i+1]
		pa := complex(2*c[2*i], 2*c[2*i+1])
		pb := complex(2*c[2*i+2], 2*c[2*i+3])
		sa, sb := underflow.Scale(pa), underflow.Scale(pb)
		for t := range e {
			e[t] += real(pa)
			e[t] += real(pb)
			pa *= l
			pb *= m
			if t%underflow.Every == underflow.Every-1 {
				pa, pb = underflow.Complex(pa, sa), underflow.Complex(pb, sb)
			}
		}
	}
	for ; i < b.pairs; i++ {
		l := b.mu[i]
		pw := complex(2*c[2*i], 2*c[2*i+1])
		scale := underflow.Scale(pw)
		for t := range e {
			e[t] += real(pw)
			pw *= l
			if t%underflow.Every == underflow.Every-1 {
				pw = underflow.Complex(pw, scale)
			}
		}
	}
	for i := 0; i < reals; i++ {
		l := real(b.mu[b.pairs+i])
		pw := c[2*b.pairs+i]
		scale := math.Abs(pw)
		for t := range e {
			e[t] += pw
			pw *= l
			if t%underflow.Every == underflow.Every-1 {
				pw = underflow.Real(pw, scale)
			}
		}
	}
}
