package train

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// SharedModes describes channels whose poles are exp(Δₕ·Aₙ), or the bilinear transform's
// (1 + ΔₕAₙ/2)/(1 − ΔₕAₙ/2): modes Aₙ (Re Aₙ < 0) shared by the channels of a group and a
// step Δₕ > 0 per channel, each mode a conjugate pair. This is S4D's layer with n_ssm SSMs
// below its H channels (channel h uses SSM h mod n_ssm) and tied Δt, under disc zoh or
// bilinear (an S4 layer's): its kernel is 2·Re Σₙ C̃ₕₙ·λₕₙ^t with C̃ free per channel.
type SharedModes struct {
	Group []int          // each channel's group
	A     [][]complex128 // each group's modes, one member of each pair
	Dt    []float64      // each channel's step
	// Bilinear makes the poles (1 + Δₕ·Aₙ/2)/(1 − Δₕ·Aₙ/2), the bilinear transform's (an S4
	// layer's disc, and an S4D layer's with disc bilinear), in place of exp(Δₕ·Aₙ).
	Bilinear bool
}

// check reports what makes m unusable for channels kernels, or nil.
func (m SharedModes) check(channels int) error {
	if len(m.Group) != channels || len(m.Dt) != channels {
		return fmt.Errorf("%d channels, %d groups and %d steps given", channels, len(m.Group), len(m.Dt))
	}
	for h, g := range m.Group {
		if g < 0 || g >= len(m.A) {
			return fmt.Errorf("channel %d: group %d of %d", h, g, len(m.A))
		}
		if !(m.Dt[h] > 0) || math.IsInf(m.Dt[h], 0) {
			return fmt.Errorf("channel %d: step Δ = %v is not positive and finite", h, m.Dt[h])
		}
	}
	for g, a := range m.A {
		if len(a) == 0 || len(a) != len(m.A[0]) {
			return fmt.Errorf("group %d has %d modes, group 0 %d", g, len(a), len(m.A[0]))
		}
		for n, l := range a {
			if !(real(l) < 0) || math.IsInf(real(l), 0) || math.IsNaN(imag(l)) || math.IsInf(imag(l), 0) {
				return fmt.Errorf("group %d, mode %d: A = %v does not decay", g, n, l)
			}
		}
	}
	return nil
}

// SharedFit is FitShared's result: the modes and steps, and each channel's filter (poles
// exp(Δₕ·Aₙ) and their conjugates) with its relative error.
type SharedFit struct {
	Modes SharedModes
	// Residues are each channel's, per mode: its kernel is h[0] = H0 and
	// h[t] = 2·Re Σₙ Residues[n]·exp(Δₕ·Aₙ·(t−1)) for t ≥ 1.
	Residues  [][]complex128
	Filters   []*filters.Diagonal
	RelErrors []float64
}

// FitShared fits kernels (one per channel, h[0] matched exactly) with modes shared by each
// group and a step per channel (docs/maths.md, "Shared modes"): each channel's variable
// projection (Golub and Pereyra) gives its residues and its Gauss–Newton system, which the
// chain rule sums into the system of the modes and steps, moved by Levenberg–Marquardt. Two
// starts from start's modes, cut to `modes` per group: those whose least-squares residues
// carry the most energy over the group's channels, and those spread over its frequencies;
// each gets sharedScreen iterations and the better one goes on, up to iters in all. The
// objective is the channels' squared errors summed, each kernel as it is. Every channel's
// poles stay inside the unit circle by construction (Aₙ = −e^α + iω, Δ = e^δ). progress (if
// not nil) is told of the iterations done of those planned, after each chunk of them.
func FitShared(ctx context.Context, targets [][]float64, start SharedModes, modes, iters int, progress func(done, total int)) (*SharedFit, error) {
	if err := CheckTargets(targets); err != nil {
		return nil, err
	}
	if err := start.check(len(targets)); err != nil {
		return nil, invalidf("shared modes: %v", err)
	}
	if modes < 1 || modes > len(start.A[0]) {
		return nil, invalidf("%d shared modes asked of %d", modes, len(start.A[0]))
	}
	if 2*modes >= len(targets[0]) {
		return nil, invalidf("%d modes (order %d) need kernels longer than %d samples, got %d", modes, 2*modes, 2*modes, len(targets[0]))
	}
	// Neither start is best everywhere: on a layer's own modes cut to a quarter, the ends
	// from single starts differ by 5–10% (the landscape has a basin near each).
	strong := strongestModes(targets, start, modes)
	screen := min(iters, sharedScreen)
	total, done := 2*screen+iters-screen, 0
	tell := func(n int) {
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	var best *sharedRun
	for _, m := range []SharedModes{strong, spreadModes(start, modes)} {
		r := newSharedRun(targets, m)
		if err := r.run(ctx, screen, tell); err != nil {
			r.release()
			return nil, err
		}
		if best == nil || r.f < best.f {
			if best != nil {
				best.release()
			}
			best = r
		} else {
			r.release()
		}
	}
	defer best.release()
	if err := best.run(ctx, iters-screen, tell); err != nil {
		return nil, err
	}
	best.p.sse(best.x) // the residues of x, whichever point the last step tried
	return best.p.result(best.x, targets)
}

// sharedScreen is how many iterations each start of FitShared gets before the best goes on.
const sharedScreen = 20

// sharedRun is a start of FitShared being refined.
type sharedRun struct {
	p   *sharedProblem
	x   []float64
	buf lmBuffers
	st  lmState
	f   float64
}

func newSharedRun(targets [][]float64, m SharedModes) *sharedRun {
	p := newSharedProblem(targets, m)
	x := p.params(m)
	return &sharedRun{p: p, x: x, buf: newLMBuffers(len(x)), f: p.sse(x)}
}

// run gives the start up to iters more iterations, telling tell of each chunk's (and, when
// it stops early, of the rest, so that the count reaches what was planned).
func (r *sharedRun) run(ctx context.Context, iters int, tell func(int)) error {
	done := 0
	for ; done < iters && !r.st.done; done += varproChunk {
		f, err := levenbergMarquardt(ctx, r.p, &r.buf, r.x, min(varproChunk, iters-done), &r.st)
		if err != nil {
			return err
		}
		r.f = f
		tell(min(varproChunk, iters-done))
	}
	if done < iters {
		tell(iters - done)
	}
	return nil
}

func (r *sharedRun) release() { r.p.release() }

// spreadModes returns start with each group's modes cut to n spread evenly over them in the
// order of their frequencies (|Im A|).
func spreadModes(start SharedModes, n int) SharedModes {
	out := SharedModes{Group: start.Group, Dt: start.Dt, A: make([][]complex128, len(start.A)), Bilinear: start.Bilinear}
	for g, a := range start.A {
		byFreq := slices.Clone(a)
		slices.SortStableFunc(byFreq, func(x, y complex128) int {
			return cmp.Compare(math.Abs(imag(x)), math.Abs(imag(y)))
		})
		for k := range n {
			i := 0
			if n > 1 {
				i = int(math.Round(float64(k) * float64(len(a)-1) / float64(n-1)))
			}
			out.A[g] = append(out.A[g], byFreq[i])
		}
	}
	return out
}

// strongestModes returns start with each group's modes cut to the n whose least-squares
// residues carry the most energy over the group's channels (Σₕ |rₕₙ|²·Σ_τ |λₕₙ|^{2τ}).
func strongestModes(targets [][]float64, start SharedModes, n int) SharedModes {
	all := len(start.A[0])
	out := SharedModes{Group: start.Group, Dt: start.Dt, A: make([][]complex128, len(start.A)), Bilinear: start.Bilinear}
	energy := make([][]float64, len(start.A))
	for g := range energy {
		energy[g] = make([]float64, all)
	}
	for h, y := range targets {
		g := start.Group[h]
		s := poleSet{pairs: all, rmax: 1}
		a := modeParams(start.A[g], start.Dt[h], start.Bilinear)
		v := newVarpro(s, y)
		v.sse(a)
		if v.accurate {
			v.exactResidues(true)
		}
		for k := range all {
			r2 := v.c[2*k]*v.c[2*k] + v.c[2*k+1]*v.c[2*k+1]
			// Σ_{τ<L−1} |λ|^(2τ) from the exact log|λ|: (1 − ρ^(L−1))/(1 − ρ) of ρ = |λ|² is
			// 0/0 where ρ rounds to 1.
			energy[g][k] += r2 * real(filters.GeomSum(complex(2*real(v.w[k]), 0), len(y)-1))
		}
		v.release()
	}
	for g, e := range energy {
		order := make([]int, all)
		for k := range order {
			order[k] = k
		}
		sort.SliceStable(order, func(i, j int) bool { return e[order[i]] > e[order[j]] })
		keep := slices.Clone(order[:n])
		slices.Sort(keep)
		for _, k := range keep {
			out.A[g] = append(out.A[g], start.A[g][k])
		}
	}
	return out
}

// modeParams returns the variable projection's parameters (ν, θ per pair, rmax 1) of the
// poles of modes a at step dt (sharedPole).
func modeParams(a []complex128, dt float64, bilinear bool) []float64 {
	out := make([]float64, 2*len(a))
	for n, l := range a {
		out[2*n], out[2*n+1], _, _ = sharedPole(math.Log(-real(l)), imag(l), math.Log(dt), bilinear)
	}
	return out
}

// sharedPole returns the variable projection's parameters (ν, θ; rmax 1) of the pole of mode
// A = −e^α + iω at step Δ = e^δ, and their derivatives with respect to (α, ω, δ). Under
// zero-order hold the pole is e^x with x = Δ·A: ν = δ + α, θ = Δ·ω (beyond ±π too: the
// geometric sums take the phase into [−π, π] themselves, filters.PowerSums). Bilinear, it is
// (1 + x/2)/(1 − x/2) = e^w with w = 2·atanh(x/2), dw/dx = 1/(1 − x²/4): ν = log(−Re w),
// θ = Im w, and ∂ν = Re ∂w/Re w, ∂θ = Im ∂w.
func sharedPole(alpha, omega, delta float64, bilinear bool) (nu, theta float64, dnu, dtheta [3]float64) {
	dt := math.Exp(delta)
	if !bilinear {
		theta = dt * omega
		return delta + alpha, theta, [3]float64{1, 0, 1}, [3]float64{0, dt, theta}
	}
	a := complex(-math.Exp(alpha), omega)
	x := complex(dt, 0) * a
	w := 2 * cmplx.Atanh(x/2)
	g := 1 / (1 - x*x/4)
	dw := [3]complex128{g * complex(-dt*math.Exp(alpha), 0), g * complex(0, dt), g * x}
	for i, d := range dw {
		dnu[i], dtheta[i] = real(d)/real(w), imag(d)
	}
	return math.Log(-real(w)), imag(w), dnu, dtheta
}

// sharedProblem is FitShared's least-squares problem over x = (α, ω per mode of each group,
// then δ per channel): channel h's pole n is that of x = e^δₕ·(−e^αₙ + iωₙ) (sharedPole), in
// the parameters (ν, θ) of its variable projection (rmax 1), so its Gauss–Newton system
// reaches x through the chain rule: H += TₕᵀHₕTₕ, g += Tₕᵀgₕ, Tₕ = ∂(ν, θ)/∂(α, ω, δ).
type sharedProblem struct {
	groups, modes int
	group         []int
	bilinear      bool
	vs            []*varpro
	a             [][]float64     // each channel's parameters at the last point
	da            [][]float64     // and their derivatives: 6 per mode, sharedPole's dν, dθ
	f             []float64       // and its ½‖e‖² there
	hh            []*mat.SymDense // each channel's Gauss–Newton system
	gh            [][]float64
}

func newSharedProblem(targets [][]float64, m SharedModes) *sharedProblem {
	n := len(m.A[0])
	p := &sharedProblem{groups: len(m.A), modes: n, group: m.Group, bilinear: m.Bilinear, f: make([]float64, len(targets))}
	for _, y := range targets {
		p.vs = append(p.vs, newVarpro(poleSet{pairs: n, rmax: 1}, y))
		p.a = append(p.a, make([]float64, 2*n))
		p.da = append(p.da, make([]float64, 6*n))
		p.hh = append(p.hh, mat.NewSymDense(2*n, nil))
		p.gh = append(p.gh, make([]float64, 2*n))
	}
	return p
}

func (p *sharedProblem) release() {
	for _, v := range p.vs {
		v.release()
	}
}

// params returns x for the modes m (each group's A, each channel's Δ).
func (p *sharedProblem) params(m SharedModes) []float64 {
	x := make([]float64, 2*p.modes*p.groups+len(p.vs))
	for g, a := range m.A {
		for n, l := range a {
			x[p.alpha(g, n)] = math.Log(-real(l))
			x[p.alpha(g, n)+1] = imag(l)
		}
	}
	for h, dt := range m.Dt {
		x[p.delta(h)] = math.Log(dt)
	}
	return x
}

func (p *sharedProblem) alpha(g, n int) int { return 2 * (g*p.modes + n) }
func (p *sharedProblem) delta(h int) int    { return 2*p.modes*p.groups + h }

// channel sets channel h's parameters from x.
func (p *sharedProblem) channel(x []float64, h int) []float64 {
	a, da, d, g := p.a[h], p.da[h], x[p.delta(h)], p.group[h]
	for n := range p.modes {
		var dnu, dth [3]float64
		a[2*n], a[2*n+1], dnu, dth = sharedPole(x[p.alpha(g, n)], x[p.alpha(g, n)+1], d, p.bilinear)
		copy(da[6*n:], dnu[:])
		copy(da[6*n+3:], dth[:])
	}
	return a
}

// sse is the channels' ½‖e‖² summed (each channel's on its own thread, the sum in channel
// order: the same bits however they are scheduled).
func (p *sharedProblem) sse(x []float64) float64 {
	filters.ForEachChannel(len(p.vs), func(h int) {
		p.f[h] = p.vs[h].sse(p.channel(x, h))
	})
	f := 0.0
	for _, fh := range p.f {
		f += fh
	}
	return f
}

func (p *sharedProblem) normal(x []float64, h *mat.SymDense, g []float64) {
	hr := h.RawSymmetric()
	clear(hr.Data)
	clear(g)
	m2 := 2 * p.modes
	filters.ForEachChannel(len(p.vs), func(ch int) {
		p.vs[ch].normal(p.channel(x, ch), p.hh[ch], p.gh[ch])
	})
	// Per channel, T = ∂(ν, θ)/∂(α, ω, δ): a 2×2 block per mode (rows ν, θ; columns α, ω)
	// and a column for δ (q). The joint system gains TᵀHT and Tᵀg.
	hp := make([]float64, m2*m2) // H·P, P the modes' block-diagonal part of T
	q, hq := make([]float64, m2), make([]float64, m2)
	for ch := range p.vs {
		hh, gh, da := p.hh[ch], p.gh[ch], p.da[ch]
		blk := func(n, k, j int) float64 { return da[6*n+3*k+j] } // ∂(ν, θ)[k]/∂(α, ω)[j]
		for n := range p.modes {
			q[2*n], q[2*n+1] = da[6*n+2], da[6*n+5]
		}
		for r := range m2 {
			hq[r] = 0
			for n := range p.modes {
				h0, h1 := hh.At(r, 2*n), hh.At(r, 2*n+1)
				hp[r*m2+2*n] = h0*blk(n, 0, 0) + h1*blk(n, 1, 0)
				hp[r*m2+2*n+1] = h0*blk(n, 0, 1) + h1*blk(n, 1, 1)
				hq[r] += h0*q[2*n] + h1*q[2*n+1]
			}
		}
		base, d := p.alpha(p.group[ch], 0), p.delta(ch)
		qhq, qg := 0.0, 0.0
		for r := range m2 {
			n, j := r/2, r%2
			qhq += q[r] * hq[r]
			qg += q[r] * gh[r]
			// Row r of Pᵀ·(H·P), of Pᵀ·(H·q) and of Pᵀ·g: P's column r has mode n's rows ν, θ.
			for c := r; c < m2; c++ {
				hr.Data[(base+r)*hr.Stride+base+c] += blk(n, 0, j)*hp[2*n*m2+c] + blk(n, 1, j)*hp[(2*n+1)*m2+c]
			}
			hr.Data[(base+r)*hr.Stride+d] += blk(n, 0, j)*hq[2*n] + blk(n, 1, j)*hq[2*n+1]
			g[base+r] += blk(n, 0, j)*gh[2*n] + blk(n, 1, j)*gh[2*n+1]
		}
		hr.Data[d*hr.Stride+d] += qhq
		g[d] += qg
	}
}

// solveDamped solves Levenberg–Marquardt's damped system through its structure: a channel's
// δ meets only itself and its group's modes, so the δ block is diagonal, and eliminating it
// leaves the modes' Schur complement A − B·D⁻¹·Bᵀ, O(H·m²) to form and O(m³) to factor, where
// the dense factorisation of the whole, which eliminates the modes first, is O(H³) (1,024
// channels at order 16: half of the fit's time).
func (p *sharedProblem) solveDamped(damped *mat.SymDense, step []float64) bool {
	raw := damped.RawSymmetric()
	n1, m2 := 2*p.modes*p.groups, 2*p.modes
	schur := make([]float64, n1*n1) // upper triangle, row-major, as choleskySolve takes it
	for i := range n1 {
		copy(schur[i*n1+i:(i+1)*n1], raw.Data[i*raw.Stride+i:i*raw.Stride+n1])
	}
	x := step[:n1] // the modes' right-hand side, less what the δs take, then their step
	for ch := range p.vs {
		dh, base := p.delta(ch), p.alpha(p.group[ch], 0)
		d := raw.Data[dh*raw.Stride+dh]
		if !(d > 0) {
			return false
		}
		col := func(r int) float64 { return raw.Data[(base+r)*raw.Stride+dh] }
		rd := step[dh] / d
		for r := range m2 {
			br := col(r)
			x[base+r] -= br * rd
			row := schur[(base+r)*n1:]
			for c := r; c < m2; c++ {
				row[base+c] -= br * col(c) / d
			}
		}
	}
	if !choleskySolve(schur, n1, x) {
		return false
	}
	for ch := range p.vs {
		dh, base := p.delta(ch), p.alpha(p.group[ch], 0)
		v := step[dh]
		for r := range m2 {
			v -= raw.Data[(base+r)*raw.Stride+dh] * x[base+r]
		}
		step[dh] = v / raw.Data[dh*raw.Stride+dh]
	}
	return true
}

// admit refuses a step that takes a channel's pole where its parametrisation saturates
// (varproMinNu ≤ ν ≤ varproMaxNu); Levenberg–Marquardt then damps it.
func (p *sharedProblem) admit(_, trial, _ []float64) bool {
	for ch := range p.vs {
		d, g := trial[p.delta(ch)], p.group[ch]
		for n := range p.modes {
			nu, _, _, _ := sharedPole(trial[p.alpha(g, n)], trial[p.alpha(g, n)+1], d, p.bilinear)
			if !(nu >= varproMinNu && nu <= varproMaxNu) {
				return false
			}
		}
	}
	return true
}

// result is the fit at x (after sse(x)), its residues polished as a modal fit's final ones.
func (p *sharedProblem) result(x []float64, targets [][]float64) (*SharedFit, error) {
	out := &SharedFit{Modes: SharedModes{Group: p.group, A: make([][]complex128, p.groups), Dt: make([]float64, len(p.vs)), Bilinear: p.bilinear}}
	for g := range p.groups {
		for n := range p.modes {
			out.Modes.A[g] = append(out.Modes.A[g], complex(-math.Exp(x[p.alpha(g, n)]), x[p.alpha(g, n)+1]))
		}
	}
	for ch, v := range p.vs {
		out.Modes.Dt[ch] = math.Exp(x[p.delta(ch)])
		if v.polish(); v.accurate {
			v.exactResidues(true)
		}
		y := targets[ch]
		c := slices.Clone(v.c)
		f := &modalFit{s: v.s, a: slices.Clone(p.channel(x, ch)), c: c, h0: y[0]}
		d, err := f.diagonal()
		if err != nil {
			return nil, fmt.Errorf("channel %d: %w", ch, err)
		}
		res := make([]complex128, p.modes)
		for n := range res {
			res[n] = complex(c[2*n], c[2*n+1])
		}
		out.Residues = append(out.Residues, res)
		out.Filters = append(out.Filters, d)
		out.RelErrors = append(out.RelErrors, filters.RelDiff(y, d.Impulse(len(y))))
	}
	return out, nil
}
