package train

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/underflow"
)

// channelRNG gives each channel its own stream, so results do not depend on scheduling.
func channelRNG(seed uint64, ch int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(ch)+0x9e3779b97f4a7c15))
}

// eraFilter is the Eigensystem Realisation Algorithm on the Markov parameters h[1..]: the
// leading singular triplets of the m×m Hankel matrix H[i][j] = h[1+i+j], truncated to order n,
// give the balanced realisation A = Σ^(-1/2)U₁ᵀH↑V₁Σ^(-1/2), B = Σ^(1/2)V₁ᵀe₁, C = e₁ᵀU₁Σ^(1/2),
// D = h[0] (H↑ is H shifted by one sample). H is the largest square Hankel matrix the kernel
// gives (at most 512 rows): fewer rows understate ERA on near-exact targets (Hyena kernels at
// n = 4: 6e-8 with 128 rows, 1e-10 with 511). Singular values below 1e-13·σ₁ are dropped, so
// a target of lower order than n gives a smaller realisation. This is also the plain-ERA
// baseline.
func eraFilter(h []float64, n int) (*filters.Dense, error) {
	return eraRows(h, n, eraSize)
}

// eraRows is eraFilter on an m×m Hankel matrix (m is capped by the length of h).
func eraRows(h []float64, n, m int) (*filters.Dense, error) {
	tops := eraTops(h, m)
	defer tops.release()
	return eraFrom(h, n, tops)
}

// eraTops is the eigenpairs of eraRows' m×m Hankel matrix of h (m capped as there), for
// eraFrom: one source shared by ERA's realisations of several orders of one kernel.
func eraTops(h []float64, m int) *hankelTops {
	return newHankelTops(h[min(1, len(h)):], max(0, min((len(h)-2)/2, m)))
}

// eraFrom is eraRows with the Hankel matrix's eigenpairs from tops (eraTops(h, m)).
func eraFrom(h []float64, n int, tops *hankelTops) (*filters.Dense, error) {
	m := tops.m
	if m < 1 || n == 0 {
		return filters.NewDense(nil, nil, nil, h[0])
	}
	// The Hankel matrix of a scalar sequence is symmetric, so its SVD is an eigen-
	// decomposition H = Σ λᵢqᵢqᵢᵀ: σᵢ = |λᵢ|, uᵢ = qᵢ, vᵢ = sign(λᵢ)·qᵢ; only the leading n
	// pairs are computed (hankelTops).
	lambda, q, err := tops.top(n)
	if err != nil {
		return nil, err
	}
	r := len(lambda)
	for r > 0 && math.Abs(lambda[r-1]) <= 1e-13*math.Abs(lambda[0]) {
		r--
	}
	if r == 0 {
		return filters.NewDense(nil, nil, nil, h[0])
	}
	shifted := newHankelOp(h[2:], m)
	hv := make([]float64, m)
	isq := make([]float64, r)
	for i := range isq {
		isq[i] = 1 / math.Sqrt(math.Abs(lambda[i]))
	}
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = make([]float64, r)
	}
	b, c := make([]float64, r), make([]float64, r)
	for j := 0; j < r; j++ {
		sign := 1.0
		if lambda[j] < 0 {
			sign = -1
		}
		// Column j of U₁ᵀH↑V₁.
		shifted.apply(hv, q[j])
		for i := 0; i < r; i++ {
			rows[i][j] = sign * floats.Dot(q[i], hv) * isq[i] * isq[j]
		}
		b[j] = sign * q[j][0] / isq[j]
		c[j] = q[j][0] / isq[j]
	}
	return filters.NewDense(rows, b, c, h[0])
}

// hankelModes is the "hankel" init: the poles of the ERA realisation of order n, each
// unstable one reflected inside the unit circle (λ → 1/λ̄, which keeps the shape of the
// magnitude response) and then capped at rmax, with the residues that are optimal for those
// poles in least squares over the whole target (a linear problem: the kernel is linear in the
// residues). ERA's own residues are fitted to a truncated Hankel matrix; refitting them on
// every sample is what makes this init better than plain ERA. Only ERA's eigenvalues are
// needed (no eigenvectors, no conversion report). ok is false when they cannot be computed or
// the residues cannot be fitted (repeated poles).
func hankelModes(era *filters.Dense, target []float64, rmax float64) (*filters.Diagonal, bool, error) {
	eig, err := filters.Poles(era)
	if err != nil {
		return nil, false, nil
	}
	var poles []complex128
	for _, p := range eig {
		r := cmplx.Abs(p)
		if r > 1 {
			p = 1 / cmplx.Conj(p)
			r = 1 / r
		}
		if r > rmax {
			p *= complex(rmax/r, 0)
		}
		poles = append(poles, p)
	}
	res, err := lsResidues(poles, target)
	if err != nil {
		return nil, false, nil
	}
	out, err := filters.NewDiagonal(poles, res, target[0])
	if err != nil {
		return nil, false, nil
	}
	return out, true, nil
}

// lsResidues fits conjugate-closed residues for fixed poles to y[1..] in least squares (QR).
func lsResidues(poles []complex128, y []float64) ([]complex128, error) {
	type col struct {
		idx  int
		pair bool
	}
	var cols []col
	for i, p := range poles {
		switch {
		case imag(p) > 0:
			cols = append(cols, col{i, true})
		case imag(p) == 0:
			cols = append(cols, col{i, false})
		}
	}
	width := 0
	for _, c := range cols {
		width++
		if c.pair {
			width++
		}
	}
	rows := len(y) - 1
	if width == 0 || rows < width {
		return make([]complex128, len(poles)), nil
	}
	v := mat.NewDense(rows, width, nil)
	j := 0
	for _, c := range cols {
		l := poles[c.idx]
		pw := complex(1, 0)
		for t := 0; t < rows; t++ {
			if c.pair {
				// 2·Re(r·λ^t) = 2Re r·Re λ^t - 2Im r·Im λ^t.
				v.Set(t, j, 2*real(pw))
				v.Set(t, j+1, -2*imag(pw))
			} else {
				v.Set(t, j, real(pw))
			}
			pw *= l
			if t%underflow.Every == 0 { // package underflow
				pw = underflow.Complex(pw, 1)
			}
		}
		j++
		if c.pair {
			j++
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(v, mat.NewVecDense(rows, append([]float64(nil), y[1:]...))); err != nil {
		var ce mat.Condition
		if !errors.As(err, &ce) {
			return nil, err
		}
	}
	res := make([]complex128, len(poles))
	j = 0
	for _, c := range cols {
		if c.pair {
			r := complex(x.AtVec(j), x.AtVec(j+1))
			res[c.idx] = r
			for k, p := range poles {
				if k != c.idx && p == cmplx.Conj(poles[c.idx]) && res[k] == 0 {
					res[k] = cmplx.Conj(r)
					break
				}
			}
			j += 2
		} else {
			res[c.idx] = complex(x.AtVec(j), 0)
			j++
		}
	}
	return res, nil
}

// poleBound is the radius within which the hankel init and the variable projection keep
// every pole of a fit to kernels of length samples: the job's MaxRadius under the radius
// constraint (beyond MinAutoRadius too, as --max-radius promises), else AutoRadius(length),
// the automatic rule of the radius constraint, so that a long kernel's slow modes fit
// without the constraint as with it (a constant 0.9999 clipped them from L = 32768 on).
// Every reader of the bound goes through it: a job resolves an automatic bound
// (resolveRadius) before any fit reads it, for the length it passes here.
func (s *Spec) poleBound(length int) float64 {
	if s.Constraint == ConstraintRadius {
		if s.MaxRadius == 0 {
			panic("train: the automatic radius bound was not resolved")
		}
		return s.MaxRadius
	}
	return AutoRadius(length)
}

// initParams returns the initial parameters of channel ch and the model they use.
func initParams(s *Spec, target []float64, ch int) (model, []float64, error) {
	rng := channelRNG(s.Seed, ch)
	n, length := s.Order, len(target)
	rmax := s.poleBound(length)
	if s.Model == ModelRTF {
		return initRTF(s, target, rng, rmax)
	}
	// modal and rotation
	pairs, reals := n/2, n%2
	var modes []filters.Filter
	if s.Init == "hankel" {
		era, err := eraFilter(target, n)
		if err != nil {
			return nil, nil, err
		}
		d, ok, err := hankelModes(era, target, rmax)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			modes = append(modes, d)
			pairs, reals = 0, 0
			for _, p := range d.Poles {
				switch {
				case imag(p) > 0:
					pairs++
				case imag(p) == 0:
					reals++
				}
			}
			// Unused states (a target of lower order) become idle pairs.
			for 2*pairs+reals+2 <= n {
				pairs++
			}
			if 2*pairs+reals < n {
				reals++
			}
		}
	}
	m := &modalModel{pairs: pairs, reals: reals, length: length, rotation: s.Model == "rotation"}
	m.minNu = math.Log(-math.Log(rmax))
	m.maxU = math.Atanh(rmax)
	p := make([]float64, m.numParams())
	scale := 1 / math.Sqrt(float64(max(n, 1)))
	setPair := func(i int, l, r complex128) {
		q := p[i*m.pairSize():]
		q[0] = math.Log(-math.Log(math.Min(cmplx.Abs(l), rmax)))
		q[1] = cmplx.Phase(l)
		if m.rotation {
			// (c₁ - ic₂)(b₁ + ib₂)/2 = r with b = (β, 0), β = √(2|r|).
			beta := math.Max(math.Sqrt(2*cmplx.Abs(r)), 1e-3)
			q[2], q[3], q[4], q[5] = beta, 0, 2*real(r)/beta, -2*imag(r)/beta
		} else {
			q[2], q[3] = real(r), imag(r)
		}
	}
	setReal := func(i int, l, r float64) {
		q := p[m.pairs*m.pairSize()+i*m.realSize():]
		q[0] = math.Atanh(math.Max(-rmax, math.Min(rmax, l)))
		if m.rotation {
			b := math.Max(math.Sqrt(math.Abs(r)), 1e-3)
			q[1], q[2] = b, r/b
		} else {
			q[1] = r
		}
	}
	for i := 0; i < m.pairs; i++ {
		// LRU-style ring: radius in [0.5, 0.99], phase in [0, π).
		rad := 0.5 + 0.49*rng.Float64()
		l := cmplx.Rect(rad, math.Pi*rng.Float64())
		var r complex128
		if s.Init == "xavier" {
			r = complex(rng.NormFloat64(), rng.NormFloat64()) * complex(scale, 0)
		}
		setPair(i, l, r)
	}
	for i := 0; i < m.reals; i++ {
		r := 0.0
		if s.Init == "xavier" {
			r = rng.NormFloat64() * scale
		}
		setReal(i, rng.Float64()*0.9, r)
	}
	if len(modes) > 0 {
		d := modes[0].(*filters.Diagonal)
		pi, ri := 0, 0
		for k, l := range d.Poles {
			switch {
			case imag(l) > 0:
				setPair(pi, l, d.Residues[k])
				pi++
			case imag(l) == 0:
				setReal(ri, real(l), real(d.Residues[k]))
				ri++
			}
		}
		p[len(p)-1] = d.H0
	}
	m.project(p)
	return m, p, nil
}

// rtfHankelStarts returns the RTFs of the stabilised ERA realisation truncated to each
// candidate order whose transfer function float64 can hold, best first: their a and b̃, with
// b̃ = b(I - A^L) and h0 chosen so that the circular kernel starts at h[0]. Unused poles stay
// at z = 0. The lower orders are kept as further starts for the refinement, which from
// them reaches basins the full order misses, so a higher order never does worse.
func rtfHankelStarts(m *rtfModel, target []float64, rmax float64) ([][]float64, error) {
	n := m.n
	if n == 0 {
		return [][]float64{{target[0]}}, nil
	}
	// Clustered poles (a low-pass FIR's ERA poles crowd near z = 1) cannot be held by
	// float64 polynomial coefficients, so each order is judged by the error its transfer
	// function actually reaches: ERA is balanced, so its truncation to order r is the leading
	// r×r block, and a few candidate orders cost one decomposition in all.
	type start struct {
		p   []float64
		err float64
	}
	var starts []start
	ws := m.newWorkspace()
	// The init runs Levenberg–Marquardt afterwards, so a Hankel matrix of n + 64 rows (at
	// least 128) is enough to seed it, and its poles often land in better basins than those
	// of the full Hankel matrix (S4 kernels). Up to refineSmallOrder the full matrix's orders
	// are starts too: on near-exact targets its poles are the more accurate (Hyena kernels at
	// n = 4 and 16: 1.9e-8 and 3.0e-8 against 4.5e-8 and 6.2e-8), and at these orders the
	// extra starts cost little; at n = 64 they would cost half the job again.
	rowCounts := []int{max(n+64, 128)}
	if n <= refineSmallOrder {
		rowCounts = append(rowCounts, 512)
	}
	for _, rows := range rowCounts {
		era, err := eraRows(target, n, min(rows, 512))
		if err != nil {
			return nil, err
		}
		for _, r := range initOrders(era.Order()) {
			d, ok, err := hankelModes(leading(era, r), target, rmax)
			if err != nil || !ok {
				continue
			}
			// The circular kernel of eq. 13 is g[1..L-1] with g[L] at lag 0 (the wrap-around of
			// the telescoping sum); with it, a ⊛ g vanishes at lag 0 and at lags above n.
			g := d.Impulse(m.length + 1)
			if e := filters.RelDiff(target, g[:m.length]); e < m.modalErr || m.modalErr == 0 {
				m.modalErr = e
			}
			g[0] = g[m.length]
			g = g[:m.length]
			// Two ways to write the poles as coefficients, each the better on some targets
			// (multiplying out factors: S4 kernels, windowed-sinc; interpolation on the unit
			// circle: Hyena, Butterworth); the one whose kernel fits better is kept.
			var best *start
			for _, den := range [][]float64{polyFromPoles(d.Poles), filters.PolyFromRoots(d.Poles)} {
				if p, e, ok := hankelStart(m, ws, den, g, target); ok && (best == nil || e < best.err) {
					best = &start{p, e}
				}
			}
			if best != nil {
				starts = append(starts, *best)
			}
		}
	}
	sort.SliceStable(starts, func(i, j int) bool { return starts[i].err < starts[j].err })
	out := make([][]float64, len(starts))
	for i, s := range starts {
		out[i] = s.p
	}
	return out, nil
}

// initOrders lists the orders tried for the rtf hankel init: n, its neighbours, then
// fractions of n (each costs an eigen-decomposition, a least-squares fit and a conversion).
func initOrders(n int) []int {
	seen := map[int]bool{}
	var out []int
	for _, r := range []int{n, n - 1, n - 2, 3 * n / 4, n / 2, n / 4, 1} {
		if r >= 1 && r <= n && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// leading truncates a balanced realisation to its first r states.
func leading(d *filters.Dense, r int) *filters.Dense {
	if r == d.Order() {
		return d
	}
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = append([]float64(nil), d.A.RawRowView(i)[:r]...)
	}
	out, err := filters.NewDense(rows, d.B[:r], d.C[:r], d.D)
	if err != nil {
		panic("train: truncating a valid realisation: " + err.Error())
	}
	return out
}

// polyFromPoles returns a₁…a_r of a(z⁻¹) = Π(1 - pᵢz⁻¹) for a conjugate-closed set of poles,
// multiplying out real quadratic factors (one per pair, taken at the pole with imag > 0) and
// real linear ones.
func polyFromPoles(poles []complex128) []float64 {
	den := []float64{1}
	mul := func(f ...float64) {
		next := make([]float64, len(den)+len(f)-1)
		for i, u := range den {
			for j, v := range f {
				next[i+j] += u * v
			}
		}
		den = next
	}
	for _, p := range poles {
		switch {
		case imag(p) > 0:
			mul(1, -2*real(p), real(p)*real(p)+imag(p)*imag(p))
		case imag(p) == 0:
			mul(1, -real(p))
		}
	}
	return den[1:]
}

// hankelStart returns the RTF parameters whose circular kernel is g (the modal fit's truncated
// response, g[0] its wrap-around) for the denominator den (a lower order leaves the leading
// coefficients; the rest stay zero), with h0 set to match target[0], and their kernel's error
// against the target. ok is false when float64 coefficients cannot hold the poles: the
// kernel then departs from g.
func hankelStart(m *rtfModel, ws workspace, den, g, target []float64) ([]float64, float64, bool) {
	n := m.n
	p := make([]float64, m.numParams())
	copy(p[:n], den)
	// b̃ is the circular convolution a ⊛ g at lags 1…n (the wrap-around terms are the eq. 13
	// correction); it needs no power of the companion matrix.
	for j := 1; j <= n; j++ {
		s := g[j]
		for i := 1; i <= n; i++ {
			s += p[i-1] * g[((j-i)%m.length+m.length)%m.length]
		}
		p[n+j-1] = s
	}
	k := make([]float64, m.length)
	m.kernel(ws, p, k)
	if e := filters.RelDiff(g, k); !(e <= 1e-3) {
		return nil, 0, false
	}
	p[2*n] = target[0] - k[0]
	k[0] = target[0]
	e := filters.RelDiff(target, k)
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return nil, 0, false
	}
	return p, e, true
}

// initRTF returns the initial RTF parameters of initParams: [a (n, or n+1 raw values under
// the l1_montel constraint), b̃ (n), h0].
func initRTF(s *Spec, target []float64, rng *rand.Rand, rmax float64) (model, []float64, error) {
	n, length := s.Order, len(target)
	m := &rtfModel{n: n, length: length, montel: s.Constraint == "l1_montel"}
	p := make([]float64, m.numParams())
	switch s.Init {
	case "xavier", "montel":
		// The reference implementation's inits of a and b̃ (rtf.Xavier, rtf.Montel), laid
		// out as without the Montel map (a, b̃, h0); the map's raw parameters follow below.
		if n == 0 {
			break
		}
		a, b := rtf.Xavier(rng, n)
		if s.Init == "montel" {
			a, b = rtf.Montel(rng, n)
		}
		copy(p, a)
		copy(p[n:], b)
		if m.montel && s.Init == "montel" {
			// With the l1_montel constraint the reference draws its scalar uniform in
			// [0, 1); the map's extra raw parameter w[n] plays its part.
			copy(p[n+1:], p[n:2*n+1])
			p[n] = rng.Float64()
		}
	case "hankel":
		starts, err := rtfHankelStarts(m, target, rmax)
		if err != nil {
			return nil, nil, err
		}
		if len(starts) == 0 {
			// Nothing representable: the paper's zero init.
			p[2*n] = target[0]
		} else {
			copy(p, starts[0])
			// Two lower orders at most: each costs the refinement one more run.
			m.starts = starts[1:min(len(starts), 3)]
		}
	}
	if m.montel && s.Init != "montel" && s.Init != "zeros" {
		// Raw Montel parameters: a = w[:n]/(Σ|w| + 10⁻⁶) (rtf.L1Montel) with
		// w[n] = 1 − Σ|a| − 10⁻⁶ ≥ 0 keeps a.
		l1 := 0.0
		for _, v := range p[:n] {
			l1 += math.Abs(v)
		}
		if l1 >= 1 {
			for i := 0; i < n; i++ {
				p[i] /= l1 / 0.999
			}
			l1 = 0.999
		}
		copy(p[n+1:], p[n:])
		p[n] = 1 - l1 - rtf.MontelEps
	}
	if !m.montel && s.Init != "zeros" && m.maxRadius(p) > rmax {
		// An unstable start (xavier often is): shrink a into the Montel region.
		l1 := 0.0
		for _, v := range p[:n] {
			l1 += math.Abs(v)
		}
		for i := 0; i < n; i++ {
			p[i] *= 0.99 / l1
		}
	}
	return m, p, nil
}
