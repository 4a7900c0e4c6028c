// Package filterfile reads and writes ssmlab's filter files (docs/formats.md): one filter, or
// a bank of channels, as JSON. It works on streams and bytes; opening files and "-" for
// standard input are the front ends' business (internal/userfile).
//
// Reading is strict, so that a typo or a lossy exporter fails loudly instead of producing a
// different filter: every key must be known and appear once, every number must be finite and
// every shape right. The keys of each form are its filters.Fields, and the values are checked
// by the same constructors (filters.NewDense, …, filters.NewBank) as filters built in code.
// A continuous-time filter is discretised and an S4-convention filter mapped to the control
// convention as it is read, so a Document always holds discrete-time filters in the control
// convention. Writing gives the discrete-time control-convention text, which reads back to
// identical numbers.
package filterfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/strictjson"
	"github.com/ssmlab/ssmlab/internal/userfile"
)

// commonKeys are the keys every filter may have besides its form's fields.
var commonKeys = []string{"form", "name", "continuous", "dt", "discretization", "alpha", "convention"}

// Read decodes the filter file read from r, at most userfile.MaxSize bytes. Errors wrap
// filters.ErrInvalid and name the offending key; the caller prefixes the file's name.
func Read(r io.Reader) (filters.Document, error) {
	data, err := userfile.ReadAll(r)
	if err != nil {
		return filters.Document{}, asInvalid(err)
	}
	return Unmarshal(data)
}

// Unmarshal decodes the content of a filter file; see Read.
func Unmarshal(data []byte) (filters.Document, error) {
	if len(data) > userfile.MaxSize {
		return filters.Document{}, asInvalid(&userfile.TooLargeError{Limit: userfile.MaxSize})
	}
	if len(bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\ufeff")))) == 0 {
		return filters.Document{}, invalidf("empty input: want a JSON object")
	}
	d := strictjson.NewDecoder(data)
	if err := openObject(d, "a filter file holds one JSON object, not %s"); err != nil {
		return filters.Document{}, err
	}
	o, err := d.Object()
	if err != nil {
		return filters.Document{}, asInvalid(err)
	}
	if err := d.End(); err != nil {
		return filters.Document{}, asInvalid(err)
	}
	if o.Has("channels") {
		return decodeBank(o)
	}
	name, f, err := decodeFilter(o, true)
	if err != nil {
		return filters.Document{}, err
	}
	return filters.Document{Name: name, Filter: f}, nil
}

// openObject reads the '{' of an object; notObject words the error for any other value.
func openObject(d *strictjson.Decoder, notObject string) error {
	tok, err := d.Token()
	if err != nil {
		return asInvalid(err)
	}
	if tok != json.Delim('{') {
		return invalidf(notObject, strictjson.Describe(tok))
	}
	return nil
}

func decodeBank(o *strictjson.Object) (filters.Document, error) {
	for _, k := range o.Keys {
		if k != "name" && k != "channels" {
			return filters.Document{}, invalidf("unknown key %q in a bank (a bank has only \"name\" and \"channels\"; each channel carries its own \"form\")", k)
		}
	}
	var doc filters.Document
	if v, ok := o.Get("name"); ok {
		s, err := decodeString(`"name"`, v)
		if err != nil {
			return filters.Document{}, err
		}
		doc.Name = s
	}
	d, _ := o.Get("channels")
	if err := openArray(d, `"channels"`, "an array of filters"); err != nil {
		return filters.Document{}, err
	}
	var channels []filters.Filter
	err := d.Elements(func(i int) error {
		if i == filters.MaxChannels {
			return invalidf("more than %d channels", filters.MaxChannels)
		}
		if err := openObject(d, fmt.Sprintf("channel %d is %%s, want a filter object", i)); err != nil {
			return err
		}
		co, err := d.Object()
		if err != nil {
			return within(fmt.Sprintf("channel %d", i), err)
		}
		_, f, err := decodeFilter(co, false)
		if err != nil {
			return fmt.Errorf("channel %d: %w", i, err)
		}
		channels = append(channels, f)
		return nil
	})
	if err != nil {
		return filters.Document{}, asInvalid(err)
	}
	b, err := filters.NewBank(channels)
	if err != nil {
		return filters.Document{}, asInvalid(err)
	}
	doc.Bank = b
	return doc, nil
}

// decodeFilter builds the filter an object describes; top says whether it is the whole
// document (rather than a channel of a bank), only for the message when "form" is missing.
func decodeFilter(o *strictjson.Object, top bool) (string, filters.Filter, error) {
	v, ok := o.Get("form")
	if !ok {
		if top {
			return "", nil, invalidf(`missing key "form" (or "channels" for a bank)`)
		}
		return "", nil, invalidf(`missing key "form"`)
	}
	s, err := decodeString(`"form"`, v)
	if err != nil {
		return "", nil, err
	}
	form, err := filters.ParseForm(s)
	if err != nil {
		return "", nil, err
	}
	empty := filters.Empty(form)
	schema := empty.Fields()
	for _, k := range o.Keys {
		if filters.FieldIndex(schema, k) < 0 && !contains(commonKeys, k) {
			return "", nil, invalidf("unknown key %q in a %s filter (its keys are %s and the common keys %s)",
				k, form, strings.Join(names(schema), ", "), strings.Join(commonKeys, ", "))
		}
	}
	var name string
	if v, ok := o.Get("name"); ok {
		if name, err = decodeString(`"name"`, v); err != nil {
			return "", nil, err
		}
	}
	fields, err := decodeFields(o, form, schema)
	if err != nil {
		return "", nil, err
	}
	f, err := empty.WithFields(fields)
	if err != nil {
		return "", nil, asInvalid(err)
	}
	if f, err = applyTime(o, f); err != nil {
		return "", nil, asInvalid(err)
	}
	if v, ok := o.Get("convention"); ok {
		conv, err := decodeString(`"convention"`, v)
		if err != nil {
			return "", nil, err
		}
		switch conv {
		case "control":
		case "s4":
			if f, err = filters.FromS4(f); err != nil {
				return "", nil, asInvalid(err)
			}
		default:
			return "", nil, invalidf(`unknown convention %q (want "control" or "s4")`, conv)
		}
	}
	return name, f, nil
}

// decodeFields reads the form's fields present in o, in the order of the schema, and checks
// that an array field is there unless the filter has order 0 (every array read is empty).
func decodeFields(o *strictjson.Object, form filters.Form, schema []filters.Field) ([]filters.Field, error) {
	var (
		fields  []filters.Field
		entries int
	)
	for _, s := range schema {
		v, ok := o.Get(s.Name)
		if !ok {
			if s.Shape == nil && !s.Optional {
				return nil, invalidf("missing key %q", s.Name)
			}
			continue
		}
		fd, err := decodeField(v, s)
		if err != nil {
			return nil, err
		}
		if fd.Shape != nil {
			entries += fd.Len()
		}
		fields = append(fields, fd)
	}
	if entries == 0 {
		return fields, nil
	}
	var arrays []string
	for _, s := range schema {
		if s.Shape != nil {
			arrays = append(arrays, s.Name)
		}
	}
	for _, k := range arrays {
		if !o.Has(k) {
			return nil, invalidf("missing key %q (a %s filter of nonzero order needs %s)", k, form, strings.Join(arrays, ", "))
		}
	}
	return fields, nil
}

// decodeField reads one field shaped as s.
func decodeField(v *strictjson.Decoder, s filters.Field) (filters.Field, error) {
	what := strconv.Quote(s.Name)
	fd := filters.Field{Name: s.Name, Kind: s.Kind}
	var err error
	switch {
	case s.Kind == filters.FlagField:
		var b bool
		if b, err = decodeBool(what, v); b {
			fd.Real = []float64{1}
		}
	case s.Kind == filters.PolarField:
		fd.Real, err = decodeBlocks(what, v)
		fd.Shape = []int{len(fd.Real) / 2, 2}
	case s.Kind == filters.ComplexField:
		fd.Complex, err = decodeComplexes(what, v)
		fd.Shape = []int{len(fd.Complex)}
	case len(s.Shape) == 2:
		var n int
		fd.Real, n, err = decodeMatrix(s.Name, v)
		fd.Shape = []int{n, n}
	case len(s.Shape) == 1:
		fd.Real, err = decodeVector(what, v)
		fd.Shape = []int{len(fd.Real)}
	default:
		var x float64
		x, err = decodeNumber(what, v)
		fd.Real = []float64{x}
	}
	return fd, err
}

// applyTime discretises a continuous-time filter.
func applyTime(o *strictjson.Object, f filters.Filter) (filters.Filter, error) {
	continuous := false
	if v, ok := o.Get("continuous"); ok {
		var err error
		if continuous, err = decodeBool(`"continuous"`, v); err != nil {
			return nil, err
		}
	}
	if !continuous {
		for _, k := range []string{"dt", "discretization", "alpha"} {
			if o.Has(k) {
				return nil, invalidf(`key %q needs "continuous": true`, k)
			}
		}
		return f, nil
	}
	for _, k := range []string{"dt", "discretization"} {
		if !o.Has(k) {
			return nil, invalidf(`missing key %q of a continuous-time filter`, k)
		}
	}
	v, _ := o.Get("dt")
	dt, err := decodeNumber(`"dt"`, v)
	if err != nil {
		return nil, err
	}
	v, _ = o.Get("discretization")
	method, err := decodeString(`"discretization"`, v)
	if err != nil {
		return nil, err
	}
	c := &filters.Continuous{System: f, Dt: dt, Method: filters.Discretization(method)}
	switch {
	case c.Method == filters.GBT && !o.Has("alpha"):
		return nil, invalidf(`missing key "alpha" of the gbt discretization`)
	case c.Method != filters.GBT && o.Has("alpha"):
		return nil, invalidf(`key "alpha" applies only to "discretization": "gbt"`)
	}
	if v, ok := o.Get("alpha"); ok {
		if c.Alpha, err = decodeNumber(`"alpha"`, v); err != nil {
			return nil, err
		}
	}
	return c.Discretize()
}

func names(fields []filters.Field) []string {
	out := make([]string, len(fields))
	for i, fd := range fields {
		out[i] = fd.Name
	}
	return out
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{filters.ErrInvalid}, args...)...)
}

func asInvalid(err error) error {
	if err == nil || errors.Is(err, filters.ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %w", filters.ErrInvalid, err)
}

// within prefixes err with where it happened, keeping ErrInvalid first after the prefix.
func within(where string, err error) error {
	return fmt.Errorf("%s: %w", where, asInvalid(err))
}
