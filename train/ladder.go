package train

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/ssmlab/ssmlab/filters"
)

// projectable reports whether the job is fitted by variable projection (fitLadder): a
// distillation with the hankel init, an rtf or modal model and a squared-error loss. Other
// jobs (the other inits, the rotation model, the freq loss, training tasks, the l1_montel
// constraint, which constrains RTF coefficients) train with the optimiser.
func (s *Spec) projectable(task bool) bool {
	return !task && s.Init == InitHankel && (s.Model == ModelRTF || s.Model == ModelModal) &&
		(s.Loss == LossMSE || s.Loss == LossRelative) && s.Constraint != ConstraintL1Montel && s.Order >= 1
}

// ProjectionRecipe says in words which distillations projectable accepts, for the messages
// that refuse an option only they honour.
const ProjectionRecipe = "the rtf or modal model, the hankel init, the mse or relative loss, no l1_montel constraint"

// CheckLadder refuses a ladder of orders (FitLadder) of a spec whose distillation is not
// fitted by variable projection, the one recipe that fits each order from the one below;
// the front ends call it before they read the target, as a mistake in what they were asked.
func (s *Spec) CheckLadder() error {
	r := *s
	r.Order = max(r.Order, MinDistillOrder) // a ladder's orders are its own
	if !r.projectable(false) {
		return invalidf("a ladder of orders is fitted by variable projection: %s", ProjectionRecipe)
	}
	return nil
}

// ByProjection reports whether a distillation of this spec is fitted by variable projection
// (and so can be written in the diagonal form: Form).
func (s *Spec) ByProjection() bool { return s.projectable(false) }

// Ladder is a fit at several orders of the same kernels: Results[k] is the fit of order
// Orders[k], whose report carries each channel's relative error and lower bound.
type Ladder struct {
	Orders  []int
	Results []*Result
}

// Errors returns the relative error of every order (rows) and channel (columns).
func (l *Ladder) Errors() [][]float64 {
	return l.perChannel(func(c ChannelReport) float64 { return c.RelError })
}

// Bounds returns the lower bound of every order (rows) and channel (columns).
func (l *Ladder) Bounds() [][]float64 {
	return l.perChannel(func(c ChannelReport) float64 { return c.LowerBound })
}

func (l *Ladder) perChannel(f func(ChannelReport) float64) [][]float64 {
	out := make([][]float64, len(l.Results))
	for k, r := range l.Results {
		for _, c := range r.Report.Channels {
			out[k] = append(out[k], f(c))
		}
	}
	return out
}

// FitLadder fits job at every order of orders (at least one; they are sorted, and
// duplicates dropped): each order starts, besides its own starts, from the fit of the order
// below with more poles, and keeps whichever ends better, their errors compared exactly as
// written (poles and residues: the order below kept is padded with idle modes, whose
// response is its own to the bit), so no channel's error reported ends higher than the
// order below's in the same form (rungForm keeps a tf only where it does not rise either).
// Where an rtf bank goes from tf to diagonal (a bank has one form), a channel can end above
// the order below's tf, by no more than that order's fit written as poles and residues lies
// above it: a rounding-level difference on the targets where it happens (exact order-4
// targets: 1.10e-15 as a tf, 2.78e-15 as poles and residues). Each order's fit depends on the
// orders up to it alone (fitLadder), so a ladder of chainOrders and the jobs of its orders
// write the same filters. The job must be one fitted by variable projection (the hankel
// init with an rtf or modal model and a squared-error loss); its Order is ignored.
func FitLadder(ctx context.Context, job Job, orders []int, backend Backend, progress func(Progress)) (*Ladder, error) {
	orders = append([]int(nil), orders...)
	sort.Ints(orders)
	orders = dedupe(orders)
	// Order 0 has no poles to fit; the ladder's fits would fail on it (an empty basis).
	if err := CheckLadderOrders(orders); err != nil {
		return nil, err
	}
	spec := job.Spec
	spec.Order = orders[len(orders)-1]
	job.Spec = spec
	if job.Task != nil {
		return nil, invalidf("a ladder of orders fits kernels, not a training task")
	}
	if err := spec.CheckLadder(); err != nil {
		return nil, err
	}
	job, obj, targets, err := job.validated()
	if err != nil {
		return nil, err
	}
	return fitProjection(ctx, job, obj, targets, orders, false, backend, progress)
}

func dedupe(v []int) []int {
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// chainOrders are the orders a single job of order n fits on its way: the powers of two
// from 4 below n, then n. Jobs of orders n < n' share the chain up to n, fit for fit and to
// the bit (fitLadder), so a power of two never fits worse than the powers of two below it,
// whichever job fitted it (an order between two powers of two is held to those below it).
func chainOrders(n int) []int {
	var out []int
	for k := 4; k < n; k *= 2 {
		out = append(out, k)
	}
	return append(out, n)
}

// runProjection is Run for a projectable job: the ladder of chainOrders, its last order.
func runProjection(ctx context.Context, job Job, obj objective, targets [][]float64, backend Backend, progress func(Progress)) (*Result, error) {
	l, err := fitProjection(ctx, job, obj, targets, chainOrders(job.Spec.Order), true, backend, progress)
	if err != nil {
		return nil, err
	}
	return l.Results[len(l.Results)-1], nil
}

// projectionBackend resolves where a variable-projection job runs: the GPU backend's device
// (the sums over the samples there, the driver here: gpuSums), or the CPU. auto picks the
// CPU and says why: each of the device's sums is a round trip from the driver on the CPU,
// and on an H200 beside 16 CPU threads (README, Backends) the CPU was faster at every
// length and channel count measured (16 channels of decaying noise at n = 32: 0.16 against
// 0.35 s at L = 1024, 0.46 against 0.81 s at L = 8192, 1.8 against 2.5 s at L = 32768; 128
// channels at L = 8192: 2.8 against 4.5 s). An explicit GPU backend runs it on the device.
func projectionBackend(backend Backend) (string, *gpuSums, error) {
	switch b := backend.(type) {
	case GPU:
		dev, err := b.openSums()
		if err != nil {
			return "", nil, err
		}
		return "gpu", dev, nil
	case *autoBackend:
		b.runOnCPU(autoProjectionNote)
		return "cpu", nil, nil
	}
	ran, err := cpuOnly(backend, "the hankel init's variable projection")
	return ran, nil, err
}

// autoProjectionNote is why auto fits by variable projection on the CPU.
const autoProjectionNote = "variable projection runs faster on the CPU; --backend gpu runs it on the device"

// cpuOnly resolves the backend of a job only the CPU runs: auto says why it runs there, and
// an explicit GPU backend is an error (never a silent change of algorithm or device).
func cpuOnly(backend Backend, what string) (string, error) {
	switch b := backend.(type) {
	case CPU:
		return b.Name(), nil
	case *autoBackend:
		b.runOnCPU(what + " runs on the CPU")
		return "cpu", nil
	}
	if backend.Name() == "cpu" {
		return "cpu", nil
	}
	return "", gpuUnsupported(what)
}

// runOnCPU makes auto run the job on the CPU, saying why (once).
func (a *autoBackend) runOnCPU(why string) {
	if a.chosen == "" {
		a.note("cpu (" + why + ")")
		a.chosen = "cpu"
	}
}

// tfHoldRatio is how far above the modal fit the transfer function written from its poles
// may end on a channel and still count as holding the fit.
const tfHoldRatio = 1.05

// tfHoldFloor is the absolute slack of that comparison: the accuracy ssmlab documents for a
// change of form (filters.MaxRelError, 1e-6), below which a transfer function deploys as
// well as the poles and residues.
const tfHoldFloor = filters.MaxRelError

// testHookChannel, when not nil, is told of each channel fitProjection starts to fit.
var testHookChannel func(ch int)

// channelRung is one channel's fit at one order of the ladder (fit nil where a job did not
// need it).
type channelRung struct {
	fit   *modalFit
	free  bool    // fitted without the order below (fitLadder)
	floor float64 // where free, the bound of the order below its starts began under (freeBound)
	diag  *filters.Diagonal
	tf    *filters.TransferFunction // nil when its coefficients cannot be formed
	tfErr float64
}

// fitProjection fits the validated job's targets at every order of orders (ascending), or
// with topOnly at the last (the Ladder's only Result), fitting the orders below only where
// that one needs them.
func fitProjection(ctx context.Context, job Job, obj objective, targets [][]float64, orders []int, topOnly bool, backend Backend, progress func(Progress)) (*Ladder, error) {
	start := time.Now()
	spec := job.Spec
	d := len(targets)
	ran, dev, err := projectionBackend(backend)
	if err != nil {
		return nil, err
	}
	o := projectOptions{rmax: spec.poleBound(len(targets[0])), iters: spec.Refine, poles: spec.Poles}
	forEach := filters.ForEachChannel
	if dev != nil {
		defer dev.close()
		o.sums, forEach = dev, dev.forEach
	}
	rungs := make([][]channelRung, d) // [channel][order]
	bounds := make([][]float64, d)    // [channel][order]
	errs := make([]error, d)
	// Progress counts channel-orders done; its error and loss are rungTally's.
	var mu sync.Mutex
	done, total := 0, d*len(orders)
	tally := newRungTally(d)
	var last time.Time
	report := func(ch, k int, rel float64) {
		mu.Lock()
		defer mu.Unlock()
		done += tally.add(ch, k, rel)
		// Another channel's rung may finish after a cancel; nothing is reported after one.
		if progress == nil || ctx.Err() != nil || done < total && time.Since(last) < ProgressInterval {
			return
		}
		last = time.Now()
		el := time.Since(start)
		eta := time.Duration(float64(el) / float64(done) * float64(total-done))
		p := tally.progress(orders)
		p.Step, p.Steps, p.Elapsed, p.ETA = done, total, el, eta
		progress(p)
	}
	forEach(d, func(ch int) {
		// A cancelled job starts no channel: its bounds, realisations and starts come before
		// the first iteration that would notice.
		if err := ctx.Err(); err != nil {
			errs[ch] = err
			return
		}
		if testHookChannel != nil {
			testHookChannel(ch)
		}
		y := targets[ch]
		bounds[ch] = LowerBounds(y, orders)
		co := o
		co.rng = channelRNG(spec.Seed, ch)
		fits, err := fitLadder(ctx, y, orders, bounds[ch], co, topOnly, func(k int, f *modalFit) { report(ch, k, f.rel) })
		if err != nil {
			errs[ch] = err
			return
		}
		rungs[ch] = make([]channelRung, len(fits))
		for k, lf := range fits {
			f := lf.fit
			if f == nil {
				continue
			}
			r := channelRung{fit: f, free: lf.free, floor: lf.floor, tfErr: math.Inf(1)}
			if r.diag, err = f.diagonal(); err != nil {
				errs[ch] = err // the job names the channel
				return
			}
			if spec.Model == ModelRTF {
				r.tf, r.tfErr = tfFromPoles(f.poles(), y)
			}
			rungs[ch][k] = r
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dev != nil {
		if err := dev.error(); err != nil {
			return nil, err
		}
	}
	for ch, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("channel %d: %w", ch, err)
		}
	}
	l := &Ladder{Orders: orders}
	prevOut := make([]float64, d) // each channel's error at the order below
	prevTF := true
	first := 0
	if topOnly {
		// The job deploys its order, and the orders below it back to the highest with a
		// free channel, whose form does not depend on the orders below it (rungFloor).
		l.Orders = orders[len(orders)-1:]
		first = len(orders) - 1
		for first > 0 && !anyFree(rungs, first) {
			first--
		}
	}
	for k := first; k < len(orders); k++ {
		n := orders[k]
		if anyFree(rungs, k) {
			for ch := range rungs {
				prevOut[ch] = rungFloor(rungs[ch], k)
			}
			prevTF = true
		}
		useTF, note := rungForm(spec, rungs, k, orders, prevOut, prevTF)
		prevTF = useTF
		res := &Result{Report: Report{Model: spec.Model, Order: n, Init: spec.Init, Backend: ran, Stable: true,
			Form: string(filters.FormDiagonal), FormNote: note, AutoMaxRadius: job.autoRadius}}
		if useTF {
			res.Report.Form = string(filters.FormTF)
		}
		if err := deployRung(ctx, res, obj, targets, rungs, bounds, k, useTF, prevOut, o, spec.Constraint == ConstraintRadius); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err // a probe cut short says nothing
		}
		res.Report.Seconds = time.Since(start).Seconds()
		if !topOnly || k == len(orders)-1 {
			l.Results = append(l.Results, res)
		}
	}
	return l, nil
}

// rungTally keeps what a variable-projection job's progress says of its fits (Progress):
// the error and loss (the relative loss, ‖k − y‖²/‖y‖²) of the channels that have fitted the
// most orders, at the last of them. The worst of every channel's latest fit, which it
// replaced, jumped up whenever a channel fitted its first order, and read as a regression.
type rungTally struct {
	done            []int // the rungs each channel has fitted
	reached, fitted int   // the most rungs a channel has fitted; how many channels have as many
	worst, sumSq    float64
}

func newRungTally(channels int) *rungTally { return &rungTally{done: make([]int, channels)} }

// add records that channel ch fitted rung k (those below it that a job skips count as
// done), with relative error rel, and returns how many rungs that completes.
func (t *rungTally) add(ch, k int, rel float64) int {
	more := k + 1 - t.done[ch]
	t.done[ch] = k + 1
	switch n := t.done[ch]; {
	case n > t.reached:
		t.reached, t.fitted, t.worst, t.sumSq = n, 1, rel, rel*rel
	case n == t.reached:
		t.fitted++
		t.worst, t.sumSq = max(t.worst, rel), t.sumSq+rel*rel
	}
	return more
}

// progress returns the error, loss, order and channels of a progress event of a ladder of
// orders (ascending), once some rung is fitted.
func (t *rungTally) progress(orders []int) Progress {
	return Progress{Loss: t.sumSq / float64(t.fitted), RelError: t.worst, Order: orders[t.reached-1],
		TopOrder: orders[len(orders)-1], Fitted: t.fitted, Channels: len(t.done)}
}

// rungForm decides the form of order k's bank, and for an rtf model says why (FormNote).
// The transfer function is deployed where it holds the fit on every channel (the bank has
// one form) and, to keep the ladder monotone, where the order below was one too (prevTF) and
// it ends no worse than that order (prevOut, each channel's error there) on any channel.
// Otherwise the diagonal form, unless that would end worse on some channel than the order
// below, while this order's tf does not.
func rungForm(spec Spec, rungs [][]channelRung, k int, orders []int, prevOut []float64, prevTF bool) (bool, string) {
	holds := spec.Model == ModelRTF // on every channel, whatever the order below
	monotoneTF, monotoneDiag := true, true
	furthest, furthestCh, riseCh := 0.0, 0, -1 // furthest: the largest ratio of tf to modal error
	for ch := range rungs {
		r := rungs[ch][k]
		if r.tf == nil || !(r.tfErr <= math.Max(tfHoldRatio*r.fit.rel, r.fit.rel+tfHoldFloor)) {
			holds = false
		}
		if k > 0 {
			if r.tfErr > prevOut[ch] && monotoneTF {
				monotoneTF, riseCh = false, ch
			}
			monotoneDiag = monotoneDiag && r.fit.rel <= prevOut[ch]
		}
		if ratio := r.tfErr / math.Max(r.fit.rel, tfHoldFloor); ratio > furthest || ch == 0 {
			furthest, furthestCh = ratio, ch
		}
	}
	useTF := spec.Form == "" && prevTF && (holds && monotoneTF || spec.Model == ModelRTF && k > 0 && !monotoneDiag && monotoneTF)
	if spec.Model != ModelRTF {
		return useTF, ""
	}
	r := rungs[furthestCh][k]
	switch {
	case spec.Form == filters.FormDiagonal:
		return useTF, "diagonal (poles and residues), as the job asks (form diagonal)"
	case useTF && holds:
		return useTF, fmt.Sprintf("tf: float64 coefficients hold the fit on every channel (the tf is furthest from poles and residues on channel %d: %.3g against %.3g)", furthestCh, r.tfErr, r.fit.rel)
	case useTF:
		return useTF, fmt.Sprintf("tf: float64 coefficients lose some of the fit (channel %d: %s against %.3g as poles and residues), but poles and residues would end above order %d on some channel, and the tf on none", furthestCh, fmtErr(r.tfErr), r.fit.rel, orders[k-1])
	case !holds:
		return useTF, fmt.Sprintf("diagonal (poles and residues): float64 tf coefficients lose the fit (channel %d: %s against %.3g); the diagonal form keeps the poles", furthestCh, fmtErr(r.tfErr), r.fit.rel)
	case !monotoneTF:
		above := fmt.Sprintf("the %.3g of order %d", prevOut[riseCh], orders[k-1])
		if rungs[riseCh][k].free {
			above = fmt.Sprintf("%.3g, the lower bound of any filter of order %d", prevOut[riseCh], orders[k-1])
		}
		return useTF, fmt.Sprintf("diagonal (poles and residues): float64 tf coefficients hold the fit to the documented %.0e, but channel %d's would end at %.3g, above %s", tfHoldFloor, riseCh, rungs[riseCh][k].tfErr, above)
	}
	return useTF, fmt.Sprintf("diagonal (poles and residues), as at order %d: float64 tf coefficients hold this fit (the tf is furthest from poles and residues on channel %d: %.3g against %.3g), but a bank that once needed the diagonal form keeps it, so that no channel's error rises with the order", orders[k-1], furthestCh, r.tfErr, r.fit.rel)
}

// anyFree reports whether some channel's order k was fitted without the order below.
func anyFree(rungs [][]channelRung, k int) bool {
	for _, r := range rungs {
		if r[k].free {
			return true
		}
	}
	return false
}

// rungFloor is, where some channel of order k is free (fitLadder) and a job need not have
// fitted or deployed every channel of the order below, what rungForm holds order k to on
// channel ch (its rungs) in place of that order's deployed error: no more than the
// order-(k−1) fit ends at in either form, or, on a free channel, the lower bound of any filter
// of order k−1 its starts began under (freeBound). So a job of order n deploys what a ladder
// does at n.
func rungFloor(rungs []channelRung, k int) float64 {
	if rungs[k].free {
		return rungs[k].floor
	}
	return math.Min(rungs[k-1].fit.rel, rungs[k-1].tfErr)
}

// deployRung fills res with order k's filters in the chosen form, each measured on its
// deployed response against the target, with its lower bound, and leaves each channel's
// error in prevOut. o is the fits' options: o.rmax the radius bound they kept their poles
// within (constrained: the job's MaxRadius) and o.poles the poles they placed, for
// boundProbe and radiusNote; ctx cuts boundProbe's refinements short.
func deployRung(ctx context.Context, res *Result, obj objective, targets [][]float64, rungs [][]channelRung, bounds [][]float64, k int, useTF bool, prevOut []float64, o projectOptions, constrained bool) error {
	for ch, y := range targets {
		r := rungs[ch][k]
		var f filters.Filter = r.diag
		if useTF {
			f = r.tf
		}
		kern := f.Impulse(len(y))
		rho, err := filters.SpectralRadius(f)
		if err != nil {
			rho = math.Inf(1)
		}
		cr := ChannelReport{MSE: obj.mse(ch, kern), RelError: obj.relError(ch, kern), MaxPoleRadius: rho,
			Stable: filters.Stable(rho)}
		cr.setBound(bounds[ch][k])
		prevOut[ch] = cr.RelError
		if math.IsNaN(cr.RelError) || math.IsInf(cr.RelError, 0) {
			return fmt.Errorf("channel %d: the fitted filter's response is not finite (spectral radius %.6g)", ch, rho)
		}
		if !cr.Stable {
			res.Report.Stable = false
			res.Report.Warnings = append(res.Report.Warnings, fmt.Sprintf("channel %d is not stable (spectral radius %.6g)", ch, rho))
		}
		res.Filters = append(res.Filters, f)
		res.Report.Channels = append(res.Report.Channels, cr)
	}
	rels := make([]float64, len(targets))
	lbs := make([]float64, len(targets))
	probes := make([]radiusProbe, len(targets))
	for i, c := range res.Report.Channels {
		rels[i], lbs[i], probes[i] = c.RelError, c.LowerBound, noProbe
	}
	filters.ForEachChannel(len(targets), func(i int) {
		// growing kernels are growingNote's
		if farAboveBound(rels[i], lbs[i]) && kernelGrowth(targets[i]) <= 1 {
			probes[i] = boundProbe(ctx, obj, i, targets[i], rungs[i][k].diag.Poles, o.rmax, o.poles, rels[i])
		}
	})
	res.Report.MaxRelError, res.Report.MeanRelError = maxOf(rels), mean(rels)
	res.Report.MeanLowerBound = mean(lbs)
	for _, note := range []string{growingNote(targets, rels, lbs), radiusNote(rels, lbs, probes, o.rmax, constrained)} {
		if note != "" {
			res.Report.Warnings = append(res.Report.Warnings, note)
		}
	}
	return nil
}

func fmtErr(e float64) string {
	if math.IsInf(e, 0) || math.IsNaN(e) {
		return "a diverging response"
	}
	return fmt.Sprintf("%.3g", e)
}

// tfFromPoles writes the poles as denominator coefficients, both by multiplying out real
// factors and by interpolation on the unit circle, each with the least-squares numerator for
// y (refitNumerator), and returns the better transfer function that is stable as rounded
// (nil, +Inf when neither is).
func tfFromPoles(poles []complex128, y []float64) (*filters.TransferFunction, float64) {
	if isZero(y) {
		// The zero filter: a zero numerator (+0, where a least squares gives −0), error 0.
		tf, err := filters.NewTransferFunction(polyFromPoles(poles), make([]float64, len(poles)), 0)
		if err != nil {
			return nil, math.Inf(1)
		}
		return tf, 0
	}
	var best *filters.TransferFunction
	bestErr := math.Inf(1)
	for _, a := range [][]float64{polyFromPoles(poles), filters.PolyFromRoots(poles)} {
		// The poles as rounded first: the numerator's least squares (a QR of L × n) is wasted on
		// a denominator that is not stable, as at n = 32 and 64 on most kernels.
		if !filters.Stable(denominatorRadius(a)) {
			continue
		}
		b, err := refitNumerator(a, y)
		if err != nil {
			continue
		}
		tf, err := filters.NewTransferFunction(a, b, y[0])
		if err != nil {
			continue
		}
		if e := filters.RelDiff(y, tf.Impulse(len(y))); e < bestErr {
			best, bestErr = tf, e
		}
	}
	return best, bestErr
}
