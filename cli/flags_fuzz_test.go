package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/analysis/figures"
)

// FuzzFlagValues gives fuzzed values to the flags whose values are parsed beyond strconv:
// plot's --channel (a list) and --width/--height (lengths with a unit), and import's --pair
// OUT,IN. A refusal is an error naming the flag; what is accepted is in range and, for the
// lists, reads back the same from its own writing.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"all", "0", "0,2", " 1 , 3", "-1", "0,,1", "16cm", "6in", "300pt", "1in", "20in", "NaNin",
		"+Infcm", "0.5in", "1e400pt", "0,3", "3, 0", "0", "1,2,3", "-0,1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if chans, err := parseChannels(v); err != nil {
			if !strings.Contains(err.Error(), "--channel") {
				t.Fatalf("--channel %q: error %q names no flag", v, err)
			}
		} else if chans != nil {
			parts := make([]string, len(chans))
			for i, c := range chans {
				if c < 0 {
					t.Fatalf("--channel %q reads as %v", v, chans)
				}
				parts[i] = strconv.Itoa(c)
			}
			if back, err := parseChannels(strings.Join(parts, ",")); err != nil || !slices.Equal(back, chans) {
				t.Fatalf("--channel %q reads as %v, which reads back as %v, %v", v, chans, back, err)
			}
		}

		if pairs, err := (&layoutFlags{pairs: []string{v}}).parsePairs(); err != nil {
			if !strings.Contains(err.Error(), "--pair") {
				t.Fatalf("--pair %q: error %q names no flag", v, err)
			}
		} else {
			p := pairs[0]
			back, err := (&layoutFlags{pairs: []string{fmt.Sprintf("%d,%d", p[0], p[1])}}).parsePairs()
			if p[0] < 0 || p[1] < 0 || err != nil || back[0] != p {
				t.Fatalf("--pair %q reads as %v, which reads back as %v, %v", v, p, back, err)
			}
		}

		o := plotOptions{width: v, height: v, freq: figures.DefaultPoints, dpi: figures.DefaultDPI}
		fo, err := o.figureOptions(false)
		if err != nil {
			if !strings.Contains(err.Error(), "--width") {
				t.Fatalf("--width %q: error %q names no flag", v, err)
			}
		} else if v != "" && !(fo.Width >= figures.MinSide && fo.Width <= figures.MaxSide && fo.Height == fo.Width) {
			t.Fatalf("--width %q accepted as %v", v, fo.Width)
		}
	})
}
