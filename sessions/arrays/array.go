package arrays

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Limits on what a reader accepts. They are checked against the header of a file before any
// storage for the data is allocated.
const (
	// MaxElements is the most elements one array may hold: 2^26, 512 MiB as float64 — a bank
	// of 1024 kernels of 65536 samples. Larger arrays are refused with ErrInvalid.
	MaxElements = 1 << 26
	// MaxDims is the most dimensions an array may have (NumPy allows 64).
	MaxDims = 32
	// InlineMax is the most numbers an array may hold and still be written in JSON as plain
	// numbers by MarshalJSON; larger arrays are written packed (see Packed).
	InlineMax = 32
)

// Errors wrapped by the package's failures.
var (
	// ErrInvalid marks a malformed, truncated or inconsistent file, or one beyond the limits.
	ErrInvalid = errors.New("invalid array file")
	// ErrUnsupported marks a well-formed file holding something ssmlab does not read: an
	// integer, complex or structured dtype, an unknown format version.
	ErrUnsupported = errors.New("unsupported array")
	// ErrNotFound marks a request for an array name a file does not hold.
	ErrNotFound = errors.New("no such array")
)

// fileError is a failure of kind ErrInvalid or ErrUnsupported: "invalid array file: msg".
type fileError struct {
	kind error
	msg  string
}

func (e *fileError) Error() string { return e.kind.Error() + ": " + e.msg }
func (e *fileError) Unwrap() error { return e.kind }

func invalidf(format string, args ...any) error {
	return &fileError{ErrInvalid, fmt.Sprintf(format, args...)}
}

func unsupportedf(format string, args ...any) error {
	return &fileError{ErrUnsupported, fmt.Sprintf(format, args...)}
}

// within prefixes the message of err with where it happened, after the kind of failure:
// "invalid array file: npz: entry "a.npy": npy: truncated …".
func within(err error, where string) error {
	if fe, ok := err.(*fileError); ok {
		return &fileError{fe.kind, where + ": " + fe.msg}
	}
	return fmt.Errorf("%s: %w", where, err)
}

// Array is a dense float64 tensor in C (row-major) order: element (i, j) of a 2-D array is
// Data[i*Shape[1]+j]. A scalar has an empty Shape and one element.
type Array struct {
	Shape []int
	Data  []float64
}

// New returns the array of the given shape holding data, which it shares. It checks that the
// shape is within the limits, that len(data) is the product of the shape and that every
// value is finite.
func New(shape []int, data []float64) (*Array, error) {
	n, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	if len(data) != n {
		return nil, invalidf("shape %s needs %d values, got %d", ShapeString(shape), n, len(data))
	}
	a := &Array{Shape: append([]int(nil), shape...), Data: data}
	if err := a.checkFinite(); err != nil {
		return nil, err
	}
	return a, nil
}

// Vector returns the 1-D array holding v, which it shares. It does not validate v.
func Vector(v []float64) *Array {
	return &Array{Shape: []int{len(v)}, Data: v}
}

// FromRows returns the 2-D array with the given rows, copied; the rows must have equal
// lengths and finite values.
func FromRows(rows [][]float64) (*Array, error) {
	cols := 0
	if len(rows) > 0 {
		cols = len(rows[0])
	}
	data := make([]float64, 0, len(rows)*cols)
	for i, r := range rows {
		if len(r) != cols {
			return nil, invalidf("row %d has %d values, row 0 has %d: rows must have equal lengths", i, len(r), cols)
		}
		data = append(data, r...)
	}
	return New([]int{len(rows), cols}, data)
}

// Len returns the number of elements.
func (a *Array) Len() int { return len(a.Data) }

// Rows returns the rows of a 2-D array as views into Data. It panics if a is not 2-D.
func (a *Array) Rows() [][]float64 {
	if len(a.Shape) != 2 {
		panic(fmt.Sprintf("arrays: Rows of a %d-D array", len(a.Shape)))
	}
	rows := make([][]float64, a.Shape[0])
	for i := range rows {
		rows[i] = a.Data[i*a.Shape[1] : (i+1)*a.Shape[1] : (i+1)*a.Shape[1]]
	}
	return rows
}

// Clone returns a deep copy of a.
func (a *Array) Clone() *Array {
	return &Array{Shape: append([]int(nil), a.Shape...), Data: append([]float64(nil), a.Data...)}
}

// Equal reports whether a and b have the same shape and bit-identical values.
func (a *Array) Equal(b *Array) bool {
	if len(a.Shape) != len(b.Shape) || len(a.Data) != len(b.Data) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	for i := range a.Data {
		if math.Float64bits(a.Data[i]) != math.Float64bits(b.Data[i]) {
			return false
		}
	}
	return true
}

// Validate checks the shape, the length of Data and that every value is finite.
func (a *Array) Validate() error {
	_, err := New(a.Shape, a.Data)
	return err
}

// checkShape returns the number of elements of shape, or an error when a dimension is
// negative or the shape is beyond MaxDims or MaxElements. It never overflows.
func checkShape(shape []int) (int, error) {
	if len(shape) > MaxDims {
		return 0, invalidf("%d dimensions exceed the limit of %d", len(shape), MaxDims)
	}
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, invalidf("shape %s has a negative dimension", ShapeString(shape))
		}
		if d > MaxElements {
			return 0, invalidf("shape %s exceeds the limit of %d elements", ShapeString(shape), MaxElements)
		}
		n *= d // n ≤ MaxElements and d ≤ MaxElements: no overflow
		if n > MaxElements {
			return 0, invalidf("shape %s exceeds the limit of %d elements", ShapeString(shape), MaxElements)
		}
	}
	return n, nil
}

// checkFinite reports the first NaN or infinity, by its index.
func (a *Array) checkFinite() error {
	for i, x := range a.Data {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return invalidf("entry %s is %v: values must be finite", indexString(a.Shape, i), x)
		}
	}
	return nil
}

// indexString writes the multi-index of flat C-order index i: "(2, 5)".
func indexString(shape []int, i int) string {
	if len(shape) == 0 {
		return "()"
	}
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return ShapeString(idx)
}

// ShapeString writes a shape as NumPy prints it: "()", "(3,)", "(2, 3)".
func ShapeString(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// DType is an element type of a file. Readers convert every supported type to float64
// exactly; writers write Float32 or Float64. The zero value is Float64.
type DType uint8

// The element types ssmlab reads.
const (
	Float64 DType = iota
	Float32
	Float16  // IEEE 754 half precision
	BFloat16 // bfloat16: the top 16 bits of a float32
	// Complex64 and Complex128 are pairs of Float32 and Float64 (real, imaginary). A reader
	// returns a complex array as a real one with a trailing dimension 2.
	Complex64
	Complex128
)

// String returns the NumPy name: "float64", "float32", "float16" or "bfloat16".
func (d DType) String() string {
	switch d {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case BFloat16:
		return "bfloat16"
	case Complex64:
		return "complex64"
	case Complex128:
		return "complex128"
	}
	return "DType(" + strconv.Itoa(int(d)) + ")"
}

// Size returns the size of one element in bytes.
func (d DType) Size() int {
	switch d {
	case Float64:
		return 8
	case Float32:
		return 4
	case Float16, BFloat16:
		return 2
	case Complex64:
		return 8
	case Complex128:
		return 16
	}
	panic(fmt.Sprintf("arrays: unknown DType %d", d))
}

// components returns 2 for a complex type, 1 otherwise: the float64 values of one element.
func (d DType) components() int {
	if d == Complex64 || d == Complex128 {
		return 2
	}
	return 1
}

// ParseDType returns the DType named s: "float64" ("f8"), "float32" ("f4"), "float16"
// ("f2") or "bfloat16".
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(s) {
	case "float64", "f8", "f64", "double":
		return Float64, nil
	case "float32", "f4", "f32", "float":
		return Float32, nil
	case "float16", "f2", "f16", "half":
		return Float16, nil
	case "bfloat16", "bf16":
		return BFloat16, nil
	case "complex64", "c8":
		return Complex64, nil
	case "complex128", "c16":
		return Complex128, nil
	}
	return 0, fmt.Errorf("arrays: unknown dtype %q (want float64, float32, float16 or bfloat16)", s)
}

// checkWritable reports whether a writer of NumPy files can write dtype d (NumPy has no
// bfloat16).
func checkWritable(d DType) error {
	if d != Float64 && d != Float32 {
		return fmt.Errorf("arrays: cannot write %s to a NumPy file: NumPy has float32 and float64, not bfloat16 (safetensors and torch files hold it)", d)
	}
	return nil
}

// decodeFloats converts len(dst) values of type d from src, big- or little-endian: a complex
// element gives two values.
func decodeFloats(dst []float64, src []byte, d DType, big bool) {
	var order binary.ByteOrder = binary.LittleEndian
	if big {
		order = binary.BigEndian
	}
	switch d {
	case Float64, Complex128:
		for i := range dst {
			dst[i] = math.Float64frombits(order.Uint64(src[8*i:]))
		}
	case Float32, Complex64:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(order.Uint32(src[4*i:])))
		}
	case Float16:
		for i := range dst {
			dst[i] = halfToFloat(order.Uint16(src[2*i:]))
		}
	case BFloat16:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(uint32(order.Uint16(src[2*i:])) << 16))
		}
	}
}

// halfToFloat converts an IEEE 754 binary16 value exactly.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 0x1f:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1024+mant, exp-25)
}

// writtenTypes are the element types appendFloats encodes, which every writer's message
// lists (writtenNames), so that none claims another; float16 is read only.
var writtenTypes = []DType{Float64, Float32, BFloat16}

// Writes reports whether the writers write element type d: float64, float32 and bfloat16
// (WrittenNames); float16 and the complex types are read only.
func Writes(d DType) bool { return slices.Contains(writtenTypes, d) }

// WrittenNames lists the element types the writers write, as messages say them: "float64,
// float32 or bfloat16".
func WrittenNames() string { return writtenNames(DType.String) }

// writtenNames lists writtenTypes as name writes each: "float64, float32 or bfloat16".
func writtenNames(name func(DType) string) string {
	names := make([]string, len(writtenTypes))
	for i, d := range writtenTypes {
		names[i] = name(d)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// appendFloats appends the little-endian encoding of data as d (one of writtenTypes, rounded
// to nearest even). A value beyond the range of d is an error, since it would become
// infinite.
func appendFloats(dst []byte, data []float64, d DType) ([]byte, error) {
	if !Writes(d) {
		return nil, fmt.Errorf("arrays: cannot write %s: writers write %s", d, WrittenNames())
	}
	switch d {
	case Float64:
		for _, x := range data {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
		}
	case Float32:
		for i, x := range data {
			f := float32(x)
			if math.IsInf(float64(f), 0) && !math.IsInf(x, 0) {
				return nil, fmt.Errorf("arrays: entry %d (%g) overflows float32", i, x)
			}
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
		}
	case BFloat16:
		for i, x := range data {
			b := ToBFloat16(x)
			if math.IsInf(float64(math.Float32frombits(uint32(b)<<16)), 0) && !math.IsInf(x, 0) {
				return nil, fmt.Errorf("arrays: entry %d (%g) overflows bfloat16", i, x)
			}
			dst = binary.LittleEndian.AppendUint16(dst, b)
		}
	default:
		panic(fmt.Sprintf("arrays: %s is in writtenTypes but not encoded", d))
	}
	return dst, nil
}

// ToBFloat16 rounds x to bfloat16 (to nearest, ties to even, through float32) and returns its
// bits.
func ToBFloat16(x float64) uint16 {
	u := math.Float32bits(float32(x))
	if u&0x7fffffff > 0x7f800000 { // NaN: keep it a NaN
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// UnitRoundoff returns d's unit roundoff, the largest relative error of rounding a number to
// it: 2⁻⁵³ for Float64 (and Complex128), 2⁻²⁴ for Float32 (and Complex64), 2⁻¹¹ for Float16
// and 2⁻⁸ for BFloat16 (8 significand bits).
func (d DType) UnitRoundoff() float64 {
	switch d {
	case Float32, Complex64:
		return 0x1p-24
	case Float16:
		return 0x1p-11
	case BFloat16:
		return 0x1p-8
	}
	return 0x1p-53
}

// Round returns x rounded to d as a writer stores it (x itself for Float64).
func (d DType) Round(x float64) float64 {
	switch d {
	case Float32:
		return float64(float32(x))
	case BFloat16:
		return float64(math.Float32frombits(uint32(ToBFloat16(x)) << 16))
	}
	return x
}

// Packed is the compact JSON form of an array: its float64 values, little-endian, in C
// order, base64-encoded (RFC 4648 with padding):
//
//	{"dtype": "<f8", "shape": [2, 3], "data": "AAAAAAAA8D8…"}
//
// dtype is always "<f8". ssmlab's session files write every array of more than InlineMax
// numbers this way (docs/formats.md, "Session files").
type Packed struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Data  string `json:"data"`
}

// PackedDType is the only dtype of a Packed array.
const PackedDType = "<f8"

// Pack returns the packed form of a.
func Pack(a *Array) Packed {
	buf, _ := appendFloats(make([]byte, 0, 8*len(a.Data)), a.Data, Float64) // float64 never fails
	shape := append([]int{}, a.Shape...)
	return Packed{DType: PackedDType, Shape: shape, Data: base64.StdEncoding.EncodeToString(buf)}
}

// Unpack decodes p. It checks the dtype, the shape and the length of the data before it
// allocates the values, and rejects NaN and infinities.
func (p Packed) Unpack() (*Array, error) {
	if p.DType != PackedDType {
		return nil, unsupportedf("packed array dtype %q (want %q)", p.DType, PackedDType)
	}
	n, err := checkShape(p.Shape)
	if err != nil {
		return nil, err
	}
	if got := base64.StdEncoding.DecodedLen(len(p.Data)); got < 8*n || got > 8*n+2 {
		return nil, invalidf("packed array of shape %s needs %d bytes of data, its base64 text holds about %d", ShapeString(p.Shape), 8*n, got)
	}
	if strings.ContainsAny(p.Data, "\r\n") {
		// Line breaks, which base64 skips, would shift the chunks' quanta: whole.
		raw, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return nil, invalidf("packed array data is not base64: %v", err)
		}
		if len(raw) != 8*n {
			return nil, invalidf("packed array of shape %s needs %d bytes of data, got %d", ShapeString(p.Shape), 8*n, len(raw))
		}
		data := make([]float64, n)
		decodeFloats(data, raw, Float64, false)
		return New(p.Shape, data)
	}
	// Decoded a chunk at a time straight into the values (a copy of the text and of its bytes
	// would each be as large as the values).
	data := make([]float64, n)
	chunk := make([]byte, 0, packChunk)
	raw := make([]byte, base64.StdEncoding.DecodedLen(packChunk))
	got := 0
	for off := 0; off < len(p.Data); off += packChunk {
		chunk = append(chunk[:0], p.Data[off:min(off+packChunk, len(p.Data))]...)
		m, err := base64.StdEncoding.Decode(raw, chunk)
		if err != nil {
			return nil, invalidf("packed array data is not base64: %v", offsetErr(err, off))
		}
		if got+m > 8*n {
			return nil, invalidf("packed array of shape %s needs %d bytes of data, got more", ShapeString(p.Shape), 8*n)
		}
		decodeFloats(data[got/8:(got+m)/8], raw[:m], Float64, false)
		got += m
	}
	if got != 8*n {
		return nil, invalidf("packed array of shape %s needs %d bytes of data, got %d", ShapeString(p.Shape), 8*n, got)
	}
	return New(p.Shape, data)
}

// packChunk is the base64 text Unpack decodes at a time: a multiple of 4 characters (whole
// quanta) that decodes to a multiple of 8 bytes (whole float64 values).
const packChunk = 4 << 12

// offsetErr moves a base64 error's offset by off, the chunk's place in the whole text.
func offsetErr(err error, off int) error {
	if c, ok := err.(base64.CorruptInputError); ok {
		return base64.CorruptInputError(int64(c) + int64(off))
	}
	return err
}

// MarshalJSON writes an array of at most InlineMax numbers as nested JSON arrays of numbers
// (a scalar as a number), and a larger one, or an empty one of more than one dimension
// (whose shape nested arrays cannot carry), as a Packed object. Numbers are written in the
// shortest form that reads back to the same float64.
func (a *Array) MarshalJSON() ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if len(a.Data) > InlineMax || (len(a.Data) == 0 && len(a.Shape) != 1) {
		return json.Marshal(Pack(a))
	}
	var b []byte
	var nest func(dim, off int) int
	nest = func(dim, off int) int {
		if dim == len(a.Shape) {
			b = AppendNumber(b, a.Data[off])
			return off + 1
		}
		b = append(b, '[')
		for i := range a.Shape[dim] {
			if i > 0 {
				b = append(b, ", "...)
			}
			off = nest(dim+1, off)
		}
		b = append(b, ']')
		return off
	}
	nest(0, 0)
	return b, nil
}

// UnmarshalJSON reads either form MarshalJSON writes: a Packed object, or nested arrays of
// numbers of a rectangular shape (a bare number is a scalar). Values must be finite.
func (a *Array) UnmarshalJSON(data []byte) error {
	v, err := decodeJSONArray(data)
	if err != nil {
		return err
	}
	*a = *v
	return nil
}

// AppendNumber appends x as encoding/json writes a float64: the shortest decimal that reads
// back to x, in exponent form below 1e-6 and from 1e21.
func AppendNumber(b []byte, x float64) []byte {
	abs := math.Abs(x)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
