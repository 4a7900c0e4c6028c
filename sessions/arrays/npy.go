package arrays

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The NumPy .npy format (numpy.lib.format, versions 1.0, 2.0 and 3.0): the magic string
// "\x93NUMPY", a major and a minor version byte, the header length (2 bytes little-endian in
// version 1, 4 bytes in versions 2 and 3), then the header, a Python dict literal such as
//
//	{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
//
// padded with spaces and ending in a newline, then the data.

const npyMagic = "\x93NUMPY"

// maxNPYHeader is the longest header accepted. NumPy's own limit (max_header_size) is
// 10000 bytes; a float array's header needs about 100.
const maxNPYHeader = 1 << 16

// npyHeader is a parsed .npy header.
type npyHeader struct {
	descr   string
	dtype   DType
	big     bool // big-endian data
	fortran bool
	shape   []int
	n       int   // elements
	offset  int64 // where the data starts
}

func (h *npyHeader) dataBytes() int64 { return int64(h.n) * int64(h.dtype.Size()) }

// info describes the array as Read returns it: a complex array with a trailing dimension 2.
func (h *npyHeader) info(name string) Info {
	in := Info{Name: name, DType: h.descr, Shape: slices.Clone(h.shape), Supported: true}
	if h.dtype.components() == 2 {
		in.Shape, in.Complex = append(in.Shape, 2), true
	}
	if in.Shape == nil {
		in.Shape = []int{}
	}
	return in
}

// readNPYHeader reads and checks a header; for a supported dtype it returns the layout of
// the data that follows.
func readNPYHeader(r io.Reader) (*npyHeader, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, invalidf("npy: truncated: the file is too short for a .npy header")
		}
		return nil, err
	}
	if string(pre[:6]) != npyMagic {
		return nil, invalidf("npy: wrong magic %q, want %q: not a .npy file", pre[:6], npyMagic)
	}
	major, minor := pre[6], pre[7]
	var hlen, offset int64
	switch {
	case major == 1 && minor == 0:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, invalidf("npy: truncated header length")
		}
		hlen, offset = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case (major == 2 || major == 3) && minor == 0:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, invalidf("npy: truncated header length")
		}
		hlen, offset = int64(binary.LittleEndian.Uint32(l[:])), 12
	default:
		return nil, unsupportedf("npy: format version %d.%d (ssmlab reads 1.0, 2.0 and 3.0)", major, minor)
	}
	if hlen > maxNPYHeader {
		return nil, invalidf("npy: header length %d exceeds the limit of %d bytes", hlen, maxNPYHeader)
	}
	text := make([]byte, hlen)
	if _, err := io.ReadFull(r, text); err != nil {
		return nil, invalidf("npy: truncated: the header is %d bytes long but the file ends first", hlen)
	}
	h, err := parseNPYDict(text)
	if h != nil {
		h.offset = offset + hlen
	}
	return h, err
}

// parseNPYDict parses the header's dict literal and checks its values. For a dtype that is
// well formed but not supported it returns the header (with descr and shape) and an error
// wrapping ErrUnsupported.
func parseNPYDict(text []byte) (*npyHeader, error) {
	p := &pyParser{s: text}
	vals, err := p.dict()
	if err != nil {
		return nil, invalidf("npy: bad header: %v", err)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := vals[k]; !ok {
			return nil, invalidf("npy: bad header: no %q key", k)
		}
	}
	if len(vals) != 3 {
		for k := range vals {
			if k != "descr" && k != "fortran_order" && k != "shape" {
				return nil, invalidf("npy: bad header: unknown key %q", k)
			}
		}
	}
	h := &npyHeader{}
	var ok bool
	if h.fortran, ok = vals["fortran_order"].(bool); !ok {
		return nil, invalidf("npy: bad header: 'fortran_order' is not True or False")
	}
	if h.shape, ok = vals["shape"].([]int); !ok {
		return nil, invalidf("npy: bad header: 'shape' is not a tuple of integers")
	}
	if h.n, err = checkShape(h.shape); err != nil {
		return nil, within(err, "npy")
	}
	switch d := vals["descr"].(type) {
	case string:
		h.descr = d
	case structured:
		h.descr = "structured"
		return h, unsupportedf("npy: a structured dtype (a record of fields); ssmlab reads plain float arrays")
	default:
		return nil, invalidf("npy: bad header: 'descr' is not a string")
	}
	if h.dtype, h.big, err = parseDescr(h.descr); err != nil {
		return h, err
	}
	return h, nil
}

// parseDescr maps a NumPy type string to a DType and byte order.
func parseDescr(descr string) (DType, bool, error) {
	if len(descr) == 3 && (descr[0] == '<' || descr[0] == '>') && descr[1] == 'f' {
		big := descr[0] == '>'
		switch descr[2] {
		case '8':
			return Float64, big, nil
		case '4':
			return Float32, big, nil
		case '2':
			return Float16, big, nil
		}
	}
	switch descr[min(1, len(descr)):] {
	case "c8":
		return Complex64, descr[0] == '>', nil
	case "c16":
		return Complex128, descr[0] == '>', nil
	}
	const want = "ssmlab reads float16, float32, float64, complex64 and complex128 ('<f2', '<f4', '<f8', '<c8', '<c16', or '>' for big-endian)"
	if len(descr) >= 2 && strings.IndexByte("<>|=", descr[0]) >= 0 {
		if descr[0] == '=' {
			return 0, false, unsupportedf("npy: dtype %q has the native byte order, which a file cannot state; %s", descr, want)
		}
		name := map[byte]string{'i': "signed integer", 'u': "unsigned integer", 'c': "complex", 'b': "boolean",
			'O': "Python object", 'U': "Unicode string", 'S': "byte string", 'V': "raw bytes", 'M': "datetime",
			'm': "timedelta", 'f': "float"}[descr[1]]
		if name != "" {
			return 0, false, unsupportedf("npy: dtype %q (%s); %s", descr, name, want)
		}
	}
	return 0, false, unsupportedf("npy: dtype %q; %s", truncate(descr, 40), want)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// structured stands for a list-valued 'descr' (a structured dtype).
type structured struct{}

// pyParser reads the subset of Python literals a .npy header uses: a dict with string keys
// whose values are strings, True, False, tuples of integers, or (for structured dtypes) lists.
type pyParser struct {
	s []byte
	i int
}

func (p *pyParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyParser) expect(c byte) error {
	if p.peek() != c {
		return p.errorf("want %q", c)
	}
	p.i++
	return nil
}

func (p *pyParser) errorf(format string, args ...any) error {
	at := "the end"
	if p.i < len(p.s) {
		at = fmt.Sprintf("byte %d (%q)", p.i, p.s[p.i])
	}
	return fmt.Errorf(format+" at "+at, args...)
}

func (p *pyParser) dict() (map[string]any, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	vals := map[string]any{}
	for p.peek() != '}' {
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := vals[key]; dup {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		vals[key] = v
		if p.peek() == ',' {
			p.i++
		} else if p.peek() != '}' {
			return nil, p.errorf("want ',' or '}'")
		}
	}
	p.i++
	p.skip()
	if p.i != len(p.s) {
		return nil, p.errorf("unexpected text after the dict")
	}
	return vals, nil
}

func (p *pyParser) value() (any, error) {
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		return p.str()
	case c == '(':
		return p.tuple()
	case c == '[':
		return structured{}, p.skipList()
	case c == 'T' && bytes.HasPrefix(p.s[p.i:], []byte("True")):
		p.i += 4
		return true, nil
	case c == 'F' && bytes.HasPrefix(p.s[p.i:], []byte("False")):
		p.i += 5
		return false, nil
	}
	return nil, p.errorf("unexpected value")
}

// str reads a quoted string without escapes (a header's strings never need them).
func (p *pyParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errorf("want a quoted string")
	}
	start := p.i + 1
	for j := start; j < len(p.s); j++ {
		switch p.s[j] {
		case q:
			p.i = j + 1
			return string(p.s[start:j]), nil
		case '\\', '\n':
			p.i = j
			return "", p.errorf("unsupported character in a string")
		}
	}
	p.i = len(p.s)
	return "", p.errorf("unterminated string")
}

// tuple reads a tuple of non-negative integers: (), (3,), (2, 3). A trailing L (Python 2
// long) is accepted, as NumPy does for old files.
func (p *pyParser) tuple() ([]int, error) {
	p.i++ // '('
	dims := []int{}
	comma := false // whether a comma followed the last dimension
	for p.peek() != ')' {
		if len(dims) == MaxDims {
			return nil, fmt.Errorf("shape has more than %d dimensions", MaxDims)
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if start == p.i {
			return nil, p.errorf("want a non-negative integer in the shape")
		}
		d, err := strconv.Atoi(string(p.s[start:p.i]))
		if err != nil || d > MaxElements {
			return nil, fmt.Errorf("shape dimension %s exceeds the limit of %d elements", truncate(string(p.s[start:p.i]), 30), MaxElements)
		}
		if p.i < len(p.s) && p.s[p.i] == 'L' {
			p.i++
		}
		dims = append(dims, d)
		comma = p.peek() == ','
		if comma {
			p.i++
		} else if p.peek() != ')' {
			return nil, p.errorf("want ',' or ')' in the shape")
		}
	}
	if len(dims) == 1 && !comma {
		// (3) is the integer 3 in Python, not a tuple.
		return nil, p.errorf("a one-element shape needs a trailing comma")
	}
	p.i++
	return dims, nil
}

// skipList skips a (possibly nested) list, e.g. a structured dtype's field list.
func (p *pyParser) skipList() error {
	depth := 0
	for ; p.i < len(p.s); p.i++ {
		switch p.s[p.i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
			if depth == 0 {
				p.i++
				return nil
			}
		}
	}
	return p.errorf("unterminated list")
}

// DecodeNPY decodes a whole .npy file held in memory. The shape in the header must match the
// length of the data exactly; this is checked before the values are allocated.
func DecodeNPY(data []byte) (*Array, error) {
	h, err := readNPYHeader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return decodeNPYData(h, data[h.offset:])
}

func decodeNPYData(h *npyHeader, raw []byte) (*Array, error) {
	if int64(len(raw)) != h.dataBytes() {
		return nil, sizeMismatch(h, int64(len(raw)))
	}
	out := make([]float64, h.n*h.dtype.components())
	decodeFloats(out, raw, h.dtype, h.big)
	return h.finish(out)
}

func sizeMismatch(h *npyHeader, got int64) error {
	return invalidf("npy: the header declares shape %s of %s (%d bytes of data), but the file holds %d bytes after the header",
		ShapeString(h.shape), h.descr, h.dataBytes(), got)
}

// finish reorders Fortran-order data to C order and checks the values. A complex array gets
// a trailing dimension 2.
func (h *npyHeader) finish(data []float64) (*Array, error) {
	shape := h.shape
	if h.dtype.components() == 2 {
		if h.fortran && len(h.shape) > 1 {
			re, im := make([]float64, h.n), make([]float64, h.n)
			for i := range h.n {
				re[i], im[i] = data[2*i], data[2*i+1]
			}
			re, im = fortranToC(re, h.shape), fortranToC(im, h.shape)
			for i := range h.n {
				data[2*i], data[2*i+1] = re[i], im[i]
			}
		}
		shape = append(slices.Clone(h.shape), 2)
	} else if h.fortran && len(h.shape) > 1 {
		data = fortranToC(data, h.shape)
	}
	a, err := New(shape, data)
	if err != nil {
		return nil, within(err, "npy")
	}
	return a, nil
}

// fortranToC returns the C-order copy of column-major data of the given shape.
func fortranToC(src []float64, shape []int) []float64 {
	dst := make([]float64, len(src))
	if len(src) == 0 {
		return dst
	}
	nd := len(shape)
	stride := make([]int, nd) // column-major strides
	s := 1
	for k := range nd {
		stride[k] = s
		s *= shape[k]
	}
	idx := make([]int, nd)
	off := 0
	for i := range dst {
		dst[i] = src[off]
		// Advance the C-order odometer (last index fastest), tracking the F offset.
		for k := nd - 1; k >= 0; k-- {
			idx[k]++
			off += stride[k]
			if idx[k] < shape[k] {
				break
			}
			off -= stride[k] * shape[k]
			idx[k] = 0
		}
	}
	return dst
}

// chunk is how much data a streaming reader reads at a time: storage grows with the data
// actually present, so a header that lies about the size of a truncated stream costs
// nothing.
const chunk = 1 << 20

// ReadNPY reads a .npy file from a stream. The data must end exactly where the header's
// shape says; storage grows as the data arrives, so a truncated file with a large declared
// shape allocates no more than it holds.
func ReadNPY(r io.Reader) (*Array, error) {
	h, err := readNPYHeader(r)
	if err != nil {
		return nil, err
	}
	return readNPYData(h, r)
}

func readNPYData(h *npyHeader, r io.Reader) (*Array, error) {
	need := h.dataBytes()
	size := h.dtype.Size() / h.dtype.components() // bytes a value
	out := make([]float64, 0, min(int64(h.n*h.dtype.components()), chunk/8))
	buf := make([]byte, min(need, chunk))
	var got int64
	for got < need {
		k := min(need-got, int64(len(buf)))
		m, err := io.ReadFull(r, buf[:k])
		got += int64(m)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, sizeMismatch(h, got)
			}
			return nil, err
		}
		start := len(out)
		out = slices.Grow(out, m/size)[:start+m/size]
		decodeFloats(out[start:], buf[:m], h.dtype, h.big)
	}
	var one [1]byte
	if m, err := io.ReadFull(r, one[:]); m > 0 {
		return nil, invalidf("npy: the header declares shape %s of %s (%d bytes of data), but more data follows", ShapeString(h.shape), h.descr, need)
	} else if err != nil && err != io.EOF {
		return nil, err
	}
	return h.finish(out)
}

// EncodeNPY returns a as a version 1.0 .npy file in C order, little-endian, of dtype d
// (Float32 or Float64), as numpy.save writes it: the header is padded so that the data
// starts at a multiple of 64 bytes.
func EncodeNPY(a *Array, d DType) ([]byte, error) {
	if err := checkWritable(d); err != nil {
		return nil, err
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	out := npyHeaderBytes(npyDescr(RawType(d)), a.Shape)
	return appendFloats(out, a.Data, d)
}

// WriteNPY writes EncodeNPY(a, d) to w.
func WriteNPY(w io.Writer, a *Array, d DType) error {
	b, err := EncodeNPY(a, d)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
