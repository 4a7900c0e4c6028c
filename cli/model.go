package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
	"github.com/ssmlab/ssmlab/train"
	"github.com/ssmlab/ssmlab/train/plan"
)

// modelFlags are distill's flags for a whole checkpoint.
type modelFlags struct {
	toLayout string
	layers   string
	shard    string
	shards   int
	workDir  string
	chunk    int
	maxOrder int
	force    bool
	dtype    string
}

func addModelFlags(f *pflag.FlagSet, m *modelFlags) {
	f.StringVar(&m.toLayout, "to-layout", "", "checkpoint: write every distilled layer in layout `L` ("+layoutNames(layouts.ModuleLayouts)+"); default: rtf where its tensors read back within their dtype's limit, else s4d (S4, S4D layers) or stripedhyena (the others), else the other of the two. Not sos, which no model's module loads: ssmlab export --layout sos writes a distilled filter file as sections")
	f.StringVar(&m.layers, "layers", "", "checkpoint: distil only the layers whose prefixes match `PATTERN` (shell patterns, comma-separated: 'backbone.layers.[0-3].*')")
	f.StringVar(&m.shard, "shard", "", "checkpoint: fit share `I/N` of the work (0 ≤ I < N) and write it as OUT.shard-I-of-N.json for ssmlab merge; default: from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or JOB_COMPLETION_INDEX (with --shards), else all of it")
	f.IntVar(&m.shards, "shards", 0, "checkpoint: the number of shards `N` of a Kubernetes Indexed Job (its completions), whose JOB_COMPLETION_INDEX names this one")
	f.StringVar(&m.workDir, "work-dir", "", "checkpoint: keep each fitted unit in `DIR`, so that the same command run again skips them (default OUT.work)")
	f.IntVar(&m.chunk, "chunk", 64, "checkpoint: the most channels fitted as one unit of work")
	f.IntVar(&m.maxOrder, "max-order", 64, "--order auto: the largest order a channel gets")
	f.BoolVar(&m.force, "force", false, "checkpoint: write a layer whose tensors read back beyond their dtype's limit in every layout tried (with a warning)")
	f.StringVar(&m.dtype, "dtype", "", "checkpoint: write the distilled layers' tensors as `T`: float64, float32 or bfloat16 (default: each layer's own)")
}

// checkpointFormat returns the container a path's extension names, if any.
func checkpointFormat(path string) (arrays.Format, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".safetensors":
		return arrays.FormatSafetensors, true
	case ".pt", ".pth", ".bin", ".ckpt":
		return arrays.FormatTorch, true
	case ".npz":
		return arrays.FormatNPZ, true
	}
	return "", false
}

// modelOnly are the flags that apply to a whole checkpoint only.
var modelOnly = []string{"to-layout", "layers", "shard", "shards", "work-dir", "chunk", "force", "dtype"}

// recipeFlags are the flags of a fitting recipe, which balanced truncation does not take.
var recipeFlags = []string{"model", "init", "constraint", "max-radius", "optimizer", "lr", "schedule", "loss", "steps", "refine", "seed", "poles", "tol"}

// checkReductionFlags refuses a recipe's flag where every unit is a MIMO layer's (lru, s5,
// rotrnn), reduced by balanced truncation whatever the recipe: the flag would be ignored.
func checkReductionFlags(flags *pflag.FlagSet, j *jobFlags, ck *sessions.Checkpoint) error {
	if len(ck.Layers) == 0 {
		return nil
	}
	for _, l := range ck.Layers {
		if !ck.IsMIMO(l) {
			return nil
		}
	}
	for _, name := range recipeFlags {
		if flags.Changed(name) && !(name == "tol" && j.order.auto) {
			return fmt.Errorf("--%s is a setting of a fitting recipe, and every layer picked is an LRU, S5 or RotRNN layer, reduced by balanced truncation (--order, or auto with --tol, sets it)", name)
		}
	}
	return nil
}

// checkLengthUsed refuses --length where every layer picked records the kernel length it is
// distilled at (an RTF layer's trunc_len, an S4 layer's l_kernel, a Hyena layer's
// positions): the flag would be ignored (an RTF layer with a trunc_len was distilled at it,
// --length silently dropped).
func checkLengthUsed(flags *pflag.FlagSet, ck *sessions.Checkpoint, length int) error {
	if !flags.Changed("length") || len(ck.Layers) == 0 {
		return nil
	}
	var own []string
	for _, l := range ck.Layers {
		if l.LengthFrom == "" {
			return nil // this layer is distilled at --length
		}
		own = append(own, fmt.Sprintf("%s layer %q at %s", l.Layout, l.Prefix, l.LengthFrom))
	}
	const most = 3
	if len(own) > most {
		own = append(own[:most], fmt.Sprintf("%d more", len(own)-most))
	}
	return fmt.Errorf("--length %d would change nothing: every layer picked is distilled at the kernel length it records (%s); --length is for the layers that record none (S4D, StripedHyena, RTF without trunc_len, S4 without l_kernel)",
		length, strings.Join(own, "; "))
}

// distillModel distils every long-filter layer of a checkpoint (or this shard's share).
func (s *streams) distillModel(cmd *cobra.Command, path string, spec train.Spec, j *jobFlags, m *modelFlags, lf *layoutFlags, length int) error {
	flags := cmd.Flags()
	if path == "-" {
		return fmt.Errorf("a checkpoint is read from a FILE, not stdin")
	}
	if flags.Changed("tensor") {
		return fmt.Errorf("--tensor reads one layer; -o %s distils every layer of the checkpoint (--layers picks some)", j.out)
	}
	if flags.Changed("orders") {
		return fmt.Errorf("--orders fits a ladder of one target; a checkpoint is distilled at --order N or auto")
	}
	if flags.Changed("report") {
		return fmt.Errorf("--report is for one target; a checkpoint's report is its manifest, %s.manifest.json", j.out)
	}
	if flags.Changed("suggest-tol") {
		return fmt.Errorf("--suggest-tol is for one target; a checkpoint is distilled at --order N, or auto for --tol")
	}
	if !flags.Changed("backend") && (j.job == "" || spec.Backend == "") {
		spec.Backend = train.BackendAuto
	}
	pattern, err := plan.ParsePattern(m.layers)
	if err != nil {
		return fmt.Errorf("--layers: %w", err)
	}
	opts, err := m.options(j, lf, spec, length)
	if err != nil {
		return err
	}
	shard, from, err := s.shardOf(m)
	if err != nil {
		return err
	}
	// The run writes OUT and its manifest, or a shard its part: check them all before the
	// work, so that it never fails having written the checkpoint without its manifest.
	// The work directory, kept between runs, is no file to check, but none of them either.
	outs := []output{{"-o", "the distilled checkpoint", j.out}, {"-o", "its manifest", j.out + ".manifest.json"}}
	if shard.Count > 1 {
		outs = []output{{"--shard", "the shard's part", partPath(j.out, shard)}}
	}
	if err := distinctOutputs(append([]output{{"--work-dir", "the work directory", m.workDir}}, outs...)...); err != nil {
		return err
	}
	if err := checkOutputs([]string{path}, outs...); err != nil {
		return err
	}
	dir := m.workDir
	if dir == "" {
		dir = defaultWorkDir(j.out)
	}
	if err := checkWorkDir(dir); err != nil {
		return err
	}
	if shard.Count <= 1 {
		l, err := lockDistilled(j.out, dir)
		if err != nil {
			return err
		}
		// Ctrl-C ends the process before this defer runs: the lock's file goes then too, as
		// at the end of any run (a kill -9 leaves it, which the next run reuses).
		unlock := sync.OnceValue(l.Unlock)
		defer unlock()
		s.onCancel(func() { unlock() })
	}
	format, _ := checkpointFormat(j.out)
	ck, err := sessions.OpenCheckpoint(path, sessions.CheckpointOptions{Layout: opts.Layout, Options: opts.LayoutOptions, Layers: pattern, Length: length, ToLayout: opts.ToLayout})
	if what, ok := jsonItemFile(path, err); ok {
		return failf("%s is %s, not a model checkpoint: an output of .pt, .safetensors or .npz (-o %s) makes distill read its input as a checkpoint, every layer of it distilled; distil %s to a filter file (-o OUT.json), which ssmlab export writes in a model's layout", path, what, j.out, path)
	}
	if err != nil {
		return failUnlessOption(err)
	}
	defer ck.Close()
	if err := checkReductionFlags(flags, j, ck); err != nil {
		return err
	}
	if err := checkLengthUsed(flags, ck, length); err != nil {
		return err
	}
	// A tensor OUT cannot hold is refused before the fits, which it would otherwise end.
	if err := ck.CheckCopied(format); err != nil {
		return failf("%s: %w", j.out, err)
	}
	units, err := s.planModel(ck, opts)
	if err != nil {
		return err
	}
	s.describePlan(ck, units, opts)
	mine := plan.Of(units, shard)
	if shard.Count > 1 {
		var cost, total float64
		for _, u := range units {
			total += u.Cost()
		}
		for _, u := range mine {
			cost += u.Cost()
		}
		fmt.Fprintf(s.err, "shard %s (%s): %d of %d units, %.0f%% of the work\n", shard, from, len(mine), len(units), 100*cost/total)
	}
	backend, err := j.backendFor(cmd.Flags(), spec.Backend, s.err)
	if err != nil {
		return err
	}
	wd, err := sessions.OpenWorkDir(dir, plan.FitKey(ck.Input, opts))
	if err != nil {
		return fail(err)
	}
	// A run meant to go on where one stopped, with an option changed by mistake, would
	// fit everything again without a word. (Others reads every unit file's head: only
	// where none of this run's units is there, and it has some to fit.)
	if len(mine) > 0 && !slices.ContainsFunc(mine, wd.Has) {
		if n, err := wd.Others(); err == nil && n > 0 {
			fmt.Fprintf(s.err, "note: %s holds %s, none of this run's: fitted from another input or with another recipe (--order, --model, --refine, …), which this run does not take; it fits every unit anew\n", wd.Dir, plural.Count(n, "unit"))
		}
	}
	results, err := s.fitUnits(ck, opts, mine, wd, backend)
	if err != nil {
		return err
	}
	records := j.out + ".manifest.json"
	if shard.Count > 1 {
		records = partPath(j.out, shard)
	}
	s.unitWarnings(results, records)
	if shard.Count > 1 {
		abs, err := filepath.Abs(path)
		if err != nil {
			return fail(err)
		}
		part := &sessions.Part{Input: ck.Input, InputPath: abs, Options: opts, Plan: plan.Hash(units), Shard: shard, Units: results}
		data, err := sessions.EncodePart(part)
		if err != nil {
			return fail(err)
		}
		out := partPath(j.out, shard)
		if err := s.put(out, data); err != nil {
			return err
		}
		fmt.Fprintf(s.err, "wrote %s (%s); when every shard is done: ssmlab merge %s -o %s\n", out, plural.Count(len(results), "unit"), strings.Replace(out, fmt.Sprintf("shard-%d-of", shard.Index), "shard-*-of", 1), j.out)
		return nil
	}
	return s.writeDistilled(ck, results, opts, j.out, format, m.force, false,
		fmt.Sprintf("; the units fitted stay in %s (the same command run again takes them from there), which can be removed", dir))
}

// jsonItemFile says what path is ("a filter file (bank of 3 tf channels of order 4)", "a
// target file (…)") when err, of reading it as an array file, is arrays.ErrUnsupported and it
// is a filter or target file: the error to give then says so, rather than "unsupported
// array: not an array file ssmlab knows".
func jsonItemFile(path string, err error) (string, bool) {
	if !errors.Is(err, arrays.ErrUnsupported) {
		return "", false
	}
	it, ierr := sessions.Import(path, sessions.ImportOptions{})
	if ierr != nil {
		return "", false
	}
	if it.Target != nil {
		return "a target file (" + it.Describe() + ")", true
	}
	return "a filter file (" + it.Describe() + ")", true
}

// lockDistilled takes the lock of out for a run that writes it whole, held until the run ends
// (atomicfile.TryLock: a flock on .OUT.lock beside it, which the kernel drops when a run is
// killed). A second run to the same out meanwhile would fit again every unit the first is
// fitting, as a unit reaches the work directory (dir) only once fitted: it is refused at once,
// naming the other run. Shards of one out run at once by design, each fitting its own units,
// and take no lock.
func lockDistilled(out, dir string) (*atomicfile.Locked, error) {
	l, err := atomicfile.TryLock(out)
	var held *atomicfile.HeldError
	switch {
	case errors.As(err, &held):
		who := "another ssmlab distill"
		if held.PID > 0 {
			who += fmt.Sprintf(" (pid %d)", held.PID)
		}
		return nil, failf("%s: %s is distilling to it now, and this run would fit its units again: wait for it to end (the same command run then takes the units it fitted from %s), or give another -o", out, who, dir)
	case err != nil:
		return nil, failf("%s: %w", out, userfile.PathErr(err))
	}
	return l, nil
}

// checkWorkDir checks, before any planning or fitting, that the work directory is one or
// can be made: it exists as a directory, or the nearest existing folder above it is one.
func checkWorkDir(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil && d == dir:
			return failf("work directory %s: not a directory", dir)
		case err == nil:
			return failf("work directory %s: %s is not a directory", dir, d)
		case !errors.Is(err, fs.ErrNotExist):
			return failf("work directory %s: %w", dir, err)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// options checks the flags that shape a whole checkpoint's distillation and gathers them.
func (m *modelFlags) options(j *jobFlags, lf *layoutFlags, spec train.Spec, length int) (plan.Options, error) {
	if m.toLayout != "" {
		if l, err := layouts.ParseLayout(m.toLayout); err != nil || !slices.Contains(layouts.ModuleLayouts, l) {
			why := ""
			if l == layouts.SOS {
				why = " (sos is a filter's layout, which no model's module loads: export the distilled filters with ssmlab export --layout sos)"
			}
			return plan.Options{}, fmt.Errorf("--to-layout %q: want %s%s", m.toLayout, layoutNames(layouts.ModuleLayouts), why)
		}
	}
	dtype := ""
	if m.dtype != "" {
		d, err := sessions.ParseExportDType(m.dtype) // the dtypes export writes
		if err != nil {
			return plan.Options{}, flagMistake(err)
		}
		dtype = arrays.RawType(d)
	}
	if m.chunk < 1 || m.chunk > plan.MaxChunk {
		return plan.Options{}, fmt.Errorf("--chunk %d outside [1, %d]", m.chunk, plan.MaxChunk)
	}
	opts := plan.Options{Layout: "auto", LayoutOptions: lf.options(), Layers: m.layers, Length: length, Chunk: m.chunk, ToLayout: m.toLayout, DType: dtype, Spec: spec}
	if lf.layout != "" {
		opts.Layout = lf.layout
	}
	if len(opts.LayoutOptions) == 0 {
		opts.LayoutOptions = nil
	}
	if j.order.auto {
		opts.OrderAuto, opts.MaxOrder = true, m.maxOrder
		opts.Tol = spec.Tol
		if opts.Tol == 0 { // unset: --tol 0 is refused (checkDistillFlags)
			opts.Tol = defaultSuggestTol
		}
	} else {
		opts.Order = spec.Order
	}
	opts.Spec.Order = opts.Order
	return opts, nil
}

// defaultSuggestTol is the relative error --order auto aims at without --tol.
const defaultSuggestTol = 1e-3

// defaultWorkDir is the work directory of a run writing out without --work-dir: OUT.work.
func defaultWorkDir(out string) string { return out + ".work" }

// partPath names the part a shard writes for the output out.
func partPath(out string, sh plan.Shard) string {
	return fmt.Sprintf("%s.shard-%d-of-%d.json", out, sh.Index, sh.Count)
}

// shardOf returns the share of the work this process fits: --shard, else a job array's
// index from the environment, else all of it.
func (s *streams) shardOf(m *modelFlags) (plan.Shard, string, error) {
	if m.shard != "" {
		sh, err := plan.ParseShard(m.shard)
		if err != nil {
			return sh, "", fmt.Errorf("--shard: %w", err)
		}
		if m.shards != 0 && m.shards != sh.Count {
			return sh, "", fmt.Errorf("--shard %s and --shards %d disagree", m.shard, m.shards)
		}
		return sh, "--shard", nil
	}
	sh, from, ok, err := plan.FromEnv(os.Getenv, m.shards)
	if errors.Is(err, plan.ErrNoShardCount) {
		return sh, "", fmt.Errorf("%s=%s without --shards: give --shards N, the number of the Job's completions", plan.EnvK8sIndex, os.Getenv(plan.EnvK8sIndex))
	}
	if ce := (*plan.CountError)(nil); errors.As(err, &ce) {
		return sh, "", fmt.Errorf("--shards %d: %w", m.shards, ce) // a command-line mistake: exit 2
	}
	if err != nil {
		return sh, "", fail(err)
	}
	if !ok {
		if m.shards > 1 {
			return sh, "", fmt.Errorf("--shards %d without a shard: give --shard I/%d, or run as a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)", m.shards, m.shards)
		}
		return plan.All, "", nil
	}
	return sh, from, nil
}

// planModel cuts the checkpoint's layers into units and checks the recipe against each layer.
func (s *streams) planModel(ck *sessions.Checkpoint, opts plan.Options) ([]plan.Unit, error) {
	order := opts.Order
	if opts.OrderAuto {
		order = opts.MaxOrder
	}
	for _, l := range ck.Layers {
		spec := opts.Spec
		spec.Order = order
		if opts.OrderAuto {
			spec.Order = 1
		}
		if ck.IsMIMO(l) {
			// Reduced whole, not fitted to kernels: the order of states alone is checked
			// (an RTF's 2n+1 coefficients need no room in the length here).
			if err := train.CheckDistillOrder(spec.Order); err != nil {
				return nil, failf("%s: layer %q: %w", ck.Path, l.Prefix, err)
			}
			continue
		}
		if err := spec.ValidateDistillation(l.Channels, l.Length); err != nil {
			return nil, failf("%s: layer %q: %w", ck.Path, l.Prefix, err)
		}
	}
	pls := ck.PlanLayers()
	for i, pl := range pls {
		// Only variable projection places the real positive poles such a layer needs in its
		// own layout: refused before any fit, not when the first unit is written.
		if pl.Poles == train.PolesPositive && opts.ToLayout == string(layouts.S4D) && !opts.Spec.ByProjection() {
			return nil, failf("%s: layer %q is built with is_real: written as s4d its poles must be real and positive, which only the fits by variable projection place (%s); fit it so, or write it with --to-layout rtf or stripedhyena", ck.Path, pl.Prefix, train.ProjectionRecipe)
		}
		// A layer of shared modes is fitted together, by variable projection, at one order.
		if pl.Shared && opts.OrderAuto {
			return nil, failf("%s: layer %q shares its SSMs' modes among its channels (n_ssm): written back as s4d they are fitted together, at one order: give --order, or write it with --to-layout rtf or stripedhyena to fit each channel at its own", ck.Path, pl.Prefix)
		}
		if pl.Shared && !opts.Spec.ByProjection() {
			return nil, failf("%s: layer %q shares its SSMs' modes among its channels (n_ssm): written back as s4d they are fitted together by variable projection (%s); fit it so, or write it with --to-layout rtf or stripedhyena", ck.Path, pl.Prefix, train.ProjectionRecipe)
		}
		if pl.Poles == opts.Spec.Poles {
			// The job places these poles anyway: the unit is the one a run for another
			// layout fits (--poles positive, then --to-layout s4d), and its work is reused.
			pls[i].Poles = ""
		}
	}
	units, err := plan.Units(pls, order, opts.Chunk)
	if err != nil {
		return nil, fail(err)
	}
	return units, nil
}

// describePlan says what will be done: called once the checks that can fail have passed, so
// that a failure prints its error alone.
func (s *streams) describePlan(ck *sessions.Checkpoint, units []plan.Unit, opts plan.Options) {
	kinds := map[string]int{}
	chans, mimo := 0, 0
	for _, l := range ck.Layers {
		kinds[string(l.Layout)]++
		chans += l.Channels
		if ck.IsMIMO(l) {
			mimo++
		}
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(ks)
	what, kindText := "long-filter layer", strings.Join(ks, ", ")
	if mimo > 0 {
		what, kindText = "layer", fmt.Sprintf("%s; %d reduced whole, their outputs the channels", kindText, mimo)
	}
	fmt.Fprintf(s.err, "%s: %s to distil (%s), %s in %s of at most %s\n",
		ck.Path, plural.Count(len(ck.Layers), what), kindText, plural.Count(chans, "channel"), plural.Count(len(units), "unit"), plural.Count(opts.Chunk, "channel"))
	for _, l := range ck.Layers {
		for _, w := range l.Warnings {
			fmt.Fprintf(s.err, "warning: %s layer %q: %s\n", l.Layout, l.Prefix, oneLine(w))
		}
	}
	for _, sk := range ck.Skipped {
		fmt.Fprintf(s.err, "left as it is: %s layer %q: %s\n", sk.Layout, sk.Prefix, sk.Why)
	}
}

// fitUnits fits the units (or takes them from the work directory) with progress on stderr,
// and returns every unit as the work directory holds it, so that a result is the same whether
// it was fitted now, before, or by another process.
func (s *streams) fitUnits(ck *sessions.Checkpoint, opts plan.Options, units []plan.Unit, wd *sessions.WorkDir, backend train.Backend) ([]*plan.UnitResult, error) {
	var done atomic.Int64
	s.keep(func() string { return keptNote(done.Load(), len(units), wd.Dir) })
	// Units are saved through the gate (gatedStore), so that the count a signal prints is
	// what the work directory holds, and nothing is saved after it.
	store := gatedStore{WorkDir: wd, gate: s.gate, saved: &done}
	fit := plan.Fit{Spec: opts.Spec, Auto: opts.OrderAuto, Tol: opts.Tol, MaxOrder: opts.MaxOrder, Backend: backend}
	if opts.OrderAuto {
		fit.Spec.Tol = opts.Tol
	}
	p := newModelProgress(s.err, isTerminal(s.err), ck)
	_, err := plan.Execute(s.context(), fit, units, checkpointSource{ck}, store, func(e plan.Event) {
		if e.Resumed {
			done.Add(1)
		}
		p.event(e)
	})
	p.finish()
	for _, why := range wd.Ignored {
		fmt.Fprintf(s.err, "warning: fitted again: %s\n", why)
	}
	if errors.Is(err, context.Canceled) {
		return nil, failf("cancelled; %s", s.cancelNote())
	}
	if err != nil {
		return nil, fail(namedByCheckpoint(ck.Path, err))
	}
	out := make([]*plan.UnitResult, len(units))
	for i, u := range units {
		r, err := wd.Load(u)
		if err != nil {
			return nil, fail(err)
		}
		if r == nil {
			return nil, failf("%s: unit %s is not in the work directory after its fit (%s)", wd.Dir, u.ID(), strings.Join(wd.Ignored, "; "))
		}
		out[i] = r
	}
	return out, nil
}

// checkpointSource is the checkpoint as the units' source (plan.Source, SharedSource and
// MIMOSource), its errors marked as its own (sourceError): they name it already, where a
// unit's fit names its unit and the work directory's store its file.
type checkpointSource struct{ ck *sessions.Checkpoint }

// sourceError is an error of checkpointSource.
type sourceError struct{ error }

func (e sourceError) Unwrap() error { return e.error }

func markSource(err error) error {
	if err == nil {
		return nil
	}
	return sourceError{err}
}

func (s checkpointSource) Kernels(u plan.Unit) ([][]float64, error) {
	k, err := s.ck.Kernels(u)
	return k, markSource(err)
}

func (s checkpointSource) SharedStart(u plan.Unit) (train.SharedModes, error) {
	m, err := s.ck.SharedStart(u)
	return m, markSource(err)
}

func (s checkpointSource) MIMO(u plan.Unit) (*filters.MIMO, error) {
	m, err := s.ck.MIMO(u)
	return m, markSource(err)
}

// namedByCheckpoint is err of fitting the units of the checkpoint at path, named by it once:
// a unit's failure ("layers.0.lru.[0:2]: mode 0: …") prefixed with path, the checkpoint's own
// (sourceError) as it is.
func namedByCheckpoint(path string, err error) error {
	var se sourceError
	if errors.As(err, &se) {
		return se.error
	}
	return fmt.Errorf("%s: %w", path, err)
}

// unitWarnings prints what the units' fits warned of (channels left above --tol, kernels
// that grow), from the units as stored, so that a resumed or merged unit says it again; the
// first maxUnitWarnings of them, as a model of thousands of units would flood the terminal.
func (s *streams) unitWarnings(results []*plan.UnitResult, manifest string) {
	n := 0
	for _, r := range results {
		for _, w := range r.Warnings {
			if n < maxUnitWarnings {
				fmt.Fprintf(s.err, "warning: %s\n", w)
			}
			n++
		}
	}
	if n > maxUnitWarnings {
		fmt.Fprintf(s.err, "warning: %d more warnings of other units (%s has every channel's error and its ratio to the lower bound)\n", n-maxUnitWarnings, manifest)
	}
}

// maxUnitWarnings is how many of the units' warnings a run prints.
const maxUnitWarnings = 10

// keptNote ends the line a signal prints: what the work directory keeps for the next run.
// With no unit done it has nothing to point to (it may not even exist).
func keptNote(done int64, units int, dir string) string {
	if done == 0 {
		return fmt.Sprintf("nothing was written: no unit of %d was fitted yet", units)
	}
	return fmt.Sprintf("%d of %d units fitted are kept in %s: run the same command again to go on from there", done, units, dir)
}

// gatedStore is the work directory behind the output gate: a unit is saved only while no
// signal has closed the gate, and a signal waits for a save under way (gate.while), so that
// saved counts exactly the units a cancelled run leaves (each file whole: atomicfile).
type gatedStore struct {
	*sessions.WorkDir
	gate  *outputGate
	saved *atomic.Int64
}

func (g gatedStore) Save(r *plan.UnitResult) error {
	return g.gate.while(func() error {
		if err := g.WorkDir.Save(r); err != nil {
			return err
		}
		g.saved.Add(1)
		return nil
	})
}

// writeDistilled assembles and writes the distilled checkpoint and its manifest, merged from
// shards' parts or not. Its summary ends with kept, which says where the units fitted stay
// (the work directory), what for, and that it can go: nothing else said that OUT.work was left.
func (s *streams) writeDistilled(ck *sessions.Checkpoint, results []*plan.UnitResult, opts plan.Options, out string, format arrays.Format, force, merged bool, kept string) error {
	a, err := sessions.Assemble(ck, results, sessions.DistilledOptions{Format: format, Options: opts, Force: force, Merged: merged})
	if err != nil {
		return failf("%s: %w", out, err)
	}
	for _, n := range a.Notes {
		fmt.Fprintf(s.err, "note: %s\n", n)
	}
	for _, w := range a.Warnings {
		fmt.Fprintf(s.err, "warning: %s\n", w)
	}
	if !s.gate.open() {
		return failf("%s: %w", out, errCancelled)
	}
	// The manifest is written once the checkpoint is complete, before it replaces OUT: a
	// manifest that cannot be written (a full disk) leaves OUT as it was, where it left a
	// new checkpoint beside the old manifest.
	var manifestErr error
	if err := a.WriteFileBefore(out, func() error {
		manifest, err := sessions.MarshalManifest(a.Manifest) // now with a .pt or .npz OUT's hash
		if err != nil {
			manifestErr = fail(err)
		} else {
			manifestErr = s.put(out+".manifest.json", manifest)
		}
		return manifestErr
	}); err != nil {
		if manifestErr != nil {
			return manifestErr
		}
		return fail(err)
	}
	var worst, readBack, written float64 // written: the written channels' error, at most
	chans, unstable, unreadable := 0, 0, false
	layoutsWritten := map[string]int{}
	for _, l := range a.Manifest.Layers {
		layoutsWritten[l.ToLayout]++
		if l.ReadBackError == nil {
			unreadable = true
		} else {
			readBack = max(readBack, *l.ReadBackError)
		}
		for _, c := range l.Channels {
			chans++
			worst = max(worst, c.RelError)
			if w, ok := c.WrittenError(); ok {
				written = max(written, w)
			}
			if !c.Stable {
				unstable++
			}
		}
	}
	var lw []string
	for k, n := range layoutsWritten {
		lw = append(lw, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(lw)
	rb := fmt.Sprintf("read back to %.2g at worst", readBack)
	if unreadable {
		rb = "some cannot be read back"
	}
	asWritten := ""
	switch {
	case len(a.Warnings) == 0: // every layer reads back within its limit: as fitted
	case unreadable:
		asWritten = "; those are the fits': some layers written anyway cannot be read back"
	default:
		asWritten = fmt.Sprintf("; those are the fits': as written, with the layers written anyway, up to %.3g from the targets", written)
	}
	fmt.Fprintf(s.err, "wrote %s (%s, %d tensors; layers written as %s, %s) and %s.manifest.json: %d channels, worst relative error %.3g, %d unstable%s%s\n",
		out, format, len(a.Tensors()), strings.Join(lw, ", "), rb, out, chans, worst, unstable, asWritten, kept)
	return nil
}

func newMerge(s *streams) *cobra.Command {
	var out, input string
	var force bool
	cmd := &cobra.Command{
		Use:   "merge PART... -o OUT",
		Short: "Assemble the parts of a checkpoint's distillation that shards wrote",
		Long: `Merge assembles the distilled checkpoint and its manifest from the parts that the
shards of 'ssmlab distill CKPT --shard I/N -o OUT' (or the tasks of a Slurm array job or a
Kubernetes Indexed Job) wrote, OUT.shard-I-of-N.json. It checks that the parts come from the
same input (its SHA-256) and options and together hold every unit of the work exactly
once, naming the units missing or held twice, then writes OUT and OUT.manifest.json as a
single run would: the same bytes. It reads the input checkpoint from where the shards read
it (--input names another copy, checked against the parts' SHA-256). The parts are files:
merge does not read stdin, and refuses a part given twice (the same file by another path or
link; exit 2). docs/scale.md has a Slurm batch script and a Kubernetes manifest
that end with it.`,
		Example: `  ssmlab merge distilled.safetensors.shard-*-of-8.json -o distilled.safetensors`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("want the PART files the shards wrote (OUT.shard-I-of-N.json)")
			}
			return noStdin(cmd, args, "part files")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o OUT is required: the distilled checkpoint to write")
			}
			format, ok := checkpointFormat(out)
			if !ok {
				return fmt.Errorf("-o %s: want a checkpoint: .safetensors, .pt (.pth, .bin, .ckpt) or .npz", out)
			}
			if err := flagNoStdin("input", input); err != nil {
				return err
			}
			// A part named twice (a shell glob beside its file, a link) would hold its units
			// twice: the command line's mistake, refused before any part is read.
			for i, a := range args {
				for _, b := range args[:i] {
					if sameFile(a, b) {
						return fmt.Errorf("the part %s is given twice (as %s and %s): give each part once", a, b, a)
					}
				}
			}
			parts := make([]*sessions.Part, len(args))
			for i, a := range args {
				var err error
				if parts[i], err = sessions.ReadPart(a); err != nil {
					return fail(err)
				}
			}
			first := parts[0]
			path := first.InputPath
			if input != "" {
				path = input
			}
			if err := checkOutputs(append([]string{path}, args...), output{"-o", "the distilled checkpoint", out}, output{"-o", "the manifest", out + ".manifest.json"}); err != nil {
				return err
			}
			opts := first.Options
			pattern, err := plan.ParsePattern(opts.Layers)
			if err != nil {
				return failf("%s: %w", args[0], err)
			}
			ck, err := sessions.OpenCheckpoint(path, sessions.CheckpointOptions{Layout: opts.Layout, Options: opts.LayoutOptions, Layers: pattern, Length: opts.Length, ToLayout: opts.ToLayout})
			if errors.Is(err, fs.ErrNotExist) && input == "" {
				return failf("%v: the parts were distilled from it there; --input names a copy of it elsewhere (checked against their SHA-256)", err)
			}
			if err != nil {
				// The options are the parts', not this command line's: a failure, spelled
				// with the flags the parts were distilled with.
				return fail(flagMistake(err))
			}
			defer ck.Close()
			if ck.Input.SHA256 != first.Input.SHA256 || ck.Input.Size != first.Input.Size {
				return failf("%s is not the file the parts were distilled from (that was %s, %d bytes, sha256 %.12s…; this has %d bytes, sha256 %.12s…): give the original with --input", path, first.Input.Name, first.Input.Size, first.Input.SHA256, ck.Input.Size, ck.Input.SHA256)
			}
			ck.Input.Name = first.Input.Name
			units, err := s.planModel(ck, opts)
			if err != nil {
				return err
			}
			results, err := sessions.MergeParts(parts, args, units)
			if err != nil {
				return fail(err)
			}
			s.describePlan(ck, units, opts)
			fmt.Fprintf(s.err, "merging %d parts: %d units\n", len(parts), len(units))
			s.unitWarnings(results, out+".manifest.json")
			kept := ""
			if dirs := shardWorkDirs(args, parts); len(dirs) > 0 {
				kept = fmt.Sprintf("; the units the shards fitted stay in %s (the shards run again take them from there), which can be removed", strings.Join(dirs, " and "))
			}
			return s.writeDistilled(ck, results, opts, out, format, force, true, kept)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the distilled checkpoint to `OUT` (.safetensors, .pt or .npz) and its manifest to OUT.manifest.json")
	cmd.Flags().StringVar(&input, "input", "", "read the input checkpoint from `CKPT` instead of the path the parts recorded")
	cmd.Flags().BoolVar(&force, "force", false, "write a layer whose tensors read back beyond their dtype's limit in every layout tried (with a warning)")
	return cmd
}

// shardWorkDirs are the work directories the shards that wrote the parts (at paths) kept
// their units in, where they still are: OUT.work beside a part OUT.shard-I-of-N.json. One
// given by --work-dir is not known: the parts do not record it.
func shardWorkDirs(paths []string, parts []*sessions.Part) []string {
	var dirs []string
	for i, p := range parts {
		out, ok := strings.CutSuffix(paths[i], partPath("", p.Shard))
		if !ok {
			continue // a part renamed: its shard's OUT is not known
		}
		d := defaultWorkDir(out)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// modelProgress prints a whole-model distillation's progress: a line per layer finished and,
// on a terminal, a bar for the whole with the time left; otherwise a plain line per unit.
type modelProgress struct {
	w     io.Writer
	bar   bool
	ck    *sessions.Checkpoint
	last  time.Time
	drawn bool
}

func newModelProgress(w io.Writer, bar bool, ck *sessions.Checkpoint) *modelProgress {
	return &modelProgress{w: w, bar: bar, ck: ck}
}

func (p *modelProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

func (p *modelProgress) event(e plan.Event) {
	if e.LayerDone && p.bar {
		p.clear()
		fmt.Fprintln(p.w, layerLine(e, p.channelsOf(e.Unit.Prefix)))
	}
	frac := 0.0
	if e.TotalCost > 0 {
		frac = e.DoneCost / e.TotalCost
	}
	eta := "…"
	switch {
	case e.Done == e.Total:
		eta = "0s"
	case e.ETA > 0:
		eta = e.ETA.Round(time.Second).String()
	}
	if p.bar {
		if e.Result == nil && time.Since(p.last) < train.ProgressInterval {
			return
		}
		p.last = time.Now()
		const width = 30
		filled := int(width * frac)
		fmt.Fprintf(p.w, "\r\033[K[%s%s] %3.0f%%  %d/%d units  %s  ETA %s ", strings.Repeat("#", filled), strings.Repeat(".", width-filled), 100*frac, e.Done, e.Total, e.Unit.ID(), eta)
		p.drawn = true
		return
	}
	if e.Result != nil {
		how := "fitted"
		if e.Resumed {
			how = "done before (work directory)"
		}
		fmt.Fprintf(p.w, "unit %d/%d %s: %s; %.0f%% of the work, elapsed %s, ETA %s\n", e.Done, e.Total, e.Unit.ID(), how, 100*frac, e.Elapsed.Round(time.Millisecond), eta)
		if e.LayerDone {
			fmt.Fprintln(p.w, layerLine(e, p.channelsOf(e.Unit.Prefix)))
		}
	}
}

func (p *modelProgress) finish() { p.clear() }

// channelsOf returns the channels (a MIMO layer's outputs) of the checkpoint's layer at
// prefix, 0 where there is none.
func (p *modelProgress) channelsOf(prefix string) int {
	if p.ck == nil {
		return 0
	}
	for _, l := range p.ck.Layers {
		if l.Prefix == prefix {
			return l.Channels
		}
	}
	return 0
}

// layerLine sums up a finished layer of of channels (0: not known). A shard fits some of a
// layer's units: the line says how many of its channels they are, where "32 channels" read
// as the layer's size.
func layerLine(e plan.Event, of int) string {
	var sum, worst, secs float64
	n, unstable := 0, 0
	orders := map[int]bool{}
	backends := map[string]bool{}
	for _, r := range e.Layer {
		for _, c := range r.Channels {
			sum += c.RelError
			worst = max(worst, c.RelError)
			secs += c.Seconds
			orders[c.Order] = true
			backends[c.Backend] = true
			if !c.Stable {
				unstable++
			}
			n++
		}
	}
	ord := make([]int, 0, len(orders))
	for o := range orders {
		ord = append(ord, o)
	}
	sort.Ints(ord)
	orderText := fmt.Sprint(ord[0])
	if len(ord) > 1 {
		orderText = fmt.Sprintf("%d to %d", ord[0], ord[len(ord)-1])
	}
	be := make([]string, 0, len(backends))
	for b := range backends {
		be = append(be, b)
	}
	sort.Strings(be)
	stable := "all stable"
	if unstable > 0 {
		stable = fmt.Sprintf("%d unstable", unstable)
	}
	what := "channels"
	if e.Unit.MIMO {
		what = "outputs (each over every input)" // a MIMO layer's records are its outputs
	}
	bound := ""
	// The bound its fits chose for a long kernel; train.MinAutoRadius, every short
	// kernel's, goes unsaid (the manifest records it).
	if a := e.Layer[0].AutoMaxRadius; a != 0 && a != train.MinAutoRadius {
		bound = "; radius bound " + train.RadiusText(a) + " (auto)"
	}
	count := fmt.Sprintf("%d %s", n, what)
	if n < of {
		count = fmt.Sprintf("%d of its %d %s (this shard's)", n, of, what)
	}
	return fmt.Sprintf("layer %s: %s, order %s: relative error mean %.3g, worst %.3g, %s%s; %.1fs on %s", layouts.PrefixName(e.Unit.Prefix), count, orderText, sum/float64(max(n, 1)), worst, stable, bound, secs, strings.Join(be, ", "))
}
