package train

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/ssmlab/ssmlab/filters"
)

// Progress is one progress event of a running job.
//
// A job fitted by variable projection (a ladder, or a job of one order, fitted on a ladder of
// orders below it) fits each channel's orders in turn, channel after channel, and counts
// channel-orders as its steps. Its Loss and RelError are those of the channels that have
// fitted Order, the highest order some channel has fitted so far (Fitted of the Channels),
// each at that order: a channel's error never rises with the order, and one that has not
// fitted Order yet is left out. So RelError never rises with Order, and at one Order only
// rises as more channels reach it, towards the worst channel's error at that order (at
// TopOrder, the job's). Order, TopOrder, Fitted and Channels are 0 for the optimiser's jobs.
//
// An optimiser's job sends its last event (the last step, or the step it stopped early at)
// once its filters are deployed: its Loss and RelError are theirs (Report.MaxRelError),
// after the refinement, which the optimiser's own figures miss.
type Progress struct {
	Step, Steps int
	Loss        float64 // mean over channels of the current loss (relative, ‖k − y‖²/‖y‖², for variable projection)
	RelError    float64 // worst channel's relative L2 error of its best parameters so far
	Elapsed     time.Duration
	ETA         time.Duration

	Order, TopOrder  int // variable projection: the order Loss and RelError are at, and the last
	Fitted, Channels int // variable projection: the channels that have fitted Order, and all
}

// ProgressInterval bounds the rate of progress events (the first and last are always sent).
const ProgressInterval = 100 * time.Millisecond

// Job is a distillation (Targets) or a training task (Task).
type Job struct {
	Spec    Spec
	Targets [][]float64 // kernels to distil, all of one length
	Task    *Task       // a system-identification or Delay task instead of Targets

	autoRadius float64 // the automatic bound of the validated job's fits (resolveRadius; 0: none)
}

// ChannelReport describes one fitted channel, measured on the deployed filter.
type ChannelReport struct {
	MSE           float64 `json:"mse"`
	RelError      float64 `json:"rel_error"`
	MaxPoleRadius float64 `json:"max_pole_radius"`
	Stable        bool    `json:"stable"`
	// DeployError is the relative difference between a deployed RTF's true response and its
	// trained state-free kernel (RTF paper, eq. 13); large only for poles near the unit circle.
	// It is not reported for a refitted numerator, which is not meant to reproduce the kernel.
	DeployError float64 `json:"deploy_error,omitempty"`
	// Refitted says that the deployed numerator was refitted to the target by least squares
	// for the trained denominator, which measured better than the one read off the kernel.
	Refitted bool `json:"refitted,omitempty"`
	// ModalRelError is, for an RTF from the hankel init, the relative error of the init's
	// stabilised ERA realisation in modal form (poles kept as poles, order ≤ n): where it is
	// far below RelError, the RTF's coefficients are what limits the fit.
	ModalRelError float64 `json:"modal_rel_error,omitempty"`
	// LowerBound is a lower bound on the relative error of every filter of the job's order on
	// this channel (LowerBounds; 0 where none above rounding level is known), and BoundRatio
	// RelError over it (0 when the bound is 0): how far the fit is from what is possible.
	LowerBound float64 `json:"lower_bound"`
	BoundRatio float64 `json:"bound_ratio,omitempty"`
}

// setBound sets the channel's lower bound b and its error's ratio to it (0 where b is 0).
func (c *ChannelReport) setBound(b float64) {
	c.LowerBound, c.BoundRatio = b, 0
	if b > 0 {
		c.BoundRatio = c.RelError / b
	}
}

// Report summarises a finished job.
type Report struct {
	Model        Model  `json:"model"`
	Order        int    `json:"order"`
	Init         Init   `json:"init"`
	Backend      string `json:"backend"`
	Steps        int    `json:"steps"`
	StoppedEarly bool   `json:"stopped_early"`
	// Seconds is the job's wall-clock time; in a Ladder, every order's report has the whole
	// ladder's, since its orders are fitted together, each from the one below.
	Seconds      float64         `json:"seconds"`
	Stable       bool            `json:"stable"`
	MaxRelError  float64         `json:"max_rel_error"`
	MeanRelError float64         `json:"mean_rel_error"`
	Channels     []ChannelReport `json:"channels"`
	Warnings     []string        `json:"warnings,omitempty"`
	// MeanLowerBound is the mean of the channels' lower bounds (0 for a training task).
	MeanLowerBound float64 `json:"mean_lower_bound"`
	// Form is the form of the fitted filters, and FormNote, for an rtf fitted by variable
	// projection, why: a transfer function where float64 coefficients hold the fit, else the
	// diagonal form (poles and residues).
	Form     string `json:"form,omitempty"`
	FormNote string `json:"form_note,omitempty"`
	// AutoMaxRadius is the radius bound the job chose for its kernels' length (AutoRadius)
	// where its spec left max_radius at 0 (auto), or where it has no radius constraint and
	// its fits keep their poles within that bound all the same (variable projection, the
	// modal and rotation models); 0 (omitted) where the spec gave one or none applies (an rtf
	// the optimiser trains without the radius constraint, l1_montel).
	AutoMaxRadius float64 `json:"auto_max_radius,omitempty"`
}

// AutoRadiusText says the radius bound the report's job chose for its kernels' length
// (AutoMaxRadius), for a front end's summary, or "" where it chose none.
func (r *Report) AutoRadiusText() string {
	if r.AutoMaxRadius == 0 {
		return ""
	}
	return "radius bound " + RadiusText(r.AutoMaxRadius) + " (auto: " + AutoRadiusRule + ")"
}

// Result is a finished job: one fitted filter per channel and the report.
type Result struct {
	Filters []filters.Filter
	Report  Report
}

// Run fits the job on backend, calling progress (if not nil) at most every
// ProgressInterval. Once ctx is cancelled it calls progress no more and returns ctx.Err()
// and no result.
func Run(ctx context.Context, job Job, backend Backend, progress func(Progress)) (*Result, error) {
	start := time.Now()
	job, obj, targets, err := job.validated()
	if err != nil {
		return nil, err
	}
	spec := job.Spec
	if spec.projectable(job.Task != nil) {
		return runProjection(ctx, job, obj, targets, backend, progress)
	}
	prob := &Problem{Spec: spec, obj: obj}
	refine := spec.refinable(job.Task != nil, len(targets[0]))
	// Inits are independent per channel (a hankel init is an eigendecomposition each).
	prob.models, prob.Params = make([]model, len(targets)), make([][]float64, len(targets))
	initErrs := make([]error, len(targets))
	filters.ForEachChannel(len(targets), func(ch int) {
		if initErrs[ch] = ctx.Err(); initErrs[ch] == nil { // a cancelled job inits no more channels
			prob.models[ch], prob.Params[ch], initErrs[ch] = initParams(&spec, targets[ch], ch)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for ch, err := range initErrs {
		if err != nil {
			return nil, fmt.Errorf("channel %d: init %s: %w", ch, spec.Init, err)
		}
	}
	// Copies of the init and its alternatives, further starts for the refinement, which
	// overwrites them (the trainer owns prob.Params and the race may replace the models).
	var starts [][][]float64
	// The initial denominators (ERA's poles, for the hankel init) stay candidates for the
	// numerator refit at deployment: ERA's poles with the best numerator for them can beat
	// what the optimisers made of them.
	var initDens [][]float64
	if refine {
		for ch, p := range prob.Params {
			if m, ok := prob.models[ch].(*rtfModel); ok {
				initDens = append(initDens, m.denominator(p, make([]float64, m.n)))
			}
			s := [][]float64{append([]float64(nil), p...)}
			if m, ok := prob.models[ch].(*rtfModel); ok {
				for _, q := range m.starts {
					s = append(s, append([]float64(nil), q...))
				}
			}
			starts = append(starts, s)
		}
	}
	done := 0
	race := spec.Model == "rtf" && spec.Init == "hankel" && spec.Steps >= 8
	d := len(targets)
	if race {
		// The hankel init's poles may cluster where float64 coefficients cannot follow them,
		// while the zero init finds spread, well-conditioned poles: train both for a quarter
		// of the steps and keep, per channel, whichever is ahead.
		if err := addZeroStarts(prob, targets); err != nil {
			return nil, err
		}
	}
	tr, err := backend.Start(prob)
	if err != nil {
		return nil, err
	}
	defer func() { tr.Close() }()
	if race {
		head := spec.Steps / 4
		report := func(step int, loss, rel []float64) {
			if progress != nil && ctx.Err() == nil {
				el := time.Since(start)
				eta := time.Duration(float64(el) / float64(step) * float64(spec.Steps-step))
				progress(Progress{Step: step, Steps: spec.Steps, Loss: mean(loss[:d]), RelError: maxOf(rel[:d]), Elapsed: el, ETA: eta})
			}
		}
		next, err := raceStarts(ctx, tr, prob, head, d, backend, report)
		if err != nil {
			return nil, err
		}
		if next != tr {
			tr.Close()
			tr = next
		}
		done = head
	}

	chunk := max(1, min(spec.Steps/200, 20))
	var last time.Time
	early := false
	var loss, rel []float64
	for done < spec.Steps {
		k := min(chunk, spec.Steps-done)
		if loss, rel, err = tr.Step(ctx, k); err != nil {
			return nil, err
		}
		done += k
		worst := maxOf(rel)
		if spec.Tol > 0 && worst <= spec.Tol {
			early = true
		}
		if progress != nil && ctx.Err() == nil && done < spec.Steps && !early && time.Since(last) >= ProgressInterval {
			last = time.Now()
			el := time.Since(start)
			eta := time.Duration(float64(el) / float64(done) * float64(spec.Steps-done))
			progress(Progress{Step: done, Steps: spec.Steps, Loss: mean(loss), RelError: worst, Elapsed: el, ETA: eta})
		}
		if early {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	params, err := tr.Params()
	if err != nil {
		return nil, err
	}
	if refine {
		if params, err = refineChannels(ctx, spec, prob.models, obj, params, starts, targets); err != nil {
			return nil, err
		}
	}
	res, finalLoss, err := finish(job, backend.Name(), params, prob.models, obj, targets, initDens, done, early, start)
	if err == nil && progress != nil && ctx.Err() == nil {
		progress(Progress{Step: done, Steps: spec.Steps, Loss: finalLoss, RelError: res.Report.MaxRelError, Elapsed: time.Since(start)})
	}
	return res, err
}

// addZeroStarts appends a zero-initialised copy of every channel to prob (channel d+ch is
// channel ch's second start), served by the same objective.
func addZeroStarts(prob *Problem, targets [][]float64) error {
	zspec := prob.Spec
	zspec.Init = "zeros"
	d := len(targets)
	for ch, y := range targets {
		m, p, err := initParams(&zspec, y, ch)
		if err != nil {
			return err
		}
		prob.models = append(prob.models, m)
		prob.Params = append(prob.Params, p)
	}
	prob.obj = &doubled{prob.obj, d}
	return nil
}

// raceStarts trains both starts of every channel for head steps, then keeps the better one
// per channel (by relative error). A trainer that can drop channels keeps the winners with
// their optimiser state; otherwise a new trainer starts from the winners' parameters and
// continues the schedule (the caller closes the old one).
func raceStarts(ctx context.Context, tr Trainer, prob *Problem, head, d int, backend Backend, report func(int, []float64, []float64)) (Trainer, error) {
	chunk := max(1, min(prob.Spec.Steps/200, 20))
	var last time.Time
	var rel []float64
	for done := 0; done < head; {
		k := min(chunk, head-done)
		var loss []float64
		var err error
		if loss, rel, err = tr.Step(ctx, k); err != nil {
			return nil, err
		}
		done += k
		if time.Since(last) >= ProgressInterval {
			last = time.Now()
			report(done, loss, rel)
		}
	}
	winners := make([]int, d)
	for ch := range winners {
		winners[ch] = ch
		if rel[d+ch] < rel[ch] {
			winners[ch] = d + ch
		}
	}
	obj := prob.obj.(*doubled).objective
	if n, ok := tr.(narrower); ok {
		n.keep(winners)
		prob.models, prob.obj = pick(prob.models, winners), obj
		return tr, nil
	}
	params, err := tr.Params()
	if err != nil {
		return nil, err
	}
	next := &Problem{Spec: prob.Spec, Offset: head, models: pick(prob.models, winners), obj: obj}
	for _, w := range winners {
		next.Params = append(next.Params, params[w])
	}
	*prob = *next
	return backend.Start(prob)
}

func pick[T any](v []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}

// doubled serves an objective to twice its channels (two starts per channel).
type doubled struct {
	objective
	d int
}

func (o *doubled) loss(ch int, k, e []float64) float64 { return o.objective.loss(ch%o.d, k, e) }
func (o *doubled) relError(ch int, k []float64) float64 {
	return o.objective.relError(ch%o.d, k)
}
func (o *doubled) mse(ch int, k []float64) float64 { return o.objective.mse(ch%o.d, k) }

// modalHintRatio is how far below the deployed RTF's error the init's modal realisation must
// be for the report to point the user to the modal model: well beyond the noise of fitting.
const modalHintRatio = 10

// modalHintFloor is the RTF error below which the hint is not worth a warning.
const modalHintFloor = 1e-6

// finish deploys and measures every channel, and returns the mean loss of the filters
// deployed. initDens, when not nil, holds each channel's initial denominator, a further
// candidate for the numerator refit.
func finish(job Job, backend string, params [][]float64, models []model, obj objective, targets [][]float64, initDens [][]float64, steps int, early bool, start time.Time) (*Result, float64, error) {
	spec := job.Spec
	res := &Result{Report: Report{Model: spec.Model, Order: spec.Order, Init: spec.Init, Backend: backend,
		Steps: steps, StoppedEarly: early, Stable: true, AutoMaxRadius: job.autoRadius}}
	// Where the refinement runs, a distilled RTF's numerator is then refitted to the target for
	// its trained denominator (refitNumerator, an (L-1)×n QR, hence the same order limit).
	// refine 0 deploys what the optimiser trained.
	refitting := spec.refinable(job.Task != nil, len(targets[0]))
	modalHints, worstHint := 0, -1
	loss := 0.0
	var grad []float64 // what obj.loss writes besides the loss; unused here
	for ch, p := range params {
		m := models[ch]
		// A zero kernel deploys the zero filter, whatever the optimiser made of it.
		zero := job.Task == nil && isZero(targets[ch])
		var f filters.Filter
		var deployErr float64
		var err error
		if zero {
			f, err = zeroFilter(&spec, targets[ch])
		} else {
			f, deployErr, err = m.filter(p)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("channel %d: %w", ch, err)
		}
		k := f.Impulse(len(targets[ch]))
		refitted := false
		if tf, ok := f.(*filters.TransferFunction); ok && refitting && !zero {
			var initDen []float64
			if ch < len(initDens) {
				initDen = initDens[ch]
			}
			if g, kg, ok := refitDeployed(m.(*rtfModel), spec, obj, ch, tf, initDen, k, targets[ch]); ok {
				f, k, refitted = g, kg, true
			}
		}
		rho, err := filters.SpectralRadius(f)
		if err != nil {
			rho = math.Inf(1)
		}
		cr := ChannelReport{MSE: obj.mse(ch, k), RelError: obj.relError(ch, k), MaxPoleRadius: rho, Stable: filters.Stable(rho)}
		if len(grad) < len(k) {
			grad = make([]float64, len(k))
		}
		loss += obj.loss(ch, k, grad[:len(k)])
		if _, ok := m.(*rtfModel); ok && refitted {
			cr.Refitted = true
		} else if ok {
			cr.DeployError = deployErr
			if deployErr > 1e-6 {
				res.Report.Warnings = append(res.Report.Warnings, fmt.Sprintf("channel %d: the deployed RTF's true response differs from its trained state-free kernel by %.3g (a pole near the unit circle)", ch, deployErr))
			}
		}
		if rm, ok := m.(*rtfModel); ok && rm.modalErr > 0 && !zero {
			cr.ModalRelError = rm.modalErr
			if modalHintRatio*rm.modalErr < cr.RelError && cr.RelError > modalHintFloor {
				modalHints++
				if worstHint < 0 || cr.RelError > res.Report.Channels[worstHint].RelError {
					worstHint = ch
				}
			}
		}
		if !cr.Stable {
			res.Report.Stable = false
			res.Report.Warnings = append(res.Report.Warnings, fmt.Sprintf("channel %d is not stable (spectral radius %.6g)", ch, rho))
		}
		if math.IsNaN(cr.MSE) || math.IsInf(cr.MSE, 0) || math.IsNaN(cr.RelError) || math.IsInf(cr.RelError, 0) {
			return nil, 0, fmt.Errorf("channel %d: the fitted filter's response is not finite (spectral radius %.6g)", ch, rho)
		}
		res.Filters = append(res.Filters, f)
		res.Report.Channels = append(res.Report.Channels, cr)
	}
	if modalHints > 0 {
		c := res.Report.Channels[worstHint]
		res.Report.Warnings = append(res.Report.Warnings, fmt.Sprintf("%d of %d channels: a modal realisation of order ≤ %d fits at least %d× better than the RTF (channel %d: %.3g against %.3g); float64 coefficients cannot hold their clustered poles; distil with --model modal to keep them", modalHints, len(params), spec.Order, modalHintRatio, worstHint, c.ModalRelError, c.RelError))
	}
	rels := make([]float64, len(res.Report.Channels))
	for i, c := range res.Report.Channels {
		rels[i] = c.RelError
	}
	res.Report.MaxRelError, res.Report.MeanRelError = maxOf(rels), mean(rels)
	if job.Task == nil {
		// A distillation: what no filter of the order beats, as a fit by variable projection
		// reports it (a training task has no target kernels to bound).
		lbs := make([]float64, len(targets))
		filters.ForEachChannel(len(targets), func(ch int) { lbs[ch] = LowerBounds(targets[ch], []int{spec.Order})[0] })
		for ch := range res.Report.Channels {
			res.Report.Channels[ch].setBound(lbs[ch])
		}
		res.Report.MeanLowerBound = mean(lbs)
		if note := growingNote(targets, rels, lbs); note != "" {
			res.Report.Warnings = append(res.Report.Warnings, note)
		}
	}
	res.Report.Seconds = time.Since(start).Seconds()
	return res, loss / float64(len(params)), nil
}

// refitDeployed refits the numerator of the deployed RTF tf (response k) to the target y by
// least squares, for its denominator and for the channel's initial one (initDen, nil if
// none), and returns the best refit if it measures better than tf. The initial denominator
// must hold its poles inside the job's bound, or safely inside the unit circle without one,
// as float64 coefficients (Schur–Cohn), as the trained one does.
func refitDeployed(m *rtfModel, spec Spec, obj objective, ch int, tf *filters.TransferFunction, initDen, k, y []float64) (*filters.TransferFunction, []float64, bool) {
	dens := [][]float64{tf.Den}
	bound := 1 - filters.MarginalTol
	if spec.Constraint == ConstraintRadius {
		bound = spec.poleBound(len(y))
	}
	if initDen != nil && m.within(initDen, bound) {
		dens = append(dens, initDen)
	}
	var out *filters.TransferFunction
	var response []float64
	best := obj.relError(ch, k)
	for _, a := range dens {
		b, err := refitNumerator(a, y)
		if err != nil {
			continue
		}
		g, err := filters.NewTransferFunction(a, b, y[0])
		if err != nil {
			continue
		}
		if kg := g.Impulse(len(y)); obj.relError(ch, kg) < best {
			out, response, best = g, kg, obj.relError(ch, kg)
		}
	}
	return out, response, out != nil
}

// validated returns the job as it runs, its automatic radius bound resolved for its longest
// target (resolveRadius: every later reader of the spec sees the bound), and its objective
// and targets, once its spec is valid for them.
func (j Job) validated() (Job, objective, [][]float64, error) {
	obj, targets, err := j.objective()
	if err != nil {
		return j, nil, nil, err
	}
	validate := j.Spec.ValidateDistillation
	if j.Task != nil {
		validate = j.Spec.Validate
		if j.Spec.Poles.realOnly() {
			return j, nil, nil, invalidf("poles %s applies to distillations by variable projection, not to training tasks", j.Spec.Poles)
		}
	}
	if err := validate(len(targets), len(targets[0])); err != nil {
		return j, nil, nil, err
	}
	length := 0
	for _, y := range targets {
		length = max(length, len(y))
	}
	j.autoRadius = j.Spec.resolveRadius(length, j.Task != nil)
	return j, obj, targets, nil
}

func (j Job) objective() (objective, [][]float64, error) {
	if j.Task != nil {
		return j.Task.objective(j.Spec)
	}
	if err := CheckTargets(j.Targets); err != nil {
		return nil, nil, err
	}
	return newDistill(j.Targets, j.Spec.Loss), j.Targets, nil
}

// ImpulseTargets returns what a distillation of filters fits (ssmlab distill of a filter or a
// bank, the workbench's jobs): each channel's impulse response over length samples. A
// response that overflows float64 within them is an *OverflowError.
func ImpulseTargets(chans []filters.Filter, length int) ([][]float64, error) {
	out := make([][]float64, len(chans))
	filters.ForEachChannel(len(out), func(i int) { out[i] = chans[i].Impulse(length) })
	for i, h := range out {
		for t, v := range h {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				e := &OverflowError{Channel: i, Channels: len(chans), Sample: t, Rho: math.NaN()}
				if rho, err := filters.SpectralRadius(chans[i]); err == nil {
					e.Rho = rho
				}
				return nil, e
			}
		}
	}
	return out, nil
}

// OverflowError is a filter whose impulse response, the target of a distillation, overflows
// float64 within the distillation's length (an ErrInvalid). Its advice is the distillation's:
// an unstable filter is distilled over fewer samples or made stable, one that is not has too
// large a gain.
type OverflowError struct {
	Channel, Channels int     // the first channel that overflows, of how many
	Sample            int     // its first sample that is not finite
	Rho               float64 // its spectral radius; NaN where it could not be computed
}

func (e *OverflowError) Error() string {
	what := "the impulse response"
	if e.Channels > 1 {
		what = fmt.Sprintf("channel %d's impulse response", e.Channel)
	}
	if e.Rho <= 1 {
		return fmt.Sprintf("%v: %s overflows at sample %d: the filter's gain is too large (its spectral radius is %s); scale it down", ErrInvalid, what, e.Sample, filters.FormatModulus(e.Rho))
	}
	why := "the filter is unstable"
	if !math.IsNaN(e.Rho) {
		why += " (spectral radius " + filters.FormatModulus(e.Rho) + ")"
	}
	fix := "first move the poles outside the unit circle inside it"
	if CheckLength(e.Sample) == nil { // a length that stops before it is a distillation's
		fix = fmt.Sprintf("distil it over a length of at most %d, or %s", e.Sample, fix)
	}
	return fmt.Sprintf("%v: %s overflows at sample %d: %s; %s", ErrInvalid, what, e.Sample, why, fix)
}

// Is makes an OverflowError an ErrInvalid.
func (e *OverflowError) Is(target error) bool { return target == ErrInvalid }

// CheckTargets checks a distillation's kernels (an error of kind ErrInvalid): at least one,
// of one length in [2, MaxLength] (CheckLength), at most MaxChannels, of finite samples,
// each of energy Σh² in [MinEnergy, MaxEnergy] or zero.
func CheckTargets(targets [][]float64) error {
	if len(targets) == 0 {
		return invalidf("the target has no kernels")
	}
	length := len(targets[0])
	for i, y := range targets {
		if len(y) != length {
			return invalidf("kernel %d has %d samples, kernel 0 has %d: a bank's kernels share one length", i, len(y), length)
		}
		e, zero := 0.0, true
		for t, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return invalidf("kernel %d sample %d is %v", i, t, v)
			}
			e += v * v
			zero = zero && v == 0
		}
		if !zero && !(e >= MinEnergy && e <= MaxEnergy) {
			// Σh² itself under- or overflows there (a kernel of 1e-160 said "= 0", one of
			// 1e160 "+Inf"): the norm, which float64 holds, is the number to give.
			return invalidf("kernel %d: its energy Σh² is outside [%g, %g] (‖h‖₂ = %.3g), where the fit's sums stay within float64: scale the kernels (the fit scales with them)", i, MinEnergy, MaxEnergy, floats.Norm(y, 2))
		}
	}
	if len(targets) > MaxChannels {
		return invalidf("%d kernels exceed the limit %d", len(targets), MaxChannels)
	}
	return CheckLength(length)
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}
