package sessions

import (
	"fmt"
	"strings"

	"github.com/ssmlab/ssmlab/filters/rtf"
)

// MaxTruncLen is the largest ImportOptions.TruncLen and ExportOptions.TruncLen: the RTF
// layout's trunc_len (package rtf holds its numerics, package layouts its tensors).
const MaxTruncLen = rtf.MaxTruncLen

// ChoiceError is returned when a file holds several arrays to import and none was chosen.
type ChoiceError struct {
	What  string   // "arrays"
	Names []string // the choices
}

func (e *ChoiceError) Error() string {
	const shown = 10
	quoted := make([]string, 0, shown)
	for _, n := range e.Names[:min(len(e.Names), shown)] {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	more := ""
	if len(e.Names) > shown {
		more = fmt.Sprintf(" and %d more", len(e.Names)-shown)
	}
	return fmt.Sprintf("the file holds %d %s; choose one: %s%s", len(e.Names), e.What, strings.Join(quoted, ", "), more)
}
