package sessions

import (
	"fmt"
	"strconv"

	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// MaxTruncLen is the largest ImportOptions.TruncLen and ExportOptions.TruncLen: the RTF
// layout's trunc_len (package rtf holds its numerics, package layouts its tensors).
const MaxTruncLen = rtf.MaxTruncLen

// truncLenNotRTF refuses a trunc_len n for the layout lay, not rtf, for import and export
// alike.
func truncLenNotRTF(n int, lay layouts.Layout) error {
	return &OptionError{"trunc-len", strconv.Itoa(n), fmt.Sprintf(" applies to the rtf layout, not to the %s layout", lay)}
}

// checkTruncLen refuses a trunc_len outside [0, MaxTruncLen], for import and export alike.
func checkTruncLen(n int) error {
	if n < 0 || n > MaxTruncLen {
		return &OptionError{"trunc-len", strconv.Itoa(n), fmt.Sprintf(" is outside [0, %d]", MaxTruncLen)}
	}
	return nil
}

// OptionError is an ImportOptions, ExportOptions or CheckpointOptions value that Import,
// Export or OpenCheckpoint cannot take (ImportOptions.Check, ExportOptions.Check). Option
// names it as ssmlab's flag does, without the dashes ("length", "trunc-len", "layout",
// "layers", "dtype", "prefix", "format"); Value is the value as the message shows it
// (quoted where it is text the option does not take), or ""
// for an option refused whatever its value (one the format does not use); and Why says what
// is wrong with it, so that the message reads "length 0 is outside [1, 1048576]" (and
// "--length 0 …" with the dashes, "length=0 …" as the workbench's key=value).
type OptionError struct {
	Option, Value, Why string
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return e.Option + e.Why
	}
	return e.Option + " " + e.Value + e.Why
}

// Unwrap makes it a failure of kind ErrInvalid: a bad argument.
func (e *OptionError) Unwrap() error { return ErrInvalid }

// ChoiceError is returned when a file holds several arrays to import and none was chosen.
type ChoiceError struct {
	What  string   // "arrays"
	Names []string // the choices
	Hint  string   // what the names are, where layouts.Unrecognised knows; "" if not
}

func (e *ChoiceError) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = strconv.Quote(n)
	}
	hint := ""
	if e.Hint != "" {
		hint = "; " + e.Hint
	}
	return fmt.Sprintf("the file holds %d %s; choose one: %s%s", len(e.Names), e.What, plural.First(quoted, 10, " "), hint)
}
