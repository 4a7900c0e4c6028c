package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/strictjson"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// ssmlab import, ssmlab export and ssmlab session: moving filters and kernels between
// ssmlab and the files of training code, and looking into session files. The work is done by
// package sessions, which the workbench's load, save and export dialogs call too.

type importOptions struct {
	name, tensor, out, session string
	columns, list              bool
	truncLen                   int
	layout                     *layoutFlags
}

func newImport(s *streams) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import FILE [--layout L] [--tensor PREFIX] [--name NAME] [-o OUT | --session SESSION]",
		Short: "Read a model's layer, a filter bank or kernels from PyTorch, safetensors, NumPy, CSV or JSON",
		Long: `Import reads FILE ("-" reads stdin, but not CSV) and writes what it holds as an
ssmlab JSON file to stdout, or atomically to OUT with -o, or adds it to the session file
SESSION with --session (created if missing; its previous version is kept as SESSION.bak):

  a model's layer, recognised by its tensor names (or named by --layout) in a PyTorch,
  safetensors, .npz or .npy file:
    rtf           ab, h_0 (ruke1ire/RTF)                → a bank of tf filters
    s4d           kernel.A_real, kernel.A_imag, kernel.B, kernel.C, kernel.inv_dt, D, or
                  kernel.log_A_real, kernel.log_dt, … (state-spaces/s4) → a diagonal bank
    s4            kernel.P, … (S4 DPLR; C̃ undone)        → a dense bank
    stripedhyena  poles, residues, D                     → a diagonal bank
    hyena         pos_emb.z, implicit_filter.*, modulation.deltas, bias (safari)
                                                         → kernels, evaluated at every position
    lru           nu_log, theta_log, gamma_log, B_re, B_im, C_re, C_im, D
    s5            Lambda_re, Lambda_im, B, C (or C1, C2), D, log_step
    rotrnn        thetas, gamma_log, M, B, C, D          → banks of the SISO slices --pair
                                                           names (default: the diagonal)
    sos           sos (sections, 6) or (channels, sections, 6): second-order sections
                  [b0 b1 b2 a0 a1 a2] in cascade (scipy.signal.sosfilt) → a zpk filter or bank
  any other array: .npy, .npz, .safetensors, PyTorch (torch.save: .pt, .bin, .ckpt),
  CSV (.csv, .tsv, .txt)            → kernels (a target file, {"name", "kernels"})
  a filter or bank file (JSON)      → itself
  a target file (JSON)              → itself

A layer's tensor names may sit behind a module prefix ("layers.0.layer."); --tensor picks
a layer by its prefix (or an array by its name) when the file holds several, and --list
prints, as JSON, every layer detected (prefix, layout, channels, order or length, dtype and
the options assumed) and every array; its order is a channel's real state count, the order
distill's --order counts, and a layout of complex modes (each standing for a conjugate pair)
gives their number as complex_modes, half the order. Settings a checkpoint does not record are flags whose
defaults are the reference code's (--disc, --dt-transform, --h0, …); one of a layout the
layer read does not have (--bias of an lru layer), or given where no layer is read (a filter
file), is refused as a command-line mistake (exit 2), as is a value outside its choices or
one the layer read cannot take (--length beyond a Hyena layer's positions), named with it.
docs/formats.md gives each layout's names, shapes, formula and source. --layout kernels
reads an array as kernels even where it belongs to a layer (with a warning).

A 1-D array is one kernel; a 2-D array holds one kernel per row (per column with
--columns; a single column is one kernel); leading dimensions of size 1 are dropped.
A PyTorch file's pickle is read by a restricted reader that builds tensors and plain
containers only and never runs code. float16, bfloat16, float32, float64 and complex
arrays are read, little- or big-endian, in C or Fortran order; NaN and infinities are
refused.

--trunc-len L undoes the truncation correction the RTF module trains its numerators with
(b̃ = b(I − A^L)) and adds to h_0 the sample h[M] its FFT folds onto t = 0, giving the
filter whose response is the module's convolution kernel (get_k); give the module's
trunc_len. A safetensors file written by ssmlab export --trunc-len records it,
and import reads it from there; a different --trunc-len is an error.

With --session, an item the session holds already, under its name and with identical
content, is not added again (a line says so, and the file is not written), so a script can
run twice; another item of a name in use is named NAME-2, NAME-3, ….

On stderr, one line says what was read, and warnings what was left out or assumed.`,
		Example: `  ssmlab import s4d.pt -o s4d.json
  ssmlab import checkpoint.safetensors --tensor layers.3.filter -o layer3.json
  ssmlab import lru.npz --pair 0,0 --pair 1,0 -o lru.json
  ssmlab import hyena_filters.npy --name "hyena L3" --session work.ssmlab
  ssmlab import model.ckpt --list`,
		Args: oneFile,
		RunE: func(_ *cobra.Command, args []string) error { return runImport(s, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "name the imported filter or kernels `NAME` (default: from the file and tensor)")
	f.StringVar(&o.tensor, "tensor", "", "read the layer (its prefix) or the array named `NAME`")
	f.BoolVar(&o.columns, "columns", false, "kernels are the columns of a 2-D array, not its rows")
	f.IntVar(&o.truncLen, "trunc-len", 0, "undo the RTF module's truncation correction for trunc_len `L`")
	f.StringVarP(&o.out, "output", "o", "-", "write the JSON to `OUT` instead of stdout")
	f.StringVar(&o.session, "session", "", "add to the session file `SESSION` instead of writing JSON")
	f.BoolVar(&o.list, "list", false, "list the layers and arrays in FILE as JSON on stdout, and import nothing (it takes no other flag)")
	o.layout = addLayoutFlags(f, forImport)
	return cmd
}

func runImport(s *streams, path string, o importOptions) error {
	if o.list {
		// The listing goes to stdout and imports nothing: a flag of the import would be ignored.
		var other []string
		o.layout.flags.Visit(func(f *pflag.Flag) {
			switch {
			case f.Name == "list":
			case f.Shorthand != "":
				other = append(other, "-"+f.Shorthand)
			default:
				other = append(other, "--"+f.Name)
			}
		})
		if len(other) > 0 {
			return fmt.Errorf("--list prints the file's layers and arrays on stdout and imports nothing: leave out %s", strings.Join(other, ", "))
		}
		return s.listFile(path)
	}
	if o.session == "-" {
		return fmt.Errorf("--session names a session file, not stdout")
	}
	if o.session != "" && o.out != "-" {
		return fmt.Errorf("-o and --session exclude each other: the item goes to one place")
	}
	pairs, err := o.layout.parsePairs()
	if err != nil {
		return err
	}
	opts := sessions.ImportOptions{Name: o.name, Tensor: o.tensor, Columns: o.columns, TruncLen: o.truncLen,
		Layout: o.layout.layout, Options: o.layout.options(), Pairs: pairs}
	if err := opts.Check(); err != nil {
		return flagMistake(err)
	}
	if err := checkOutputs([]string{path}, output{"-o", "the item", o.out}); err != nil {
		return err
	}
	name := path
	var it sessions.Item
	if path == "-" {
		name = stdinName
		var data []byte
		if data, err = s.readStdin(); err != nil {
			return err
		}
		it, err = sessions.ImportData(data, stdinName, opts)
	} else {
		if err := sessionFileError(path); err != nil {
			return err
		}
		it, err = sessions.Import(path, opts)
	}
	if err != nil {
		return failUnlessOption(withHint(err))
	}
	for _, w := range it.Warnings {
		fmt.Fprintf(s.err, "warning: %s: %s\n", name, oneLine(w))
	}
	if o.session != "" {
		return s.addToSession(o.session, name, it)
	}
	var data []byte
	if it.Entry != nil {
		data, err = filterfile.Marshal(it.Entry.Document())
	} else {
		data, err = sessions.MarshalTarget(it.Target)
	}
	if err != nil {
		return failf("%s: %w", name, err)
	}
	if err := s.put(o.out, data); err != nil {
		return err
	}
	fmt.Fprintf(s.err, "imported %s: %s\n", name, oneLine(it.Note))
	return nil
}

// unmarshalAs reads data, the file path, into v strictly (strictjson.UnmarshalKnown: a key
// v has no field for is an error), as what the command wants ("a distill report"), and says
// so when path is a filter file instead: read leniently, a filter file was "not a ladder: 0
// orders", and a report with no fields set.
func unmarshalAs(data []byte, path, what string, v any) error {
	err := strictjson.UnmarshalKnown(data, v)
	if err == nil {
		return nil
	}
	if _, ferr := filterfile.Unmarshal(data); ferr == nil {
		return failf("%s is a filter file, not %s", path, what)
	}
	return failf("%s: not %s: %v", path, what, err)
}

// sessionFileError refuses a session file where a command reads one filter or target, and
// says how to get one out of it; it is nil for anything else, missing files included.
func sessionFileError(path string) error {
	if path == "-" || !sessions.IsSession(path) {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return failf("%[1]s is a session file, not a filter or target file: `ssmlab session info %[1]s` lists its items, `ssmlab export %[1]s --id ID -o ITEM.json` writes one out, and `ssmlab %[1]s` opens it in the workbench", path)
}

// exportChoice says how export takes one of a file's several layers or arrays: it has no
// --tensor (nor --list), so the one wanted is imported first; other errors are as they are.
func exportChoice(src string, err error) error {
	how := func(what string) string {
		return fmt.Sprintf("; export writes one: import it first (ssmlab import %s --tensor %s -o ITEM.json) and export ITEM.json", src, what)
	}
	if lc := (*layouts.ChoiceError)(nil); errors.As(err, &lc) {
		return fmt.Errorf("%s: the file holds %d layers: %s%s", src, len(lc.Layers), lc.List(), how("PREFIX"))
	}
	if ac := (*sessions.ChoiceError)(nil); errors.As(err, &ac) {
		return fmt.Errorf("%w%s", err, how("NAME"))
	}
	return err
}

// withHint adds the flag that resolves a choice to a *sessions.ChoiceError.
func withHint(err error) error {
	if ce := (*sessions.ChoiceError)(nil); errors.As(err, &ce) {
		return fmt.Errorf("%w (--tensor NAME picks one; --list shows them)", err)
	}
	return err
}

// addToSession adds an item to a session file, creating it if missing. Concurrent writers of
// one session file are serialised (sessions.Update), so that none loses another's item.
func (s *streams) addToSession(path, from string, it sessions.Item) error {
	if it.Target != nil && it.Target.Source != nil {
		src := it.Target.Source.Relative(filepath.Dir(path))
		it.Target.Source = &src
	}
	var added sessions.Added
	err := sessions.Update(path, func(sess *sessions.Session) error {
		var err error
		if added, err = sess.Add(it); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
		if added.Existing {
			return errUnchanged // the session file is not written
		}
		if !s.gate.open() {
			return errCancelled
		}
		return nil
	})
	if added.Existing && errors.Is(err, errUnchanged) {
		fmt.Fprintf(s.err, "%s already holds %s (%q: %s), identical to %s: nothing added\n", path, added.ID, added.Name, it.Describe(), from)
		return nil
	}
	if err != nil {
		return fail(err)
	}
	renamed := ""
	if added.Renamed {
		renamed = fmt.Sprintf(" (another item is named %q)", it.Name())
	}
	fmt.Fprintf(s.err, "added %s (%q: %s) to %s, from %s%s: %s\n", added.ID, added.Name, it.Describe(), path, from, renamed, oneLine(it.Note))
	return nil
}

// errUnchanged ends a sessions.Update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// checkOutputs runs before a command's work, whose results come after it and are made from
// its inputs: each output (not "" or "-") must be in an existing directory, writable there
// (atomicfile.Check: not a directory, not a read-only directory), and must not be one of the
// inputs, so that a long run does not end in "no such file or directory", a command that
// writes several files never fails after writing the first ones, and a result never replaces
// what it was made from (a checkpoint distilled onto itself lost its trained filters), nor
// another of its results (distinctOutputs).
func checkOutputs(inputs []string, outputs ...output) error {
	if err := distinctOutputs(outputs...); err != nil {
		return err
	}
	for _, o := range outputs {
		out := o.path
		if out == "" || out == "-" {
			continue
		}
		if err := atomicfile.Check(out); err != nil { // a missing directory too: atomicfile.MissingDirError
			return failf("%s: %w", out, userfile.PathErr(err))
		}
		o, err := os.Stat(out)
		if err != nil {
			continue // a new file is none of the inputs
		}
		for _, in := range inputs {
			if fi, err := os.Stat(in); in != "" && in != "-" && err == nil && os.SameFile(fi, o) {
				return fmt.Errorf("%s is also an input: write the result to another file (it would replace %s)", out, in)
			}
		}
	}
	return nil
}

// output is a file a command writes: the flag that names it and what it holds, for
// distinctOutputs' message.
type output struct{ flag, what, path string }

// distinctOutputs refuses two outputs that name one file (a command-line mistake: exit 2):
// the one written second would replace the first ("--report and -o both name o/c.json: the
// report would overwrite the filter"). outs come in the order they are written; "" and "-"
// name no file.
func distinctOutputs(outs ...output) error {
	for j, b := range outs {
		for _, a := range outs[:j] {
			if sameFile(a.path, b.path) {
				return fmt.Errorf("%s and %s both name %s: %s would overwrite %s", b.flag, a.flag, b.path, b.what, a.what)
			}
		}
	}
	return nil
}

// sameFile reports whether two paths (neither "" nor "-") name one file: the same path once
// made absolute, or, for existing files, one file under two names (a link).
func sameFile(a, b string) bool {
	if a == "" || a == "-" || b == "" || b == "-" {
		return false
	}
	if x, errA := filepath.Abs(a); errA == nil {
		if y, errB := filepath.Abs(b); errB == nil && x == y {
			return true
		}
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// put writes a result, data, to path ("-" for stdout) atomically: the one place results go
// to files, behind the gate a cancelling signal closes.
func (s *streams) put(path string, data []byte) error {
	if path == "-" {
		if _, err := s.out.Write(data); err != nil {
			return failf("stdout: %w", err)
		}
		return nil
	}
	if !s.gate.open() {
		return failf("%s: %w", path, errCancelled)
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return failf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

type exportOptions struct {
	format, out, prefix, dtype string
	ids                        []string
	truncLen, length           int
	compress, force            bool
	allowOutside               bool
	layout                     *layoutFlags
}

func newExport(s *streams) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export SOURCE [--layout rtf|s4d|stripedhyena|sos] -o OUT [--id ID]...",
		Short: "Write filters in a model's layout (PyTorch, safetensors, NumPy), or as JSON or CSV",
		Long: `Export writes the filters and kernels of SOURCE — a session file, or any file
ssmlab import reads; a file, for export does not read stdin — to OUT ("-" for stdout),
atomically. --format defaults to OUT's
extension (.pt, .pth and .bin are PyTorch files). From a session, --id ID (an ID or a name;
repeatable) picks items; by default every filter and target is exported.

  pt, safetensors,   every item. A filter or bank is written in the layout --layout names,
  npz                with exactly the tensor names, shapes and dtypes the model's code
                     loads with load_state_dict(strict=True) (--prefix P puts the module's
                     prefix before them, "layers.0.filter."); without --layout, in the
                     layout that stores its form as it is and holds it (its tensors read
                     back within the limit below): a diagonal one (poles and residues, as
                     distill writes a fit tf coefficients do not hold) in s4d, else
                     stripedhyena, else rtf, said in a note; any other in rtf. An option
                     of some layouts keeps it to those of its form's that take it (--length:
                     s4d or stripedhyena; an s4d option: s4d; --trunc-len or an rtf option:
                     rtf), refused where none does (--length for a tf filter):
                       rtf            ab (2·D, N): the D denominators a₁…a_N, then the D
                                      numerators b₁…b_N; h_0 (D) (ruke1ire/RTF)
                       s4d            kernel.inv_dt, kernel.A_real, kernel.A_imag,
                                      kernel.B, kernel.C, D (SSMKernelDiag in FFTConv;
                                      --variant minimal: models/s4/s4d.py's names)
                       stripedhyena   poles, residues (D, state_size, 1, 2), D
                       sos            sos (sections, 6), a bank (D, sections, 6): second-
                                      order sections [b0 b1 b2 a0 a1 a2], a0 = 1, as
                                      scipy.signal.zpk2sos pairs them, for sosfilt
                     Forms are converted first (tf for rtf, diagonal for the modal layouts,
                     zpk for sos; the accuracy is printed as by convert): a modal bank goes
                     to s4d or stripedhyena as poles and residues, never through polynomial
                     coefficients, so a modal fit keeps its accuracy in float32. Kernels
                     are written as "kernels" (--layout refuses them: distil them
                     first). With several items, each item's names
                     start with its ID ("f1.ab", "t2.kernels").
  json               one item: a filter or bank file, or a target file.
  csv, npy           one item: its kernels, or a filter's impulse response (--length
                     samples; one row per channel of a bank).

--dtype writes float64 (the default, exact), float32 or, to pt and safetensors, bfloat16.
--trunc-len L stores the RTF numerators as the module trains them for trunc_len L
(b̃ = b(I − A^L)) and h_0 less the sample h[M] its FFT folds onto t = 0, so that its
convolution (get_k) reproduces the filter; a safetensors file
records it for import. --length L is, for the s4d, stripedhyena and sos layouts, the
sequence length the model runs the layer at, over which the read-back check compares (the
rtf layout's is --trunc-len; without --layout, --length keeps a filter out of rtf). See docs/formats.md. A flag of a format other than the one
written (--layout, its options or --prefix for json, csv or npy; --length for json) is
refused.

The read-back check: export reads the tensors back as the model's code would — rounded
to --dtype, for RTF with --trunc-len as the kernel its get_k computes — and prints how
closely they give each filter's impulse response over --trunc-len or --length samples, or
without them until the responses have decayed (longer than a model runs where poles sit
near the unit circle: give the model's length). Beyond the documented limit (relative error 1e-6), or when
a stable filter reads back unstable, it exits 1 and writes nothing, its one line naming the
check that failed and counting the other warnings; --force writes anyway, with every
warning, and exits 0.`,
		Example: `  ssmlab export fit.json --layout stripedhyena --dtype float32 -o filter.pt --prefix blocks.3.filter.
  ssmlab export layer.json -o layer.safetensors --prefix layers.0.filter. --trunc-len 1024
  ssmlab export fit.json --layout s4d --dtype float32 --length 1024 -o layer.pt
  ssmlab export work.ssmlab --id "hyena L3" -o targets.npz
  ssmlab export bank.json --format csv --length 512 -o impulses.csv`,
		Args: oneFileNoStdin,
		RunE: func(_ *cobra.Command, args []string) error { return runExport(s, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "the `FORMAT`: pt, safetensors, npz, json, csv or npy (default: from OUT's extension)")
	f.StringVarP(&o.out, "output", "o", "", "write to `OUT` (\"-\" for stdout; required)")
	f.StringArrayVar(&o.ids, "id", nil, "export the session item `ID` (an ID or a name; repeatable)")
	f.StringVar(&o.prefix, "prefix", "", "put `P`, ending in \".\" or \"/\", before every tensor name (pt, safetensors, npz)")
	f.StringVar(&o.dtype, "dtype", "float64", "the element type of pt, safetensors, npz and npy: `float64`, float32, or bfloat16 (pt, safetensors)")
	f.BoolVar(&o.force, "force", false, "write the file even when the read-back check fails (with the warnings)")
	f.IntVar(&o.truncLen, "trunc-len", 0, "store RTF numerators with the truncation correction for trunc_len `L`")
	f.IntVar(&o.length, "length", sessions.DefaultLength, "for the s4d, stripedhyena and sos layouts, the length `L` the model runs at, the read-back check's window (not given: until the responses decay); for csv and npy, the samples of a filter's impulse response")
	f.BoolVar(&o.compress, "compress", false, "deflate an npz file (as numpy.savez_compressed)")
	addAllowOutside(f, &o.allowOutside)
	o.layout = addLayoutFlags(f, forExport)
	return cmd
}

func runExport(s *streams, src string, o exportOptions) error {
	if o.out == "" {
		return fmt.Errorf("-o OUT is required (\"-\" writes to stdout)")
	}
	if o.format == "" {
		o.format = strings.TrimPrefix(strings.ToLower(filepath.Ext(o.out)), ".")
		if o.format == "" || o.out == "-" {
			return fmt.Errorf("--format is required when OUT has no extension (pt, safetensors, npz, json, csv or npy)")
		}
	}
	format, err := sessions.ParseExportFormat(o.format)
	if err != nil {
		return fmt.Errorf("--format: %v", err)
	}
	dt, err := sessions.ParseExportDType(o.dtype)
	if err != nil {
		return flagMistake(err)
	}
	opts := sessions.ExportOptions{
		Format: format, DType: dt, Prefix: o.prefix, TruncLen: o.truncLen, Length: o.length, Compress: o.compress,
		Layout: layouts.Layout(o.layout.layout), Options: o.layout.options(),
	}
	// The options given, before the input is read: a mistake in one is exit 2 at once.
	var given []string
	o.layout.flags.Visit(func(f *pflag.Flag) {
		if sessions.ExportOptionFormats(f.Name) != nil {
			given = append(given, f.Name)
		}
		if f.Name == "length" {
			opts.SetLength(o.length) // for a layout's tensors, the model's length too
		}
	})
	if err := opts.CheckGiven(given); err != nil {
		return flagMistake(err)
	}
	if err := checkOutputs([]string{src}, output{"-o", "the export", o.out}); err != nil {
		return err
	}
	items, err := s.exportItems(src, o.ids, o.allowOutside)
	if err != nil {
		return err
	}
	out, err := sessions.Export(items, opts)
	if err != nil {
		if len(items) > 1 && (format == sessions.ExportJSON || format == sessions.ExportCSV || format == sessions.ExportNPY) {
			return failf("%s: %s holds one item and %s has %d: pick one with --id", src, format, src, len(items))
		}
		return failUnlessOption(fmt.Errorf("%s: %w", src, err))
	}
	if out.Failed() && !o.force {
		return exportFailed(src, out)
	}
	if err := s.put(o.out, out.Data); err != nil {
		return err
	}
	// Last, so that a failure above leaves its error as the only line on stderr.
	if len(out.Reports) > 0 {
		summarize(s.err, out.Reports, true)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(s.err, "note: %s\n", n)
	}
	for _, c := range out.ReadBack {
		readBackLine(s.err, c)
	}
	// The layout, as the check line names it: once where every item is in one, else each
	// filter's own.
	how := string(format)
	one := slices.IndexFunc(out.Layouts, func(l layouts.Layout) bool { return l == "" || l != out.Layouts[0] }) < 0
	if len(out.Layouts) > 0 && one {
		how += fmt.Sprintf(" in the %s layout", out.Layouts[0])
	}
	what := make([]string, len(items))
	for i, it := range items {
		what[i] = it.Describe()
		if !one && i < len(out.Layouts) && out.Layouts[i] != "" {
			what[i] += fmt.Sprintf(" (in the %s layout)", out.Layouts[i])
		}
	}
	count := "1 item"
	if len(items) != 1 {
		count = fmt.Sprintf("%d items", len(items))
	}
	to := o.out
	if to == "-" {
		to = "stdout"
	}
	fmt.Fprintf(s.err, "exported %s from %s to %s as %s: %s\n", count, src, to, how, strings.Join(what, "; "))
	return nil
}

// flagMistake spells the *sessions.OptionError in err as the flag it names ("--length 0 is
// outside [1, 1048576]"), keeping what err says around it: the source and the item it is
// about (`s.ssmlab: f3 ("tf"): --length 64 applies …`), which of several items it refuses.
// Any error of the options alone, which no input was read for, is a command-line mistake
// (exit 2). An err that words the option its own way, its message not holding the
// OptionError's, is kept whole, its source with it: the option's refusal alone dropped it.
func flagMistake(err error) error {
	oe := (*sessions.OptionError)(nil)
	if !errors.As(err, &oe) {
		return err
	}
	msg, opt := err.Error(), oe.Error()
	if i := strings.LastIndex(msg, opt); i >= 0 {
		msg = msg[:i] + "--" + msg[i:]
	}
	return &flagMistakeError{msg: msg, err: err}
}

// flagMistakeError is an error whose message names its option as a flag (flagMistake).
type flagMistakeError struct {
	msg string
	err error
}

func (e *flagMistakeError) Error() string { return e.msg }
func (e *flagMistakeError) Unwrap() error { return e.err }

// readBackLine says how closely an exported layer gives its filter's impulse responses, as
// a warning when it fails the check (sessions.ReadBackCheck.Failed).
func readBackLine(w io.Writer, c sessions.ReadBackCheck) {
	text, warn := readBackText(c)
	if warn {
		text = "warning: " + text
	}
	fmt.Fprintln(w, text)
}

// readBackText is readBackLine's text, and whether it is a warning.
func readBackText(c sessions.ReadBackCheck) (string, bool) {
	text, warn := c.Summary("--dtype float64")
	return "checked " + c.Item + ": " + text, warn
}

// exportItems reads the items to export from a session (those named by ids) or from any
// importable file.
func (s *streams) exportItems(src string, ids []string, allowOutside bool) ([]sessions.Item, error) {
	if !sessions.IsSession(src) {
		if len(ids) > 0 {
			return nil, fmt.Errorf("--id picks items of a session, and %s is not one", src)
		}
		it, err := sessions.Import(src, sessions.ImportOptions{})
		if err != nil {
			return nil, fail(exportChoice(src, err))
		}
		return []sessions.Item{it}, nil
	}
	sess, err := sessions.LoadWith(src, sessions.LoadOptions{AllowOutside: allowOutside})
	if err != nil {
		return nil, fail(err)
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		if keys[i], err = sess.Find(id); err != nil {
			// A key the session does not hold is a command-line mistake (an *OptionError).
			if strings.Contains(id, ",") {
				return nil, failUnlessOption(fmt.Errorf("%s: %w (--id takes one item; repeat it for several: --id %s)", src, err, strings.ReplaceAll(id, ",", " --id ")))
			}
			return nil, failUnlessOption(fmt.Errorf("%s: %w", src, err))
		}
		if j := slices.Index(keys[:i], keys[i]); j >= 0 {
			return nil, fmt.Errorf("--id %s and --id %s name the same item, %s", ids[j], id, keys[i])
		}
	}
	items, err := sess.Items(keys...)
	if err != nil {
		return nil, failf("%s: %w", src, err)
	}
	if len(items) == 0 {
		return nil, failf("%s: the session holds no filters or targets", src)
	}
	return items, nil
}

func newSession(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Look into session files",
		Long: `A session file (.ssmlab) holds the workbench's filters, banks, distillation targets, jobs
and view; docs/formats.md describes it. ssmlab FILE.ssmlab opens it in the workbench.`,
		Args: commandGroup,
		RunE: func(*cobra.Command, []string) error { return nil }, // commandGroup refuses every call
	}
	var asJSON, allowOutside bool
	info := &cobra.Command{
		Use:   "info FILE [--json]",
		Short: "Summarise a session file",
		Long: `Info prints what the session file FILE holds: one line per filter, bank, target and job
with its ID, name and size (a job's status, the target it fits and the filter it made), and
the workbench's selection. --json prints it as JSON.

A linked target's source is read only from under the session file's directory: one named
by an absolute path, through "..", or by a link out of the directory is listed with its
problem unless --allow-outside (a session file from elsewhere could otherwise make ssmlab
read any file you can). export reads sessions the same way.`,
		Example: `  ssmlab session info work.ssmlab
  ssmlab session info work.ssmlab --json | jq '.filters[].id'`,
		Args: oneFileNoStdin,
		RunE: func(_ *cobra.Command, args []string) error { return runSessionInfo(s, args[0], asJSON, allowOutside) },
	}
	info.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	addAllowOutside(info.Flags(), &allowOutside)
	cmd.AddCommand(info)
	return cmd
}

// sessionInfo is what session info --json prints.
type sessionInfo struct {
	Path    string     `json:"path"`
	Version int        `json:"version"`
	Summary string     `json:"summary"`
	Filters []itemInfo `json:"filters"`
	Targets []itemInfo `json:"targets"`
	Jobs    []itemInfo `json:"jobs"`
	UI      struct {
		Selected string   `json:"selected"`
		FormTab  string   `json:"form_tab"`
		Plots    []string `json:"plots"`
	} `json:"ui"`
}

type itemInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source,omitempty"`
	Problem     string `json:"problem,omitempty"`
}

func runSessionInfo(s *streams, path string, asJSON, allowOutside bool) error {
	sess, err := sessions.LoadWith(path, sessions.LoadOptions{AllowOutside: allowOutside})
	if err != nil {
		return fail(err)
	}
	in := sessionInfo{Path: path, Version: sess.FileVersion(), Summary: sess.Summary(),
		Filters: []itemInfo{}, Targets: []itemInfo{}, Jobs: []itemInfo{}}
	for _, e := range sess.Filters {
		in.Filters = append(in.Filters, itemInfo{ID: e.ID, Name: e.Name, Description: e.Describe()})
	}
	for _, t := range sess.Targets {
		ii := itemInfo{ID: t.ID, Name: t.Name, Description: t.Describe()}
		if t.Source != nil {
			ii.Source = t.Source.Path
			if t.Source.Tensor != "" {
				ii.Source += "#" + t.Source.Tensor
			}
			if t.Linked {
				ii.Source += " (linked)"
			}
		}
		if t.Err != nil {
			ii.Problem = oneLine(t.Err.Error())
		}
		in.Targets = append(in.Targets, ii)
	}
	// Filters and targets as the workbench lists them (the file's order).
	rank := map[string]int{}
	for i, id := range sess.Order() {
		rank[id] = i
	}
	byRank := func(a, b itemInfo) int { return rank[a.ID] - rank[b.ID] }
	slices.SortStableFunc(in.Filters, byRank)
	slices.SortStableFunc(in.Targets, byRank)
	for _, j := range sess.Jobs {
		desc := ""
		if j.Status != "" {
			desc = string(j.Status) + ", "
		}
		if j.Target != "" {
			desc += "fits " + j.Target + ", "
		}
		if j.Result != "" {
			desc += "made " + j.Result + ", "
		}
		desc += fmt.Sprintf("spec %s", size(len(j.Spec)))
		if j.Report != nil {
			desc += fmt.Sprintf(", report %s", size(len(j.Report)))
		} else {
			desc += ", no report"
		}
		in.Jobs = append(in.Jobs, itemInfo{ID: j.ID, Name: j.Kind, Description: desc})
	}
	in.UI.Selected, in.UI.FormTab, in.UI.Plots = sess.UI.Selected, sess.UI.FormTab, sess.UI.Plots
	if in.UI.Plots == nil {
		in.UI.Plots = []string{}
	}
	if asJSON {
		data, err := json.Marshal(in)
		if err != nil {
			return failf("%s: %w", path, err)
		}
		return s.writeOut(data)
	}
	var b strings.Builder
	version := fmt.Sprint(in.Version)
	if in.Version < sessions.CurrentVersion {
		version += fmt.Sprintf(" (saving writes version %d)", sessions.CurrentVersion)
	}
	fmt.Fprintf(&b, "%s: ssmlab session, version %s: %s\n", path, version, in.Summary)
	width := 0
	for _, l := range [][]itemInfo{in.Filters, in.Targets, in.Jobs} {
		for _, ii := range l {
			width = max(width, len([]rune(ii.Name)))
		}
	}
	width = min(width, 32)
	for _, l := range [][]itemInfo{in.Filters, in.Targets, in.Jobs} {
		for _, ii := range l {
			name := ii.Name
			if r := []rune(name); len(r) > 32 {
				name = string(r[:31]) + "…"
			}
			fmt.Fprintf(&b, "  %-5s %-*s  %s", ii.ID, width, name, ii.Description)
			if ii.Source != "" {
				fmt.Fprintf(&b, " (from %s)", ii.Source)
			}
			if ii.Problem != "" {
				fmt.Fprintf(&b, " [%s]", ii.Problem)
			}
			b.WriteByte('\n')
		}
	}
	if in.UI.Selected != "" || in.UI.FormTab != "" || len(in.UI.Plots) > 0 {
		fmt.Fprintf(&b, "  view: selected %q, form tab %q, plots %s\n", in.UI.Selected, in.UI.FormTab, strings.Join(in.UI.Plots, ", "))
	}
	return s.writeOut([]byte(b.String()))
}

// size writes a byte count for people: "120 B", "2.1 KiB".
func size(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// addAllowOutside adds --allow-outside, which lets a session's linked targets be read from
// outside the session file's directory.
func addAllowOutside(f *pflag.FlagSet, v *bool) {
	f.BoolVar(v, "allow-outside", false, "read a session's linked targets even outside the session file's directory (absolute paths, .., links out)")
}
