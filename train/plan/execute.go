package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/train"
)

// Source gives the kernels of a unit's channels, in channel order, all of the unit's length.
type Source interface {
	Kernels(u Unit) ([][]float64, error)
}

// SharedSource gives the start of a unit of shared modes (Unit.Shared): the modes and steps
// of the layer as it is, which FitShared cuts to the unit's order.
type SharedSource interface {
	SharedStart(u Unit) (train.SharedModes, error)
}

// MIMOSource gives the layer of a MIMO unit (Unit.MIMO) as it is, which the unit reduces.
type MIMOSource interface {
	MIMO(u Unit) (*filters.MIMO, error)
}

// Store keeps fitted units: Load returns a unit fitted before (nil when there is none), Save
// keeps one so that a later Load finds it even if the process dies right after.
type Store interface {
	Load(u Unit) (*UnitResult, error)
	Save(r *UnitResult) error
}

// Fit is how each unit is fitted.
type Fit struct {
	// Spec is the recipe; its Order is used unless Auto.
	Spec train.Spec
	// Auto picks each channel's order: train.SuggestOrder's for Tol (the smallest whose lower
	// bound is well below it), at most MaxOrder (MaxOrder where none is, with a warning; a
	// channel whose fit ends above Tol is named in a warning too).
	Auto     bool
	Tol      float64
	MaxOrder int
	Backend  train.Backend
}

// Event reports Execute's progress: a unit started (Result nil, Step nil), a step of its fit
// (Step), or a unit finished (Result; Resumed when the Store held it).
type Event struct {
	Unit    Unit
	Step    *train.Progress
	Result  *UnitResult
	Resumed bool
	// Done units of Total (this shard's), and the cost done of TotalCost.
	Done, Total         int
	DoneCost, TotalCost float64
	// Elapsed is the time since Execute started; ETA the time left at the rate of the units
	// fitted so far (0 until one unit is under way).
	Elapsed, ETA time.Duration
	// LayerDone is set with the last unit of a layer (of this shard's units): Layer holds
	// the layer's results, in channel order.
	LayerDone bool
	Layer     []*UnitResult
}

// Execute fits units in order, each unless the store holds it already, saves each as soon as
// it is fitted, and returns the results in the order of units. events (if not nil) is
// called from Execute's goroutine. A cancelled ctx stops it between steps of a fit with
// ctx.Err(): the units saved stay saved.
func Execute(ctx context.Context, fit Fit, units []Unit, src Source, store Store, events func(Event)) ([]*UnitResult, error) {
	if events == nil {
		events = func(Event) {}
	}
	start := time.Now()
	var total float64
	remaining := map[string]int{}
	for _, u := range units {
		total += u.Cost()
		remaining[u.Prefix]++
	}
	out := make([]*UnitResult, len(units))
	var doneCost, fittedCost float64
	var fitting time.Duration // time spent fitting, for the rate
	byLayer := map[string][]*UnitResult{}
	eta := func(current float64, since time.Time) time.Duration {
		work := fittedCost + current
		if work <= 0 {
			return 0
		}
		spent := fitting + time.Since(since)
		return time.Duration(float64(spent) / work * (total - doneCost - current))
	}
	for i, u := range units {
		r, err := store.Load(u)
		if err != nil {
			return nil, err
		}
		resumed := r != nil
		if !resumed {
			began := time.Now()
			events(Event{Unit: u, Done: i, Total: len(units), DoneCost: doneCost, TotalCost: total, Elapsed: time.Since(start), ETA: eta(0, began)})
			progress := func(p train.Progress) {
				cur := u.Cost() * float64(p.Step) / float64(max(p.Steps, 1))
				events(Event{Unit: u, Step: &p, Done: i, Total: len(units), DoneCost: doneCost + cur, TotalCost: total, Elapsed: time.Since(start), ETA: eta(cur, began)})
			}
			if r, err = runUnit(ctx, fit, u, src, progress); err != nil {
				return nil, err
			}
			if err := store.Save(r); err != nil {
				return nil, err
			}
			fitting += time.Since(began)
			fittedCost += u.Cost()
		}
		out[i] = r
		doneCost += u.Cost()
		byLayer[u.Prefix] = append(byLayer[u.Prefix], r)
		remaining[u.Prefix]--
		ev := Event{Unit: u, Result: r, Resumed: resumed, Done: i + 1, Total: len(units), DoneCost: doneCost, TotalCost: total, Elapsed: time.Since(start), ETA: eta(0, time.Now())}
		if remaining[u.Prefix] == 0 {
			ev.LayerDone, ev.Layer = true, byLayer[u.Prefix]
			delete(byLayer, u.Prefix)
		}
		events(ev)
	}
	return out, nil
}

// runUnit fits a unit: a MIMO layer reduced, a layer of shared modes fitted together, or
// the kernels of its channels fitted.
func runUnit(ctx context.Context, fit Fit, u Unit, src Source, progress func(train.Progress)) (*UnitResult, error) {
	if u.MIMO {
		return reduceUnit(ctx, fit, u, src)
	}
	kernels, err := src.Kernels(u)
	if err != nil {
		return nil, err
	}
	if u.Shared {
		return fitSharedUnit(ctx, fit, u, kernels, src, progress)
	}
	return fitUnit(ctx, fit, u, kernels, progress)
}

// JobSpec is the recipe a job of spec s fits every layer's channels with, whatever the
// layer: s, with the diagonal form for an rtf fit by variable projection that names none. A
// manifest's options record it (Options.Applied), so that a layer's record says only what
// differs for that layer (SpecChanges).
func JobSpec(s train.Spec) train.Spec {
	if s.Model == train.ModelRTF && s.Form == "" && s.ByProjection() {
		// A checkpoint's layer is written in the rtf layout only where its coefficients
		// read back at the layer's dtype, else as modes: the fit's own modes, not those
		// of a tf it was written as (finding them again loses 2.7e-3 on the test model).
		s.Form = filters.FormDiagonal
	}
	return s
}

// UnitSpec is the recipe the channels of unit u fitted at order n are fitted with (fitUnit):
// the job's (JobSpec of s), without its target (the unit's kernels are), with the poles u's
// layer's module holds where the recipe fits by variable projection. A layer's record in the
// manifest says what of it differs from the job's (SpecChanges).
func UnitSpec(s train.Spec, u Unit, n int) train.Spec {
	s = JobSpec(s)
	s.Order = n
	s.Target = train.Target{}
	if u.Poles != "" && s.ByProjection() {
		// The poles the layer's module holds (an S4D layer with is_real: real and
		// positive), so that its own layout holds the fit; another recipe's fit goes
		// to a layout that holds it.
		s.Poles = u.Poles
	}
	return s
}

// SpecChanges are the keys of the recipe unit u's channels were fitted with (UnitSpec, as
// fitted: train.Spec.AsFitted) whose values differ from those every layer of the job of spec
// s is fitted with (JobSpec, as the manifest's options record it), with the unit's values, as
// a layer's record in the manifest gives them (LayerRecord.Spec); nil where none does. The
// order is each channel's (ChannelRecord.Order), not compared.
func SpecChanges(s train.Spec, u Unit) (map[string]json.RawMessage, error) {
	keys := func(s train.Spec) (map[string]json.RawMessage, error) {
		data, err := json.Marshal(s.AsFitted())
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		return m, json.Unmarshal(data, &m)
	}
	job := JobSpec(s)
	job.Target = train.Target{}
	was, err := keys(job)
	if err != nil {
		return nil, err
	}
	now, err := keys(UnitSpec(s, u, s.Order))
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	for k, v := range now {
		if old, ok := was[k]; !ok || !bytes.Equal(old, v) {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = v
		}
	}
	for k := range was {
		if _, ok := now[k]; !ok {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = json.RawMessage("null")
		}
	}
	return out, nil
}

// fitUnit fits a unit's kernels: all at the spec's order, or each channel at its own
// (grouped by order, one train.Run per group).
func fitUnit(ctx context.Context, fit Fit, u Unit, kernels [][]float64, progress func(train.Progress)) (*UnitResult, error) {
	if len(kernels) != u.Channels() {
		return nil, fmt.Errorf("%s: the source gave %d kernels for %d channels", u.ID(), len(kernels), u.Channels())
	}
	r := &UnitResult{Unit: u, Filters: make([]filters.Filter, len(kernels)), Channels: make([]ChannelRecord, len(kernels))}
	orders := make([]int, len(kernels))
	for i := range orders {
		orders[i] = fit.Spec.Order
	}
	var auto train.Auto
	if fit.Auto {
		limit := fit.MaxOrder
		if fit.Spec.Model == train.ModelRTF {
			limit = min(limit, (u.Length-2)/2) // 2n+1 parameters below the length
		} else {
			limit = min(limit, u.Length-1)
		}
		auto = train.AutoOrders(kernels, fit.Tol, limit)
		orders = auto.Orders
	}
	groups := slices.Compact(slices.Sorted(slices.Values(orders)))
	for _, n := range groups {
		var idx []int
		var targets [][]float64
		for c, o := range orders {
			if o == n {
				idx = append(idx, c)
				targets = append(targets, kernels[c])
			}
		}
		spec := UnitSpec(fit.Spec, u, n)
		res, err := train.Run(ctx, train.Job{Spec: spec, Targets: targets}, fit.Backend, progress)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: %w", u.ID(), err)
		}
		r.AutoMaxRadius = res.Report.AutoMaxRadius // every group's kernels are of the unit's length
		share := res.Report.Seconds / float64(len(idx))
		for k, c := range idx {
			r.Filters[c] = res.Filters[k]
			r.Channels[c] = ChannelRecord{Channel: u.Lo + c, Order: n, Model: spec.Model, ChannelReport: res.Report.Channels[k], Backend: res.Report.Backend, Seconds: share}
		}
		for _, w := range res.Report.Warnings {
			r.Warnings = append(r.Warnings, u.ID()+": "+w)
		}
	}
	if fit.Auto {
		reports := make([]train.ChannelReport, len(r.Channels))
		for c, rec := range r.Channels {
			reports[c] = rec.ChannelReport
		}
		for _, w := range auto.Warnings(reports, u.Lo) {
			r.Warnings = append(r.Warnings, u.ID()+": "+w)
		}
	}
	return r, nil
}

// fitSharedUnit fits a unit of shared modes (a whole layer) by train.FitShared at the spec's
// order (its modes each a conjugate pair: order/2 of them) from the source's start, with
// sharedIterations Levenberg–Marquardt iterations; each channel's record has its lower bound
// at that order.
func fitSharedUnit(ctx context.Context, fit Fit, u Unit, kernels [][]float64, src Source, progress func(train.Progress)) (*UnitResult, error) {
	ss, ok := src.(SharedSource)
	if !ok {
		return nil, fmt.Errorf("%s: the layer's modes are shared, and the source gives no start for them", u.ID())
	}
	switch {
	case fit.Auto:
		return nil, invalidf("%s: a layer of shared modes is fitted at one order for all its channels, not one per channel (give --order)", u.ID())
	case !fit.Spec.ByProjection():
		return nil, invalidf("%s: a layer of shared modes is fitted by variable projection (%s), not this recipe", u.ID(), train.ProjectionRecipe)
	case fit.Spec.Order < 2:
		return nil, invalidf("%s: order %d: a layer of shared modes is fitted with conjugate pairs, order 2 or more", u.ID(), fit.Spec.Order)
	}
	start, err := ss.SharedStart(u)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	f, err := train.FitShared(ctx, kernels, start, fit.Spec.Order/2, sharedIterations, func(done, total int) {
		progress(train.Progress{Step: done, Steps: total, Order: fit.Spec.Order, Elapsed: time.Since(began)})
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w", u.ID(), err)
	}
	order := 2 * (fit.Spec.Order / 2)
	r := &UnitResult{Unit: u, Shared: NewSharedRecord(f)}
	share := time.Since(began).Seconds() / float64(len(kernels))
	for c, d := range f.Filters {
		rep := sharedChannelReport(kernels[c], d, f.RelErrors[c], order)
		r.Filters = append(r.Filters, d)
		r.Channels = append(r.Channels, ChannelRecord{Channel: u.Lo + c, Order: order, Model: train.ModelModal, ChannelReport: rep, Backend: "cpu", Seconds: share})
	}
	if order != fit.Spec.Order {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: fitted at order %d: its modes are conjugate pairs", u.ID(), order))
	}
	return r, nil
}

// sharedChannelReport is the report of a shared fit's channel d of kernel y at relative error
// rel: its MSE from the residual (train.MSE, every fit's), where rel²·‖y‖²/L gave 0 for a
// zero kernel whatever the response.
func sharedChannelReport(y []float64, d filters.Filter, rel float64, order int) train.ChannelReport {
	rho, _ := filters.SpectralRadius(d)
	rep := train.ChannelReport{RelError: rel, MSE: train.MSE(y, d.Impulse(len(y))), MaxPoleRadius: rho, Stable: filters.Stable(rho)}
	if b := train.LowerBounds(y, []int{order}); b[0] > 0 {
		rep.LowerBound, rep.BoundRatio = b[0], rel/b[0]
	}
	return rep
}

// reduceUnit reduces a MIMO layer (a whole layer, its outputs the unit's channels) by
// balanced truncation to the spec's order, whatever the recipe (analysis.ReduceMIMO), its B
// and C then refitted by least squares over the unit's length (analysis.RefitMIMO), or with
// Auto to the smallest order up to MaxOrder at which every output is within Tol
// (analysis.ReduceMIMOWithin), and records each output's relative error over the unit's
// length, all inputs together (filters.MIMODiff).
func reduceUnit(ctx context.Context, fit Fit, u Unit, src Source) (*UnitResult, error) {
	ms, ok := src.(MIMOSource)
	if !ok {
		return nil, fmt.Errorf("%s: a MIMO layer, and the source does not give it", u.ID())
	}
	m, err := ms.MIMO(u)
	if err != nil {
		return nil, err
	}
	if u.Lo != 0 || u.Hi != m.Outputs {
		return nil, fmt.Errorf("%s: a MIMO layer of %d outputs is one unit of them all", u.ID(), m.Outputs)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	began := time.Now()
	var red *analysis.MIMOReduction
	var errs []float64
	var warning string
	if fit.Auto {
		// One order for the layer: the smallest at which every output is within Tol.
		var reached bool
		red, errs, reached, err = analysis.ReduceMIMOWithin(m, fit.Tol, u.Length, fit.MaxOrder)
		if err == nil && !reached {
			warning = fmt.Sprintf("%s: no order up to %d reaches relative error %g on every output: reduced to order %d (worst output %.3g)", u.ID(), fit.MaxOrder, fit.Tol, red.Order, slices.Max(errs))
			if why := red.Shortfall(fit.MaxOrder); why != "" {
				warning += fmt.Sprintf("; order %d was not reached: %s", fit.MaxOrder, why)
			}
		}
	} else if red, err = analysis.ReduceMIMO(m, fit.Spec.Order); err == nil {
		red.System, errs, err = analysis.RefitMIMO(m, red.System, u.Length)
		if why := red.Shortfall(fit.Spec.Order); why != "" {
			warning = fmt.Sprintf("%s: reduced to order %d in %s (order %d asked: %s)", u.ID(), red.Order, plural.Count(len(red.System.Poles), "mode"), fit.Spec.Order, why)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.ID(), err)
	}
	energies, err := m.Energies(u.Length)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.ID(), err)
	}
	rho := red.System.MaxRadius()
	r := &UnitResult{Unit: u, MIMO: NewMIMORecord(red)}
	share := time.Since(began).Seconds() / float64(m.Outputs)
	for o, e := range errs {
		rep := train.ChannelReport{RelError: e, MaxPoleRadius: rho, Stable: filters.Stable(rho)}
		rep.MSE = e * e * energies[o] / float64(m.Inputs*u.Length) // per sample of every input's response
		r.Channels = append(r.Channels, ChannelRecord{Channel: o, Order: red.Order, Model: train.ModelModal, ChannelReport: rep, Backend: "cpu", Seconds: share})
	}
	if warning != "" {
		r.Warnings = append(r.Warnings, warning)
	}
	return r, nil
}

// sharedIterations is the most Levenberg–Marquardt iterations of a layer of shared modes
// (a modal fit's rung and its extension take up to 200).
const sharedIterations = 200
