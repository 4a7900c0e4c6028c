package arrays

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/ssmlab/ssmlab/internal/strictjson"
)

// The safetensors format (huggingface/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON header
//
//	{"__metadata__": {"k": "v"}, "NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, …}
//
// beginning with '{' and possibly padded with spaces, then the byte buffer. Offsets are
// relative to the buffer; the tensors must cover it exactly, without holes or overlaps.
// Data is little-endian, in C order.

// MaxSafetensorsHeader is the longest header accepted, as in the reference implementation
// (100 MB).
const MaxSafetensorsHeader = 100_000_000

// safetensorsSizes maps every dtype of the format to its element size in bytes, so that a
// file holding tensors ssmlab cannot convert still validates; readFloat lists the ones Read
// converts.
var safetensorsSizes = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

var safetensorsFloats = map[string]DType{"F64": Float64, "F32": Float32, "F16": Float16, "BF16": BFloat16}

// Safetensors is an open .safetensors file. Open reads and checks only the header; Read
// reads one tensor, so a large checkpoint costs only the tensors asked for.
type Safetensors struct {
	r        io.ReaderAt
	base     int64  // offset of the byte buffer in r
	infos    []Info // DType as the header spells it ("F64"); Arrays names it
	offsets  map[string][2]int64
	Metadata map[string]string // the "__metadata__" map, nil when absent
}

// OpenSafetensors reads and checks the header of the file in r (of the given size): the
// header length against the file, the JSON (strictly: no duplicate or unknown keys), every
// dtype and shape, and that the tensors' byte ranges match their shapes and tile the buffer.
func OpenSafetensors(r io.ReaderAt, size int64) (*Safetensors, error) {
	var pre [8]byte
	if size < 8 {
		return nil, invalidf("safetensors: truncated: the file has %d bytes, too few for the header length", size)
	}
	if _, err := r.ReadAt(pre[:], 0); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(pre[:])
	if n > MaxSafetensorsHeader {
		return nil, invalidf("safetensors: header length %d exceeds the limit of %d bytes", n, MaxSafetensorsHeader)
	}
	if int64(n) > size-8 {
		return nil, invalidf("safetensors: header length %d runs past the end of the file (%d bytes)", n, size)
	}
	text := make([]byte, n)
	if _, err := r.ReadAt(text, 8); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, err
	}
	if len(text) == 0 || text[0] != '{' {
		return nil, invalidf("safetensors: the header does not start with '{': not a safetensors file")
	}
	s := &Safetensors{r: r, base: 8 + int64(n), offsets: map[string][2]int64{}}
	if err := s.parseHeader(bytes.TrimRight(text, " ")); err != nil {
		return nil, err
	}
	if err := s.checkLayout(size - s.base); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Safetensors) parseHeader(text []byte) error {
	if !utf8.Valid(text) {
		return invalidf("safetensors: the header is not UTF-8")
	}
	d := strictjson.NewDecoder(text)
	if _, err := d.Token(); err != nil { // '{', checked above
		return stInvalid(err)
	}
	err := d.Members(func(name string) error {
		if name == "__metadata__" {
			return s.parseMetadata(d)
		}
		if len(s.infos) == MaxEntries {
			return invalidf("safetensors: more than %d tensors", MaxEntries)
		}
		info, off, err := parseTensorInfo(d)
		if err != nil {
			return within(err, fmt.Sprintf("safetensors: tensor %q", truncate(name, 80)))
		}
		info.Name = name
		s.infos = append(s.infos, info)
		s.offsets[name] = off
		return nil
	})
	if err == nil {
		err = d.End()
	}
	return stInvalid(err)
}

// stInvalid wraps an error of the JSON reader as ErrInvalid, naming the header; this package's
// own errors pass unchanged.
func stInvalid(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupported) {
		return err
	}
	return invalidf("safetensors: header: %v", err)
}

func (s *Safetensors) parseMetadata(d *strictjson.Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return stInvalid(err)
	}
	s.Metadata = map[string]string{}
	if tok == nil { // null
		return nil
	}
	if tok != json.Delim('{') {
		return invalidf("safetensors: \"__metadata__\" is %s, want an object of strings", strictjson.Describe(tok))
	}
	return d.Members(func(k string) error {
		v, err := d.Token()
		if err != nil {
			return stInvalid(err)
		}
		vs, ok := v.(string)
		if !ok {
			return invalidf("safetensors: \"__metadata__\" value of %q is %s, want a string", truncate(k, 80), strictjson.Describe(v))
		}
		s.Metadata[k] = vs
		return nil
	})
}

// parseTensorInfo reads {"dtype": …, "shape": […], "data_offsets": [begin, end]}.
func parseTensorInfo(d *strictjson.Decoder) (Info, [2]int64, error) {
	var (
		info Info
		off  [2]int64
		seen = map[string]bool{}
	)
	tok, err := d.Token()
	if err != nil {
		return info, off, jsonInvalid(err)
	}
	if tok != json.Delim('{') {
		return info, off, invalidf("is %s, want an object with dtype, shape and data_offsets", strictjson.Describe(tok))
	}
	err = d.Members(func(key string) error {
		seen[key] = true
		switch key {
		case "dtype":
			v, err := d.Token()
			if err != nil {
				return jsonInvalid(err)
			}
			dt, ok := v.(string)
			if !ok {
				return invalidf("dtype is %s, want a string", strictjson.Describe(v))
			}
			if _, known := safetensorsSizes[dt]; !known {
				return unsupportedf("unknown dtype %q", truncate(dt, 20))
			}
			info.DType = dt
			_, info.Supported = safetensorsFloats[dt]
		case "shape":
			ints, err := readInts(d, MaxDims, "shape")
			if err != nil {
				return err
			}
			info.Shape = make([]int, len(ints))
			for i, x := range ints {
				if x > MaxListed {
					return invalidf("shape dimension %d exceeds the limit of %d elements", x, int64(MaxListed))
				}
				info.Shape[i] = int(x)
			}
		case "data_offsets":
			ints, err := readInts(d, 2, "data_offsets")
			if err != nil {
				return err
			}
			if len(ints) != 2 {
				return invalidf("data_offsets has %d entries, want [begin, end]", len(ints))
			}
			off = [2]int64{ints[0], ints[1]}
		default:
			return invalidf("unknown key %q (want dtype, shape and data_offsets)", truncate(key, 40))
		}
		return nil
	})
	if err != nil {
		return info, off, jsonInvalid(err)
	}
	for _, k := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[k] {
			return info, off, invalidf("no %q", k)
		}
	}
	n, err := rawElements(info.Shape)
	if err != nil {
		return info, off, err
	}
	if off[1] < off[0] {
		return info, off, invalidf("data_offsets [%d, %d] end before they begin", off[0], off[1])
	}
	if want := n * int64(safetensorsSizes[info.DType]); off[1]-off[0] != want {
		return info, off, invalidf("shape %s of %s needs %d bytes, data_offsets [%d, %d] give %d",
			ShapeString(info.Shape), info.DType, want, off[0], off[1], off[1]-off[0])
	}
	return info, off, nil
}

// readInts reads an array of at most limit non-negative integers (below 2^62).
func readInts(d *strictjson.Decoder, limit int, what string) ([]int64, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, jsonInvalid(err)
	}
	if tok != json.Delim('[') {
		return nil, invalidf("%s is %s, want an array of integers", what, strictjson.Describe(tok))
	}
	var out []int64
	err = d.Elements(func(int) error {
		if len(out) == limit {
			return invalidf("%s has more than %d entries", what, limit)
		}
		v, err := d.Token()
		if err != nil {
			return jsonInvalid(err)
		}
		num, ok := v.(json.Number)
		if !ok {
			return invalidf("%s holds %s, want integers", what, strictjson.Describe(v))
		}
		x, err := strconv.ParseUint(string(num), 10, 62)
		if err != nil {
			return invalidf("%s holds %.30s, want a non-negative integer below 2^62", what, num)
		}
		out = append(out, int64(x))
		return nil
	})
	return out, jsonInvalid(err)
}

// checkLayout checks that the tensors' byte ranges tile the buffer [0, size) exactly.
func (s *Safetensors) checkLayout(size int64) error {
	type span struct {
		name string
		off  [2]int64
	}
	spans := make([]span, 0, len(s.infos))
	for _, in := range s.infos {
		spans = append(spans, span{in.Name, s.offsets[in.Name]})
	}
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].off[0] != spans[j].off[0] {
			return spans[i].off[0] < spans[j].off[0]
		}
		return spans[i].off[1] < spans[j].off[1]
	})
	var end int64
	for _, sp := range spans {
		switch {
		case sp.off[0] < end:
			return invalidf("safetensors: tensor %q (bytes %d to %d) overlaps the tensor before it, which ends at %d", truncate(sp.name, 80), sp.off[0], sp.off[1], end)
		case sp.off[0] > end:
			return invalidf("safetensors: the buffer has a hole: bytes %d to %d belong to no tensor", end, sp.off[0])
		}
		end = sp.off[1]
	}
	if end != size {
		if end > size {
			return invalidf("safetensors: truncated: the tensors need %d bytes of data, the file holds %d", end, size)
		}
		return invalidf("safetensors: %d bytes after the last tensor belong to no tensor", size-end)
	}
	return nil
}

// Arrays lists the tensors in the order of the header.
func (s *Safetensors) Arrays() []Info {
	return listed(s.infos, func(dtype string) (string, bool) {
		_, ok := rawTypes[dtype]
		return dtype, ok
	})
}

// Read reads and converts the named tensor (F64, F32, F16 or BF16).
func (s *Safetensors) Read(name string) (*Array, error) {
	off, ok := s.offsets[name]
	if !ok {
		return nil, notFound(name, s.infos)
	}
	var info Info
	for _, in := range s.infos {
		if in.Name == name {
			info = in
			break
		}
	}
	d, ok := safetensorsFloats[info.DType]
	if !ok {
		return nil, unsupportedf("safetensors: tensor %q has dtype %s; ssmlab reads F64, F32, F16 and BF16", name, info.DType)
	}
	if _, err := checkShape(info.Shape); err != nil { // listed up to MaxListed, read up to MaxElements
		return nil, within(err, fmt.Sprintf("safetensors: tensor %q", name))
	}
	raw := make([]byte, off[1]-off[0])
	if _, err := s.r.ReadAt(raw, s.base+off[0]); err != nil && !(errors.Is(err, io.EOF) && len(raw) == 0) {
		return nil, err
	}
	data := make([]float64, len(raw)/d.Size())
	decodeFloats(data, raw, d, false)
	a, err := New(info.Shape, data)
	if err != nil {
		return nil, within(err, fmt.Sprintf("safetensors: tensor %q", name))
	}
	return a, nil
}

// SafetensorsOptions control WriteSafetensors.
type SafetensorsOptions struct {
	DType    DType             // Float64 (the zero value, "F64"), Float32 ("F32") or BFloat16 ("BF16")
	Metadata map[string]string // written as "__metadata__" when not empty
}

// EncodeSafetensors returns the arrays as a .safetensors file: the header lists them in
// order, with "__metadata__" first, padded with spaces to a multiple of 8 bytes, and the
// data follows in the same order.
func EncodeSafetensors(arrays []Named, o SafetensorsOptions) ([]byte, error) {
	if !slices.Contains(writtenTypes, o.DType) {
		return nil, fmt.Errorf("arrays: cannot write %s to safetensors: writers write %s", o.DType, writtenNames(DType.String))
	}
	var b bytes.Buffer
	err := writeArrays(&b, FormatSafetensors, arrays, o.DType, RawOptions{Metadata: o.Metadata})
	return b.Bytes(), err
}

// WriteSafetensors writes EncodeSafetensors(arrays, o) to w.
func WriteSafetensors(w io.Writer, arrays []Named, o SafetensorsOptions) error {
	b, err := EncodeSafetensors(arrays, o)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func quote(s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}
