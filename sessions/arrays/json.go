package arrays

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/ssmlab/ssmlab/internal/strictjson"
)

// decodeJSONArray reads a Packed object, nested arrays of numbers or a bare number.
func decodeJSONArray(data []byte) (*Array, error) {
	d := strictjson.NewDecoder(data)
	a, err := DecodeJSON(d)
	if err != nil {
		return nil, err
	}
	if err := d.End(); err != nil {
		return nil, jsonInvalid(err)
	}
	return a, nil
}

// DecodeJSON reads the next value of d as an array — a Packed object, nested arrays of
// numbers or a bare number — straight into its numbers, without a tree of the text (a target
// file's kernels). Its errors wrap ErrInvalid.
func DecodeJSON(d *strictjson.Decoder) (*Array, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, jsonInvalid(err)
	}
	var a *Array
	switch tok {
	case json.Delim('{'):
		a, err = decodePackedObject(d)
	case json.Delim('['):
		a, err = decodeNested(d)
	default:
		if _, ok := tok.(json.Number); !ok {
			return nil, invalidf("an array is %s, want nested arrays of numbers or a packed object", strictjson.Describe(tok))
		}
		var x float64
		if x, err = strictjson.Float(tok); err != nil {
			return nil, invalidf("the array %v", err)
		}
		a, err = New(nil, []float64{x})
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// jsonInvalid turns an error of the JSON reader (internal/strictjson) into an ErrInvalid;
// this package's own errors pass unchanged.
func jsonInvalid(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupported) {
		return err
	}
	return invalidf("%v", err)
}

// decodePackedObject reads the members of a Packed object after its '{'.
func decodePackedObject(d *strictjson.Decoder) (*Array, error) {
	var p Packed
	seen := map[string]bool{}
	err := d.Members(func(key string) error {
		seen[key] = true
		switch key {
		case "dtype", "data":
			tok, err := d.Token()
			if err != nil {
				return jsonInvalid(err)
			}
			s, ok := tok.(string)
			if !ok {
				return invalidf("packed array %q is %s, want a string", key, strictjson.Describe(tok))
			}
			if key == "dtype" {
				p.DType = s
			} else {
				p.Data = s
			}
			return nil
		case "shape":
			var err error
			p.Shape, err = decodeShape(d)
			return err
		}
		return invalidf("packed array has the unknown key %q (want dtype, shape and data)", key)
	})
	if err != nil {
		return nil, jsonInvalid(err)
	}
	for _, k := range []string{"dtype", "shape", "data"} {
		if !seen[k] {
			return nil, invalidf("packed array lacks the key %q", k)
		}
	}
	return p.Unpack()
}

// decodeShape reads a packed array's shape: at most MaxDims integers (Unpack checks their
// signs and product).
func decodeShape(d *strictjson.Decoder) ([]int, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, jsonInvalid(err)
	}
	if tok != json.Delim('[') {
		return nil, invalidf("packed array \"shape\" is %s, want an array of integers", strictjson.Describe(tok))
	}
	shape := []int{}
	err = d.Elements(func(i int) error {
		if i == MaxDims {
			return invalidf("packed array \"shape\" has more than %d dimensions", MaxDims)
		}
		tok, err := d.Token()
		if err != nil {
			return jsonInvalid(err)
		}
		n, ok := tok.(json.Number)
		x, err := strconv.Atoi(string(n))
		if !ok || err != nil {
			return invalidf("packed array \"shape\" holds %s, want integers", strictjson.Describe(tok))
		}
		shape = append(shape, x)
		return nil
	})
	return shape, jsonInvalid(err)
}

// decodeNested reads nested arrays of numbers after the first '[': all arrays at one depth
// must have the same length, and numbers appear only at the deepest level.
func decodeNested(d *strictjson.Decoder) (*Array, error) {
	var (
		shape = []int{-1} // -1: length not yet known
		depth = 1         // number of open arrays
		count = []int{0}  // entries read in each open array
		leaf  = -1        // depth of the numbers, once known
		data  []float64
		// Full chunks of data: joined at the end, so that growing never copies (appending
		// to one slice held up to three times the numbers while it grew).
		chunks [][]float64
		total  int
	)
	for depth > 0 {
		if !d.More() {
			if _, err := d.Token(); err != nil { // ']'
				return nil, jsonInvalid(err)
			}
			i := depth - 1
			if shape[i] == -1 {
				shape[i] = count[i]
			} else if shape[i] != count[i] {
				return nil, invalidf("nested arrays are ragged: an array at depth %d has %d entries, an earlier one %d", i+1, count[i], shape[i])
			}
			depth--
			count = count[:depth]
			if depth > 0 {
				count[depth-1]++
			}
			continue
		}
		tok, err := d.Token()
		if err != nil {
			return nil, jsonInvalid(err)
		}
		switch t := tok.(type) {
		case json.Delim:
			if t != '[' {
				return nil, invalidf("nested arrays hold %s, want numbers or arrays", strictjson.Describe(tok))
			}
			if leaf != -1 && depth >= leaf {
				return nil, invalidf("nested arrays mix numbers and arrays")
			}
			if depth == MaxDims {
				return nil, invalidf("more than %d nested arrays", MaxDims)
			}
			if depth == len(shape) {
				shape = append(shape, -1)
			}
			depth++
			count = append(count, 0)
		case json.Number:
			if leaf == -1 {
				if depth < len(shape) {
					return nil, invalidf("nested arrays mix numbers and arrays")
				}
				leaf = depth
			} else if depth != leaf {
				return nil, invalidf("nested arrays mix numbers and arrays")
			}
			x, err := strictjson.Float(t)
			if err != nil {
				return nil, invalidf("nested arrays: number %d %v", total, err)
			}
			if total == MaxElements {
				return nil, invalidf("nested arrays hold more than %d numbers", MaxElements)
			}
			if len(data) == cap(data) && len(data) > 0 {
				chunks = append(chunks, data)
				data = make([]float64, 0, min(2*len(data), 1<<20))
			}
			data = append(data, x)
			total++
			count[depth-1]++
		default:
			return nil, invalidf("nested arrays hold %s, want numbers", strictjson.Describe(tok))
		}
	}
	// An empty array nested in arrays leaves the deeper lengths unknown: [] is (0,), [[]] is
	// (1, 0).
	for i, n := range shape {
		if n == -1 {
			shape = shape[:i]
			break
		}
	}
	if chunks != nil {
		all := make([]float64, 0, total)
		for _, c := range chunks {
			all = append(all, c...)
		}
		data = append(all, data...)
	}
	if data == nil {
		data = []float64{}
	}
	return New(shape, data)
}
