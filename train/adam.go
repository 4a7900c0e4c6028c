package train

import "math"

// adam holds one channel's Adam state (Kingma & Ba); AdamW decays weights decoupled from
// the gradient (Loshchilov & Hutter), as the Laughing Hyena distillation of the RTF paper (App. C.4) does.
type adam struct {
	m, v []float64
	t    int
}

func newAdam(n int) *adam { return &adam{m: make([]float64, n), v: make([]float64, n)} }

func (a *adam) clone() *adam {
	return &adam{m: append([]float64(nil), a.m...), v: append([]float64(nil), a.v...), t: a.t}
}

func (a *adam) step(p, g []float64, lr float64, o *Optim) {
	a.t++
	c1 := 1 - math.Pow(o.Beta1, float64(a.t))
	c2 := 1 - math.Pow(o.Beta2, float64(a.t))
	decay := 0.0
	if o.Name == "adamw" {
		decay = lr * o.WeightDecay
	}
	for i, gi := range g {
		a.m[i] = o.Beta1*a.m[i] + (1-o.Beta1)*gi
		a.v[i] = o.Beta2*a.v[i] + (1-o.Beta2)*gi*gi
		p[i] -= lr*(a.m[i]/c1)/(math.Sqrt(a.v[i]/c2)+o.Eps) + decay*p[i]
	}
}

// learningRate returns the scheduled rate at step (0-based) of total.
func (o *Optim) learningRate(step, total int) float64 {
	lr := o.LR
	if o.Warmup > 0 && step < o.Warmup {
		lr *= float64(step+1) / float64(o.Warmup)
	}
	if o.Schedule == "cosine" && total > 1 {
		// From LR down to LR/100 over the run.
		x := float64(step) / float64(total-1)
		lr *= 0.01 + 0.99*0.5*(1+math.Cos(math.Pi*x))
	}
	return lr
}
