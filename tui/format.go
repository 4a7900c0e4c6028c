package tui

import (
	"fmt"
	"math"
	"math/cmplx"
	"strconv"
	"strings"
	"time"

	"github.com/ssmlab/ssmlab/presets"
)

// num writes a number for a table: up to 6 significant digits, shortest form.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// sci writes an error or condition number: "8.1e-16", "5.83".
func sci(v float64) string {
	if v == 0 {
		return "0"
	}
	if math.Abs(v) >= 1e-3 && math.Abs(v) < 1e4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'e', 1, 64)
}

// cnum writes a complex number as "0.5+0.25j"; a real one as "0.5".
func cnum(c complex128) string {
	re, im := real(c), imag(c)
	if im == 0 {
		return num(re)
	}
	sign := "+"
	if im < 0 || (im == 0 && math.Signbit(im)) {
		sign = "-"
	}
	return num(re) + sign + num(math.Abs(im)) + "j"
}

// full writes a value at full precision, for editing.
func full(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fullC writes a complex value at full precision, for editing.
func fullC(c complex128) string {
	if imag(c) == 0 {
		return full(real(c))
	}
	sign := "+"
	if imag(c) < 0 {
		sign = "-"
	}
	return full(real(c)) + sign + full(math.Abs(imag(c))) + "j"
}

// parseReal reads a finite real number as presets.ParseFloat does ("0.5", "pi/4", "0.3π",
// "1/3"); its error quotes s.
func parseReal(s string) (float64, error) {
	x, err := presets.ParseFloat(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number: %w", strings.TrimSpace(s), err)
	}
	return x, nil
}

// parseComplex reads "a", "a+bj", "a-bj", "bj" (i is accepted for j) or polar "r@θ".
func parseComplex(s string) (complex128, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if i := strings.IndexAny(s, "@∠"); i >= 0 {
		r, err := parseReal(s[:i])
		if err != nil {
			return 0, err
		}
		_, w := utf8Len(s[i:])
		th, err := parseReal(s[i+w:])
		if err != nil {
			return 0, err
		}
		return cmplx.Rect(r, th), nil
	}
	if !strings.HasSuffix(s, "j") && (!strings.HasSuffix(s, "i") || strings.HasSuffix(s, "pi")) {
		v, err := parseReal(s)
		return complex(v, 0), err
	}
	body := s[:len(s)-1]
	// Split at the last sign that is not an exponent's.
	cut := -1
	for i := len(body) - 1; i > 0; i-- {
		if (body[i] == '+' || body[i] == '-') && body[i-1] != 'e' && body[i-1] != 'E' {
			cut = i
			break
		}
	}
	if cut < 0 {
		im := 1.0
		if body != "" && body != "+" {
			if body == "-" {
				im = -1
			} else {
				v, err := parseReal(body)
				if err != nil {
					return 0, err
				}
				im = v
			}
		}
		return complex(0, im), nil
	}
	re, err := parseReal(body[:cut])
	if err != nil {
		return 0, err
	}
	imText := body[cut:]
	im := 0.0
	switch imText {
	case "+":
		im = 1
	case "-":
		im = -1
	default:
		if im, err = parseReal(imText); err != nil {
			return 0, err
		}
	}
	return complex(re, im), nil
}

func utf8Len(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

// tick returns a label formatter for an axis spanning [lo, hi]: enough decimals to tell
// neighbouring ticks apart, exponents for very small or large values, at most 7 characters.
func tick(lo, hi float64) func(int, float64) string {
	span := math.Abs(hi - lo)
	mag := math.Max(math.Abs(lo), math.Abs(hi))
	return func(_ int, v float64) string {
		if math.Abs(v) < span*1e-9 {
			return "0"
		}
		switch {
		case mag >= 1e5 || (mag < 1e-3 && mag > 0):
			return strconv.FormatFloat(v, 'e', 0, 64)
		case span >= 20:
			return strconv.FormatFloat(v, 'f', 0, 64)
		case span >= 2:
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		dec := int(math.Ceil(-math.Log10(span))) + 1
		if dec > 4 {
			return strconv.FormatFloat(v, 'e', 1, 64)
		}
		return strconv.FormatFloat(v, 'f', dec, 64)
	}
}

// dur writes a duration compactly: "850ms", "12s", "3m05s".
func dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
