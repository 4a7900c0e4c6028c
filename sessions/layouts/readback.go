package layouts

import (
	"math"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Check is how closely tensors written by Export read back: the worst channel's relative L2
// error over Length samples, every channel's (Errors), how many channels were stable (Stable,
// of those whose poles were found) and which of them read back unstable. Cut is set when the work budget cut the samples compared: Length is
// then fewer than asked for, or than the responses needed to decay (filters.CompareBanks).
type Check struct {
	RelError float64
	Channel  int
	Length   int
	Cut      bool
	Errors   []float64
	Stable   int
	Unstable []int
}

// maxReadBackWork bounds the multiply-adds of the impulse responses ReadBack compares (2^30:
// about a second; finding the window costs at most twice that again), and maxStabilityWork
// those of the poles it finds (2^33).
const (
	maxReadBackWork  = 1 << 30
	maxStabilityWork = 1 << 33
)

// ReadBack measures what a model's code gets from tensors Export wrote: it rounds them to
// dt (each to its own type in o.TensorTypes), reads them back as Import reads the layer,
// and compares each channel's impulse response with doc's over the window a conversion's
// report would (filters.CompareBanks:
// until both have decayed), fewer where that would cost more than 2^30 multiply-adds
// (Check.Cut); for rtf with a trunc_len it compares the module's
// FFT kernel (rtf.Layer.ModuleKernels, what its forward pass convolves with) over trunc_len
// samples instead. It also finds the channels whose
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
	src := rounded(tensors, dt, o.TensorTypes)
	l, r, err := readSource(src, lay, o, prefix)
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
	if truncLen := o.int(RTF, "trunc-len"); lay == RTF && truncLen > 0 {
		// The module convolves with its FFT kernel (get_k), which folds h[M] onto t = 0;
		// the bank read back is what its recurrent step computes there.
		c.Length = min(n, truncLen)
		if err := compareModuleKernels(&c, chans, src, l, o, truncLen); err != nil {
			return Check{}, err
		}
	} else {
		c.RelError, c.Channel, c.Length, c.Cut = filters.CompareBanks(c.Errors, chans, r.Bank.Channels, n, maxReadBackWork)
	}
	work := 0.0
	for i, f := range chans {
		work += cube(f.Order()) + cube(r.Bank.Channels[i].Order())
	}
	if work <= maxStabilityWork {
		for i, f := range chans {
			rho, err := filters.SpectralRadius(f)
			if err != nil || !filters.Stable(rho) {
				continue
			}
			c.Stable++
			if back, err := filters.SpectralRadius(r.Bank.Channels[i]); err == nil && becameUnstable(rho, back) {
				c.Unstable = append(c.Unstable, i)
			}
		}
	}
	return c, nil
}

// ReadBackMIMO is ReadBack for a MIMO layer written by ExportMIMO: it rounds the tensors to
// dt, reads them back as Import reads the layer, and measures each output's relative error
// against m over length samples, every input together (filters.MIMODiff); Unstable lists
// every output where m is stable and the layer read back is not (becameUnstable, on the
// largest pole radius of each, as ReadBack judges a channel).
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
	if filters.Stable(m.MaxRadius()) {
		c.Stable = len(errs)
	}
	if becameUnstable(m.MaxRadius(), r.MIMO.MaxRadius()) {
		for o := range errs {
			c.Unstable = append(c.Unstable, o)
		}
	}
	return c, nil
}

// becameUnstable is the read-back's verdict on a filter of spectral radius rho read back
// as one of radius back, single-channel or MIMO: stable as filters.Stable judges it (a pole
// within filters.MarginalTol of the unit circle is not), and read back on or outside the
// circle (or with a NaN radius).
func becameUnstable(rho, back float64) bool { return filters.Stable(rho) && !(back < 1) }

// compareModuleKernels sets c's errors to those of the RTF module's FFT kernel of the
// tensors in src (rtf.Layer.ModuleKernels) against chans over c.Length samples. Its cost is
// bounded as the truncation correction's that export ran (trunc_len · N · D).
func compareModuleKernels(c *Check, chans []filters.Filter, src Source, l Layer, o Options, truncLen int) error {
	layer, err := readLayer(newTensors(src, l), l, o)
	if err != nil {
		return err
	}
	kernels, err := layer.ModuleKernels(truncLen, c.Length)
	if err != nil {
		return invalidRTF(err)
	}
	for i, f := range chans {
		e := filters.RelDiff(f.Impulse(c.Length), kernels[i])
		if math.IsNaN(e) || math.IsInf(e, 0) {
			e = math.MaxFloat64
		}
		c.Errors[i] = e
		if e > c.RelError {
			c.RelError, c.Channel = e, i
		}
	}
	return nil
}

// rounded returns tensors with each value rounded to dt, or to the tensor's own type in
// types, listed with that type, as a file written in it lists them: import judges what is
// rounding by the types (snapNegativeReal).
func rounded(tensors []arrays.Named, dt arrays.DType, types map[string]arrays.DType) Source {
	src := roundedSource{arrays: make(NamedSource, len(tensors)), types: map[string]string{}}
	for i, t := range tensors {
		a := t.Array.Clone()
		d := dt
		if td, ok := types[t.Name]; ok {
			d = td
		}
		for j, v := range a.Data {
			a.Data[j] = d.Round(v)
		}
		src.arrays[i] = arrays.Named{Name: t.Name, Array: a}
		src.types[t.Name] = d.String()
	}
	return src
}

// roundedSource is a NamedSource whose arrays list the types they were rounded to.
type roundedSource struct {
	arrays NamedSource
	types  map[string]string
}

func (s roundedSource) Arrays() []arrays.Info {
	out := s.arrays.Arrays()
	for i := range out {
		out[i].DType = s.types[out[i].Name]
	}
	return out
}

func (s roundedSource) Read(name string) (*arrays.Array, error) { return s.arrays.Read(name) }

// readRounded reads tensors back as Import reads the layer at prefix, each value first
// rounded to dt.
func readRounded(tensors []arrays.Named, dt arrays.DType, lay Layout, o Options, prefix string) (Result, error) {
	_, r, err := readSource(rounded(tensors, dt, o.TensorTypes), lay, o, prefix)
	return r, err
}

// readSource finds the layer at prefix in src and reads it as Import does.
func readSource(src Source, lay Layout, o Options, prefix string) (Layer, Result, error) {
	l, err := Find(src.Arrays(), lay, prefix)
	if err != nil {
		return Layer{}, Result{}, err
	}
	r, err := Import(src, l, o)
	return l, r, err
}

func cube(n int) float64 { return float64(n) * float64(n) * float64(n) }
