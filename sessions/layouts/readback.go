package layouts

import (
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Check is how closely tensors written by Export read back: the worst channel's relative L2
// error over Length samples, every channel's (Errors), and the channels that were stable and
// read back unstable.
type Check struct {
	RelError float64
	Channel  int
	Length   int
	Errors   []float64
	Unstable []int
}

// maxReadBackWork bounds the multiply-adds of the impulse responses ReadBack compares (2^30:
// about a second), and maxStabilityWork those of the poles it finds (2^33).
const (
	maxReadBackWork  = 1 << 30
	maxStabilityWork = 1 << 33
)

// ReadBack measures what a model's code gets from tensors Export wrote: it rounds them to
// dt, reads them back as Import reads the layer (for rtf, with the truncation correction
// undone, as the module's get_C does), and compares each channel's impulse response with
// doc's over trunc_len samples (rtf) or filters.ReportLength of their spectral radius, fewer
// where that would cost more than 2^30 multiply-adds. It also finds the channels whose
// filter was stable and whose read-back is not (where finding the poles costs less than
// 2^33 multiply-adds). It fails when the tensors cannot be read back.
func ReadBack(doc filters.Document, tensors []arrays.Named, dt arrays.DType, lay Layout, o Options, prefix string) (Check, error) {
	return ReadBackOver(doc, tensors, dt, lay, o, prefix, 0)
}

// ReadBackOver is ReadBack over the first length samples of each channel (0: as ReadBack
// chooses), for a layer whose model uses kernels of that length: a distilled Hyena layer of
// l_max samples is judged over them, not over the tail beyond, which its model never uses.
func ReadBackOver(doc filters.Document, tensors []arrays.Named, dt arrays.DType, lay Layout, o Options, prefix string, length int) (Check, error) {
	chans := []filters.Filter{doc.Filter}
	if doc.Bank != nil {
		chans = doc.Bank.Channels
	}
	r, err := readRounded(tensors, dt, lay, o, prefix)
	if err != nil {
		return Check{}, err
	}
	if r.Bank == nil || len(r.Bank.Channels) != len(chans) {
		return Check{}, invalidf("the tensors read back as %d channels, not %d", len(r.Bank.Channels), len(chans))
	}
	n := length
	if lay == RTF && n == 0 {
		n = o.int(RTF, "trunc-len")
	}
	var c Check
	c.Errors = make([]float64, len(chans))
	c.RelError, c.Channel, c.Length = filters.CompareBanks(c.Errors, chans, r.Bank.Channels, n, maxReadBackWork)
	work := 0.0
	for i, f := range chans {
		work += cube(f.Order()) + cube(r.Bank.Channels[i].Order())
	}
	if work <= maxStabilityWork {
		for i, f := range chans {
			if rho, err := filters.SpectralRadius(f); err != nil || !filters.Stable(rho) {
				continue
			}
			if rho, err := filters.SpectralRadius(r.Bank.Channels[i]); err == nil && rho >= 1 {
				c.Unstable = append(c.Unstable, i)
			}
		}
	}
	return c, nil
}

// ReadBackMIMO is ReadBack for a MIMO layer written by ExportMIMO: it rounds the tensors to
// dt, reads them back as Import reads the layer, and measures each output's relative error
// against m over length samples, every input together (filters.MIMODiff); Unstable lists
// every output where m is stable and the layer read back is not.
func ReadBackMIMO(m *filters.MIMO, tensors []arrays.Named, dt arrays.DType, lay Layout, o Options, prefix string, length int) (Check, error) {
	r, err := readRounded(tensors, dt, lay, o, prefix)
	if err != nil {
		return Check{}, err
	}
	if r.MIMO == nil {
		return Check{}, invalidf("the tensors read back as no MIMO layer")
	}
	errs, _, err := filters.MIMODiff(m, r.MIMO, length)
	if err != nil {
		return Check{}, err
	}
	c := Check{Errors: errs, Length: length}
	for o, e := range errs {
		if !(e <= c.RelError) {
			c.RelError, c.Channel = e, o
		}
	}
	if m.MaxRadius() < 1 && !(r.MIMO.MaxRadius() < 1) {
		for o := range errs {
			c.Unstable = append(c.Unstable, o)
		}
	}
	return c, nil
}

// readRounded reads tensors back as Import reads the layer at prefix, each value first
// rounded to dt.
func readRounded(tensors []arrays.Named, dt arrays.DType, lay Layout, o Options, prefix string) (Result, error) {
	src := make(NamedSource, len(tensors))
	for i, t := range tensors {
		a := t.Array.Clone()
		for j, v := range a.Data {
			a.Data[j] = dt.Round(v)
		}
		src[i] = arrays.Named{Name: t.Name, Array: a}
	}
	l, err := Find(src.Arrays(), lay, prefix)
	if err != nil {
		return Result{}, err
	}
	return Import(src, l, o)
}

func cube(n int) float64 { return float64(n) * float64(n) * float64(n) }
