package filters

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"

	"gonum.org/v1/gonum/mat"
)

// The filter file format is described in docs/formats.md. Decoding is strict: every key must
// be known, every number finite, every shape right, so that a typo or a lossy exporter fails
// loudly instead of producing a different filter. The values are checked by the same
// constructors (NewDense, …, NewBank) as filters built in code.

// Document is the content of one filter file: a single filter or a bank.
type Document struct {
	Name   string // optional "name"
	Filter Filter // set for a single filter (Bank nil)
	Bank   *Bank  // set for a bank (Filter nil)
}

// Unmarshal decodes a filter file. A continuous-time filter is discretised and an S4-convention
// filter is mapped to the control convention, so the Document always holds discrete-time
// filters in the control convention. Errors wrap ErrInvalid and name the offending key.
func Unmarshal(data []byte) (Document, error) {
	doc, err := unmarshal(data)
	if err != nil {
		return Document{}, fmt.Errorf("filters: %w", err)
	}
	return doc, nil
}

// Marshal encodes doc as two-space indented JSON with a trailing newline, in the discrete-time
// control-convention form (which Unmarshal reads back to identical numbers). Vectors and matrix
// rows are written on one line each. A document whose text would exceed userfile.MaxSize is an
// error, since it could not be read back.
func Marshal(doc Document) ([]byte, error) {
	b, err := marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	return b, nil
}

// ReadFile reads and decodes the filter file at path; "-" reads standard input. Errors are
// prefixed with the path ("stdin" for "-").
func ReadFile(path string) (Document, error) {
	var (
		data []byte
		err  error
	)
	name := path
	if path == "-" {
		name = "stdin"
		if data, err = userfile.ReadAll(os.Stdin); err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
	} else {
		data, err = userfile.ReadFile(path)
	}
	if err != nil {
		return Document{}, err
	}
	doc, err := unmarshal(data)
	if err != nil {
		return Document{}, fmt.Errorf("%s: %w", name, err)
	}
	return doc, nil
}

// WriteFile encodes doc and writes it to path atomically: a temporary file in the same
// directory is written, synced and renamed over path, so readers never see a partial file.
// An existing file keeps its permissions; a new one gets 0666 less the umask. "-" writes to
// standard output. Errors are prefixed with the path.
func WriteFile(path string, doc Document) error {
	data, err := marshal(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if path == "-" {
		if _, err := os.Stdout.Write(data); err != nil {
			return fmt.Errorf("stdout: %w", userfile.PathErr(err))
		}
		return nil
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

// maxSize is userfile.MaxSize, lowered by tests of the writer's limit.
var maxSize = userfile.MaxSize

// Keys of the format.
var (
	// stateKeys are the array keys of each form: all are required unless the filter has order 0.
	stateKeys = map[Form][]string{
		FormDense:     {"A", "B", "C"},
		FormDiagonal:  {"poles", "residues"},
		FormCompanion: {"a", "b"},
		FormTF:        {"a", "b"},
		FormZPK:       {"zeros", "poles"},
		FormRotation:  {"P", "blocks", "real", "B", "C"},
	}
	formKeys = map[Form][]string{
		FormDense:     {"A", "B", "C", "D"},
		FormDiagonal:  {"poles", "residues", "h0"},
		FormCompanion: {"a", "b", "h0", "observable"},
		FormTF:        {"a", "b", "h0"},
		FormZPK:       {"zeros", "poles", "gain", "h0"},
		FormRotation:  {"P", "blocks", "real", "B", "C", "D"},
	}
	commonKeys = []string{"form", "name", "continuous", "dt", "discretization", "alpha", "convention"}
)

// object is a JSON object's members in document order.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func (o *object) has(key string) bool {
	_, ok := o.vals[key]
	return ok
}

func unmarshal(data []byte) (Document, error) {
	if len(data) > userfile.MaxSize {
		return Document{}, asInvalid(&userfile.TooLargeError{Limit: userfile.MaxSize})
	}
	// RFC 8259 lets a parser ignore a byte order mark; some Windows editors write one.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	dec := newDecoder(data)
	tok, err := dec.Token()
	if err == io.EOF {
		return Document{}, invalidf("empty input: want a JSON object")
	}
	if err != nil {
		return Document{}, jsonErr(data, err)
	}
	if tok != json.Delim('{') {
		return Document{}, invalidf("a filter file holds one JSON object, not %s", describe(tok))
	}
	o, err := readObject(dec)
	if err != nil {
		return Document{}, jsonErr(data, err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return Document{}, jsonErr(data, err)
		}
		return Document{}, invalidf("unexpected data (%s) after the JSON object", describe(tok))
	}
	if o.has("channels") {
		return decodeBank(o)
	}
	name, f, err := decodeFilter(o, true)
	if err != nil {
		return Document{}, err
	}
	return Document{Name: name, Filter: f}, nil
}

func newDecoder(data []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec
}

// readObject reads the members of the object whose '{' dec has just returned. Duplicate keys
// are an error: encoding/json would silently keep the last one.
func readObject(dec *json.Decoder) (*object, error) {
	o := &object{vals: make(map[string]json.RawMessage)}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, invalidf("object key is %s", describe(tok))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[key]; dup {
			return nil, invalidf("duplicate key %q", key)
		}
		o.keys = append(o.keys, key)
		o.vals[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, err
	}
	return o, nil
}

// jsonErr turns a decoder error into one line with a position.
func jsonErr(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, ErrInvalid):
		return err
	case errors.As(err, &se):
		// Decoder.Token and the scanner count offsets differently; json.Unmarshal reports
		// the scanner's offset, just after the offending byte, for any syntax error.
		var raw json.RawMessage
		if data != nil {
			if e := json.Unmarshal(data, &raw); e != nil {
				errors.As(e, &se)
			}
		}
		line, col := position(data, se.Offset)
		return invalidf("bad JSON at line %d, column %d: %v", line, col, se)
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return invalidf("bad JSON: unexpected end of input")
	}
	return invalidf("bad JSON: %v", err)
}

// position returns the 1-based line and column (in characters) of the byte before offset.
func position(data []byte, offset int64) (line, col int) {
	off := int(min(max(offset-1, 0), int64(len(data))))
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:off], '\n')+1:off])
	return line, col
}

func decodeBank(o *object) (Document, error) {
	for _, k := range o.keys {
		if k != "name" && k != "channels" {
			return Document{}, invalidf("unknown key %q in a bank (a bank has only \"name\" and \"channels\"; each channel carries its own \"form\")", k)
		}
	}
	var doc Document
	if raw, ok := o.vals["name"]; ok {
		s, err := decodeString(`"name"`, raw)
		if err != nil {
			return Document{}, err
		}
		doc.Name = s
	}
	dec := newDecoder(o.vals["channels"])
	tok, err := dec.Token()
	if err != nil {
		return Document{}, jsonErr(nil, err)
	}
	if tok != json.Delim('[') {
		return Document{}, invalidf(`"channels" is %s, want an array of filters`, describe(tok))
	}
	var channels []Filter
	for i := 0; dec.More(); i++ {
		if i == MaxChannels {
			return Document{}, invalidf("more than %d channels", MaxChannels)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Document{}, jsonErr(nil, err)
		}
		cdec := newDecoder(raw)
		tok, err := cdec.Token()
		if err != nil {
			return Document{}, jsonErr(nil, err)
		}
		if tok != json.Delim('{') {
			return Document{}, invalidf("channel %d is %s, want a filter object", i, describe(tok))
		}
		co, err := readObject(cdec)
		if err != nil {
			return Document{}, fmt.Errorf("channel %d: %w", i, jsonErr(nil, err))
		}
		_, f, err := decodeFilter(co, false)
		if err != nil {
			return Document{}, fmt.Errorf("channel %d: %w", i, err)
		}
		channels = append(channels, f)
	}
	b, err := NewBank(channels)
	if err != nil {
		return Document{}, asInvalid(err)
	}
	doc.Bank = b
	return doc, nil
}

// decodeFilter builds the filter an object describes; top says whether it is the whole
// document (rather than a channel of a bank), only for the message when "form" is missing.
func decodeFilter(o *object, top bool) (string, Filter, error) {
	raw, ok := o.vals["form"]
	if !ok {
		if top {
			return "", nil, invalidf(`missing key "form" (or "channels" for a bank)`)
		}
		return "", nil, invalidf(`missing key "form"`)
	}
	s, err := decodeString(`"form"`, raw)
	if err != nil {
		return "", nil, err
	}
	form, err := ParseForm(s)
	if err != nil {
		return "", nil, err
	}
	for _, k := range o.keys {
		if !contains(formKeys[form], k) && !contains(commonKeys, k) {
			return "", nil, invalidf("unknown key %q in a %s filter (its keys are %s and the common keys %s)",
				k, form, strings.Join(formKeys[form], ", "), strings.Join(commonKeys, ", "))
		}
	}
	var name string
	if raw, ok := o.vals["name"]; ok {
		if name, err = decodeString(`"name"`, raw); err != nil {
			return "", nil, err
		}
	}
	f, err := decodeForm(o, form)
	if err != nil {
		return "", nil, err
	}
	if f, err = applyTime(o, f); err != nil {
		return "", nil, asInvalid(err)
	}
	if raw, ok := o.vals["convention"]; ok {
		conv, err := decodeString(`"convention"`, raw)
		if err != nil {
			return "", nil, err
		}
		switch conv {
		case "control":
		case "s4":
			if f, err = FromS4(f); err != nil {
				return "", nil, asInvalid(err)
			}
		default:
			return "", nil, invalidf(`unknown convention %q (want "control" or "s4")`, conv)
		}
	}
	return name, f, nil
}

// decodeForm reads the form's own keys and builds the filter through its constructor.
func decodeForm(o *object, form Form) (Filter, error) {
	d := fieldDecoder{o: o}
	var (
		f   Filter
		err error
	)
	switch form {
	case FormDense:
		a, b, c, dd := d.matrix("A"), d.vector("B"), d.vector("C"), d.scalar("D", false)
		if err = d.done(form, len(a)+len(b)+len(c)); err == nil {
			f, err = NewDense(a, b, c, dd)
		}
	case FormDiagonal:
		p, r, h0 := d.complexes("poles"), d.complexes("residues"), d.scalar("h0", false)
		if err = d.done(form, len(p)+len(r)); err == nil {
			f, err = NewDiagonal(p, r, h0)
		}
	case FormCompanion, FormTF:
		a, b, h0 := d.vector("a"), d.vector("b"), d.scalar("h0", false)
		obs := d.boolean("observable")
		if err = d.done(form, len(a)+len(b)); err != nil {
			break
		}
		if form == FormTF {
			f, err = NewTransferFunction(a, b, h0)
		} else {
			f, err = NewCompanion(a, b, h0, obs)
		}
	case FormZPK:
		z, p, k, h0 := d.complexes("zeros"), d.complexes("poles"), d.scalar("gain", true), d.scalar("h0", false)
		if err = d.done(form, len(z)+len(p)); err == nil {
			f, err = NewZPK(z, p, k, h0)
		}
	case FormRotation:
		p, blocks, reals := d.matrix("P"), d.blocks("blocks"), d.vector("real")
		b, c, dd := d.vector("B"), d.vector("C"), d.scalar("D", false)
		if err = d.done(form, len(p)+len(blocks)+len(reals)+len(b)+len(c)); err == nil {
			f, err = NewRotation(p, blocks, reals, b, c, dd)
		}
	}
	if err != nil {
		return nil, asInvalid(err)
	}
	return f, nil
}

// applyTime discretises a continuous-time filter.
func applyTime(o *object, f Filter) (Filter, error) {
	d := fieldDecoder{o: o}
	if !d.boolean("continuous") {
		if d.err != nil {
			return nil, d.err
		}
		for _, k := range []string{"dt", "discretization", "alpha"} {
			if o.has(k) {
				return nil, invalidf(`key %q needs "continuous": true`, k)
			}
		}
		return f, nil
	}
	for _, k := range []string{"dt", "discretization"} {
		if !o.has(k) {
			return nil, invalidf(`missing key %q of a continuous-time filter`, k)
		}
	}
	c := &Continuous{System: f, Dt: d.scalar("dt", true)}
	method := d.string("discretization")
	if d.err != nil {
		return nil, d.err
	}
	c.Method = Discretization(method)
	switch {
	case c.Method == GBT && !o.has("alpha"):
		return nil, invalidf(`missing key "alpha" of the gbt discretization`)
	case c.Method != GBT && o.has("alpha"):
		return nil, invalidf(`key "alpha" applies only to "discretization": "gbt"`)
	}
	c.Alpha = d.scalar("alpha", false)
	if d.err != nil {
		return nil, d.err
	}
	return c.Discretize()
}

func asInvalid(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// fieldDecoder decodes the members of an object, keeping the first error so that a form's
// keys read as one list of calls.
type fieldDecoder struct {
	o   *object
	err error
}

func (d *fieldDecoder) raw(key string) (json.RawMessage, bool) {
	if d.err != nil {
		return nil, false
	}
	raw, ok := d.o.vals[key]
	return raw, ok
}

func (d *fieldDecoder) scalar(key string, required bool) float64 {
	raw, ok := d.raw(key)
	if !ok {
		if required && d.err == nil {
			d.err = invalidf("missing key %q", key)
		}
		return 0
	}
	tok, err := firstToken(raw)
	if err != nil {
		d.err = err
		return 0
	}
	x, problem := toFloat(tok)
	if problem != "" {
		d.err = invalidf("%q %s", key, problem)
	}
	return x
}

func (d *fieldDecoder) boolean(key string) bool {
	raw, ok := d.raw(key)
	if !ok {
		return false
	}
	tok, err := firstToken(raw)
	if err != nil {
		d.err = err
		return false
	}
	v, ok := tok.(bool)
	if !ok {
		d.err = invalidf("%q is %s, want true or false", key, describe(tok))
	}
	return v
}

func (d *fieldDecoder) string(key string) string { return decodeField(d, key, decodeString) }

// decodeField decodes key with dec, recording the first error in d; a missing key gives the
// zero value.
func decodeField[T any](d *fieldDecoder, key string, dec func(what string, raw json.RawMessage) (T, error)) T {
	var zero T
	raw, ok := d.raw(key)
	if !ok {
		return zero
	}
	v, err := dec(strconv.Quote(key), raw)
	if err != nil {
		d.err = err
		return zero
	}
	return v
}

func (d *fieldDecoder) vector(key string) []float64 { return decodeField(d, key, decodeVector) }

func (d *fieldDecoder) complexes(key string) []complex128 {
	return decodeField(d, key, decodeComplexes)
}

func (d *fieldDecoder) blocks(key string) []RotationBlock { return decodeField(d, key, decodeBlocks) }

func (d *fieldDecoder) matrix(key string) [][]float64 {
	// decodeMatrix names rows itself and takes the bare key.
	return decodeField(d, key, func(_ string, raw json.RawMessage) ([][]float64, error) { return decodeMatrix(key, raw) })
}

// done returns the first error, or the first missing array key of a filter whose arrays hold
// entries (size > 0); an order-0 filter may leave its arrays out.
func (d *fieldDecoder) done(form Form, size int) error {
	if d.err != nil || size == 0 {
		return d.err
	}
	for _, k := range stateKeys[form] {
		if !d.o.has(k) {
			return invalidf("missing key %q (a %s filter of nonzero order needs %s)", k, form, strings.Join(stateKeys[form], ", "))
		}
	}
	return nil
}

// firstToken returns the first token of a value that readObject has already checked.
func firstToken(raw json.RawMessage) (json.Token, error) {
	tok, err := newDecoder(raw).Token()
	if err != nil {
		return nil, jsonErr(nil, err)
	}
	return tok, nil
}

// toFloat converts a token to a finite float64, or says what is wrong with it.
func toFloat(tok json.Token) (float64, string) {
	n, ok := tok.(json.Number)
	if !ok {
		if _, ok := tok.(string); ok {
			return 0, "is " + describe(tok) + ", want a number (numbers are unquoted, and NaN and infinities are not allowed)"
		}
		return 0, "is " + describe(tok) + ", want a number"
	}
	// The decoder has checked the syntax, so the only possible error is a range error; a
	// number too small for float64 becomes 0 (or the nearest subnormal) without one.
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, "is " + describe(tok) + ", outside the range of float64"
	}
	return x, ""
}

func decodeString(what string, raw json.RawMessage) (string, error) {
	tok, err := firstToken(raw)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", invalidf("%s is %s, want a string", what, describe(tok))
	}
	return s, nil
}

// openArray reads the '[' a value must start with.
func openArray(dec *json.Decoder, what, want string) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonErr(nil, err)
	}
	if tok != json.Delim('[') {
		return invalidf("%s is %s, want %s", what, describe(tok), want)
	}
	return nil
}

// readNumbers reads the numbers of an array after its '[' up to and including its ']'; at
// most limit of them.
func readNumbers(dec *json.Decoder, v []float64, limit int, what func() string) ([]float64, error) {
	for i := 0; dec.More(); i++ {
		if i == limit {
			return nil, invalidf("%s has more than %d entries", what(), limit)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonErr(nil, err)
		}
		x, problem := toFloat(tok)
		if problem != "" {
			return nil, invalidf("%s entry %d %s", what(), i, problem)
		}
		v = append(v, x)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(nil, err)
	}
	return v, nil
}

func decodeVector(what string, raw json.RawMessage) ([]float64, error) {
	dec := newDecoder(raw)
	if err := openArray(dec, what, "an array of numbers"); err != nil {
		return nil, err
	}
	// Longer vectors cannot be valid; the limit keeps a huge one from costing memory first.
	return readNumbers(dec, []float64{}, MaxOrder, func() string { return what })
}

// decodeMatrix reads a square matrix given by rows; it checks the shape before any n×n
// allocation, so that a short file cannot ask for a large matrix.
func decodeMatrix(key string, raw json.RawMessage) ([][]float64, error) {
	what := strconv.Quote(key)
	dec := newDecoder(raw)
	if err := openArray(dec, what, "an array of rows"); err != nil {
		return nil, err
	}
	rows := [][]float64{}
	for i := 0; dec.More(); i++ {
		if i == MaxOrder {
			return nil, invalidf("%s has more than %d rows: order exceeds MaxOrder", what, MaxOrder)
		}
		rowWhat := func() string { return fmt.Sprintf("%s row %d", what, i) }
		if err := openArray(dec, rowWhat(), "an array of numbers"); err != nil {
			return nil, err
		}
		var row []float64
		if i > 0 {
			row = make([]float64, 0, len(rows[0]))
		}
		row, err := readNumbers(dec, row, MaxOrder, rowWhat)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(nil, err)
	}
	for i, row := range rows {
		if len(row) != len(rows) {
			return nil, invalidf("%s row %d has %s, want %d (%s is %d×%d: it must be square)", what, i, entries(len(row)), len(rows), key, len(rows), len(rows))
		}
	}
	return rows, nil
}

func decodeComplexes(what string, raw json.RawMessage) ([]complex128, error) {
	dec := newDecoder(raw)
	if err := openArray(dec, what, "an array of [re, im] pairs"); err != nil {
		return nil, err
	}
	v := []complex128{}
	for i := 0; dec.More(); i++ {
		if i == MaxOrder {
			return nil, invalidf("%s has more than %d entries", what, MaxOrder)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonErr(nil, err)
		}
		if tok != json.Delim('[') {
			return nil, invalidf("%s entry %d is %s, want a complex number as a [re, im] pair", what, i, describe(tok))
		}
		var pair [2]float64
		k := 0
		for ; dec.More(); k++ {
			tok, err := dec.Token()
			if err != nil {
				return nil, jsonErr(nil, err)
			}
			x, problem := toFloat(tok)
			if problem != "" {
				return nil, invalidf("%s entry %d part %d %s", what, i, k, problem)
			}
			if k < 2 {
				pair[k] = x
			} else {
				return nil, invalidf("%s entry %d has more than 2 entries, want a [re, im] pair", what, i)
			}
		}
		if k != 2 {
			return nil, invalidf("%s entry %d has %s, want a [re, im] pair", what, i, entries(k))
		}
		if _, err := dec.Token(); err != nil {
			return nil, jsonErr(nil, err)
		}
		v = append(v, complex(pair[0], pair[1]))
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(nil, err)
	}
	return v, nil
}

func decodeBlocks(what string, raw json.RawMessage) ([]RotationBlock, error) {
	dec := newDecoder(raw)
	if err := openArray(dec, what, `an array of {"radius": ρ, "angle": θ} objects`); err != nil {
		return nil, err
	}
	v := []RotationBlock{}
	for i := 0; dec.More(); i++ {
		if i == MaxOrder/2 {
			return nil, invalidf("%s has more than %d entries: order exceeds MaxOrder", what, MaxOrder/2)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonErr(nil, err)
		}
		bdec := newDecoder(raw)
		tok, err := bdec.Token()
		if err != nil {
			return nil, jsonErr(nil, err)
		}
		if tok != json.Delim('{') {
			return nil, invalidf(`%s entry %d is %s, want an object {"radius": ρ, "angle": θ}`, what, i, describe(tok))
		}
		o, err := readObject(bdec)
		if err != nil {
			return nil, fmt.Errorf("%s entry %d: %w", what, i, jsonErr(nil, err))
		}
		for _, k := range o.keys {
			if k != "radius" && k != "angle" {
				return nil, invalidf(`%s entry %d has unknown key %q (want "radius" and "angle")`, what, i, k)
			}
		}
		d := fieldDecoder{o: o}
		b := RotationBlock{Radius: d.scalar("radius", true), Angle: d.scalar("angle", true)}
		if d.err != nil {
			return nil, fmt.Errorf("%s entry %d: %w", what, i, d.err)
		}
		v = append(v, b)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(nil, err)
	}
	return v, nil
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}

// describe names a token for an error message.
func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			return "an array"
		case '{':
			return "an object"
		}
		return fmt.Sprintf("%q", string(t))
	case string:
		if r := []rune(t); len(r) > 40 {
			t = string(r[:40]) + "…"
		}
		return fmt.Sprintf("the string %q", t)
	case json.Number:
		s := string(t)
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return "the number " + s
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

func marshal(doc Document) ([]byte, error) {
	var w writer
	switch {
	case doc.Filter != nil && doc.Bank != nil:
		return nil, invalidf("a Document holds a Filter or a Bank, not both")
	case doc.Filter != nil:
		if err := doc.Filter.Validate(); err != nil {
			return nil, err
		}
		if err := w.filter("", doc.Name, doc.Filter); err != nil {
			return nil, err
		}
	case doc.Bank != nil:
		if err := doc.Bank.Validate(); err != nil {
			return nil, err
		}
		o := w.open("")
		if doc.Name != "" {
			o.key("name")
			w.string(doc.Name)
		}
		o.key("channels")
		w.b = append(w.b, "[\n"...)
		for i, c := range doc.Bank.Channels {
			if i > 0 {
				w.b = append(w.b, ",\n"...)
			}
			w.b = append(w.b, "    "...)
			if err := w.filter("    ", "", c); err != nil {
				return nil, fmt.Errorf("channel %d: %w", i, err)
			}
		}
		w.b = append(w.b, "\n  ]"...)
		o.close()
	default:
		return nil, invalidf("empty Document: set its Filter or its Bank")
	}
	// Refuse to write what Unmarshal would refuse to read.
	if len(w.b)+1 > maxSize {
		return nil, invalidf("the encoded document has %d bytes, more than the %d MiB limit of a file", len(w.b)+1, maxSize>>20)
	}
	return append(w.b, '\n'), nil
}

// writer builds the indented JSON text. Objects put one member on each line; vectors, complex
// pairs and rotation blocks stay on one line, and a matrix puts one row on each line.
type writer struct {
	b []byte
}

// objectWriter writes the members of one object.
type objectWriter struct {
	w      *writer
	indent string // of the braces
	n      int
}

func (w *writer) open(indent string) *objectWriter {
	w.b = append(w.b, '{')
	return &objectWriter{w: w, indent: indent}
}

func (o *objectWriter) key(k string) {
	if o.n > 0 {
		o.w.b = append(o.w.b, ',')
	}
	o.n++
	o.w.b = append(o.w.b, '\n')
	o.w.b = append(o.w.b, o.indent...)
	o.w.b = append(o.w.b, `  "`...)
	o.w.b = append(o.w.b, k...)
	o.w.b = append(o.w.b, `": `...)
}

func (o *objectWriter) close() {
	o.w.b = append(o.w.b, '\n')
	o.w.b = append(o.w.b, o.indent...)
	o.w.b = append(o.w.b, '}')
}

func (w *writer) filter(indent, name string, f Filter) error {
	o := w.open(indent)
	if name != "" {
		o.key("name")
		w.string(name)
	}
	o.key("form")
	w.string(string(f.Form()))
	inner := indent + "  "
	switch f := f.(type) {
	case *Dense:
		o.key("A")
		w.matrix(inner, rowViews(f.A, f.Order()))
		o.key("B")
		w.vector(f.B)
		o.key("C")
		w.vector(f.C)
		o.key("D")
		w.number(f.D)
	case *Diagonal:
		o.key("poles")
		w.complexes(f.Poles)
		o.key("residues")
		w.complexes(f.Residues)
		o.key("h0")
		w.number(f.H0)
	case *Companion:
		o.key("a")
		w.vector(f.Den)
		o.key("b")
		w.vector(f.Num)
		o.key("h0")
		w.number(f.H0)
		if f.Observable {
			o.key("observable")
			w.b = append(w.b, "true"...)
		}
	case *TransferFunction:
		o.key("a")
		w.vector(f.Den)
		o.key("b")
		w.vector(f.Num)
		o.key("h0")
		w.number(f.H0)
	case *ZPK:
		o.key("zeros")
		w.complexes(f.Zeros)
		o.key("poles")
		w.complexes(f.Poles)
		o.key("gain")
		w.number(f.Gain)
		o.key("h0")
		w.number(f.H0)
	case *Rotation:
		o.key("P")
		w.matrix(inner, rowViews(f.P, f.Order()))
		o.key("blocks")
		w.blocks(inner, f.Blocks)
		o.key("real")
		w.vector(f.Real)
		o.key("B")
		w.vector(f.B)
		o.key("C")
		w.vector(f.C)
		o.key("D")
		w.number(f.D)
	default:
		return invalidf("no file format for %T (form %q)", f, f.Form())
	}
	o.close()
	return nil
}

// rowViews returns the n rows of m without copying them.
func rowViews(m *mat.Dense, n int) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = m.RawRowView(i)
	}
	return rows
}

func (w *writer) string(s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	w.b = append(w.b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// number writes x as encoding/json does: the shortest text that parses back to x.
func (w *writer) number(x float64) {
	abs := math.Abs(x)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, x, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7.
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

func (w *writer) vector(v []float64) {
	w.b = append(w.b, '[')
	for i, x := range v {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.number(x)
	}
	w.b = append(w.b, ']')
}

func (w *writer) complexes(v []complex128) {
	w.b = append(w.b, '[')
	for i, x := range v {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.b = append(w.b, '[')
		w.number(real(x))
		w.b = append(w.b, ", "...)
		w.number(imag(x))
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, ']')
}

func (w *writer) matrix(indent string, rows [][]float64) {
	if len(rows) == 0 {
		w.b = append(w.b, "[]"...)
		return
	}
	w.b = append(w.b, '[')
	for i, r := range rows {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, '\n')
		w.b = append(w.b, indent...)
		w.b = append(w.b, "  "...)
		w.vector(r)
	}
	w.b = append(w.b, '\n')
	w.b = append(w.b, indent...)
	w.b = append(w.b, ']')
}

func (w *writer) blocks(indent string, blocks []RotationBlock) {
	if len(blocks) == 0 {
		w.b = append(w.b, "[]"...)
		return
	}
	w.b = append(w.b, '[')
	for i, b := range blocks {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, '\n')
		w.b = append(w.b, indent...)
		w.b = append(w.b, `  {"radius": `...)
		w.number(b.Radius)
		w.b = append(w.b, `, "angle": `...)
		w.number(b.Angle)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, '\n')
	w.b = append(w.b, indent...)
	w.b = append(w.b, ']')
}
