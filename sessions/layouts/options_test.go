package layouts

import (
	"errors"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// TestOptionErrorIsStable: with several wrong options the error names the same one every
// time (map order would pick one at random).
func TestOptionErrorIsStable(t *testing.T) {
	o := Options{Values: map[string]string{"zeta": "1", "alpha": "1", "mid": "1", "omega": "1"}}
	for range 50 {
		if err := o.check(LRU); err == nil || err.Error() != `unknown option "alpha"` {
			t.Fatalf("got %v, want the alphabetically first unknown option named", err)
		}
	}
}

// TestExportRefusesReadingOptions: Export refuses an option of reading a layer that it does
// not use (short-filter, which the read-back would then apply), and takes those it uses.
func TestExportRefusesReadingOptions(t *testing.T) {
	f, err := filters.NewDiagonalRealPart([]complex128{complex(0.5, 0.3)}, []complex128{1}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	doc := filters.Document{Filter: f}
	if _, _, err := Export(doc, StripedHyena, Options{Values: map[string]string{"short-filter": "true"}}, ""); !errors.Is(err, ErrNotExported) {
		t.Errorf("short-filter: %v, want ErrNotExported", err)
	}
	for _, c := range []struct {
		lay  Layout
		name string
		v    string
	}{{S4D, "disc", "bilinear"}, {S4D, "variant", "minimal"}, {RTF, "h0", "twice"}, {RTF, "trunc-len", "16"}} {
		if _, _, err := Export(doc, c.lay, Options{Values: map[string]string{c.name: c.v}}, ""); err != nil {
			t.Errorf("%s --%s %s: %v", c.lay, c.name, c.v, err)
		}
	}
}
