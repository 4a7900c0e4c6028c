package tui

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/presets"
)

func finiteC(v complex128) bool {
	return !math.IsNaN(real(v)) && !math.IsNaN(imag(v)) && !math.IsInf(real(v), 0) && !math.IsInf(imag(v), 0)
}

// FuzzParseComplex types a fuzzed value into an entry of a filter's table (parseEntry: the
// value, its modulus or its angle): what is accepted is finite and is what fullC writes back
// for editing, a real part is read as presets.ParseFloat reads it, and a refusal is an error.
func FuzzParseComplex(f *testing.F) {
	for _, s := range []string{"0.5", "-0.25+0.5j", "1e-3-2e+2i", "j", "-j", "pi/4", "0.3pi", "-π", "0.9@0.25pi", "1∠pi/2",
		"2*pi", "1e308pi", "pi/1e-320", "pi/Inf", "1/3+2j", "2 * pi", "NaN", "+Inf", "1e309", "", "3-", "1@", "--1j"} {
		f.Add(s, 0.5, -0.25, uint8(0))
	}
	f.Add("0.5", 0.5, 0.5, uint8(1))
	f.Add("0.25", 0.5, 0.0, uint8(2))
	f.Fuzz(func(t *testing.T, text string, re, im float64, part uint8) {
		old := complex(re, im)
		if !finiteC(old) {
			return // a filter's entries are finite
		}
		p := []string{"", "abs", "arg"}[int(part)%3]
		v, err := parseEntry(old, p, text)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%q: an empty error", text)
			}
			return
		}
		if !finiteC(v) {
			t.Fatalf("parseEntry(%v, %q, %q) = %v, accepted", old, p, text, v)
		}
		if p != "" {
			return
		}
		back, err := parseComplex(fullC(v))
		if err != nil || back != v {
			t.Fatalf("%q reads as %v, written %q, read back as %v, %v", text, v, fullC(v), back, err)
		}
		if r, err := presets.ParseFloat(full(real(v))); err != nil || r != real(v) {
			t.Fatalf("%v written %q reads back as %v, %v", real(v), full(real(v)), r, err)
		}
		if x, err := presets.ParseFloat(text); err == nil && v != complex(x, 0) {
			t.Fatalf("%q reads as %v in an entry, as %v in a preset's argument", text, v, x)
		}
	})
}

// FuzzParseOrders types a ladder's orders: what is accepted is sorted, without repeats, in
// the ladder's range, and reads back the same from its own list; a refusal names the orders.
func FuzzParseOrders(f *testing.F) {
	for _, s := range []string{"4,8,16", "16, 8,4,8", "1", "0", "4,,8", "-4", "1,2,3,4,5,6,7,8", "99999999999999999999", " 2 ", "4;8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseOrders(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "orders") {
				t.Fatalf("%q: error %q does not name the orders", s, err)
			}
			return
		}
		if len(got) == 0 || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("%q reads as %v", s, got)
		}
		parts := make([]string, len(got))
		for i, n := range got {
			parts[i] = strconv.Itoa(n)
		}
		back, err := parseOrders(strings.Join(parts, ","))
		if err != nil || !slices.Equal(back, got) {
			t.Fatalf("%q reads as %v, which reads back as %v, %v", s, got, back, err)
		}
	})
}
