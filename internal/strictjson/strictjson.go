// Package strictjson reads JSON strictly: it is the one reader under every JSON format ssmlab
// reads (filter files, session and target files, packed arrays, safetensors headers; and,
// through Unmarshal into Go values, job files, distill reports, sysid data and part files).
//
// Over encoding/json's tokenizer it adds what those formats need and encoding/json does not
// give:
//
//   - a key twice in one object is an error (encoding/json silently keeps the last one);
//   - numbers keep their text until the reader asks for a value, and Float refuses what a
//     float64 cannot hold, saying what it got ("is the number 1e400, outside the range of
//     float64");
//   - nesting is bounded (MaxDepth), so a hostile file cannot exhaust the stack of a reader
//     that recurses;
//   - errors say where: line and column, 1-based, the column in characters;
//   - a string that is not UTF-8 is an error (encoding/json reads each bad byte as U+FFFD,
//     so a name read and written back would change without a word);
//   - a leading byte order mark is ignored, as RFC 8259 allows.
//
// A Decoder reads one value token by token. Members and Elements walk an object or an array;
// Object and Value read a value whole and return decoders over its parts, which keep reporting
// positions in the whole input. Errors are *SyntaxError or *DuplicateKeyError; each format
// wraps them in its own ErrInvalid.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects a Decoder reads.
const MaxDepth = 64

// SyntaxError is malformed JSON, nesting deeper than MaxDepth, or data after the value.
type SyntaxError struct {
	Line, Column int // where the problem was found
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("bad JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// DuplicateKeyError is a key that appears twice in one object.
type DuplicateKeyError struct {
	Key          string
	Line, Column int // of the second occurrence
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key %q at line %d, column %d", truncate(e.Key, 80), e.Line, e.Column)
}

// Decoder reads one JSON value.
type Decoder struct {
	all   []byte // the whole input, for positions
	text  []byte // the value this decoder reads: all[base:base+len(text)]
	base  int64
	dec   *json.Decoder
	depth int // of the arrays and objects open around the next token, counting enclosing ones
	// notUTF8 is the offset in all of its first byte that is not UTF-8, or -1.
	notUTF8 int64
}

// NewDecoder returns a Decoder reading the value in data.
func NewDecoder(data []byte) *Decoder {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	d := newDecoder(data, data, 0, 0)
	d.notUTF8 = firstNotUTF8(data)
	return d
}

func newDecoder(all, text []byte, base int64, depth int) *Decoder {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	return &Decoder{all: all, text: text, base: base, dec: dec, depth: depth, notUTF8: -1}
}

// firstNotUTF8 returns the offset of the first byte of data that is not UTF-8, or -1.
func firstNotUTF8(data []byte) int64 {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return int64(i)
		}
		i += size
	}
	return -1
}

// Token returns the next token, as encoding/json's Decoder.Token does with UseNumber: a
// json.Delim, string, json.Number, bool, or nil for null. Running out of input is a
// *SyntaxError: a Decoder reads one value, and End checks what follows it.
func (d *Decoder) Token() (json.Token, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntaxError(err)
	}
	// Outside strings the scanner refuses any byte that is not ASCII, so the bad byte is in
	// the string token just read.
	if bad := d.notUTF8 - d.base; bad >= 0 && bad < d.dec.InputOffset() {
		return nil, d.notUTF8Error()
	}
	if delim, ok := tok.(json.Delim); ok {
		switch delim {
		case '{', '[':
			if d.depth == MaxDepth {
				return nil, d.errorAt(d.dec.InputOffset()-1, fmt.Sprintf("nested more than %d deep", MaxDepth))
			}
			d.depth++
		default:
			d.depth--
		}
	}
	return tok, nil
}

// More reports whether the array or object being read has another element.
func (d *Decoder) More() bool { return d.dec.More() }

// Members reads the members of the object whose '{' Token has just returned, up to and
// including its '}'. For each member it calls fn with the key; fn must read the value (with
// Token, Members, Elements, Value or Skip) or return an error. A key seen before in the object
// is a *DuplicateKeyError.
func (d *Decoder) Members(fn func(key string) error) error {
	seen := make(map[string]struct{})
	for d.dec.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			panic("strictjson: a Members callback did not read its value")
		}
		if _, dup := seen[key]; dup {
			line, col := d.position(d.keyStart())
			return &DuplicateKeyError{Key: key, Line: line, Column: col}
		}
		seen[key] = struct{}{}
		if err := fn(key); err != nil {
			return err
		}
	}
	_, err := d.Token()
	return err
}

// Elements reads the elements of the array whose '[' Token has just returned, up to and
// including its ']'. For each element it calls fn with its index; fn must read the element
// or return an error.
func (d *Decoder) Elements(fn func(i int) error) error {
	for i := 0; d.dec.More(); i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	_, err := d.Token()
	return err
}

// Value reads the next value whole and returns a Decoder over it, which reports positions in
// the whole input.
func (d *Decoder) Value() (*Decoder, error) {
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		return nil, d.syntaxError(err)
	}
	base := d.base + d.dec.InputOffset() - int64(len(raw))
	if bad := d.notUTF8 - base; bad >= 0 && bad < int64(len(raw)) {
		return nil, d.notUTF8Error()
	}
	v := newDecoder(d.all, raw, base, d.depth)
	v.notUTF8 = d.notUTF8
	return v, nil
}

// Skip reads the next value and drops it, token by token: nothing of it is kept (Value
// would copy it whole).
func (d *Decoder) Skip() error { return d.skipValue() }

// End checks that nothing but white space follows the value read.
func (d *Decoder) End() error {
	off := d.dec.InputOffset()
	tok, err := d.dec.Token()
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return d.syntaxError(err)
	}
	return d.errorAt(d.nextByte(off), fmt.Sprintf("unexpected data (%s) after the JSON value", Describe(tok)))
}

// Check reads data as one JSON value and reports the first way it is not strict JSON: for a
// reader that decodes with encoding/json into Go values, which checks neither duplicate keys
// nor nesting.
func Check(data []byte) error {
	d := NewDecoder(data)
	if err := d.skipValue(); err != nil {
		return err
	}
	return d.End()
}

// Unmarshal decodes data into v with encoding/json after Check, so that a key twice, deep
// nesting or data after the value are errors, and a byte order mark is ignored here too.
// Its errors are in the file's words (fileWords).
func Unmarshal(data []byte, v any) error {
	if err := Check(data); err != nil {
		return err
	}
	return fileWords(json.Unmarshal(bytes.TrimPrefix(data, []byte("\ufeff")), v), v)
}

// UnmarshalKnown is Unmarshal where every key of an object must name a field of the Go value
// it decodes into (encoding/json's DisallowUnknownFields).
func UnmarshalKnown(data []byte, v any) error {
	if err := Check(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	dec.DisallowUnknownFields()
	return fileWords(dec.Decode(v), v)
}

// fileWords says encoding/json's errors, of decoding into v, in the terms of the file, not of
// Go: `key "order": want a whole number, got a string` for "json: cannot unmarshal string
// into Go struct field Spec.order of type int", `unknown key "ordre"` for `json: unknown
// field "ordre"`.
func fileWords(err error, v any) error {
	if err == nil {
		return nil
	}
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
		got := te.Value // "string", "number", "number 1.5", "bool", "array", "object"
		switch {
		case got == "array" || got == "object":
			got = "an " + got
		case got == "bool":
			got = "true or false"
		case strings.HasPrefix(got, "number "):
			got = "the " + got
		default:
			got = "a " + got
		}
		if te.Field == "" {
			return fmt.Errorf("want %s, got %s", kindOf(te.Type), got)
		}
		return fmt.Errorf("key %q: want %s, got %s", keyPath(reflect.TypeOf(v), te.Field), kindOf(te.Type), got)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown key %s", key)
	}
	return err
}

// keyPath is field, an UnmarshalTypeError's path into a value of type t, without the Go
// names of the embedded structs on it, which are no keys of the file ("pair.u" is "u").
func keyPath(t reflect.Type, field string) string {
	var keys []string
	for _, name := range strings.Split(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			keys, t = append(keys, name), nil
			continue
		}
		if f, ok := t.FieldByName(name); ok && f.Anonymous && f.Tag.Get("json") == "" {
			t = f.Type // an embedded struct: its fields are keys of the object itself
			continue
		}
		keys, t = append(keys, name), fieldType(t, name)
	}
	return strings.Join(keys, ".")
}

// fieldType is the type of t's field decoded from key, or nil.
func fieldType(t reflect.Type, key string) reflect.Type {
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == key || tag == "" && strings.EqualFold(f.Name, key) {
			return f.Type
		}
	}
	return nil
}

// kindOf names the JSON value a Go type takes.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another value"
}

// skipValue reads one value token by token, checking it.
func (d *Decoder) skipValue() error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return d.Members(func(string) error { return d.skipValue() })
	case json.Delim('['):
		return d.Elements(func(int) error { return d.skipValue() })
	}
	return nil
}

// Object reads the object whose '{' Token has just returned, keeping each member's value for
// Get. A key seen before in the object is a *DuplicateKeyError.
func (d *Decoder) Object() (*Object, error) {
	o := &Object{vals: make(map[string]*Decoder)}
	err := d.Members(func(key string) error {
		v, err := d.Value()
		o.Keys = append(o.Keys, key)
		o.vals[key] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Object is an object's members, in the order of the input.
type Object struct {
	Keys []string
	vals map[string]*Decoder
}

// Has reports whether the object has key.
func (o *Object) Has(key string) bool {
	_, ok := o.vals[key]
	return ok
}

// Get returns a new Decoder over the value of key, or false when the object has no key.
func (o *Object) Get(key string) (*Decoder, bool) {
	v, ok := o.vals[key]
	if !ok {
		return nil, false
	}
	g := newDecoder(v.all, v.text, v.base, v.depth)
	g.notUTF8 = v.notUTF8
	return g, true
}

// Position returns the line and column, 1-based, of the next token; after a token, of the
// space or the token that follows it.
func (d *Decoder) Position() (line, col int) {
	return d.position(d.nextByte(d.dec.InputOffset()))
}

// keyStart returns the offset in text of the opening quote of the key Token has just
// returned: the last quote before the key's closing one that no backslash escapes.
func (d *Decoder) keyStart() int64 {
	end := d.dec.InputOffset() - 1 // the closing quote
	for i := end - 1; i >= 0; i-- {
		if d.text[i] != '"' {
			continue
		}
		j := i
		for j > 0 && d.text[j-1] == '\\' {
			j--
		}
		if (i-j)%2 == 0 {
			return i
		}
	}
	return end
}

// nextByte returns the offset of the first byte at or after off that is not white space.
func (d *Decoder) nextByte(off int64) int64 {
	for off < int64(len(d.text)) && bytes.IndexByte([]byte(" \t\r\n"), d.text[off]) >= 0 {
		off++
	}
	return off
}

func (d *Decoder) syntaxError(err error) error {
	var se *json.SyntaxError
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return d.errorAt(int64(len(d.text)), "unexpected end of input")
	case errors.As(err, &se):
		// Decoder.Token and the scanner count offsets differently; json.Unmarshal reports
		// the scanner's offset, just after the offending byte, for any syntax error.
		var raw json.RawMessage
		if e := json.Unmarshal(d.text, &raw); e != nil {
			errors.As(e, &se)
		}
		msg := se.Error()
		if off := se.Offset - 1; off >= 0 && off < int64(len(d.text)) && nonFinite(d.text[off:]) {
			msg += " (JSON has no NaN or infinity, which Python's json.dump writes: values must be finite numbers)"
		}
		return d.errorAt(se.Offset-1, msg)
	}
	return d.errorAt(d.dec.InputOffset(), err.Error())
}

// nonFinite reports whether text starts with the word NaN or infinity in any case (NaN,
// Infinity, inf), for the hint in a syntax error there; "-Infinity" fails at its 'I'.
func nonFinite(text []byte) bool {
	n := 0
	for n < len(text) && (text[n]|0x20 >= 'a' && text[n]|0x20 <= 'z') {
		n++
	}
	w := string(bytes.ToLower(text[:n]))
	return w == "nan" || w == "inf" || w == "infinity"
}

// notUTF8Error is the *SyntaxError at the first byte of the input that is not UTF-8.
func (d *Decoder) notUTF8Error() error {
	return d.errorAt(d.notUTF8-d.base, fmt.Sprintf("byte 0x%02x in a string is not UTF-8 (JSON text must be UTF-8)", d.all[d.notUTF8]))
}

// errorAt returns a *SyntaxError at offset off of d's text.
func (d *Decoder) errorAt(off int64, msg string) error {
	line, col := d.position(off)
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}

// position returns the line and column of the byte at offset off of d's text.
func (d *Decoder) position(off int64) (line, col int) {
	off = d.base + min(max(off, 0), int64(len(d.text)))
	data := d.all[:off]
	line = 1 + bytes.Count(data, []byte("\n"))
	col = 1 + utf8.RuneCount(data[bytes.LastIndexByte(data, '\n')+1:])
	return line, col
}

// Describe names a token for a message: "an object", "an array", `the string "…"` (cut at 40
// characters), "the number 1e400", "true", "null".
func Describe(tok json.Token) string {
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
		return fmt.Sprintf("the string %q", truncate(t, 40))
	case json.Number:
		return "the number " + truncate(string(t), 40)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// Float converts a number token to a float64. Anything else, or a number outside the range of
// float64, is an error whose message completes a sentence naming the value: `"h0" ` + err
// reads `"h0" is the string "NaN", want a number (…)`.
func Float(tok json.Token) (float64, error) {
	n, ok := tok.(json.Number)
	if !ok {
		if _, ok := tok.(string); ok {
			return 0, fmt.Errorf("is %s, want a number (numbers are unquoted, and NaN and infinities are not allowed)", Describe(tok))
		}
		return 0, fmt.Errorf("is %s, want a number", Describe(tok))
	}
	// The tokenizer has checked the syntax, so the only possible error is a range error; a
	// number too small for float64 becomes 0 (or the nearest subnormal) without one.
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, fmt.Errorf("is %s, outside the range of float64", Describe(tok))
	}
	return x, nil
}

// truncate cuts s to at most n characters, marking a cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
