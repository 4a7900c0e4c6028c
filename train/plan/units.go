package plan

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/train"
)

// ErrInvalid marks a plan that cannot be made or a share of it that does not fit the plan.
var ErrInvalid = errors.New("invalid plan")

// invalidf is an error that is ErrInvalid (errors.Is) but reads as its message alone: the
// sentinel's words prefixed every message shown to the user ("--shard: invalid plan: shard 5
// of 3: …"), where what is wrong is a flag or the environment, not a plan.
func invalidf(format string, args ...any) error {
	return invalidError{fmt.Errorf(format, args...)}
}

type invalidError struct{ error }

func (e invalidError) Unwrap() []error { return []error{e.error, ErrInvalid} }

// Layer is a long-filter layer to distil: its module prefix (the checkpoint's tensor names
// less the layout's own), its channels, the length of its kernels, and the poles its fit
// must place (train.PolesPositive for an S4D layer with is_real that may be written back in
// its own layout; empty: the job's). A unit carries them, so a work directory keeps fits
// made under either apart (its files are named after the unit).
type Layer struct {
	Prefix   string
	Channels int
	Length   int
	Poles    train.Poles
	// Shared says that the layer is fitted with modes shared by groups of its channels
	// (train.FitShared, from SharedSource's start), to be written back as such: one unit.
	Shared bool
	// MIMO says that the layer is a multi-input multi-output layer of modes (LRU, S5),
	// reduced whole by balanced truncation (MIMOSource gives it): one unit, whose channels
	// are the layer's outputs.
	MIMO bool
}

// Unit is a share of the work: channels [Lo, Hi) of the layer at Prefix, whose kernels have
// Length samples, fitted at Order (the largest order tried, for an order picked per channel)
// with the layer's Poles where the recipe fits by variable projection (train.Spec.Poles).
type Unit struct {
	Prefix string      `json:"prefix"`
	Lo     int         `json:"lo"`
	Hi     int         `json:"hi"`
	Length int         `json:"length"`
	Order  int         `json:"order"`
	Poles  train.Poles `json:"poles,omitempty"`
	Shared bool        `json:"shared,omitempty"`
	MIMO   bool        `json:"mimo,omitempty"`
}

// ID names the unit: its prefix and channel range, "layers.0.filter_fn.[0:64]".
func (u Unit) ID() string {
	return u.Prefix + "[" + strconv.Itoa(u.Lo) + ":" + strconv.Itoa(u.Hi) + "]"
}

// Channels returns the number of channels of the unit.
func (u Unit) Channels() int { return u.Hi - u.Lo }

// Cost weighs the unit's work: channels × length × order. A step of every fitting algorithm
// costs about that (the kernels' transforms and the order's parameters per sample), so the
// balance holds for any recipe of a fixed number of steps.
func (u Unit) Cost() float64 {
	return float64(u.Channels()) * float64(u.Length) * float64(max(u.Order, 1))
}

// MaxChunk is the largest number of channels in a unit.
const MaxChunk = 1 << 14

// Units cuts layers into units of at most chunk channels each, in the order of the layers
// and their channels, every unit at the given order.
func Units(layers []Layer, order, chunk int) ([]Unit, error) {
	if chunk < 1 || chunk > MaxChunk {
		return nil, invalidf("chunk %d outside [1, %d]", chunk, MaxChunk)
	}
	seen := map[string]bool{}
	var out []Unit
	for _, l := range layers {
		if seen[l.Prefix] {
			return nil, invalidf("layer %q listed twice", l.Prefix)
		}
		seen[l.Prefix] = true
		if l.Channels < 1 || l.Length < 1 {
			return nil, invalidf("layer %q has %d channels of %d samples", l.Prefix, l.Channels, l.Length)
		}
		// Even chunks: 100 channels in chunks of 64 make 50 + 50, not 64 + 36. A layer of
		// shared modes is fitted whole, and a MIMO layer reduced whole.
		n := (l.Channels + chunk - 1) / chunk
		if l.Shared || l.MIMO {
			n = 1
		}
		for i := range n {
			lo, hi := i*l.Channels/n, (i+1)*l.Channels/n
			out = append(out, Unit{Prefix: l.Prefix, Lo: lo, Hi: hi, Length: l.Length, Order: order, Poles: l.Poles, Shared: l.Shared, MIMO: l.MIMO})
		}
	}
	return out, nil
}

// Pattern picks layers by their prefixes: a comma-separated list of shell patterns
// (path.Match: * matches any run of characters but "/", ? one character, [a-z] a class),
// each matched against a prefix with and without its final "." or "/".
type Pattern []string

// ParsePattern reads a Pattern; the empty string matches every layer.
func ParsePattern(s string) (Pattern, error) {
	if s == "" {
		return nil, nil
	}
	var p Pattern
	for _, g := range strings.Split(s, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			return nil, invalidf("layer pattern %q has an empty item", s)
		}
		if _, err := path.Match(g, ""); err != nil {
			return nil, invalidf("layer pattern %q: %v", g, err)
		}
		p = append(p, g)
	}
	return p, nil
}

// Match reports whether the pattern picks the layer at prefix.
func (p Pattern) Match(prefix string) bool {
	if len(p) == 0 {
		return true
	}
	for _, g := range p {
		if matchItem(g, prefix) {
			return true
		}
	}
	return false
}

// Unmatched returns the items of the pattern that pick none of prefixes: a typo in one item
// of a list would otherwise leave its layer out unremarked.
func (p Pattern) Unmatched(prefixes []string) []string {
	var out []string
	for _, g := range p {
		if !slices.ContainsFunc(prefixes, func(prefix string) bool { return matchItem(g, prefix) }) {
			out = append(out, g)
		}
	}
	return out
}

// matchItem matches one item of a Pattern against prefix, with and without its final "."
// or "/".
func matchItem(g, prefix string) bool {
	if ok, _ := path.Match(g, prefix); ok {
		return true
	}
	ok, _ := path.Match(g, strings.TrimRight(prefix, "./"))
	return ok
}

// sortedIDs returns the IDs of units, sorted, for messages.
func sortedIDs(ids map[string]bool) []string {
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
