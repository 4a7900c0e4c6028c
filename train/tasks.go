package train

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/internal/fft"
)

// Task is a training task that is not a distillation: fit a kernel of Spec.Target.Length
// samples so that y ≈ k * u (causal convolution), per channel.
type Task struct {
	Name string      // "sysid" or "delay"
	U, Y [][]float64 // input and output sequences, one pair per channel
}

// DelayTask builds the Delay task of the RTF paper, §4.3: band-limited white noise u (white noise
// with every frequency above cutoff·π removed) and y[t] = u[t-d], over length samples. A parameter out of range is a *FieldError naming it.
func DelayTask(length, delay int, cutoff float64, seed uint64) (*Task, error) {
	// The length first: the delay's range depends on it.
	if length < 2 || length > MaxLength {
		return nil, fieldErrorf("length", length, nil, "outside [2, %d]", MaxLength)
	}
	if delay < 0 || delay >= length {
		return nil, fieldErrorf("delay", delay, []string{"length"}, "outside [0, %d)", length)
	}
	if !(cutoff > 0 && cutoff <= 1) {
		return nil, fieldErrorf("cutoff", cutoff, nil, "outside (0, 1] (a fraction of the Nyquist frequency)")
	}
	rng := channelRNG(seed, 0)
	u := make([]float64, length)
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	rfft := fft.NewReal(length)
	c := rfft.Coefficients(nil, u)
	keep := int(cutoff * float64(len(c)-1))
	for i := keep + 1; i < len(c); i++ {
		c[i] = 0
	}
	rfft.Sequence(u, c)
	scale := 0.0
	for _, v := range u {
		scale += v * v
	}
	scale = math.Sqrt(float64(length) / scale)
	y := make([]float64, length)
	for i := range u {
		u[i] *= scale
	}
	copy(y[delay:], u[:length-delay])
	return &Task{Name: "delay", U: [][]float64{u}, Y: [][]float64{y}}, nil
}

// sysid is the objective mean((k*u - y)²) per channel, with FFT convolutions.
type sysid struct {
	u, y    [][]float64
	length  int // kernel length
	size    int // FFT size ≥ T + L
	uf      [][]complex128
	ffts    sync.Pool
	yNorms  []float64
	samples int
}

func (t *Task) objective(s Spec) (objective, [][]float64, error) {
	if len(t.U) == 0 || len(t.U) != len(t.Y) {
		return nil, nil, invalidf("task %s needs one output sequence per input sequence (%d inputs, %d outputs)", t.Name, len(t.U), len(t.Y))
	}
	length := s.Target.Length
	n := len(t.U[0])
	// The sequences first: the kernel length's range depends on theirs.
	for i, u := range t.U {
		if len(u) != len(t.Y[i]) {
			return nil, nil, invalidf("sequence %d has %d input samples and %d output samples: want as many of each", i, len(u), len(t.Y[i]))
		}
		if len(u) != n {
			return nil, nil, invalidf("sequence %d has %d samples, sequence 0 has %d", i, len(u), n)
		}
	}
	if n < 2 {
		return nil, nil, invalidf("task %s: sequences of %d samples: want at least 2", t.Name, n)
	}
	if length < 2 || length > n {
		return nil, nil, invalidf("kernel length %d must be in [2, %d] (the sequence length)", length, n)
	}
	o := &sysid{u: t.U, y: t.Y, length: length, samples: n}
	o.size = 1
	for o.size < n+length {
		o.size <<= 1
	}
	o.ffts.New = func() any { return fft.NewReal(o.size) }
	rfft := fft.NewReal(o.size)
	buf := make([]float64, o.size)
	for i, u := range t.U {
		for j, v := range u {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(t.Y[i][j]) || math.IsInf(t.Y[i][j], 0) {
				return nil, nil, invalidf("sequence %d sample %d is not finite", i, j)
			}
		}
		// Every kernel maps a zero input to a zero output: such a sequence identifies none,
		// and its channel's fit would be whatever the start was, reported as exact.
		if !slices.ContainsFunc(u, func(v float64) bool { return v != 0 }) {
			return nil, nil, invalidf("sequence %d's input is all zero: every kernel gives it the same output, so it identifies none", i)
		}
		clear(buf)
		copy(buf, u)
		o.uf = append(o.uf, rfft.Coefficients(nil, buf))
		s := 0.0
		for _, v := range t.Y[i] {
			s += v * v
		}
		o.yNorms = append(o.yNorms, s)
	}
	// The runner's "targets" are least-squares FIR estimates of the kernels: they set the
	// channel count and length, and give the hankel init something to realise.
	estimates := make([][]float64, len(t.U))
	for i := range estimates {
		k, err := firEstimate(t.U[i], t.Y[i], length)
		if err != nil {
			return nil, nil, err
		}
		estimates[i] = k
	}
	return o, estimates, nil
}

// firEstimate solves the normal equations of min‖u * k - y‖ for an FIR k of the given length,
// with the Toeplitz autocorrelation of u (edge effects ignored, fine for an initial guess)
// and a ridge of 1e-10 of its energy so that band-limited inputs stay solvable.
func firEstimate(u, y []float64, length int) ([]float64, error) {
	r := make([]float64, length)
	c := make([]float64, length)
	for lag := 0; lag < length; lag++ {
		for t := lag; t < len(u); t++ {
			r[lag] += u[t] * u[t-lag]
			c[lag] += y[t] * u[t-lag]
		}
	}
	sym := mat.NewSymDense(length, nil)
	for i := 0; i < length; i++ {
		for j := i; j < length; j++ {
			sym.SetSym(i, j, r[j-i])
		}
		sym.SetSym(i, i, r[0]*(1+1e-10)+1e-300)
	}
	var chol mat.Cholesky
	if !chol.Factorize(sym) {
		return make([]float64, length), nil
	}
	var k mat.VecDense
	if err := chol.SolveVecTo(&k, mat.NewVecDense(length, c)); err != nil {
		return make([]float64, length), nil
	}
	return k.RawVector().Data, nil
}

// predict returns the residual r = (k*u)[0..T) - y.
func (o *sysid) residual(ch int, k []float64, rfft *fft.Real) []float64 {
	buf := make([]float64, o.size)
	copy(buf, k)
	c := rfft.Coefficients(nil, buf)
	for i := range c {
		c[i] *= o.uf[ch][i]
	}
	rfft.Sequence(buf, c)
	r := buf[:o.samples]
	inv := 1 / float64(o.size)
	for i := range r {
		r[i] = r[i]*inv - o.y[ch][i]
	}
	return r
}

func (o *sysid) loss(ch int, k, e []float64) float64 {
	rfft := o.ffts.Get().(*fft.Real)
	defer o.ffts.Put(rfft)
	r := o.residual(ch, k, rfft)
	s := 0.0
	for _, v := range r {
		s += v * v
	}
	// ∂/∂k[t] = 2/T Σ_s r[s]·u[s-t]: a correlation, FFT(r)·conj(FFT(u)).
	buf := make([]float64, o.size)
	copy(buf, r)
	c := rfft.Coefficients(nil, buf)
	for i := range c {
		c[i] *= complex(real(o.uf[ch][i]), -imag(o.uf[ch][i]))
	}
	rfft.Sequence(buf, c)
	scale := 2 / float64(o.samples) / float64(o.size)
	for t := range e {
		e[t] = buf[t] * scale
	}
	return s / float64(o.samples)
}

// residualEnergy returns Σ r², r = (k*u)[0..T) - y.
func (o *sysid) residualEnergy(ch int, k []float64) float64 {
	rfft := o.ffts.Get().(*fft.Real)
	defer o.ffts.Put(rfft)
	s := 0.0
	for _, v := range o.residual(ch, k, rfft) {
		s += v * v
	}
	return s
}

func (o *sysid) relError(ch int, k []float64) float64 {
	s := o.residualEnergy(ch, k)
	if o.yNorms[ch] == 0 {
		return math.Sqrt(s)
	}
	return math.Sqrt(s / o.yNorms[ch])
}

func (o *sysid) mse(ch int, k []float64) float64 {
	return o.residualEnergy(ch, k) / float64(o.samples)
}
