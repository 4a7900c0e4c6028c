package figures

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
)

// TestLadder draws a ladder (exact fits, zero bounds and errors at the log axis' floor
// included) deterministically, and refuses data it cannot draw.
func TestLadder(t *testing.T) {
	good := Ladder{
		Orders: []int{4, 8, 16},
		Errors: [][]float64{{0.3, 0.2}, {0.01, 0.02}, {0, 1e-9}},
		Bounds: [][]float64{{0.1, 0.05}, {0.001, 0}, {0, 0}},
	}
	f, err := NewLadder(good, Options{Title: "ladder"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := render(t, f, SVG), render(t, f, SVG)
	if !bytes.Equal(a, b) || !bytes.Contains(a, []byte("mean lower bound")) {
		t.Errorf("the ladder's SVG is not deterministic or lacks its legend")
	}
	// Its one panel has no title of its own: plot's default title already says "relative
	// error against order", which the panel repeated under it.
	if bytes.Contains(a, []byte("against order")) {
		t.Errorf("the ladder's panel repeats the figure's title")
	}
	for _, c := range []struct {
		name string
		l    Ladder
	}{
		{"no orders", Ladder{}},
		{"rows", Ladder{Orders: []int{4, 8}, Errors: good.Errors[:1], Bounds: good.Bounds[:1]}},
		{"descending", Ladder{Orders: []int{8, 4}, Errors: good.Errors[:2], Bounds: good.Bounds[:2]}},
		{"ragged", Ladder{Orders: []int{4, 8}, Errors: [][]float64{{1, 2}, {1}}, Bounds: good.Bounds[:2]}},
		{"NaN", Ladder{Orders: []int{4}, Errors: [][]float64{{math.NaN()}}, Bounds: [][]float64{{0}}}},
		{"negative", Ladder{Orders: []int{4}, Errors: [][]float64{{0.1}}, Bounds: [][]float64{{-1}}}},
	} {
		if _, err := NewLadder(c.l, Options{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
}

// TestChannelStylesDistinct checks that no two of the channels a figure names in its legend
// (MaxChannelPanels) are drawn alike: the palette has fewer colours than that, and channel 7
// was drawn as channel 0.
func TestChannelStylesDistinct(t *testing.T) {
	seen := map[string]int{}
	for i := range MaxChannelPanels {
		st := channelStyle(i)
		key := fmt.Sprint(st.Color, st.Dashes)
		if j, ok := seen[key]; ok {
			t.Errorf("channels %d and %d are drawn alike (%s)", j, i, key)
		}
		seen[key] = i
	}
}

// A zero mean bound is left out of the bound's line (at the log axis' floor it read as a
// measured value) and the legend says from which order it is 0.
func TestBoundNote(t *testing.T) {
	if got, want := BoundNote([]int{2, 4, 8}, []float64{0.1, 0, 0}), ", 0 from order 4 (not drawn)"; got != want {
		t.Errorf("BoundNote = %q, want %q", got, want)
	}
	if got := BoundNote([]int{2, 4}, []float64{0.1, 0.01}); got != "" {
		t.Errorf("BoundNote of nonzero bounds = %q, want none", got)
	}
}

// TestLadderMarksEachOrder: the mean error and the mean bound are marked at each order, so
// that a ladder of one order (or a bound above 0 at one order alone) shows them: a line
// through one point draws nothing, and the figure of distill --orders 8 showed the
// channels' dots under a legend naming a mean and a bound it did not draw.
func TestLadderMarksEachOrder(t *testing.T) {
	one := Ladder{Orders: []int{8}, Errors: [][]float64{{0.3, 0.2}}, Bounds: [][]float64{{0.1, 0.05}}}
	f, err := NewLadder(one, Options{Title: "ladder"})
	if err != nil {
		t.Fatal(err)
	}
	svg := render(t, f, SVG)
	// The legend's thumbnails draw each style once; the panel draws the mean's filled black
	// square and the bound's grey ring once more. The SVG backend writes a black fill as a
	// closed path with no style.
	if n := bytes.Count(svg, []byte(`Z"  />`)); n < 2 {
		t.Errorf("the mean error's marker is drawn %d times, want its thumbnail's and the order's", n)
	}
	if n := bytes.Count(svg, []byte("stroke:#6E6E6E")); n < 3 {
		t.Errorf("the bound's grey is stroked %d times, want its thumbnail's line and ring and the order's ring", n)
	}
}
