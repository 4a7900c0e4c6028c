package arrays

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// decodeJSONArray reads a Packed object, nested arrays of numbers or a bare number.
func decodeJSONArray(data []byte) (*Array, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntax(err)
	}
	var a *Array
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			a, err = decodePackedObject(dec)
		case '[':
			a, err = decodeNested(dec)
		default:
			err = invalidf("an array is %q, want nested arrays of numbers or a packed object", string(t))
		}
	case json.Number:
		var x float64
		if x, err = parseNumber(t); err == nil {
			a, err = New(nil, []float64{x})
		}
	default:
		err = invalidf("an array is %s, want nested arrays of numbers or a packed object", describeToken(tok))
	}
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidf("unexpected data after the array")
	}
	return a, nil
}

// decodePackedObject reads the members of a Packed object after its '{'.
func decodePackedObject(dec *json.Decoder) (*Array, error) {
	var p Packed
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonSyntax(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, invalidf("packed array has the key %q twice", key)
		}
		seen[key] = true
		var dst any
		switch key {
		case "dtype":
			dst = &p.DType
		case "shape":
			dst = &p.Shape
		case "data":
			dst = &p.Data
		default:
			return nil, invalidf("packed array has the unknown key %q (want dtype, shape and data)", key)
		}
		if err := dec.Decode(dst); err != nil {
			return nil, invalidf("packed array %q: %v", key, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonSyntax(err)
	}
	for _, k := range []string{"dtype", "shape", "data"} {
		if !seen[k] {
			return nil, invalidf("packed array lacks the key %q", k)
		}
	}
	return p.Unpack()
}

// decodeNested reads nested arrays of numbers after the first '[': all arrays at one depth
// must have the same length, and numbers appear only at the deepest level.
func decodeNested(dec *json.Decoder) (*Array, error) {
	var (
		shape = []int{-1} // -1: length not yet known
		depth = 1         // number of open arrays
		count = []int{0}  // entries read in each open array
		leaf  = -1        // depth of the numbers, once known
		data  []float64
	)
	for depth > 0 {
		if !dec.More() {
			if _, err := dec.Token(); err != nil { // ']'
				return nil, jsonSyntax(err)
			}
			d := depth - 1
			if shape[d] == -1 {
				shape[d] = count[d]
			} else if shape[d] != count[d] {
				return nil, invalidf("nested arrays are ragged: an array at depth %d has %d entries, an earlier one %d", d+1, count[d], shape[d])
			}
			depth--
			count = count[:depth]
			if depth > 0 {
				count[depth-1]++
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonSyntax(err)
		}
		switch t := tok.(type) {
		case json.Delim:
			if t != '[' {
				return nil, invalidf("nested arrays hold %s, want numbers or arrays", describeToken(tok))
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
			x, err := parseNumber(t)
			if err != nil {
				return nil, err
			}
			if len(data) == MaxElements {
				return nil, invalidf("nested arrays hold more than %d numbers", MaxElements)
			}
			data = append(data, x)
			count[depth-1]++
		default:
			return nil, invalidf("nested arrays hold %s, want numbers", describeToken(tok))
		}
	}
	// An empty array nested in arrays leaves the deeper lengths unknown: [] is (0,), [[]] is
	// (1, 0).
	for i, d := range shape {
		if d == -1 {
			shape = shape[:i]
			break
		}
	}
	if data == nil {
		data = []float64{}
	}
	return New(shape, data)
}

func parseNumber(n json.Number) (float64, error) {
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, invalidf("the number %.40s is outside the range of float64", n)
	}
	return x, nil
}

func jsonSyntax(err error) error {
	if errors.Is(err, ErrInvalid) {
		return err
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalidf("bad JSON: unexpected end of input")
	}
	return invalidf("bad JSON: %v", err)
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		return "an array"
	case string:
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		return strconv.Quote(t)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	return "a value"
}
