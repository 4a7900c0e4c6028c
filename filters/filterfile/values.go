package filterfile

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/strictjson"
)

// The decoders of the values of a filter file. Each reads one value with its own Decoder (a
// member of an object read whole), names it in errors as what, and checks lengths as it reads,
// so that a short file cannot make it allocate for a large filter.

// next returns the next token, as an ErrInvalid.
func next(d *strictjson.Decoder) (json.Token, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, asInvalid(err)
	}
	return tok, nil
}

func decodeString(what string, d *strictjson.Decoder) (string, error) {
	tok, err := next(d)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", invalidf("%s is %s, want a string", what, strictjson.Describe(tok))
	}
	return s, nil
}

func decodeBool(what string, d *strictjson.Decoder) (bool, error) {
	tok, err := next(d)
	if err != nil {
		return false, err
	}
	b, ok := tok.(bool)
	if !ok {
		return false, invalidf("%s is %s, want true or false", what, strictjson.Describe(tok))
	}
	return b, nil
}

func decodeNumber(what string, d *strictjson.Decoder) (float64, error) {
	tok, err := next(d)
	if err != nil {
		return 0, err
	}
	x, err := strictjson.Float(tok)
	if err != nil {
		return 0, invalidf("%s %v", what, err)
	}
	return x, nil
}

// openArray reads the '[' a value must start with.
func openArray(d *strictjson.Decoder, what, want string) error {
	tok, err := next(d)
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		return invalidf("%s is %s, want %s", what, strictjson.Describe(tok), want)
	}
	return nil
}

// readNumbers appends to v the numbers of the array whose '[' has been read, at most limit of
// them, and reads its ']'.
func readNumbers(d *strictjson.Decoder, v []float64, limit int, what func() string) ([]float64, error) {
	err := d.Elements(func(i int) error {
		if i == limit {
			return invalidf("%s has more than %d entries", what(), limit)
		}
		tok, err := next(d)
		if err != nil {
			return err
		}
		x, err := strictjson.Float(tok)
		if err != nil {
			return invalidf("%s entry %d %v", what(), i, err)
		}
		v = append(v, x)
		return nil
	})
	return v, asInvalid(err)
}

func decodeVector(what string, d *strictjson.Decoder) ([]float64, error) {
	if err := openArray(d, what, "an array of numbers"); err != nil {
		return nil, err
	}
	// Longer vectors cannot be valid; the limit keeps a huge one from costing memory first.
	return readNumbers(d, []float64{}, filters.MaxOrder, func() string { return what })
}

// decodeMatrix reads a square matrix given by rows into one row-major slice, and its size;
// it checks the shape before any n×n allocation.
func decodeMatrix(key string, d *strictjson.Decoder) ([]float64, int, error) {
	what := strconv.Quote(key)
	if err := openArray(d, what, "an array of rows"); err != nil {
		return nil, 0, err
	}
	var (
		flat []float64
		lens []int // of the rows
	)
	err := d.Elements(func(i int) error {
		if i == filters.MaxOrder {
			return invalidf("%s has more than %d rows: order exceeds MaxOrder", what, filters.MaxOrder)
		}
		rowWhat := func() string { return fmt.Sprintf("%s row %d", what, i) }
		if err := openArray(d, rowWhat(), "an array of numbers"); err != nil {
			return err
		}
		start := len(flat)
		var err error
		flat, err = readNumbers(d, flat, filters.MaxOrder, rowWhat)
		lens = append(lens, len(flat)-start)
		return err
	})
	if err != nil {
		return nil, 0, asInvalid(err)
	}
	n := len(lens)
	for i, l := range lens {
		if l != n {
			return nil, 0, invalidf("%s row %d has %s, want %d (%s is %d×%d: it must be square)", what, i, entries(l), n, key, n, n)
		}
	}
	if flat == nil {
		flat = []float64{}
	}
	return flat, n, nil
}

func decodeComplexes(what string, d *strictjson.Decoder) ([]complex128, error) {
	if err := openArray(d, what, "an array of [re, im] pairs"); err != nil {
		return nil, err
	}
	v := []complex128{}
	err := d.Elements(func(i int) error {
		if i == filters.MaxOrder {
			return invalidf("%s has more than %d entries", what, filters.MaxOrder)
		}
		tok, err := next(d)
		if err != nil {
			return err
		}
		if tok != json.Delim('[') {
			return invalidf("%s entry %d is %s, want a complex number as a [re, im] pair", what, i, strictjson.Describe(tok))
		}
		var pair [2]float64
		k := 0
		err = d.Elements(func(part int) error {
			k++
			tok, err := next(d)
			if err != nil {
				return err
			}
			x, err := strictjson.Float(tok)
			if err != nil {
				return invalidf("%s entry %d part %d %v", what, i, part, err)
			}
			if part >= 2 {
				return invalidf("%s entry %d has more than 2 entries, want a [re, im] pair", what, i)
			}
			pair[part] = x
			return nil
		})
		if err != nil {
			return err
		}
		if k != 2 {
			return invalidf("%s entry %d has %s, want a [re, im] pair", what, i, entries(k))
		}
		v = append(v, complex(pair[0], pair[1]))
		return nil
	})
	return v, asInvalid(err)
}

// decodeBlocks reads rotation blocks {"radius": ρ, "angle": θ} as (ρ, θ) pairs.
func decodeBlocks(what string, d *strictjson.Decoder) ([]float64, error) {
	if err := openArray(d, what, `an array of {"radius": ρ, "angle": θ} objects`); err != nil {
		return nil, err
	}
	v := []float64{}
	err := d.Elements(func(i int) error {
		if i == filters.MaxOrder/2 {
			return invalidf("%s has more than %d entries: order exceeds MaxOrder", what, filters.MaxOrder/2)
		}
		if err := openObject(d, fmt.Sprintf(`%s entry %d is %%s, want an object {"radius": ρ, "angle": θ}`, what, i)); err != nil {
			return err
		}
		o, err := d.Object()
		if err != nil {
			return within(fmt.Sprintf("%s entry %d", what, i), err)
		}
		for _, k := range o.Keys {
			if k != "radius" && k != "angle" {
				return invalidf(`%s entry %d has unknown key %q (want "radius" and "angle")`, what, i, k)
			}
		}
		for _, k := range []string{"radius", "angle"} {
			kd, ok := o.Get(k)
			if !ok {
				return within(fmt.Sprintf("%s entry %d", what, i), invalidf("missing key %q", k))
			}
			x, err := decodeNumber(strconv.Quote(k), kd)
			if err != nil {
				return within(fmt.Sprintf("%s entry %d", what, i), err)
			}
			v = append(v, x)
		}
		return nil
	})
	return v, asInvalid(err)
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}
