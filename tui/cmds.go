package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// Every computation and every file access runs in one of these commands. A command captures
// copies of what it needs (filters are immutable once built) and never reads the model; its
// message carries the key (entry id and edit generation) it was computed for, and Update drops
// it when the entry has moved on.

// respKey identifies the responses of one channel of one generation of an entry.
type respKey struct {
	rev           uint64
	ch, length, n int
}

type respData struct {
	key   respKey
	omega []float64
	r     Responses
	err   error // no response could be computed
	// overflow is the impulse response's alone (checkFinite): the frequency responses do
	// not depend on it, and are drawn.
	overflow error
}

type respMsg struct {
	id       string
	key      respKey
	omega    []float64
	r        Responses
	err      error
	overflow error
}

// pzKey identifies the poles and zeros of one channel of one generation of an entry.
type pzKey struct {
	rev uint64
	ch  int
}

type pzData struct {
	key                  pzKey
	poles, zeros         []complex128
	havePoles, haveZeros bool
	err                  error
}

type pzMsg struct {
	id           string
	key          pzKey
	poles, zeros []complex128
	err          error
}

// viewKey identifies a conversion of one channel of one generation of an entry.
type viewKey struct {
	rev  uint64
	ch   int
	form filters.Form
}

type viewData struct {
	f       filters.Filter
	rep     filters.Report
	rho     radiusOf // of f, where rep is outside the documented accuracy
	err     error
	pending bool
}

type viewMsg struct {
	id  string
	key viewKey
	f   filters.Filter
	rep filters.Report
	rho radiusOf
	err error
}

// radiusOf is a spectral radius a command computed, and whether it did (known).
type radiusOf struct {
	rho   float64
	known bool
}

// convertedRadius is the spectral radius of a conversion's result fs (a filter, or a bank's
// channels: their largest, worstRadius) where one of its reports is outside the documented
// accuracy: the question gate asks then names the list's mark of it (markOf). A channel's
// radius that cannot be computed counts as +Inf, as onBankRho counts it; a filter's leaves
// it unknown, as its poles are for the list.
func convertedRadius(reps []filters.Report, fs []filters.Filter) radiusOf {
	if !slices.ContainsFunc(reps, filters.Report.Inaccurate) || len(fs) == 0 {
		return radiusOf{}
	}
	worst, err := worstRadius(fs)
	if err != nil {
		if len(fs) == 1 {
			return radiusOf{}
		}
		worst = math.Inf(1)
	}
	return radiusOf{worst, true}
}

// worstRadius is the largest spectral radius of fs (a bank's channels: the list's mark of a
// bank, computeBankRho, and the question before converting one, convertedRadius), of those
// that could be computed, and the errors of the others.
func worstRadius(fs []filters.Filter) (float64, error) {
	rhos := make([]float64, len(fs))
	errs := make([]error, len(fs))
	filters.ForEachChannel(len(fs), func(i int) {
		rhos[i], errs[i] = filters.SpectralRadius(fs[i])
	})
	worst := 0.0
	for _, r := range rhos {
		worst = math.Max(worst, r)
	}
	return worst, errors.Join(errs...)
}

// bankConvertMsg is a whole bank converted, to be committed.
type bankConvertMsg struct {
	id   string
	rev  uint64
	form filters.Form
	bank *filters.Bank
	reps []filters.Report
	rho  radiusOf // of the bank, where a report is outside the documented accuracy
	err  error
}

type bankRhoMsg struct {
	id  string
	rev uint64
	rho float64
	err error
}

type presetMsg struct {
	name  string
	label string
	built Built
	err   error
	// asked is the preset whose parameters text the user typed in its prompt, asked again
	// when they are refused; nil for a preset added by a command.
	asked *PresetInfo
	text  string
}

// openMsg is a file read: a session, or items to add to the session open.
type openMsg struct {
	path   string
	opened Opened
	err    error
}

// savedMsg reports a filter of session s written to a filter file: it, as saved.
type savedMsg struct {
	s    *sessions.Session
	id   string
	path string
	it   Item
	err  error
}

type exportedMsg struct {
	req exportReq
	it  Item            // the item exported, before req.to's conversion
	rep *filters.Report // of the conversion to req.to
	out sessions.Exported
	err error
}

// plotExportedMsg reports an export-plot.
type plotExportedMsg struct {
	path string
	err  error
}

// suggestMsg is the suggested order for the distillation form opened on entry source.
type suggestMsg struct {
	source        string
	length, order int
	ok            bool
	bound         float64 // the lower bound at order (train.Suggestion.Bound)
	growing       string  // train.Suggestion.GrowingNote
	err           error
}

// suggestOrder computes the order suggestion for the form (targets of length samples).
func suggestOrder(r JobRunner, source string, length int, targets func() ([][]float64, error)) tea.Cmd {
	return func() tea.Msg {
		msg := suggestMsg{source: source, length: length}
		msg.err = safely("order suggestion", func() error {
			t, err := targets()
			if err != nil {
				return err
			}
			s := r.SuggestOrder(t, suggestTol)
			msg.order, msg.ok, msg.bound, msg.growing = s.Order, s.OK, s.Bound, s.GrowingNote()
			return nil
		})
		return msg
	}
}

type jobProgressMsg struct {
	id string
	p  JobProgress
}

type jobDoneMsg struct {
	id  string
	res *JobResult
	err error
}

// statusMsg puts a message in the status bar.
type statusMsg struct {
	text  string
	level level
}

type level int

const (
	levelInfo level = iota
	levelOK
	levelWarn
	levelError
)

// safely runs fn, turning a panic (a bug in a producer) into an error for the status bar.
func safely(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: internal error (a bug, please report it): %v", what, r)
		}
	}()
	return fn()
}

func computeResponses(an Analyzer, id string, key respKey, f filters.Filter, kernel []float64, omega []float64) tea.Cmd {
	return func() tea.Msg {
		var r Responses
		err := safely("responses", func() error {
			if f == nil {
				h := make([]float64, key.length)
				copy(h, kernel)
				r = an.KernelResponses(h, omega)
				return nil
			}
			var err error
			r, err = an.Responses(f, key.length, omega)
			return err
		})
		msg := respMsg{id: id, key: key, omega: omega, r: r, err: err}
		if err == nil {
			msg.overflow = checkFinite(r.Impulse)
		}
		return msg
	}
}

// errNonFinite marks a response that overflowed (an unstable filter over a long L).
var errNonFinite = errors.New("the impulse response overflows")

func checkFinite(h []float64) error {
	for t, v := range h {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if t < minLength {
				// no L that < reaches is short enough: the poles are what needs fixing
				return fmt.Errorf("%w at sample %d, before the shortest L (%d): the filter is unstable; move (or edit) the poles outside the unit circle inside it", errNonFinite, t, minLength)
			}
			return fmt.Errorf("%w at sample %d (the filter is unstable): shorten L with < to at most %d, or move the poles outside the unit circle inside it", errNonFinite, t, t)
		}
	}
	return nil
}

func computePZ(an Analyzer, id string, key pzKey, f filters.Filter) tea.Cmd {
	return func() tea.Msg {
		var poles, zeros []complex128
		err := safely("poles and zeros", func() error {
			var err error
			poles, zeros, err = an.PolesZeros(f)
			return err
		})
		return pzMsg{id: id, key: key, poles: poles, zeros: zeros, err: err}
	}
}

func convertView(id string, key viewKey, f filters.Filter) tea.Cmd {
	return func() tea.Msg {
		var g filters.Filter
		var rep filters.Report
		var rho radiusOf
		err := safely("convert", func() error {
			var err error
			if g, rep, err = filters.Convert(f, key.form); err == nil {
				rho = convertedRadius([]filters.Report{rep}, []filters.Filter{g})
			}
			return err
		})
		return viewMsg{id: id, key: key, f: g, rep: rep, rho: rho, err: err}
	}
}

func convertBank(id string, rev uint64, b *filters.Bank, to filters.Form) tea.Cmd {
	return func() tea.Msg {
		var out *filters.Bank
		var reps []filters.Report
		var rho radiusOf
		err := safely("convert bank", func() error {
			var err error
			if out, reps, err = filters.ConvertBank(b, to); err == nil {
				rho = convertedRadius(reps, out.Channels)
			}
			return err
		})
		return bankConvertMsg{id: id, rev: rev, form: to, bank: out, reps: reps, rho: rho, err: err}
	}
}

func computeBankRho(id string, rev uint64, b *filters.Bank) tea.Cmd {
	return func() tea.Msg {
		var worst float64
		err := safely("spectral radius", func() error {
			var err error
			worst, err = worstRadius(b.Channels)
			return err
		})
		return bankRhoMsg{id: id, rev: rev, rho: worst, err: err}
	}
}

func buildPreset(src PresetSource, name string, values map[string]string) tea.Cmd {
	return func() tea.Msg {
		var b Built
		err := safely("preset "+name, func() error {
			var err error
			b, err = src.Build(name, values)
			return err
		})
		label := b.Label
		if label == "" {
			label = presetLabel(name, values)
		}
		return presetMsg{name: name, label: label, built: b, err: err}
	}
}

// openLayer reads the layer c of the checkpoint at path.
func openLayer(st Store, path string, c LayerChoice) tea.Cmd {
	return func() tea.Msg {
		var o Opened
		err := safely("open", func() error {
			var err error
			o, err = st.OpenLayer(path, c)
			return err
		})
		return openMsg{path: path, opened: o, err: err}
	}
}

func openFile(st Store, path string) tea.Cmd {
	return func() tea.Msg {
		var o Opened
		err := safely("open", func() error {
			var err error
			o, err = st.Open(path)
			return err
		})
		return openMsg{path: path, opened: o, err: err}
	}
}

// saveItem writes it, the filter id of session s, to path; over an existing file only if
// over.
func saveItem(st Store, s *sessions.Session, id, path string, it Item, over bool) tea.Cmd {
	return func() tea.Msg {
		err := safely("save", func() error { return st.Save(path, it, over) })
		return savedMsg{s: s, id: id, path: path, it: it, err: err}
	}
}

// exportReq is one export: where, the form a .json export converts to, and the options
// (opts.Format the format).
type exportReq struct {
	path  string
	to    filters.Form
	opts  sessions.ExportOptions
	force bool // write even what fails its accuracy or read-back check
	over  bool // overwrite a file that exists
}

func exportItem(st Store, it Item, req exportReq) tea.Cmd {
	return func() tea.Msg {
		msg := exportedMsg{req: req, it: it}
		msg.err = safely("export", func() error {
			var reps []filters.Report
			if req.to != "" && it.Filter != nil && it.Filter.Form() != req.to {
				g, r, err := filters.Convert(it.Filter, req.to)
				if err != nil {
					return err
				}
				it.Filter, msg.rep, reps = g, &r, []filters.Report{r}
			}
			if req.to != "" && it.Bank != nil && it.Bank.Form() != req.to {
				b, rs, err := filters.ConvertBank(it.Bank, req.to)
				if err != nil {
					return err
				}
				it.Bank, reps = b, rs
			}
			// ssmlab convert's gate: nothing is written outside the documented accuracy
			if err := filters.CheckAccuracy(reps); err != nil && !req.force {
				return fmt.Errorf("%s: not written: %w; add force to write it anyway", req.path, err)
			}
			var err error
			msg.out, err = st.Export(req.path, it, req.opts, req.force, req.over)
			return err
		})
		return msg
	}
}

// exportPlot draws the plots of r into a figure file at path.
func exportPlot(w FigureWriter, path string, r FigureRequest) tea.Cmd {
	return func() tea.Msg {
		err := safely("export-plot", func() error { return w.WriteFigure(path, r) })
		return plotExportedMsg{path: path, err: err}
	}
}

// jobChans connect a running job to the event loop: progress keeps only the latest event
// (the runner may report faster than the UI draws), done carries the end.
type jobChans struct {
	progress chan JobProgress
	done     chan jobDoneMsg
}

func newJobChans() jobChans {
	return jobChans{progress: make(chan JobProgress, 1), done: make(chan jobDoneMsg, 1)}
}

// report stores p as the latest progress, replacing an undelivered older one.
func (c jobChans) report(p JobProgress) {
	for {
		select {
		case c.progress <- p:
			return
		default:
		}
		select {
		case <-c.progress:
		default:
		}
	}
}

// runJob is the job itself: a long-running command that computes the target kernels, runs
// the runner and posts the end on c.done. It returns no message; waitJob delivers them.
func runJob(ctx context.Context, r JobRunner, id string, spec train.Spec, orders []int, source func() ([][]float64, error), c jobChans) tea.Cmd {
	return func() tea.Msg {
		var res *JobResult
		err := safely("job", func() error {
			targets, err := source()
			if err != nil {
				return err
			}
			if lr, ok := r.(LadderRunner); ok && len(orders) > 0 {
				res, err = lr.RunLadder(ctx, spec, orders, targets, c.report)
			} else {
				res, err = r.Run(ctx, spec, targets, c.report)
			}
			return err
		})
		c.done <- jobDoneMsg{id: id, res: res, err: err}
		return nil
	}
}

// waitJob waits for the next event of a job, no sooner than after delay (the throttle: at
// most one progress message per delay), except that the end is delivered at once.
func waitJob(id string, c jobChans, delay time.Duration) tea.Cmd {
	return func() tea.Msg {
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case d := <-c.done:
				return d
			case <-t.C:
			}
		}
		// a pending progress event goes before the end, so the last one is never lost
		select {
		case p := <-c.progress:
			return jobProgressMsg{id: id, p: p}
		default:
		}
		select {
		case p := <-c.progress:
			return jobProgressMsg{id: id, p: p}
		case d := <-c.done:
			return d
		}
	}
}

// presetLabel is the entry name for a built preset when the source gave none.
func presetLabel(name string, values map[string]string) string {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := []string{name}
	for _, k := range keys {
		parts = append(parts, k+"="+values[k])
	}
	return strings.Join(parts, " ")
}
