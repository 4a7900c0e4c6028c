package tui

import (
	"context"
	"time"

	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/train"
)

// The workbench reaches the rest of ssmlab only through the small interfaces below, so that
// each producer (presets, sessions, train, analysis) can be swapped without touching the
// models. wire.go builds the defaults; tests substitute fakes.

// Deps are the services the workbench uses. A nil field takes its default from DefaultDeps.
type Deps struct {
	Presets  PresetSource
	Store    Store
	Runner   JobRunner
	Analyzer Analyzer
	Figures  FigureWriter
}

// PresetSource lists and builds ready-made filters ("add from preset").
type PresetSource interface {
	// Presets lists what Build accepts, in the order the picker shows them.
	Presets() []PresetInfo
	// Build makes the named preset from parameter values written as text; parameters not
	// given take their defaults. It may be slow (a dense eigen-decomposition): the workbench
	// calls it from a command, never from Update.
	Build(name string, values map[string]string) (Built, error)
}

// PresetInfo describes one preset for the picker.
type PresetInfo struct {
	Name, Description string
	Params            []PresetParam
}

// PresetParam is one parameter of a preset, with its default written as a user would.
type PresetParam struct {
	Name, Default, Help string
}

// Built is what a preset makes: a filter, a bank, or time-domain kernels (one per channel)
// for presets that are not state-space filters.
type Built struct {
	Name    string // a short name for the filters list ("butter4")
	Label   string // the full description ("butter order=4 wc=0.25 …")
	Filter  filters.Filter
	Bank    *filters.Bank
	Kernels [][]float64
	Note    string // a line on how the result falls short of its parameters (presets.Result.Note)
}

// Store loads and saves work.
type Store interface {
	// Open reads a file: a session file gives the session; any other file (a filter or bank
	// file, kernels, a model checkpoint with one layer) the items it holds, to add to the
	// session open; a checkpoint with several layers (or arrays) the choices to pick from.
	Open(path string) (Opened, error)
	// OpenLayer reads the layer (or array) c of a checkpoint, as ssmlab import --layout
	// --tensor does.
	OpenLayer(path string, c LayerChoice) (Opened, error)
	// Save writes one filter or bank to path. Unless over is set, it refuses to overwrite a
	// file that exists (an *ExistsError).
	Save(path string, it Item, over bool) error
	// Export writes a filter, a bank or kernels to path in o.Format (sessions.Export: a
	// filter file, the RTF layout in .npz or .safetensors, impulse responses in CSV or
	// .npy) and reports what it measured.
	// Unless force is set, tensors that fail their read-back check (Exported.Failed) are
	// not written, and the error is a *ReadBackError; unless over is set, neither is a file
	// that exists (an *ExistsError).
	Export(path string, it Item, o sessions.ExportOptions, force, over bool) (sessions.Exported, error)
	// SaveSession writes s, a snapshot of the workbench's session taken on its event loop,
	// to path. Unless over is set, it refuses to overwrite the session's own file changed on
	// disk since it was opened or saved (a *sessions.ChangedError) and any other file that
	// exists (an *ExistsError).
	SaveSession(s *sessions.Session, path string, over bool) error
}

// Opened is what Store.Open read: a session, or the items of another file.
type Opened struct {
	Session *sessions.Session
	Items   []Item
	// Layers are a checkpoint's layers (or arrays) when it holds several: the user picks
	// one (OpenLayer).
	Layers []LayerChoice
}

// LayerChoice is a layer of a checkpoint (sessions/layouts' detection, as ssmlab import
// --list lists it), or an array of a file without layers, to pick.
type LayerChoice struct {
	Prefix string // the module prefix ("layers.0.layer."), or the array's name
	Layout string // the layout, or sessions.Kernels for an array
	Label  string // one line: prefix, layout, channels, order or length, dtype
}

// Item is one filter, bank or set of kernels as stored.
type Item struct {
	Name    string
	Filter  filters.Filter
	Bank    *filters.Bank
	Kernels *arrays.Array    // a (length) or (channels, length) array of kernels
	Source  *sessions.Source // where the kernels came from, when known
	// Note says how it was read from a model's layer ("" for a filter file, kernels);
	// Warnings what a reader should know (a MIMO layer's slices, a part left out).
	Note     string
	Warnings []string
}

// JobRunner runs a distillation. Run blocks until the job ends; it is called on its own
// goroutine, reports progress through progress (from any goroutine, as often as it likes:
// the workbench coalesces and throttles) and returns ctx.Err() promptly once ctx is done.
type JobRunner interface {
	Run(ctx context.Context, spec train.Spec, targets [][]float64, progress func(JobProgress)) (*JobResult, error)
	// Backends lists the backends the form offers, the default first.
	Backends() []train.BackendName
	// Defaults is the form's starting point (the workbench adapts the order and the target
	// length, Target.Length, to the filter being distilled).
	Defaults() train.Spec
	// SuggestOrder returns the smallest order whose lower bound on every target is well
	// below relative error tol (train.SuggestOrder; OK false: none up to the largest order
	// searched); the form shows it before a job starts. It may take a while: the workbench
	// calls it from a command.
	SuggestOrder(targets [][]float64, tol float64) train.Suggestion
}

// JobProgress is one progress event of a running job (train.Progress).
type JobProgress struct {
	Step, Steps  int
	Loss, RelErr float64 // mean loss over channels, worst relative error
	Elapsed, ETA time.Duration
	// A job fitted by variable projection fits each channel's orders in turn: Loss and RelErr
	// are of the Fitted channels (of Channels) that have fitted Order (of TopOrder), at it.
	// 0 for other jobs.
	Order, TopOrder, Fitted, Channels int
}

// JobResult is a finished job: one fitted filter per target channel and a summary.
type JobResult struct {
	Filters     []filters.Filter
	MaxRelError float64
	// MeanRelError is the channels' mean error and MeanLowerBound their mean lower bound on
	// the error of any filter of the order; FormNote, for an rtf fitted by variable
	// projection, the form its filters are written in and why (train.Report's).
	MeanRelError   float64
	MeanLowerBound float64
	FormNote       string
	Stable         bool
	Seconds        float64
	Warnings       []string
	// RadiusNote is the radius bound the job chose for the kernels' length where its spec
	// left it automatic (train.Report.AutoRadiusText), "" where the spec gave one.
	RadiusNote string
	// Backend is the backend that ran the job ("cpu", "gpu"), with the reason when auto
	// chose it ("cpu (no GPU: …)").
	Backend string
	// Ladder is a ladder job's error and lower bound at each order (LadderRunner); the
	// filters and figures above are those of its highest order.
	Ladder *figures.Ladder
}

// LadderRunner is a JobRunner that also fits ladders: the same job at several orders, each
// channel's error with the lower bound on the error of any filter of the order beside it
// (train.FitLadder, as ssmlab distill --orders).
type LadderRunner interface {
	RunLadder(ctx context.Context, spec train.Spec, orders []int, targets [][]float64, progress func(JobProgress)) (*JobResult, error)
}

// Analyzer computes what the plots show. Its methods may be slow; they run in commands.
type Analyzer interface {
	// Responses returns the impulse response h[0..length-1] and, at each ω of omega,
	// H(e^{jω}) and the group delay in samples (none when it cannot be computed).
	Responses(f filters.Filter, length int, omega []float64) (Responses, error)
	// KernelResponses returns the same of a kernel h, taken as an FIR filter.
	KernelResponses(h []float64, omega []float64) Responses
	// PolesZeros returns the poles and zeros of f.
	PolesZeros(f filters.Filter) (poles, zeros []complex128, err error)
}

// Responses are the time and frequency responses of one filter.
type Responses struct {
	Impulse []float64
	H       []complex128
	Delay   []float64
	// Masked marks the frequencies where H is 0 or infinite (a zero or pole on the unit
	// circle at a grid point), whose phase is undefined (analysis.Response.Masked).
	Masked []bool
	// SteadyState is what the frequency plots of a filter that is not stable say
	// (analysis.SteadyStateNote), "" for one that is and for a kernel.
	SteadyState string
}

// FigureWriter exports plots as figures for papers and reports (the export-plot command).
type FigureWriter interface {
	// WriteFigure draws r and writes it to path atomically, in the format of path's
	// extension (.svg, .pdf or .png). It may be slow: the workbench calls it from a command.
	WriteFigure(path string, r FigureRequest) error
}

// FigureRequest is what export-plot draws: the panels shown, for the filter shown and its
// overlay, with the plots' settings.
type FigureRequest struct {
	// Kinds are the panels, in order: "impulse", "magnitude", "phase", "group-delay",
	// "pole-zero".
	Kinds  []string
	Series []FigureSeries
	Length int  // impulse samples
	Log    bool // log |h[t]|
	// Ladder, when set, is drawn instead (figures.NewLadder, as ssmlab plot --ladder), titled
	// Title.
	Ladder *figures.Ladder
	Title  string
}

// FigureSeries is one filter of a figure: a filter, or kernel samples (exactly one is set).
type FigureSeries struct {
	Name   string
	Filter filters.Filter
	Kernel []float64
}
