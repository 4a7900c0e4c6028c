package figures

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Axis ticks of the panels.

// logTicks mark the decades of a log axis, labelling at most about eight of them (every one,
// or every 2nd, 3rd, 5th, …), with minor ticks at 2…9 when every decade is labelled. Powers
// of ten come from math.Pow10, so labels are exact ("0.001", "1e-12").
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	a, b := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	step := 1
	for _, s := range []int{1, 2, 3, 4, 5, 10, 20, 25, 50, 100} {
		step = s
		if (b-a)/s <= 8 {
			break
		}
	}
	var out []plot.Tick
	for k := a; k <= b; k++ {
		v := math.Pow10(k)
		if k%step == 0 {
			out = append(out, plot.Tick{Value: v, Label: decade(k)})
		} else {
			out = append(out, plot.Tick{Value: v})
		}
		if step == 1 && k < b {
			for m := 2; m <= 9; m++ {
				out = append(out, plot.Tick{Value: float64(m) * v})
			}
		}
	}
	return out
}

// decade writes 10^k: as a decimal for |k| ≤ 3, else as 1e±k.
func decade(k int) string {
	if k >= -3 && k <= 3 {
		return strconv.FormatFloat(math.Pow10(k), 'f', -1, 64)
	}
	return "1e" + strconv.Itoa(k)
}

// linTicks label about five round values (1, 2, 2.5 or 5 times a power of ten) with as many
// decimals as the step needs ("0.25", not gonum's "0.250"), and put four minor ticks between.
type linTicks struct{}

func (linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
	}
	raw := (hi - lo) / 5
	p := math.Pow10(int(math.Floor(math.Log10(raw))))
	step, digits := 10*p, -int(math.Floor(math.Log10(p)))-1
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= raw {
			step, digits = m*p, -int(math.Floor(math.Log10(p)))
			if m == 2.5 {
				digits++
			}
			break
		}
	}
	digits = max(digits, 0)
	minor := step / 5
	var out []plot.Tick
	first := math.Ceil(lo/minor) * minor
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > hi+minor*1e-9 {
			break
		}
		k := math.Round(v / step)
		if math.Abs(v-k*step) <= minor*1e-6 {
			v = k * step
			if v == 0 {
				v = 0 // not -0
			}
			out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', digits, 64)})
		} else {
			out = append(out, plot.Tick{Value: v})
		}
	}
	return out
}
