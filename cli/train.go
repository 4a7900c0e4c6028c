package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/presets"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/layouts"
	"github.com/ssmlab/ssmlab/train"
)

// jobFlags are the job options shared by distill and train.
type jobFlags struct {
	job        string
	model      train.Model
	order      orderFlag
	init       train.Init
	constraint train.Constraint
	maxRadius  radiusFlag
	optimizer  string
	lr         float64
	schedule   string
	loss       train.Loss
	steps      int
	refine     int
	tol        float64
	seed       uint64
	backend    string
	poles      train.Poles // distill only (addPolesFlag)
	out        string
	report     string
}

func addJobFlags(f *pflag.FlagSet, j *jobFlags) {
	d := train.DefaultSpec()
	f.StringVar(&j.job, "job", "", "read the job spec from `FILE` (JSON, the train.Spec format); flags given override it")
	j.model = d.Model
	f.Var(choiceFlag[train.Model]{&j.model, train.Models}, "model", "the model: "+train.Choices(train.Models))
	j.order = orderFlag{n: d.Order}
	f.Var(&j.order, "order", fmt.Sprintf("the state size `n`: %d to %d for distill, 0 (a gain) to %[2]d for train (distill: auto picks each channel's from the suggestion for --tol: the smallest whose lower bound is at most a third of it, at most --max-order)", train.MinDistillOrder, filters.MaxOrder))
	j.init = d.Init
	f.Var(choiceFlag[train.Init]{&j.init, train.Inits}, "init", "initialisation: "+train.Choices(train.Inits)+" (montel: rtf only; hankel: the stabilised ERA realisation)")
	j.constraint = d.Constraint
	f.Var(choiceFlag[train.Constraint]{&j.constraint, train.Constraints}, "constraint", train.Choices(train.Constraints)+" (l1_montel: rtf only)")
	j.maxRadius = radiusFlag{d.MaxRadius}
	f.Var(&j.maxRadius, "max-radius", "the pole-radius bound of --constraint radius: every pole of a fit stays inside it; auto (a job file's 0): "+train.AutoRadiusRule+", or a number in (0, 1 - 1e-10] (closer to 1 for kernels that decay more slowly than its powers)")
	f.StringVar(&j.optimizer, "optimizer", d.Optimizer.Name, "adam or adamw")
	float64Var(f, &j.lr, "lr", d.Optimizer.LR, "the learning rate")
	f.StringVar(&j.schedule, "schedule", d.Optimizer.Schedule, "constant or cosine")
	j.loss = d.Loss
	f.Var(choiceFlag[train.Loss]{&j.loss, train.Losses}, "loss", train.Choices(train.Losses))
	f.IntVar(&j.steps, "steps", d.Steps, "optimisation steps")
	f.IntVar(&j.refine, "refine", d.Refine, "Levenberg–Marquardt iterations: per order of the variable projection (hankel init, rtf or modal); after the optimiser otherwise (mse/relative loss; rtf: then a least-squares refit of the numerator; rotation: up to n = 64 at L = 1024); 0: none")
	float64Var(f, &j.tol, "tol", 0, "stop once every channel's relative L2 error is at most `TOL`, below 1 (0: run all steps)")
	f.Uint64Var(&j.seed, "seed", 0, "the random seed (results are deterministic for a seed)")
	f.StringVar(&j.backend, "backend", string(train.BackendCPU), train.Choices(train.BackendNames))
	f.StringVarP(&j.out, "output", "o", "-", "write the fitted filter (a bank for several channels) to `OUT`")
	f.StringVar(&j.report, "report", "", "write the job report as JSON to `FILE`")
}

// spec builds the job spec: the --job file, then every flag the user set.
func (j *jobFlags) spec(flags *pflag.FlagSet) (train.Spec, error) {
	s := train.DefaultSpec()
	if j.report == "-" && j.out == "-" {
		// Two JSON documents on stdout would be one unreadable stream.
		return s, fmt.Errorf("--report - needs -o OUT: stdout already carries the fitted filter (or the ladder's reports)")
	}
	if err := flagNoStdin("job", j.job); err != nil {
		return s, err
	}
	if j.job != "" {
		data, err := userfile.ReadFile(j.job)
		if err != nil {
			return s, fail(err)
		}
		if s, err = train.ParseSpec(data); err != nil {
			return s, failf("%s: %w", j.job, err)
		}
	}
	for _, st := range j.settings() {
		if j.job == "" || flags.Changed(st.flag) {
			st.apply(&s)
		}
	}
	return s, nil
}

// jobSetting is a job flag: its name, its key in a job file (train.FieldError's Field), and
// how it sets the spec.
type jobSetting struct {
	flag, field string
	apply       func(*train.Spec)
}

func (j *jobFlags) settings() []jobSetting {
	return []jobSetting{
		{"model", "model", func(s *train.Spec) { s.Model = j.model }},
		{"order", "order", func(s *train.Spec) { s.Order = j.order.n }},
		{"init", "init", func(s *train.Spec) { s.Init = j.init }},
		{"constraint", "constraint", func(s *train.Spec) { s.Constraint = j.constraint }},
		{"max-radius", "max_radius", func(s *train.Spec) { s.MaxRadius = j.maxRadius.r }},
		{"optimizer", "optimizer.name", func(s *train.Spec) { s.Optimizer.Name = j.optimizer }},
		{"lr", "optimizer.lr", func(s *train.Spec) { s.Optimizer.LR = j.lr }},
		{"schedule", "optimizer.schedule", func(s *train.Spec) { s.Optimizer.Schedule = j.schedule }},
		{"loss", "loss", func(s *train.Spec) { s.Loss = j.loss }},
		{"steps", "steps", func(s *train.Spec) { s.Steps = j.steps }},
		{"refine", "refine", func(s *train.Spec) { s.Refine = j.refine }},
		{"tol", "tol", func(s *train.Spec) { s.Tol = j.tol }},
		{"seed", "seed", func(s *train.Spec) { s.Seed = j.seed }},
		{"backend", "backend", func(s *train.Spec) { s.Backend = train.BackendName(j.backend) }},
		{"poles", "poles", func(s *train.Spec) { s.Poles = j.poles }},
	}
}

// check checks the job's settings before any target is read (train.Spec.CheckSettings; a
// distillation's order too, unless auto or a ladder's, which are checked on their own). A
// fault of a setting given as a flag, or of any without --job, is a command-line mistake
// (exit 2) worded with the flags; one of the --job file's alone is a failure of that file.
func (j *jobFlags) check(flags *pflag.FlagSet, s train.Spec, distillOrder bool) error {
	var err error
	if distillOrder {
		err = train.CheckDistillOrder(s.Order)
	}
	if err == nil {
		err = s.CheckSettings()
	}
	fe := (*train.FieldError)(nil)
	if err == nil || !errors.As(err, &fe) {
		if err != nil {
			return failf("%s: %w", j.job, err)
		}
		return nil
	}
	flagOf := map[string]string{}
	for _, st := range j.settings() {
		flagOf[st.field] = st.flag
	}
	name, ours := flagOf[fe.Field]
	ours = ours && (j.job == "" || flags.Changed(name))
	var with []string
	for _, f := range fe.With {
		if n, ok := flagOf[f]; ok && flags.Changed(n) {
			with = append(with, fmt.Sprintf("--%s %s", n, flags.Lookup(n).Value))
		}
	}
	switch {
	case ours:
		msg := fmt.Sprintf("--%s %s %s", name, fe.Value, fe.Why)
		if len(with) > 0 {
			msg += " (" + strings.Join(with, ", ") + ")"
		}
		return errors.New(msg)
	case len(with) > 0:
		return fmt.Errorf("%s: %s's %s %s %s", strings.Join(with, ", "), j.job, fe.Field, fe.Value, fe.Why)
	}
	return failf("%s: %w", j.job, err)
}

// checkDistillFlags refuses distill's flags that contradict each other, or that the
// distillation asked for would ignore (exit 2); spec is the job as the flags and --job make it.
func checkDistillFlags(flags *pflag.FlagSet, j *jobFlags, m *modelFlags, spec train.Spec) error {
	given := flags.Changed
	if err := train.CheckOrderOrOrders(given("order"), given("orders"), "--order", "--orders"); err != nil {
		return err
	}
	switch {
	case given("max-order") && !j.order.auto:
		return fmt.Errorf("--max-order bounds the orders --order auto picks, and --order is %s", j.order.String())
	case j.order.auto && (m.maxOrder < 1 || m.maxOrder > filters.MaxOrder):
		return fmt.Errorf("--max-order %d outside [1, %d]", m.maxOrder, filters.MaxOrder)
	case j.order.auto && given("tol") && !(spec.Tol > 0):
		return fmt.Errorf("--tol %g: --order auto picks each channel's order for a relative error above 0 (1e-3 by default)", spec.Tol)
	case j.order.auto && given("suggest-tol"):
		return fmt.Errorf("--suggest-tol: --order auto suggests each channel's order for --tol")
	}
	// The optimiser's settings are those of the recipes that train with Adam: variable
	// projection fits poles and residues without it, in no steps.
	recipe := spec
	recipe.Order = max(recipe.Order, train.MinDistillOrder) // auto, or a ladder's: any order
	if given("orders") {
		if err := recipe.CheckLadder(); err != nil {
			var with []string
			for _, name := range []string{"model", "init", "loss", "constraint"} {
				if given(name) {
					with = append(with, fmt.Sprintf("--%s %s", name, flags.Lookup(name).Value))
				}
			}
			if len(with) == 0 { // --job's
				with = []string{"the settings of " + j.job}
			}
			return fmt.Errorf("--orders: %w (%s)", err, strings.Join(with, ", "))
		}
	}
	for _, name := range []string{"steps", "lr", "optimizer", "schedule", "tol"} {
		if !given(name) || name == "tol" && j.order.auto {
			continue
		}
		if err := recipe.CheckOptimiserSetting("--" + name); err != nil {
			return err
		}
	}
	return nil
}

// addPolesFlag adds distill's --poles: train's fits of a task are not by variable
// projection, which alone places real poles.
func addPolesFlag(f *pflag.FlagSet, j *jobFlags) {
	j.poles = train.PolesAny
	f.Var(choiceFlag[train.Poles]{&j.poles, train.PoleSets}, "poles", "the poles a fit by variable projection (the hankel init, rtf or modal, mse or relative loss) places: any (conjugate pairs and real poles), real (real only, within --max-radius) or positive (real, in (0, --max-radius)): for an S4D layer built with is_real, whose poles are e^{Δ·A} with A real and negative (a checkpoint's such layers get positive whatever it says, unless --to-layout is rtf or stripedhyena)")
}

// backendFor resolves the job's backend, name, with train.SelectBackend, saying on stderr
// which backend auto chose and why. gpu or gpu64 without a GPU is a failure of the run, not of
// the command line (exit 1, "ssmlab: problem", naming the setting in it: --backend, or the
// --job file's key where it came from there): the same line runs on a machine with one, and
// a script tells a line to fix from a run that could not be done here.
func (j *jobFlags) backendFor(flags *pflag.FlagSet, name train.BackendName, stderr io.Writer) (train.Backend, error) {
	b, err := train.SelectBackend(name, func(line string) { fmt.Fprintf(stderr, "backend: %s\n", line) })
	from := "--backend " + string(name)
	if j.job != "" && !flags.Changed("backend") {
		from = fmt.Sprintf("%s's backend %s", j.job, name) // as check names a job file's key
	}
	if errors.Is(err, train.ErrNoGPU) {
		return nil, failf("no GPU backend on this machine for %s: %s; use --backend cpu or auto", from, train.NoGPUReason(err))
	}
	if err != nil {
		return nil, fmt.Errorf("--backend %q is not a backend (want %s)", name, train.Choices(train.BackendNames))
	}
	return b, nil
}

func newDistill(s *streams) *cobra.Command {
	var j jobFlags
	var m modelFlags
	var lf *layoutFlags
	var length int
	var suggestTol float64
	var tensor string
	var orders []int
	cmd := &cobra.Command{
		Use:   "distill TARGET [flags]",
		Short: "Distil a filter or long kernels into an RTF (or a modal or rotation SSM)",
		Long: `Distill fits a low-order filter to TARGET, in the background of nothing else: it prints
progress on stderr (a bar on a terminal, plain lines otherwise: the step, the current loss,
the worst channel's best relative error so far, the time taken and left; variable
projection, below, fits each channel's orders in turn, and gives the loss and error at the
highest order some channel has fitted, over the channels that have: "order N/TOP channels
C/D" ends its lines) and writes the fitted filter (a bank when TARGET has several channels)
to stdout or OUT. Ctrl-C (or SIGTERM, SIGHUP) cancels at any moment, writes nothing and
exits 130 (143, 129).

TARGET is a filter or bank file (its impulse responses of --length samples are the
kernels), a target file written by ssmlab import, or kernels in .npy, .npz, .safetensors or
CSV (one kernel per row; --tensor picks the array of a file holding several), fitted at
their own length (--length is refused for them).

The default recipe (--init hankel with the rtf or modal model) fits poles and residues by
variable projection: the residues by least squares for given poles, the poles by
Levenberg–Marquardt (--refine iterations per order) in a parametrisation that keeps every
pole inside --max-radius (auto: max(0.9999, 1 − 1/L) for kernels of L samples; the same
rule under --constraint none), from the target's ERA
realisation (unstable poles reflected or clipped) and from the fit of half the order with
more poles, so that a higher order never fits worse. Every result is stable. A fit that ends
far above its lower bound with poles on that radius bound, where a fit allowed a wider
bound (those poles moved out; over a long kernel, refined there from its poles or from its
ERA start) halves its error, gets a warning with the numbers and a wider --max-radius to try. An rtf
is written as a transfer function where float64 coefficients hold the fit on every
channel, else as a diagonal (poles and residues) bank, and distill says which and why.
Other inits train with Adam for --steps steps.

Before the job starts, a suggested order for --suggest-tol is printed: the smallest at
which the lower bound on the error of any filter of that order (from the targets' Hankel
singular values, on the report's Hankel matrices and weightings, but computed for the
orders 1 … 16, 32, 64, … in one run, where a report computes it for its own order alone, so
a report's can differ either way) is at most a third of it on every kernel, since fits
land about 1–3× above the bound; the line gives that bound at the order suggested and at
the order below, where it is still above a third; no order below it can reach the
tolerance with that margin. --order auto fits at that order (for --tol where given), at most
--max-order, and warns, naming them, of the channels whose bound stays above a third of the
tolerance at the order fitted and of those whose fit ends above it, as a checkpoint's units
do (also in --report's warnings). The
report (--report) gives per channel the MSE and the relative L2 error of the deployed
filter, its largest pole radius, whether it is stable and a lower bound on the error of any
filter of the order; --orders fits a ladder of orders and prints error and bound per order.
TARGET may also be one layer of a model checkpoint (--tensor PREFIX, --layout and the
layout's options as for import). A layout option applies to the layers of its layout: one
that no layer read has (--bias of an lru layer, or any of a filter file) is refused.

A whole model: with -o OUT.safetensors, .pt or .npz, TARGET is a model checkpoint and every
long-filter layer in it (Hyena implicit filters, S4 and S4D kernels, StripedHyena and RTF
filters; --layers PATTERN picks some) is distilled, channel by channel, and written to OUT
in place of its tensors, under the same prefix: in --to-layout, or by default in the rtf
layout where its tensors read back within their dtype's limit, else in a modal layout (s4d
for S4 and S4D layers, stripedhyena for the others, else the other one), said on stderr; an
rtf fit is kept as poles and residues for that, and its tensors are made from them. The
dtype is the layer's own (--dtype picks another). Every other tensor is copied bit for bit.
OUT.manifest.json (and a safetensors OUT's metadata, without the times) records per layer
and channel the order, model, relative error, largest pole radius, stability, time and
backend. --order auto gives each channel its suggested order for --tol (1e-3 by default:
the smallest whose lower bound is at most a third of it), at most --max-order, and names
the channels whose fit ends above --tol. An LRU, S5 or RotRNN layer (multi-input multi-output) is
reduced whole by balanced truncation to order at most --order (--order auto: the smallest
order at which every output is within --tol) and written back in its own layout with that
state size: at most ⌈order/2⌉ modes, each a complex state of the module or a RotRNN head of
two states, a real pole taking a whole mode (--order 3: d_hidden 2, or 2 heads of state
size 4); its channels in the manifest are its outputs,
each over every input (docs/scale.md). The work is done in units of at most --chunk
channels, each kept in the work directory (OUT.work) as soon as it is fitted: Ctrl-C exits
130 and keeps them, and the same command run again goes on where it stopped. --shard I/N
(or a Slurm array task, or a Kubernetes Indexed Job with --shards N) fits share I of N of
the units, balanced by cost, and writes it to OUT.shard-I-of-N.json; ssmlab merge assembles
the parts into the same OUT a single run writes (docs/scale.md). The backend is auto unless
--backend says otherwise: the CPU for variable projection (the default; faster there than
on the GPU at every length measured), the GPU where there is one for the Adam recipe.`,
		Example: `  ssmlab distill hyena.json --order 16 -o rtf16.json --report rtf16-report.json
  ssmlab distill butter.json --length 2048 --model modal --order 8
  ssmlab distill kernels.json --job job.json --steps 2000
  ssmlab distill kernels.npy --orders 4,8,16,32,64 > ladder.json
  ssmlab distill model.safetensors --order 16 -o distilled.safetensors
  ssmlab distill model.pt --order auto --tol 1e-3 --shard 0/8 -o distilled.pt`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs([]string{args[0], j.job}, fitOutputs(j.out, j.report, orders)...); err != nil {
				return err
			}
			spec, err := j.spec(cmd.Flags())
			if err != nil {
				return err
			}
			if err := j.check(cmd.Flags(), spec, !j.order.auto && len(orders) == 0); err != nil {
				return err
			}
			if err := checkDistillFlags(cmd.Flags(), &j, &m, spec); err != nil {
				return err
			}
			if _, ok := checkpointFormat(j.out); ok {
				return s.distillModel(cmd, args[0], spec, &j, &m, lf, length)
			}
			for _, name := range modelOnly {
				if cmd.Flags().Changed(name) {
					return fmt.Errorf("--%s applies to a checkpoint's distillation: -o OUT.safetensors, .pt or .npz", name)
				}
			}
			if len(orders) > 0 {
				if err := train.CheckLadderOrders(orders); err != nil {
					return fmt.Errorf("--orders: %w", err)
				}
				if err := checkLadderOut(j.out); err != nil {
					return err
				}
			}
			if j.order.auto && cmd.Flags().Changed("tol") {
				suggestTol = spec.Tol
			}
			if !(suggestTol > 0) || math.IsInf(suggestTol, 0) {
				return fmt.Errorf("--suggest-tol %g: the order is suggested for a relative error above 0 (1e-3 by default)", suggestTol)
			}
			pairs, err := lf.parsePairs()
			if err != nil {
				return err
			}
			layout := lf.layout
			if layout == "auto" {
				layout = ""
			}
			opts := sessions.ImportOptions{Tensor: tensor, Layout: layout, Options: lf.options(), Pairs: pairs}
			targets, name, err := s.readKernels(args[0], length, cmd.Flags().Changed("length"), opts)
			if ce := (*layouts.ChoiceError)(nil); errors.As(err, &ce) {
				// A choice the command line must make, as import's: exit 2.
				return fmt.Errorf("%w; or, for every layer, -o a checkpoint (OUT.safetensors, .pt or .npz)", err)
			}
			if err != nil {
				return err
			}
			spec.Target = train.Target{File: args[0], Length: len(targets[0])}
			// The backend and the job are checked before the suggestion's line, so that a
			// mistake in them is the only line on stderr; the order is the ladder's largest, or
			// the smallest for auto.
			check := spec
			if j.order.auto {
				check.Order = 1
			}
			if len(orders) > 0 {
				check.Order = slices.Max(orders)
			}
			backend, err := j.backendFor(cmd.Flags(), spec.Backend, s.err)
			if err != nil {
				return err
			}
			if err := train.CheckTargets(targets); err != nil {
				return failf("%s: %w", name, err)
			}
			if err := check.ValidateDistillation(len(targets), len(targets[0])); err != nil {
				return failf("%s: %w", name, err)
			}
			var auto *train.Auto // --order auto's, whose warnings the job's report adds
			var sug train.Suggestion
			if j.order.auto {
				var a train.Auto
				sug, a = train.AutoOrder(targets, suggestTol, m.maxOrder)
				auto, spec.Order = &a, a.Limit
			} else {
				sug = train.SuggestOrder(targets, suggestTol, train.MaxSuggestOrder)
			}
			fmt.Fprintf(s.err, "suggested order for relative error %g: %s\n", suggestTol, sug)
			if auto != nil {
				fmt.Fprintf(s.err, "order %d (--order auto, at most --max-order %d)\n", spec.Order, m.maxOrder)
			}
			if len(orders) > 0 {
				return s.runLadder(name, spec, train.Job{Spec: spec, Targets: targets}, orders, backend, &j)
			}
			return s.runJob(name, spec, train.Job{Spec: spec, Targets: targets}, backend, &j, auto)
		},
	}
	addJobFlags(cmd.Flags(), &j)
	addPolesFlag(cmd.Flags(), &j)
	cmd.Flags().IntSliceVar(&orders, "orders", nil, "fit every order of `N,N,...` (each from the one below, keeping the better of its fit and the one below's as written, so no error printed rises with the order; only where an rtf ladder goes from tf to diagonal can one rise, to no more than the order below's fit as poles and residues, which the tf wrote better by rounding: 4.83e-15 at order 4 to 4.90e-15 at 6 on an exact order-4 target) and print error and lower bound per order; -o then needs {n} in its name, or writes the ladder as JSON")
	addModelFlags(cmd.Flags(), &m)
	// The job flags' words are train's too; what they do for a checkpoint is said here.
	backend := cmd.Flags().Lookup("backend")
	backend.Usage += " (default: cpu; auto for a checkpoint, -o OUT.safetensors, .pt, .npz)"
	backend.DefValue = "" // the help's "(default "cpu")" read as a checkpoint's too; the usage says both
	for _, name := range []string{"optimizer", "lr", "schedule", "steps", "tol"} {
		// Variable projection (the default recipe) takes no steps: checkDistillFlags.
		cmd.Flags().Lookup(name).Usage += "; the recipes that train with the optimiser only (not --init hankel with rtf or modal)"
	}
	cmd.Flags().Lookup("tol").Usage += "; --order auto: the relative error each channel's order is suggested for (default 1e-3)"
	lf = addLayoutFlags(cmd.Flags(), forDistill)
	cmd.Flags().IntVar(&length, "length", train.DefaultKernelLength, "kernel length `L` taken from a filter TARGET (kernels are fitted at their own length), and of a checkpoint's layers that record none (S4D, StripedHyena, RTF without trunc_len, S4 without l_kernel), whose kernels are made for it (S4D dss, S4)")
	float64Var(cmd.Flags(), &suggestTol, "suggest-tol", 1e-3, "the relative error the suggested order is computed for")
	cmd.Flags().StringVar(&tensor, "tensor", "", "the array, or the prefix of the layer, to read from a TARGET file holding several (.npz, .safetensors, .pt)")
	return cmd
}

func newTrain(s *streams) *cobra.Command {
	var j jobFlags
	var (
		task, data          string
		length, delay, klen int
		cutoff              float64
	)
	cmd := &cobra.Command{
		Use:   "train --task delay|sysid [flags]",
		Short: "Train a filter on a task: the Delay task or system identification from data",
		Long: `Train fits a filter of --kernel-length samples so that y ≈ k * u:

  --task delay   the Delay task of the RTF paper (§4.3): band-limited white noise
                 (--cutoff, a fraction of Nyquist) delayed by --delay samples, --length long;
  --task sysid   input/output data from --data FILE, JSON {"u": [...], "y": [...]} or
                 {"channels": [{"u": [...], "y": [...]}, ...]}.

The job flags are those of distill; the report's errors are relative prediction errors.`,
		Example: `  ssmlab train --task delay --delay 64 --order 64 --kernel-length 256
  ssmlab train --task sysid --data io.json --model modal --order 4`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutputs([]string{data, j.job}, fitOutputs(j.out, j.report, nil)...); err != nil {
				return err
			}
			spec, err := j.spec(cmd.Flags())
			if err != nil {
				return err
			}
			if j.order.auto {
				return fmt.Errorf("--order auto picks a distillation's order from its targets; train needs a number")
			}
			if !cmd.Flags().Changed("init") && j.job == "" {
				spec.Init = "hankel"
			}
			if err := j.check(cmd.Flags(), spec, false); err != nil {
				return err
			}
			if err := train.CheckLength(klen); err != nil {
				return fmt.Errorf("--kernel-length: %w", err)
			}
			// Both are flags: checked here, not when the job runs (exit 1).
			if err := spec.CheckOrderFits(klen); err != nil {
				return fmt.Errorf("--order %d and --kernel-length %d: %w", spec.Order, klen, err)
			}
			// Each task reads its own flags; another task's would be ignored.
			taskFlags := map[string]string{"data": "sysid", "length": "delay", "delay": "delay", "cutoff": "delay"}
			for _, flag := range slices.Sorted(maps.Keys(taskFlags)) {
				if want := taskFlags[flag]; cmd.Flags().Changed(flag) && task != want && (task == "delay" || task == "sysid") {
					return fmt.Errorf("--%s applies to --task %s, not to --task %s", flag, want, task)
				}
			}
			var t *train.Task
			name := "task " + task
			switch task {
			case "":
				return fmt.Errorf("--task is required: delay or sysid")
			case "delay":
				if t, err = train.DelayTask(length, delay, cutoff, spec.Seed); err != nil {
					// Its parameters are the flags of the same names.
					if fe := (*train.FieldError)(nil); errors.As(err, &fe) {
						return fmt.Errorf("--%s %s %s", fe.Field, fe.Value, fe.Why)
					}
					return failf("%s: %w", name, err)
				}
			case "sysid":
				if data == "" {
					return fmt.Errorf("--task sysid needs --data FILE")
				}
				if err := flagNoStdin("data", data); err != nil {
					return err
				}
				if t, err = readIOData(data); err != nil {
					return err
				}
				name = data
			default:
				return fmt.Errorf("--task %q is not a task (want delay or sysid)", task)
			}
			spec.Target = train.Target{Length: klen}
			backend, err := j.backendFor(cmd.Flags(), spec.Backend, s.err)
			if err != nil {
				return err
			}
			return s.runJob(name, spec, train.Job{Spec: spec, Task: t}, backend, &j, nil)
		},
	}
	addJobFlags(cmd.Flags(), &j)
	f := cmd.Flags()
	f.StringVar(&task, "task", "", "delay or sysid (required)")
	f.StringVar(&data, "data", "", "sysid: the input/output data `FILE`")
	f.IntVar(&length, "length", 8192, "delay: the sequence length")
	f.IntVar(&delay, "delay", 64, "delay: the delay in samples")
	float64Var(f, &cutoff, "cutoff", 0.5, "delay: the noise band as a fraction of the Nyquist frequency")
	f.IntVar(&klen, "kernel-length", 256, "the length of the fitted kernel")
	return cmd
}

func readIOData(path string) (*train.Task, error) {
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil, fail(err)
	}
	return parseIOData(data, path)
}

// ioDataFormat is what --data holds, for parseIOData's messages.
const ioDataFormat = `{"u": [...], "y": [...]} or {"channels": [{"u": [...], "y": [...]}, ...]}`

// parseIOData reads system-identification data: {"u": [...], "y": [...]} for one channel or
// {"channels": [{"u": [...], "y": [...]}, ...]}. The job checks lengths and values.
func parseIOData(data []byte, path string) (*train.Task, error) {
	type pair struct {
		U []float64 `json:"u"`
		Y []float64 `json:"y"`
	}
	var doc struct {
		pair
		Channels []pair `json:"channels"`
	}
	if err := unmarshalAs(data, path, "input/output data, "+ioDataFormat, &doc); err != nil {
		return nil, err
	}
	if doc.U != nil {
		doc.Channels = append(doc.Channels, doc.pair)
	}
	t := &train.Task{Name: "sysid"}
	for _, c := range doc.Channels {
		t.U, t.Y = append(t.U, c.U), append(t.Y, c.Y)
	}
	if len(t.U) == 0 {
		return nil, failf(`%s: no data: want %s`, path, ioDataFormat)
	}
	return t, nil
}

// readKernels reads TARGET through sessions.Import: a filter or bank file (its impulse
// responses of length samples), a target file, or kernels in .npy, .npz, .safetensors or CSV
// (tensor picks one array of a file holding several), which are fitted as they are: a
// length given (lengthGiven) for them is refused.
func (s *streams) readKernels(path string, length int, lengthGiven bool, opts sessions.ImportOptions) ([][]float64, string, error) {
	if err := train.CheckLength(length); err != nil {
		return nil, path, fmt.Errorf("--length: %w", err)
	}
	var (
		item sessions.Item
		err  error
	)
	name := path
	if path == "-" {
		name = stdinName
		data, rerr := s.readStdin()
		if rerr != nil {
			return nil, name, rerr
		}
		item, err = sessions.ImportData(data, name, opts)
	} else {
		if err := sessionFileError(path); err != nil {
			return nil, name, err
		}
		item, err = sessions.Import(path, opts)
	}
	if err != nil {
		return nil, name, failUnlessOption(err)
	}
	if t := item.Target; t != nil {
		k := t.Kernels
		if k == nil || k.Len() == 0 {
			return nil, name, failf("%s: the target holds no kernels", name)
		}
		if lengthGiven {
			// They were fitted whole, --length silently ignored.
			return nil, name, fmt.Errorf("--length %d is the length of a filter TARGET's impulse responses; %s holds kernels (%s), which are fitted as they are", length, name, t.Describe())
		}
		switch len(k.Shape) {
		case 1:
			return [][]float64{k.Data}, name, nil
		case 2:
			rows := make([][]float64, k.Shape[0])
			for i := range rows {
				rows[i] = k.Data[i*k.Shape[1] : (i+1)*k.Shape[1]]
			}
			return rows, name, nil
		}
		return nil, name, failf("%s: kernels of shape %v: want (length) or (channels, length)", name, k.Shape)
	}
	chans := []filters.Filter{item.Entry.Filter}
	if item.Entry.Bank != nil {
		chans = item.Entry.Bank.Channels
	}
	kernels, err := train.ImpulseTargets(chans, length)
	if err != nil {
		return nil, name, failf("%s: %w", name, err)
	}
	return kernels, name, nil
}

// runJob runs a job with progress on stderr, cancelled by a signal (see Main), writes its
// filter and report, and summarises it on stderr; auto, for --order auto, adds its
// warnings to the report's (train.Auto.Warnings, as a checkpoint's units do).
func (s *streams) runJob(name string, spec train.Spec, job train.Job, backend train.Backend, j *jobFlags, auto *train.Auto) error {
	progress, done := s.progressPrinter()
	res, err := train.Run(s.context(), job, backend, progress)
	done()
	if errors.Is(err, context.Canceled) {
		return failf("%s: cancelled; nothing was written", name)
	}
	if err != nil {
		if errors.Is(err, train.ErrInvalid) {
			return failf("%s: %w", name, err)
		}
		return failf("%s: %w", name, err)
	}
	if auto != nil {
		res.Report.Warnings = append(res.Report.Warnings, auto.Warnings(res.Report.Channels, 0)...)
	}
	doc := filters.Document{Name: fmt.Sprintf("%s %d (%s)", spec.Model, spec.Order, strings.TrimSuffix(name, ".json"))}
	if len(res.Filters) == 1 {
		doc.Filter = res.Filters[0]
	} else {
		doc.Bank = &filters.Bank{Channels: res.Filters}
	}
	if j.report != "" {
		data, err := json.MarshalIndent(res.Report, "", "  ")
		if err != nil {
			return failf("report: %w", err)
		}
		if err := s.put(j.report, append(data, '\n')); err != nil {
			return err
		}
	}
	if err := s.write(j.out, doc); err != nil {
		return err
	}
	s.summarise(res.Report, job.Task == nil)
	return nil
}

// progressPrinter returns a job's progress callback for stderr (a bar on a terminal, plain
// lines otherwise) and what to call when the job ends.
func (s *streams) progressPrinter() (func(train.Progress), func()) {
	bar := isTerminal(s.err)
	print := func(p train.Progress) {
		if bar {
			const width = 30
			filled := width * p.Step / max(p.Steps, 1)
			at := ""
			if p.Order > 0 {
				at = fmt.Sprintf("  order %d/%d (%d/%d channels)", p.Order, p.TopOrder, p.Fitted, p.Channels)
			}
			fmt.Fprintf(s.err, "\r[%s%s] %d/%d%s  loss %.3g  best rel error %.3g  ETA %s ",
				strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.Step, p.Steps, at, p.Loss, p.RelError, p.ETA.Round(100*time.Millisecond))
			return
		}
		// Keys are only ever added at the end: scripts read this line.
		at := ""
		if p.Order > 0 {
			at = fmt.Sprintf(" order %d/%d channels %d/%d", p.Order, p.TopOrder, p.Fitted, p.Channels)
		}
		fmt.Fprintf(s.err, "step %d/%d loss %.6g best_rel_error %.6g elapsed %s eta %s%s\n",
			p.Step, p.Steps, p.Loss, p.RelError, p.Elapsed.Round(time.Millisecond), p.ETA.Round(time.Millisecond), at)
	}
	return print, func() {
		if bar {
			fmt.Fprintln(s.err)
		}
	}
}

// summarise prints a finished job's report on stderr: its errors, for a distillation
// (bounded: not a training task) the lower bound, for a fit by variable projection the form
// it was deployed in and why, and its warnings.
func (s *streams) summarise(r train.Report, bounded bool) {
	if r.Form != "" {
		fmt.Fprintf(s.err, "fitted %d channel(s), %s order %d as %s: relative error mean %.3g, worst %.3g; lower bound mean %.3g; stable: %v; %.2fs on %s\n",
			len(r.Channels), r.Model, r.Order, r.Form, r.MeanRelError, r.MaxRelError, r.MeanLowerBound, r.Stable, r.Seconds, r.Backend)
		if r.FormNote != "" {
			fmt.Fprintf(s.err, "form: %s\n", r.FormNote)
		}
	} else {
		bound := ""
		if bounded {
			bound = fmt.Sprintf("; lower bound mean %.3g", r.MeanLowerBound)
		}
		fmt.Fprintf(s.err, "fitted %d channel(s), %s order %d: relative error mean %.3g, worst %.3g%s; stable: %v; %d steps in %.2fs on %s\n",
			len(r.Channels), r.Model, r.Order, r.MeanRelError, r.MaxRelError, bound, r.Stable, r.Steps, r.Seconds, r.Backend)
	}
	if a := r.AutoRadiusText(); a != "" {
		fmt.Fprintln(s.err, a)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(s.err, "warning: %s\n", w)
	}
}

func isTerminal(w io.Writer) bool {
	switch m := w.(type) { // Main's wrappers of stdout and stderr
	case mutedWriter:
		w = m.w
	case gatedWriter:
		w = m.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// radiusFlag is --max-radius: a radius bound, or auto (train.Spec's MaxRadius 0, as a job
// file writes it), which the job resolves for its kernels' length (train.AutoRadius).
type radiusFlag struct{ r float64 }

func (f *radiusFlag) String() string { return train.MaxRadiusText(f.r) }

func (f *radiusFlag) Set(v string) error {
	if _, err := parseFinite(v); errors.Is(err, presets.ErrNotFinite) {
		return err // as every float flag
	}
	r, err := train.ParseMaxRadius(v)
	if err != nil {
		return err
	}
	f.r = r
	return nil
}

func (f *radiusFlag) Type() string { return "r" }

// orderFlag is --order: a state size, or auto.
type orderFlag struct {
	n    int
	auto bool
}

func (o *orderFlag) String() string {
	if o.auto {
		return "auto"
	}
	return strconv.Itoa(o.n)
}

func (o *orderFlag) Set(v string) error {
	if v == "auto" {
		o.n, o.auto = 0, true
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a whole number or auto")
	}
	o.n, o.auto = n, false
	return nil
}

func (o *orderFlag) Type() string { return "n" }

// choiceFlag is a flag whose value is one of a train vocabulary's list (train.Models, …);
// another is a command-line mistake (exit 2, flagError) that names the choices.
type choiceFlag[T ~string] struct {
	v    *T
	list []T
}

func (c choiceFlag[T]) String() string {
	if c.v == nil { // pflag's zero value, for its help
		return ""
	}
	return string(*c.v)
}

func (c choiceFlag[T]) Set(v string) error {
	if !slices.Contains(c.list, T(v)) {
		return fmt.Errorf("want %s", train.Choices(c.list))
	}
	*c.v = T(v)
	return nil
}

func (c choiceFlag[T]) Type() string { return strings.Join(train.Names(c.list), "|") }
