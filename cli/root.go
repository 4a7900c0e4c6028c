package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
)

// Exit statuses returned by Main.
const (
	ExitOK      = 0
	ExitFailure = 1 // the work failed (input, numerics, output)
	ExitUsage   = 2 // the command line is wrong
)

// Version is the version --version prints. Release builds set it with
// -ldflags "-X github.com/ssmlab/ssmlab/cli.Version=v1.2.3"; otherwise the module version
// recorded by `go install module@version` is used, or "devel".
var Version = ""

// Main runs ssmlab with args (without the program name) and returns the exit status.
// It reads stdin only for a FILE of "-" and writes results to stdout, messages to stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	s := &streams{in: stdin, out: stdout, err: stderr}
	root := newRoot(s)
	root.SetArgs(args)
	defer func() {
		// filters panics only on programmer errors; still, the user gets one line, not a trace.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "ssmlab: internal error (a bug, please report it with the input): %s\n", oneLine(fmt.Sprint(r)))
			code = ExitFailure
		}
	}()
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	if f := (*failure)(nil); errors.As(err, &f) {
		fmt.Fprintf(stderr, "ssmlab: %s\n", oneLine(err.Error()))
		return ExitFailure
	}
	prefix := ""
	if cmd != nil && cmd.HasParent() {
		prefix = cmd.Name() + ": "
	} else {
		cmd = root
	}
	fmt.Fprintf(stderr, "ssmlab: %s%s; see '%s --help'\n", prefix, oneLine(err.Error()), cmd.CommandPath())
	return ExitUsage
}

// streams are the process's standard streams, injected so that tests run Main in process.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

func newRoot(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "ssmlab",
		Short: "A workbench for linear state-space filters (S4, LRU, RotRNN, RTF)",
		Long: `ssmlab converts single-input single-output linear filters between their
representations and analyses them: impulse and frequency responses, poles, zeros, stability.

Forms: dense (A, B, C, D), diagonal (poles and residues), companion, rotation (RotRNN),
tf (rational transfer function, RTF) and zpk (zeros, poles, gain). A file holds one filter
or a bank of channels of one form; docs/formats.md describes the JSON.

Run with no arguments, or with a FILE, in a terminal to open the workbench (the
terminal UI); without a terminal, no arguments print this help.

Exit status: 0 on success, 1 when the work fails (bad input, a conversion that cannot
be done, a non-finite result), 2 when the command line is wrong. Every failure prints
one line on stderr and nothing on stdout.`,
		Version:       version(),
		Args:          cobra.NoArgs,
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(newConvert(s), newAnalyze(s), newPresets(s), newPreset(s), newDistill(s), newTrain(s), newImport(s), newExport(s), newSession(s), newPlot(s), newBackends(s))
	return root
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
	if path == "-" {
		return s.writeOut(data)
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return failf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
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

// formList is the list of target forms for messages.
func formList() string {
	names := make([]string, len(filters.Forms))
	for i, f := range filters.Forms {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
