package presets

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrNotFinite marks a number ParseFloat refuses because it, or a part of it, is NaN or
// infinite, or because the value it writes lies beyond float64 (1e999, 1e308pi, pi/1e-320).
var ErrNotFinite = errors.New("not finite")

// WantFinite is the one refusal of a value, named name, that is not finite (of kind
// ErrNotFinite: NaN, an infinity, beyond float64), the same for a preset's parameter
// ("wc: …") and a float flag ("--tol: …"). It does not echo the value, which is no number to
// show.
func WantFinite(name string) error {
	return fmt.Errorf("%s: want a finite number (within ±%.3g)", name, math.MaxFloat64)
}

// ParseFloat reads a finite real number. It is the one reader of numbers typed by a user:
// preset arguments (name=value) and the workbench's table entries and forms.
//
// A number is a decimal as strconv.ParseFloat reads it ("0.5", "-2", "1e-3"; not hexadecimal,
// and without "_" between digits), or a multiple
// of π: an optional coefficient (a decimal, or just a sign), an optional "*", then "pi" or
// "π". Either may be followed by "/" and a decimal divisor. Spaces around "*" and "/" and
// before "pi" are allowed. So "pi", "-pi/2", "3pi/4", "3*pi/4", "0.25 π", "2π" and "1/3" are
// all accepted; "1/pi", "pi*2" and "*pi" are not.
//
// NaN, infinities, a divisor of 0 and a value beyond float64 are refused: the error wraps
// ErrNotFinite where the number is not finite (pi/Inf, 1e308pi), and never quotes s, which the
// caller knows.
func ParseFloat(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty")
	}
	num, den, slash := strings.Cut(t, "/")
	x, err := parseTerm(strings.TrimSpace(num))
	if err != nil {
		return 0, err
	}
	if slash {
		den = strings.TrimSpace(den)
		if den == "" {
			return 0, errors.New("nothing after /")
		}
		d, err := parseDecimal(den, "the divisor")
		if err != nil {
			return 0, err
		}
		if d == 0 {
			return 0, errors.New("division by zero")
		}
		x /= d
	}
	// A finite coefficient times π, or over a tiny divisor, can still overflow.
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("the value is %w (beyond ±%.3g)", ErrNotFinite, math.MaxFloat64)
	}
	return x, nil
}

// parseTerm reads what comes before a "/": a decimal or a multiple of π.
func parseTerm(t string) (float64, error) {
	coef, pi := t, false
	for _, name := range []string{"pi", "π"} {
		if c, ok := strings.CutSuffix(t, name); ok {
			coef, pi = strings.TrimSpace(c), true
			break
		}
	}
	if !pi {
		if t == "" {
			return 0, errors.New("no number before /")
		}
		return parseDecimal(t, "the number")
	}
	if c, ok := strings.CutSuffix(coef, "*"); ok {
		if coef = strings.TrimSpace(c); coef == "" || coef == "+" || coef == "-" {
			return 0, errors.New("nothing before *")
		}
	}
	x := 1.0
	switch coef {
	case "", "+":
	case "-":
		x = -1
	default:
		var err error
		if x, err = parseDecimal(coef, "the coefficient of π"); err != nil {
			return 0, err
		}
	}
	return x * math.Pi, nil
}

// parseDecimal reads a finite decimal; what names it in an error.
func parseDecimal(s, what string) (float64, error) {
	// Hexadecimal and digits split by "_", which strconv also reads, are not what a user
	// means by a number: "1_0" would be 10.
	if strings.ContainsAny(s, "_xX") {
		return 0, strconv.ErrSyntax
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, strconv.ErrSyntax
	}
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("%s is %w", what, ErrNotFinite)
	}
	return x, nil
}
