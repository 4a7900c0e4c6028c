package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/sigexit"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/presets"
	"github.com/ssmlab/ssmlab/sessions"
)

// Exit statuses returned by Main.
const (
	ExitOK      = 0
	ExitFailure = 1 // the work failed (input, numerics, output)
	ExitUsage   = 2 // the command line is wrong
	// ExitSignal plus a signal's number is the status of a command that signal cancelled
	// (SIGINT, SIGTERM, SIGHUP): 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP, the
	// status shells give a process the signal ended (package internal/sigexit, which the
	// workbench follows too).
	ExitSignal = sigexit.Base
)

// Version is the version --version prints. Release builds set it with
// -ldflags "-X github.com/ssmlab/ssmlab/cli.Version=v1.2.3"; otherwise the module version
// recorded by `go install module@version` is used, or "devel".
var Version = ""

// Main runs ssmlab with args (without the program name) and returns the exit status.
// It reads stdin only for a FILE of "-" and writes results to stdout, messages to stderr.
//
// SIGINT, SIGTERM and SIGHUP cancel the command at any moment before it starts writing its
// results: Main prints "ssmlab: cancelled; nothing was written" and returns ExitSignal plus
// the signal's number at once, and the abandoned work writes nothing (the process is
// expected to exit). A signal that comes while results are written lets the writing finish
// (files are replaced atomically), unless a second one follows.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, sigexit.Signals...)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := new(outputGate)
	s := &streams{in: stdin, out: gatedWriter{stdout, g}, err: mutedWriter{stderr, g}, ctx: ctx, gate: g}
	done := make(chan int, 1)
	go func() { done <- execute(s, args) }()
	select {
	case code := <-done:
		return code
	case sig := <-sigs:
		cancel()
		if g.close() {
			if f := s.release.Load(); f != nil {
				(*f)()
			}
			fmt.Fprintf(stderr, "ssmlab: cancelled; %s\n", s.cancelNote())
			return sigexit.Status(sig)
		}
		// The results are being written: let that finish, unless asked again.
		select {
		case code := <-done:
			return code
		case sig := <-sigs:
			fmt.Fprintln(stderr, "ssmlab: cancelled while writing the results: a file is the old or the new version, stdout may be cut short")
			return sigexit.Status(sig)
		}
	}
}

// execute runs the command line and returns the exit status.
func execute(s *streams, args []string) (code int) {
	root := newRoot(s)
	root.SetArgs(args)
	// Every command's flags have been parsed when this runs: refuse one given twice (pflag
	// keeps the last value without a word).
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return repeatedFlag(cmd, args) }
	defer func() {
		// filters panics only on programmer errors; still, the user gets one line, not a trace.
		if r := recover(); r != nil {
			fmt.Fprintf(s.err, "ssmlab: internal error (a bug, please report it with the input): %s\n", oneLine(fmt.Sprint(r)))
			code = ExitFailure
		}
	}()
	cmd, err := root, versionAlone(root, args)
	if err == nil {
		cmd, err = root.ExecuteC()
	}
	if err == nil {
		return ExitOK
	}
	if f := (*failure)(nil); errors.As(err, &f) {
		fmt.Fprintf(s.err, "ssmlab: %s\n", oneLine(err.Error()))
		return ExitFailure
	}
	prefix := ""
	if cmd != nil && cmd.HasParent() {
		prefix = commandName(cmd) + ": "
	} else {
		cmd = root
	}
	fmt.Fprintf(s.err, "ssmlab: %s%s; see '%s --help'\n", prefix, oneLine(err.Error()), cmd.CommandPath())
	return ExitUsage
}

// versionAlone refuses arguments beside --version: cobra prints the version before it checks
// them, and "ssmlab --version x" printed it and exited 0, as did "ssmlab --version convert",
// whose command cobra took for the flag's value, --version being unknown until the root runs.
// The help and version flags are made known first, so that a command after --version is
// found (and refuses the flag, its own not having it).
func versionAlone(root *cobra.Command, args []string) error {
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	cmd, rest, err := root.Find(args)
	if err != nil || cmd != root || root.ParseFlags(rest) != nil {
		return nil // the command's own checks speak
	}
	if v, _ := root.Flags().GetBool("version"); v {
		if err := noArgs(root, root.Flags().Args()); err != nil {
			return fmt.Errorf("--version prints the version alone: %w", err)
		}
	}
	return nil
}

// streams are the process's standard streams, injected so that tests run Main in process,
// with the command's context (cancelled by a signal) and the gate its results pass.
type streams struct {
	in       io.Reader
	out, err io.Writer
	ctx      context.Context
	gate     *outputGate
	// kept, when set, says what a cancelled command leaves behind (finished work kept for
	// a re-run), for the line Main prints; by default "nothing was written".
	kept atomic.Pointer[func() string]
	// release, when set, gives back what the command holds (a lock's file) when a signal
	// cancels it: Main returns then without waiting for the command's defers.
	release atomic.Pointer[func()]
}

// onCancel sets what a cancelled command releases (streams.release).
func (s *streams) onCancel(release func()) { s.release.Store(&release) }

// keep sets what a cancelled command says it leaves behind.
func (s *streams) keep(note func() string) { s.kept.Store(&note) }

// cancelNote is the end of Main's "cancelled; …" line.
func (s *streams) cancelNote() string {
	if f := s.kept.Load(); f != nil {
		return (*f)()
	}
	return "nothing was written"
}

// errCancelled is the error of a write after a signal cancelled the command.
var errCancelled = errors.New("cancelled")

// outputGate decides between a signal and the command's first result: once a signal closed
// it, nothing more is written; once a result went out, a signal waits for the command.
type outputGate struct {
	mu             sync.Mutex
	closed, opened bool
}

// open reports whether results may be written, and if so marks the writing begun.
func (g *outputGate) open() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.opened = true
	return true
}

// while runs write, a write that is not a result (work kept for a later run), unless a signal
// closed the gate (errCancelled); a signal that comes meanwhile waits for it to end.
func (g *outputGate) while(write func() error) error {
	if g == nil {
		return write()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errCancelled
	}
	return write()
}

// close shuts the gate unless results went out already, and reports whether it did.
func (g *outputGate) close() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return false
	}
	g.closed = true
	return true
}

// gatedWriter is stdout behind the gate.
type gatedWriter struct {
	w io.Writer
	g *outputGate
}

func (w gatedWriter) Write(p []byte) (int, error) {
	if !w.g.open() {
		return 0, errCancelled
	}
	return w.w.Write(p)
}

// mutedWriter is stderr, silent once a signal closed the gate: the abandoned command has
// nothing more to say after Main's last word.
type mutedWriter struct {
	w io.Writer
	g *outputGate
}

func (w mutedWriter) Write(p []byte) (int, error) {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	if w.g.closed {
		return len(p), nil
	}
	return w.w.Write(p)
}

// context returns the command's context: cancelled by SIGINT, SIGTERM and SIGHUP.
func (s *streams) context() context.Context {
	if s.ctx == nil {
		return context.Background()
	}
	return s.ctx
}

func newRoot(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "ssmlab",
		Short: "A workbench for linear state-space filters (S4, LRU, RotRNN, RTF)",
		Long: `ssmlab converts single-input single-output linear filters between their
representations and analyses them: impulse and frequency responses, poles, zeros, stability.
It distils long filters (a kernel file, or every long-filter layer of a model's checkpoint:
S4, S4D, Hyena, StripedHyena, RTF) into low-order rational filters, with a lower bound on
what any filter of the order could reach, and writes them back into the checkpoint as RTF,
S4D or StripedHyena layers; a checkpoint's LRU, S5 and RotRNN layers are reduced whole to a
smaller state and written back in their own layouts (docs/scale.md).

Forms: dense (A, B, C, D), diagonal (poles and residues), companion, rotation (RotRNN),
tf (rational transfer function, RTF) and zpk (zeros, poles, gain). A file holds one filter
or a bank of channels of one form; docs/formats.md describes the JSON.

Run with no arguments, or with a FILE, in a terminal to open the workbench (the
terminal UI); without a terminal, no arguments print this help. The workbench saves its
session with ctrl+s, autosaves every change within a second to
$XDG_STATE_HOME/ssmlab/autosave (~/.local/state/ssmlab/autosave), and offers work it did
not save back at the next start (docs/guide.md, "Your work is safe").

Exit status: 0 on success, 1 when the work fails (bad input, a conversion that cannot
be done accurately, a non-finite result), 2 when the command line is wrong. Every failure
prints one line on stderr and nothing on stdout. SIGINT (Ctrl-C), SIGTERM and SIGHUP cancel
any command at any moment before it writes its results: it prints "ssmlab: cancelled;
nothing was written" (a checkpoint's distillation: what it keeps for a re-run) and exits
128 + the signal's number (130 for Ctrl-C).`,
		Version:       version(),
		Args:          func(cmd *cobra.Command, args []string) error { return unknownCommand(cmd, args) },
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// main opens the terminal UI before reaching here when stdin and stdout are
			// terminals; otherwise there is nothing to do but explain.
			return cmd.Help()
		},
	}
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.SetVersionTemplate("ssmlab {{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(_ *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil {
				return err
			}
			if err := unknownCommand(cmd, rest); err != nil {
				return err
			}
			return cmd.Help()
		},
	})
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	root.AddCommand(newConvert(s), newAnalyze(s), newPresets(s), newPreset(s), newDistill(s), newTrain(s), newImport(s), newExport(s), newSession(s), newPlot(s), newBackends(s), newMerge(s))
	return root
}

// flagWants says what a flag of each pflag type takes, for flagError.
var flagWants = map[string]string{
	"int":      "a whole number",
	"uint64":   "a whole number, 0 or more",
	"float64":  "a number",
	"intSlice": "whole numbers separated by commas, such as 4,8,16",
	"bool":     "true or false",
}

// flagError words a value that a flag cannot parse for people: pflag's 'invalid argument
// "abc" for "--impulse" flag: strconv.ParseInt: parsing "abc": invalid syntax' becomes
// '--impulse "abc": want a whole number'; a flag of ssmlab's own type (--order) gives its own
// reason, and a float flag's value that is not finite is refused as notFinite says. Other
// errors pass unchanged.
func flagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) || ive.Unwrap() == nil {
		return err
	}
	f := ive.GetFlag()
	if errors.Is(err, presets.ErrNotFinite) {
		return notFinite(f.Name)
	}
	want, ok := flagWants[f.Value.Type()]
	var ne *strconv.NumError
	switch {
	case !ok || !errors.As(err, &ne):
		return fmt.Errorf("--%s %q: %w", f.Name, ive.GetValue(), ive.Unwrap())
	case errors.Is(ne.Err, strconv.ErrRange):
		return fmt.Errorf("--%s %q is out of range: want %s", f.Name, ive.GetValue(), want)
	}
	return fmt.Errorf("--%s %q: want %s", f.Name, ive.GetValue(), want)
}

// repeatedFlag refuses a flag that args give more than once ("--order given twice (6, then 4):
// give it once"):
// pflag keeps the last value, silently. It parses args again with cmd's flags, counting each
// flag's values; flags that take several values (their pflag.Value is a SliceValue: --id,
// --pair, --label, --orders) are repeatable and not counted.
func repeatedFlag(cmd *cobra.Command, args []string) error {
	shadow := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	shadow.SetOutput(io.Discard)
	shadow.ParseErrorsAllowlist.UnknownFlags = true
	seen := map[string]*flagValues{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		v := &flagValues{typ: f.Value.Type()}
		if _, many := f.Value.(pflag.SliceValue); !many {
			seen[f.Name] = v
		}
		shadow.AddFlag(&pflag.Flag{Name: f.Name, Shorthand: f.Shorthand, NoOptDefVal: f.NoOptDefVal, Value: v, Usage: f.Usage})
	})
	if err := shadow.Parse(args); err != nil {
		return nil // cobra parsed these args already; its verdict stands
	}
	var err error
	shadow.VisitAll(func(f *pflag.Flag) {
		v, counted := seen[f.Name]
		if err != nil || !counted || len(v.values) < 2 {
			return
		}
		times := "twice"
		if n := len(v.values); n > 2 {
			times = strconv.Itoa(n) + " times"
		}
		values := "" // the values, where they differ: which one was meant?
		if slices.ContainsFunc(v.values, func(x string) bool { return x != v.values[0] }) {
			values = " (" + strings.Join(v.values, ", then ") + ")"
		}
		err = fmt.Errorf("--%s given %s%s: give it once", f.Name, times, values)
	})
	return err
}

// flagValues records the values a flag is given, for repeatedFlag.
type flagValues struct {
	typ    string
	values []string
}

func (v *flagValues) String() string { return "" }
func (v *flagValues) Type() string   { return v.typ }
func (v *flagValues) Set(s string) error {
	v.values = append(v.values, s)
	return nil
}

// unknownCommand is the error for words after cmd that name none of its subcommands, with
// the nearest names ("distil": did you mean distill?); nil for no words. A first word that
// is an existing file came here because the workbench (main) takes a single FILE: saying
// 'unknown command "b6.json"' would send the user looking for a command.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if !cmd.HasParent() {
		if _, err := os.Stat(args[0]); err == nil {
			return fmt.Errorf("%s is a file, not a command: the workbench opens one file at a time (ssmlab %s); convert, analyze and the other commands take their FILE after the command's name", args[0], args[0])
		}
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only on its own path
	}
	if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	return errors.New(msg)
}

// commandGroup is the argument rule of a command that only groups others (session): one of
// them must follow, as a command's argument must (exit 2 without it).
func commandGroup(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args)
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return fmt.Errorf("want a command: %s", strings.Join(names, ", "))
}

// IsCommand reports whether name is one of ssmlab's subcommands, so that main can tell
// "ssmlab FILE" (the workbench on a file) from "ssmlab COMMAND".
func IsCommand(name string) bool {
	root := newRoot(&streams{})
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return true
		}
	}
	return false
}

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// failure marks an error of the work itself (exit 1); every other error returned by a
// command is a usage error (exit 2), as are all of cobra's own.
type failure struct{ err error }

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// fail marks err as a failure of the work; the message should start with the file's name.
func fail(err error) error {
	if err == nil {
		return nil
	}
	return &failure{err}
}

func failf(format string, args ...any) error { return fail(fmt.Errorf(format, args...)) }

// oneFile is the Args check of commands that take a single FILE.
func oneFile(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf(`want one FILE argument ("-" reads stdin), got %d`, len(args))
	}
	return nil
}

// noArgs is the Args check of commands that take no arguments (cobra.NoArgs said
// 'unknown command "x.json" for "ssmlab train"').
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = strconv.Quote(a)
		}
		return fmt.Errorf("want no arguments, got %s", strings.Join(quoted, " "))
	}
	return nil
}

// oneFileNoStdin is oneFile for the commands that cannot read their FILE from stdin (a
// session file, export's SOURCE): "-" is refused as the usage mistake it is (noStdin).
func oneFileNoStdin(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want one FILE argument, got %d", len(args))
	}
	return noStdin(cmd, args, "a file")
}

// noStdin refuses "-" among the arguments of a command that reads only files, which what
// names ("a file", "part files"): "merge reads part files, not stdin".
func noStdin(cmd *cobra.Command, args []string, what string) error {
	if slices.Contains(args, "-") {
		return fmt.Errorf("%s reads %s, not stdin", commandName(cmd), what)
	}
	return nil
}

// flagNoStdin refuses "-" as the value of a flag that names a file to read (--job, --data,
// merge's --input, plot's --ladder), as noStdin does among the arguments: "--job reads a
// file, not stdin".
func flagNoStdin(flag, path string) error {
	if path == "-" {
		return fmt.Errorf("--%s reads a file, not stdin", flag)
	}
	return nil
}

// commandName is cmd's path less "ssmlab": "session info", "merge".
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// stdinName names stdin in messages.
const stdinName = "stdin"

// read returns the document in path ("-" for stdin) and the name messages should use for it.
// Its errors start with that name.
func (s *streams) read(path string) (filters.Document, string, error) {
	name := path
	var (
		data []byte
		err  error
	)
	if path == "-" {
		name = stdinName
		data, err = s.readStdin()
	} else {
		if err := sessionFileError(path); err != nil {
			return filters.Document{}, path, err
		}
		data, err = userfile.ReadFile(path)
		err = fail(err)
	}
	if err != nil {
		return filters.Document{}, name, err
	}
	doc, err := filterfile.Unmarshal(data)
	if err != nil {
		if t, terr := sessions.UnmarshalTarget(data); terr == nil {
			// it said "invalid filter: missing key "form"" of a valid target file
			return filters.Document{}, name, failf("%s is a target file (%s), not a filter: ssmlab distill fits a filter to its kernels, ssmlab plot draws them", name, t.Describe())
		}
		if kind, ok := sessions.ArrayFileKind(data, path); ok {
			// it said "bad JSON at line 1, column 1: invalid character 'P'" of a checkpoint
			return filters.Document{}, name, failf("%[1]s is an array file (%[2]s), not a filter file: `ssmlab import %[1]s -o FILTER.json` writes the filters of the model layer or the kernels it holds (--list lists them), which this command reads", name, kind)
		}
		return filters.Document{}, name, failf("%s: %w", name, err)
	}
	return doc, name, nil
}

// readStdin reads standard input whole (at most userfile.MaxSize bytes); its errors start
// with stdinName.
func (s *streams) readStdin() ([]byte, error) {
	data, err := userfile.ReadAll(s.in)
	if err != nil {
		return nil, failf("%s: %w", stdinName, err)
	}
	return data, nil
}

// write puts doc in path ("-" for stdout), atomically for a file.
func (s *streams) write(path string, doc filters.Document) error {
	name := path
	if path == "-" {
		name = "stdout"
	}
	data, err := filterfile.Marshal(doc)
	if err != nil {
		return failf("%s: %w", name, err)
	}
	return s.put(path, data)
}

// writeOut writes data to stdout, ending it with a newline.
func (s *streams) writeOut(data []byte) error {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	if _, err := s.out.Write(data); err != nil {
		return failf("stdout: %w", err)
	}
	return nil
}

// oneLine folds a message onto a single line.
func oneLine(msg string) string {
	lines := strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}
