package train

import (
	"math"
	"sync"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/fft"
)

// objective turns a channel's kernel into a loss and its gradient ∂loss/∂k. Methods are
// called concurrently for different channels.
type objective interface {
	// loss returns the loss of kernel k for channel ch and writes ∂loss/∂k into e.
	loss(ch int, k, e []float64) float64
	// relError returns the channel's relative L2 error, the figure early stopping and the
	// reports use.
	relError(ch int, k []float64) float64
	// mse returns the mean squared error the reports quote.
	mse(ch int, k []float64) float64
}

// distill compares kernels with target kernels.
type distill struct {
	targets [][]float64
	kind    Loss
	norms   []float64
	weights [][]float64 // freq: per-bin weights
	ffts    sync.Pool
}

func newDistill(targets [][]float64, kind Loss) *distill {
	d := &distill{targets: targets, kind: kind, norms: make([]float64, len(targets))}
	for i, y := range targets {
		s := 0.0
		for _, v := range y {
			s += v * v
		}
		d.norms[i] = s
	}
	if kind == "freq" {
		length := len(targets[0])
		d.ffts.New = func() any { return fft.NewReal(length) }
		rfft := fft.NewReal(length)
		for _, y := range targets {
			c := rfft.Coefficients(nil, y)
			mean := 0.0
			for _, v := range c {
				mean += real(v)*real(v) + imag(v)*imag(v)
			}
			mean /= float64(len(c))
			w := make([]float64, len(c))
			for i, v := range c {
				// 1/(|Y|² + ε) with ε = 1e-3 of the mean power: every band counts, but a
				// spectral null of the target does not dominate.
				w[i] = 1 / (real(v)*real(v) + imag(v)*imag(v) + 1e-3*mean + 1e-300)
			}
			d.weights = append(d.weights, w)
		}
	}
	return d
}

func (d *distill) loss(ch int, k, e []float64) float64 {
	y := d.targets[ch]
	switch d.kind {
	case "relative":
		den := math.Max(d.norms[ch], 1e-300)
		s := 0.0
		for i := range k {
			r := k[i] - y[i]
			s += r * r
			e[i] = 2 * r / den
		}
		return s / den
	case "freq":
		// loss = Σ_bins w|R|²/L over the full spectrum, R = FFT(k - y); the gradient is the
		// real sequence 2/L · IFFT(w·R) (the half spectrum counts twice except DC/Nyquist).
		rfft := d.ffts.Get().(*fft.Real)
		defer d.ffts.Put(rfft)
		length := len(k)
		for i := range k {
			e[i] = k[i] - y[i]
		}
		c := rfft.Coefficients(nil, e)
		w := d.weights[ch]
		s := 0.0
		for i, v := range c {
			p := w[i] * (real(v)*real(v) + imag(v)*imag(v))
			if i != 0 && !(length%2 == 0 && i == len(c)-1) {
				p *= 2
			}
			s += p
			c[i] = v * complex(w[i], 0)
		}
		rfft.Sequence(e, c)
		for i := range e {
			e[i] *= 2 / float64(length)
		}
		return s / float64(length)
	}
	s := 0.0
	inv := 1 / float64(len(k))
	for i := range k {
		r := k[i] - y[i]
		s += r * r
		e[i] = 2 * r * inv
	}
	return s * inv
}

func (d *distill) relError(ch int, k []float64) float64 {
	return filters.RelDiff(d.targets[ch], k)
}

func (d *distill) mse(ch int, k []float64) float64 { return MSE(d.targets[ch], k) }

// MSE is the mean squared error of the response k against the target y over y's length: a
// channel report's MSE, from the residual, so that a zero target's is that of the response
// (as RelDiff's relative error of a zero target is the response's norm).
func MSE(y, k []float64) float64 {
	s := 0.0
	for i := range y {
		s += (k[i] - y[i]) * (k[i] - y[i])
	}
	return s / float64(len(y))
}
