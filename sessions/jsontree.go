package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/ssmlab/ssmlab/internal/strictjson"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// A small ordered JSON tree: session files are read and written through it so that key
// order is kept, duplicate keys are refused, numbers keep their exact text, and the arrays
// inside filter documents can be packed and unpacked.

type jkind uint8

const (
	jObject jkind = iota
	jArray
	jString
	jNumber
	jBool
	jNull
)

type jnode struct {
	kind jkind
	keys []string // object keys, in order
	kids []*jnode // object values or array elements
	text string   // a string's value or a number's text
	b    bool
}

// parseTree reads a JSON value strictly (internal/strictjson: no key twice, nesting bounded,
// errors with a line and column).
func parseTree(data []byte) (*jnode, error) {
	d := strictjson.NewDecoder(data)
	n, err := parseValue(d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return nil, treeInvalid(err)
	}
	return n, nil
}

// treeInvalid wraps an error of the JSON reader as ErrInvalid.
func treeInvalid(err error) error {
	if errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

// parseValue reads one value.
func parseValue(d *strictjson.Decoder) (*jnode, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n := &jnode{kind: jObject}
			err := d.Members(func(key string) error {
				v, err := parseValue(d)
				n.keys = append(n.keys, key)
				n.kids = append(n.kids, v)
				return err
			})
			return n, err
		}
		n := &jnode{kind: jArray}
		err := d.Elements(func(int) error {
			v, err := parseValue(d)
			n.kids = append(n.kids, v)
			return err
		})
		return n, err
	case string:
		return &jnode{kind: jString, text: t}, nil
	case json.Number:
		return &jnode{kind: jNumber, text: string(t)}, nil
	case bool:
		return &jnode{kind: jBool, b: t}, nil
	}
	return &jnode{kind: jNull}, nil
}

// get returns the value of key in an object, or nil.
func (n *jnode) get(key string) *jnode {
	for i, k := range n.keys {
		if k == key {
			return n.kids[i]
		}
	}
	return nil
}

// set adds or replaces a member of an object.
func (n *jnode) set(key string, v *jnode) {
	for i, k := range n.keys {
		if k == key {
			n.kids[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.kids = append(n.kids, v)
}

func strNode(s string) *jnode       { return &jnode{kind: jString, text: s} }
func intNode(i int) *jnode          { return &jnode{kind: jNumber, text: strconv.Itoa(i)} }
func boolNode(b bool) *jnode        { return &jnode{kind: jBool, b: b} }
func objNode() *jnode               { return &jnode{kind: jObject} }
func arrNode(kids ...*jnode) *jnode { return &jnode{kind: jArray, kids: kids} }

// describe names the node for a message, as strictjson.Describe names a token.
func (n *jnode) describe() string {
	var tok json.Token
	switch n.kind {
	case jObject:
		tok = json.Delim('{')
	case jArray:
		tok = json.Delim('[')
	case jString:
		tok = n.text
	case jNumber:
		tok = json.Number(n.text)
	case jBool:
		tok = n.b
	}
	return strictjson.Describe(tok)
}

// isScalar reports whether n is not an object or array.
func (n *jnode) isScalar() bool { return n.kind != jObject && n.kind != jArray }

// numbers returns the values of an array of numbers, or false.
func (n *jnode) numbers() ([]float64, bool) {
	if n.kind != jArray {
		return nil, false
	}
	v := make([]float64, len(n.kids))
	for i, k := range n.kids {
		if k.kind != jNumber {
			return nil, false
		}
		x, err := strconv.ParseFloat(k.text, 64)
		if err != nil {
			return nil, false
		}
		v[i] = x
	}
	return v, true
}

// pack replaces, anywhere under n, every array of more than arrays.InlineMax numbers (a
// vector, or a matrix given as equal-length rows, such as a list of [re, im] pairs) by its
// Packed object.
func (n *jnode) pack() {
	for i, k := range n.kids {
		if k.kind == jArray {
			if p := packArray(k); p != nil {
				n.kids[i] = p
				continue
			}
		}
		k.pack()
	}
}

func packArray(n *jnode) *jnode {
	if v, ok := n.numbers(); ok {
		if len(v) <= arrays.InlineMax {
			return nil
		}
		return packedNode(arrays.Vector(v))
	}
	if len(n.kids) == 0 {
		return nil
	}
	var data []float64
	cols := -1
	for _, row := range n.kids {
		v, ok := row.numbers()
		if !ok || (cols != -1 && len(v) != cols) {
			return nil
		}
		cols = len(v)
		data = append(data, v...)
	}
	if len(data) <= arrays.InlineMax || cols == 0 {
		return nil
	}
	return packedNode(&arrays.Array{Shape: []int{len(n.kids), cols}, Data: data})
}

// packedNode returns the Packed object of a as a node.
func packedNode(a *arrays.Array) *jnode {
	p := arrays.Pack(a)
	shape := arrNode()
	for _, d := range p.Shape {
		shape.kids = append(shape.kids, intNode(d))
	}
	o := objNode()
	o.set("dtype", strNode(p.DType))
	o.set("shape", shape)
	o.set("data", strNode(p.Data))
	return o
}

// isPacked reports whether n is an object with exactly the keys of a Packed array.
func (n *jnode) isPacked() bool {
	if n.kind != jObject || len(n.keys) != 3 {
		return false
	}
	return n.get("dtype") != nil && n.get("shape") != nil && n.get("data") != nil
}

// toArray reads an array from its node: a Packed object or nested arrays of numbers.
func (n *jnode) toArray() (*arrays.Array, error) {
	if !n.isPacked() {
		var a arrays.Array
		if err := a.UnmarshalJSON(n.compact(nil)); err != nil {
			return nil, err
		}
		return &a, nil
	}
	dt, data, shape := n.get("dtype"), n.get("data"), n.get("shape")
	if dt.kind != jString || data.kind != jString || shape.kind != jArray {
		return nil, invalidf("a packed array needs a string dtype, an array shape and a string data")
	}
	p := arrays.Packed{DType: dt.text, Data: data.text, Shape: make([]int, len(shape.kids))}
	if len(shape.kids) > arrays.MaxDims {
		return nil, invalidf("a packed array has more than %d dimensions", arrays.MaxDims)
	}
	for i, d := range shape.kids {
		x, err := strconv.Atoi(d.text)
		if d.kind != jNumber || err != nil {
			return nil, invalidf("a packed array's shape holds %s, want integers", d.describe())
		}
		p.Shape[i] = x
	}
	return p.Unpack()
}

// expand appends n without insignificant space, with every Packed object written as nested
// arrays of numbers. It fails once the text would exceed limit bytes, so that a small
// packed array cannot expand into more text than a filter document may hold.
func (n *jnode) expand(b []byte, limit int) ([]byte, error) {
	var err error
	switch {
	case n.isPacked():
		a, err := n.toArray()
		if err != nil {
			return nil, err
		}
		b = appendNested(b, a, limit)
	case n.kind == jObject:
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, err = n.kids[i].expand(b, limit); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	case n.kind == jArray:
		b = append(b, '[')
		for i, k := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = k.expand(b, limit); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	default:
		b = n.scalar(b)
	}
	if len(b) > limit {
		return nil, invalidf("a filter expands to more than the %d MiB a filter document may hold", limit>>20)
	}
	return b, nil
}

// appendNested appends a as nested arrays of numbers (a scalar as a number), stopping soon
// after the text passes limit bytes.
func appendNested(b []byte, a *arrays.Array, limit int) []byte {
	var nest func(dim, off int) int
	nest = func(dim, off int) int {
		if dim == len(a.Shape) {
			b = arrays.AppendNumber(b, a.Data[off])
			return off + 1
		}
		b = append(b, '[')
		for i := range a.Shape[dim] {
			if i > 0 {
				b = append(b, ',')
			}
			off = nest(dim+1, off)
			if len(b) > limit {
				return off
			}
		}
		b = append(b, ']')
		return off
	}
	nest(0, 0)
	return b
}

// compact appends n without insignificant space.
func (n *jnode) compact(b []byte) []byte { return n.oneLine(b, ",", ":") }

// compactSpaced appends n on one line with a space after each comma and colon.
func (n *jnode) compactSpaced(b []byte) []byte { return n.oneLine(b, ", ", ": ") }

// oneLine appends n on one line, with comma between members or elements and colon after
// each key.
func (n *jnode) oneLine(b []byte, comma, colon string) []byte {
	switch n.kind {
	case jObject:
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, comma...)
			}
			b = appendString(b, k)
			b = append(b, colon...)
			b = n.kids[i].oneLine(b, comma, colon)
		}
		return append(b, '}')
	case jArray:
		b = append(b, '[')
		for i, k := range n.kids {
			if i > 0 {
				b = append(b, comma...)
			}
			b = k.oneLine(b, comma, colon)
		}
		return append(b, ']')
	}
	return n.scalar(b)
}

func (n *jnode) scalar(b []byte) []byte {
	switch n.kind {
	case jString:
		return appendString(b, n.text)
	case jNumber:
		return append(b, n.text...)
	case jBool:
		return strconv.AppendBool(b, n.b)
	}
	return append(b, "null"...)
}

// appendString appends s as a JSON string, without escaping HTML characters.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// indent appends n in the layout of ssmlab's files: two-space indentation, one object member
// per line, arrays of scalars, Packed objects and small objects of scalars on one line, and
// arrays of arrays or objects with one element per line.
func (n *jnode) indent(b []byte, prefix string) []byte {
	switch {
	case n.kind == jObject && len(n.keys) == 0:
		return append(b, "{}"...)
	case n.isPacked() || n.isSmallFlat():
		return n.compactSpaced(b)
	case n.kind == jObject:
		return n.lines(b, prefix, '{', '}', func(b []byte, i int) []byte {
			b = appendString(b, n.keys[i])
			return append(b, ": "...)
		})
	case n.kind == jArray:
		flat := true
		for _, k := range n.kids {
			flat = flat && k.isScalar()
		}
		if flat || len(n.kids) == 0 {
			return n.compactSpaced(b)
		}
		return n.lines(b, prefix, '[', ']', func(b []byte, _ int) []byte { return b })
	}
	return n.scalar(b)
}

// lines appends n's members or elements one per line, two spaces deeper than prefix, each
// after what label appends for it (an object's key), between first and last.
func (n *jnode) lines(b []byte, prefix string, first, last byte, label func(b []byte, i int) []byte) []byte {
	b = append(b, first)
	for i, k := range n.kids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, prefix...)
		b = append(b, "  "...)
		b = label(b, i)
		b = k.indent(b, prefix+"  ")
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, last)
}

// isSmallFlat reports whether n is an object of at most four scalar members, such as a
// rotation block or a target's source, which reads best on one line.
func (n *jnode) isSmallFlat() bool {
	if n.kind != jObject || len(n.keys) > 4 {
		return false
	}
	for _, k := range n.kids {
		if !k.isScalar() {
			return false
		}
	}
	return true
}

// objectKeys checks that an object has only the given keys, naming the first other one.
func (n *jnode) objectKeys(what string, allowed ...string) error {
	if n.kind != jObject {
		return invalidf("%s is %s, want an object", what, n.describe())
	}
	for _, k := range n.keys {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return invalidf("unknown key %q in %s", k, what)
		}
	}
	return nil
}

// str returns the string value of key, "" when absent.
func (n *jnode) str(what, key string) (string, error) {
	v := n.get(key)
	if v == nil {
		return "", nil
	}
	if v.kind != jString {
		return "", invalidf("%q of %s is %s, want a string", key, what, v.describe())
	}
	return v.text, nil
}

// integer returns the value of a number node holding an integer.
func (n *jnode) integer(what string) (int, error) {
	if n.kind != jNumber {
		return 0, invalidf("%s is %s, want an integer", what, n.describe())
	}
	x, err := strconv.Atoi(n.text)
	if err != nil {
		return 0, invalidf("%s is %s, want an integer", what, n.describe())
	}
	return x, nil
}

// liftMin is the length from which parseLarge reads a string straight from the input.
const liftMin = 1 << 20

// liftMark begins the placeholder, `"\u0000lift:N"`, that stands for lifted string N.
const liftMark = `\u0000lift:`

// parseLarge is parseTree for a session file, which holds its arrays as long base64
// strings: a string of liftMin bytes or more with nothing to unescape (no backslash, no
// control character, valid UTF-8) is lifted out of the text before the JSON reader sees it,
// and its node's text shares data's memory. encoding/json's reader, under strictjson, keeps
// a whole token in a buffer that doubles as it grows and copies it into a string: a 43 MB
// array cost 150 MB that way. data must not change while the tree is in use. On an error
// the text is parsed again as it is, so that the error's line and column are exact.
func parseLarge(data []byte) (*jnode, error) {
	if bytes.Contains(data, []byte(liftMark)) {
		return parseTree(data)
	}
	var lite []byte
	var lifted []string
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		// A string from i: its end, and whether it is liftable.
		j, plain := i+1, true
		for ; j < len(data) && data[j] != '"'; j++ {
			if data[j] == '\\' {
				plain = false
				j++ // the escaped byte, a quote included
			} else if data[j] < 0x20 {
				plain = false
			}
		}
		if j >= len(data) {
			break // unterminated: the reader says so
		}
		if plain && j-i-1 >= liftMin && utf8.Valid(data[i+1:j]) {
			lite = append(lite, data[last:i]...)
			lite = append(lite, `"`+liftMark+strconv.Itoa(len(lifted))+`"`...)
			lifted = append(lifted, unsafe.String(&data[i+1], j-i-1))
			last = j + 1
		}
		i = j
	}
	if lifted == nil {
		return parseTree(data)
	}
	lite = append(lite, data[last:]...)
	n, err := parseTree(lite)
	if err != nil {
		return parseTree(data)
	}
	// Each placeholder must come back once and nothing else may look like one (a string
	// spelled with escapes could): otherwise, the text as it is.
	used := make([]int, len(lifted))
	if !n.restore(lifted, used) || slices.ContainsFunc(used, func(u int) bool { return u != 1 }) {
		return parseTree(data)
	}
	return n, nil
}

// restore puts the lifted strings back in place of their placeholders (keys included),
// counting each in used; false if a string looks like a placeholder of no lifted string.
func (n *jnode) restore(lifted []string, used []int) bool {
	put := func(s *string) bool {
		rest, ok := strings.CutPrefix(*s, "\x00lift:")
		if !ok {
			return true
		}
		k, err := strconv.Atoi(rest)
		if err != nil || k < 0 || k >= len(lifted) || strconv.Itoa(k) != rest {
			return false
		}
		*s = lifted[k]
		used[k]++
		return true
	}
	if n.kind == jString {
		return put(&n.text)
	}
	for i := range n.keys {
		if !put(&n.keys[i]) {
			return false
		}
	}
	for _, k := range n.kids {
		if !k.restore(lifted, used) {
			return false
		}
	}
	return true
}
