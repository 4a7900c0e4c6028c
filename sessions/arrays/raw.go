package arrays

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Raw tensors are tensors as a file stores them, whatever their element type (integers and
// booleans too), for copying a checkpoint's tensors from one file to another bit for bit:
// RawInfos lists them, ReadRaw reads one as little-endian bytes in C order, WriteRaw writes
// a file of them. Element types go by their safetensors names (RawTypes). A raw tensor may
// be larger than MaxElements (an embedding of a large model): it is listed up to
// MaxListed elements and read up to MaxRawBytes, one at a time.

// MaxListed is the most elements a safetensors or torch.save tensor may declare: 2^36. Read
// converts at most MaxElements of them to float64; ReadRaw copies up to MaxRawBytes.
const MaxListed = 1 << 36

// MaxRawBytes is the largest tensor ReadRaw reads: 16 GiB, beyond the largest tensor of a
// 70B-parameter model in float32.
const MaxRawBytes = 1 << 34

// rawType describes an element type.
type rawType struct {
	name  string // as torch and NumPy name it ("float64", "int64"): every listing's spelling
	size  int
	part  int    // bytes swapped together to change byte order: a complex element's halves
	torch string // the torch.save storage class, "" where ssmlab writes none
	numpy string // NumPy's type code without its byte order ("f8"), "" where NumPy has none
	float DType  // the DType Read converts it from; 0 with ok false for the others
	ok    bool
}

// RawTypes lists the element types of raw tensors, by their safetensors names (C64 and C128,
// complex pairs of float32 and float64, are torch's and NumPy's; safetensors has none).
var RawTypes = []string{"F64", "F32", "F16", "BF16", "C64", "C128", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL", "F8_E5M2", "F8_E4M3"}

var rawTypes = map[string]rawType{
	"F64": {"float64", 8, 8, "DoubleStorage", "f8", Float64, true}, "F32": {"float32", 4, 4, "FloatStorage", "f4", Float32, true},
	"F16": {"float16", 2, 2, "HalfStorage", "f2", Float16, true}, "BF16": {"bfloat16", 2, 2, "BFloat16Storage", "", BFloat16, true},
	"C64": {"complex64", 8, 4, "ComplexFloatStorage", "c8", Complex64, true}, "C128": {"complex128", 16, 8, "ComplexDoubleStorage", "c16", Complex128, true},
	"I64": {"int64", 8, 8, "LongStorage", "i8", 0, false}, "I32": {"int32", 4, 4, "IntStorage", "i4", 0, false},
	"I16": {"int16", 2, 2, "ShortStorage", "i2", 0, false}, "I8": {"int8", 1, 1, "CharStorage", "i1", 0, false},
	"U64": {"uint64", 8, 8, "", "u8", 0, false}, "U32": {"uint32", 4, 4, "", "u4", 0, false}, "U16": {"uint16", 2, 2, "", "u2", 0, false},
	"U8": {"uint8", 1, 1, "ByteStorage", "u1", 0, false}, "BOOL": {"bool", 1, 1, "BoolStorage", "b1", 0, false},
	"F8_E5M2": {"float8_e5m2", 1, 1, "", "", 0, false}, "F8_E4M3": {"float8_e4m3fn", 1, 1, "", "", 0, false},
}

// RawType returns the raw element type a float DType is written as: "F64", "F32", "F16" or
// "BF16".
func RawType(d DType) string {
	for name, t := range rawTypes {
		if t.ok && t.float == d && t.part == t.size {
			return name
		}
	}
	panic(fmt.Sprintf("arrays: no raw type for %v", d))
}

// WrittenRawType returns the element type the writers write raw type raw (RawTypes: "F64",
// "BF16", …) as in a file of format f, and false where they write none: a type Writes
// refuses (float16, complex, integers), or one NumPy has none of (bfloat16) in an .npz file.
func WrittenRawType(raw string, f Format) (DType, bool) {
	rt, ok := rawTypes[raw]
	if !ok || !rt.ok || !Writes(rt.float) || f == FormatNPZ && rt.numpy == "" {
		return 0, false
	}
	return rt.float, true
}

// RawInfo names a raw tensor, its element type (RawTypes) and its shape (a complex tensor's
// shape has no trailing 2).
type RawInfo struct {
	Name  string
	DType string
	Shape []int
	// Tied names an earlier tensor this one is the very same view of (one storage, offset,
	// shape and strides: a torch.save file's tied weights, an embedding and the output layer
	// that shares it), or "". WriteRaw writes tied tensors to a torch.save file as one
	// storage, as torch.save does, and to the other containers, which share none, as copies.
	// Tensors that share a storage otherwise (views at other offsets) are copies.
	Tied string
}

// Bytes returns the size of the tensor's data.
func (r RawInfo) Bytes() int64 {
	n := int64(rawTypes[r.DType].size)
	for _, d := range r.Shape {
		n *= int64(d)
	}
	return n
}

// rawElements counts the elements of a shape of at most MaxListed elements.
func rawElements(shape []int) (int64, error) {
	if len(shape) > MaxDims {
		return 0, invalidf("%d dimensions exceed the limit of %d", len(shape), MaxDims)
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, invalidf("shape %s has a negative dimension", ShapeString(shape))
		}
		if d > MaxListed || n > 0 && int64(d) > MaxListed/n {
			return 0, invalidf("shape %s exceeds the limit of %d elements", ShapeString(shape), int64(MaxListed))
		}
		n *= int64(d)
	}
	return n, nil
}

// rawTypeNamed returns the raw type of an element type's name ("float64": "F64"), as torch
// names its dtypes (torchDTypes).
func rawTypeNamed(name string) (string, bool) {
	for raw, t := range rawTypes {
		if t.name == name {
			return raw, true
		}
	}
	return "", false
}

// RawTypeName names raw type raw (RawTypes: "F16", "BF16", …) as every listing and message
// names element types, whatever the container: "float16", "bfloat16"; raw itself where it
// is no raw type.
func RawTypeName(raw string) string {
	if rt, ok := rawTypes[raw]; ok {
		return rt.name
	}
	return raw
}

// listed returns infos with their element types named as every listing names them
// (rawType.name), whatever the container; raw gives the raw type of a file's spelling, and
// a type without one keeps that spelling.
func listed(infos []Info, raw func(dtype string) (string, bool)) []Info {
	out := cloneInfos(infos)
	for i := range out {
		if r, ok := raw(out[i].DType); ok {
			out[i].DType = rawTypes[r].name
		}
	}
	return out
}

// npyRawType maps a .npy type string to a raw type and its byte order.
func npyRawType(descr string) (string, bool, bool) {
	if len(descr) < 3 {
		return "", false, false
	}
	order, code := descr[0], descr[1:]
	if order != '<' && order != '>' && order != '|' {
		return "", false, false
	}
	for name, t := range rawTypes {
		if t.numpy == code && (order != '|' || t.size == 1) {
			return name, order == '>', true
		}
	}
	return "", false, false
}

// RawInfos lists the tensors of a safetensors, torch.save or .npz file as raw tensors, in the
// file's order. An .npy or CSV file holds one array and no checkpoint.
func (af *File) RawInfos() ([]RawInfo, error) {
	var out []RawInfo
	switch af.Format {
	case FormatSafetensors:
		for _, in := range af.st.infos {
			out = append(out, RawInfo{Name: in.Name, DType: in.DType, Shape: slices.Clone(in.Shape)})
		}
	case FormatTorch:
		first := map[string]string{} // a view, as tiedKey spells it → the first tensor that is it
		for _, in := range af.torch.infos {
			tt := af.torch.tensors[in.Name]
			name, ok := rawTypeNamed(torchDTypes[tt.storage.dtype].name)
			if !ok {
				return nil, unsupportedf("torch: tensor %q has dtype %s, which ssmlab cannot copy", in.Name, torchDTypes[tt.storage.dtype].name)
			}
			k := tt.tiedKey()
			out = append(out, RawInfo{Name: in.Name, DType: name, Shape: slices.Clone(tt.size), Tied: first[k]})
			if first[k] == "" {
				first[k] = in.Name
			}
		}
	case FormatNPZ:
		for _, in := range af.npz.infos {
			name, _, ok := npyRawType(in.DType)
			if !ok {
				return nil, unsupportedf("npz: array %q has dtype %q, which ssmlab cannot copy", in.Name, truncate(in.DType, 40))
			}
			shape := slices.Clone(in.Shape)
			if in.Complex {
				shape = shape[:len(shape)-1]
			}
			out = append(out, RawInfo{Name: in.Name, DType: name, Shape: shape})
		}
	default:
		return nil, af.noTensors()
	}
	return out, nil
}

// ReadRaw reads a tensor's elements as little-endian bytes in C order (RawInfos gives its
// type and shape), at most MaxRawBytes of them.
func (af *File) ReadRaw(name string) ([]byte, error) {
	switch af.Format {
	case FormatSafetensors:
		return af.st.readRaw(name)
	case FormatTorch:
		return af.torch.readRaw(name)
	case FormatNPZ:
		return af.npz.readRaw(name)
	}
	return nil, af.noTensors()
}

// noTensors is the error of RawInfos and ReadRaw on an .npy or CSV file.
func (af *File) noTensors() error {
	return unsupportedf("a %s file holds one array, not a checkpoint's tensors", af.Format)
}

func rawTooLarge(name string, n int64) error {
	return invalidf("tensor %q holds %d bytes, more than the limit of %d", name, n, int64(MaxRawBytes))
}

func (s *Safetensors) readRaw(name string) ([]byte, error) {
	off, ok := s.offsets[name]
	if !ok {
		return nil, notFound(name, s.infos)
	}
	if off[1]-off[0] > MaxRawBytes {
		return nil, rawTooLarge(name, off[1]-off[0])
	}
	raw := make([]byte, off[1]-off[0]) // the header's layout was checked against the file
	if _, err := s.r.ReadAt(raw, s.base+off[0]); err != nil && !(err == io.EOF && len(raw) == 0) {
		return nil, err
	}
	return raw, nil
}

func (t *Torch) readRaw(name string) ([]byte, error) {
	tt, ok := t.tensors[name]
	if !ok {
		return nil, notFound(name, t.infos)
	}
	raw, _ := rawTypeNamed(torchDTypes[tt.storage.dtype].name) // every torch dtype has one
	rt := rawTypes[raw]
	n, _ := rawElements(tt.size) // checked by rebuildTensor
	if n == 0 {
		return []byte{}, nil
	}
	last := tt.offset
	for i, s := range tt.stride {
		last += int64(tt.size[i]-1) * s
	}
	span := last - tt.offset + 1
	if n > span {
		return nil, unsupportedf("torch: tensor %q repeats elements of its storage (a stride of 0, as expand makes); save a contiguous copy (tensor.contiguous())", name)
	}
	size := int64(rt.size)
	if span*size > MaxRawBytes {
		return nil, rawTooLarge(name, span*size)
	}
	flat, err := t.readStorage(tt.storage.key, tt.offset*size, span*size)
	if err != nil {
		return nil, within(err, fmt.Sprintf("torch: tensor %q", name))
	}
	out := flat
	if n != span || !contiguous(tt.size, tt.stride) {
		out = make([]byte, 0, n*size)
		idx := make([]int, len(tt.size))
		for range n {
			var off int64
			for k, i := range idx {
				off += int64(i) * tt.stride[k]
			}
			out = append(out, flat[off*size:(off+1)*size]...)
			for k := len(idx) - 1; k >= 0; k-- {
				if idx[k]++; idx[k] < tt.size[k] {
					break
				}
				idx[k] = 0
			}
		}
	}
	if t.big {
		swapBytes(out, rt.part)
	}
	return out, nil
}

// contiguous reports whether strides are those of a C-ordered array of shape.
func contiguous(shape []int, stride []int64) bool {
	s := int64(1)
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] != 1 && stride[k] != s {
			return false
		}
		s *= int64(shape[k])
	}
	return true
}

// swapBytes reverses the byte order of each part-byte group of b.
func swapBytes(b []byte, part int) {
	if part < 2 {
		return
	}
	for i := 0; i+part <= len(b); i += part {
		slices.Reverse(b[i : i+part])
	}
}

func (z *NPZ) readRaw(name string) ([]byte, error) {
	f, ok := z.files[name]
	if !ok {
		return nil, notFound(name, z.infos)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, invalidf("npz: entry %q: %s", f.Name, trimZip(err))
	}
	defer rc.Close()
	h, err := readNPYHeader(rc)
	if h == nil {
		return nil, within(err, fmt.Sprintf("npz: entry %q", f.Name))
	}
	typ, big, ok := npyRawType(h.descr)
	if !ok {
		return nil, unsupportedf("npz: entry %q has dtype %q, which ssmlab cannot copy", f.Name, truncate(h.descr, 40))
	}
	rt := rawTypes[typ]
	n := int64(h.n) * int64(rt.size)
	raw, err := io.ReadAll(io.LimitReader(rc, n))
	if err != nil {
		return nil, invalidf("npz: entry %q: %s", f.Name, trimZip(err))
	}
	if int64(len(raw)) != n {
		return nil, invalidf("npz: entry %q: truncated: %d bytes of data, the header declares %d", f.Name, len(raw), n)
	}
	if err := finishEntry(rc); err != nil {
		return nil, within(entryErr(err), fmt.Sprintf("npz: entry %q", f.Name))
	}
	if h.fortran && len(h.shape) > 1 {
		raw = fortranBytesToC(raw, h.shape, rt.size)
	}
	if big {
		swapBytes(raw, rt.part)
	}
	return raw, nil
}

// fortranBytesToC reorders the elements of a Fortran-ordered array to C order.
func fortranBytesToC(src []byte, shape []int, size int) []byte {
	out := make([]byte, 0, len(src))
	idx := make([]int, len(shape))
	for range len(src) / size {
		off, stride := 0, 1
		for k := range shape {
			off += idx[k] * stride
			stride *= shape[k]
		}
		out = append(out, src[off*size:(off+1)*size]...)
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out
}

// EncodeRaw returns values as the raw elements of a float type the writers write ("F64",
// "F32" or "BF16": writtenTypes), rounded to nearest; a value beyond the type's range is an
// error.
func EncodeRaw(values []float64, dtype string) ([]byte, error) {
	rt, ok := rawTypes[dtype]
	if !ok || !rt.ok || rt.part != rt.size || !slices.Contains(writtenTypes, rt.float) {
		return nil, fmt.Errorf("arrays: cannot encode values as %s: want %s", dtype, writtenNames(RawType))
	}
	return appendFloats(make([]byte, 0, len(values)*rt.size), values, rt.float)
}

// RawOptions control WriteRaw.
type RawOptions struct {
	// Metadata is a safetensors file's "__metadata__" map (written when not empty; other
	// formats have none).
	Metadata map[string]string
	// Compress deflates the entries of an .npz file.
	Compress bool
}

// CheckHeld returns an error where a file of format f cannot hold raw tensor in's type
// (complex in safetensors, bfloat16 in NumPy files) or its shape, as WriteRaw refuses it; a
// writer of a whole checkpoint checks so before the work that ends in writing it. The type is
// named as listings name it (complex64, not C64): distill says this to its user.
func CheckHeld(f Format, in RawInfo) error {
	rt, ok := rawTypes[in.DType]
	if !ok {
		return fmt.Errorf("arrays: tensor %q has the unknown type %q", in.Name, in.DType)
	}
	if _, err := rawElements(in.Shape); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	switch {
	case f == FormatSafetensors && (in.DType == "C64" || in.DType == "C128"):
		return fmt.Errorf("arrays: tensor %q is %s, which safetensors cannot hold", in.Name, rt.name)
	case f == FormatTorch && rt.torch == "":
		return fmt.Errorf("arrays: tensor %q is %s, which ssmlab does not write to torch.save files", in.Name, rt.name)
	case f == FormatNPZ && rt.numpy == "":
		return fmt.Errorf("arrays: tensor %q is %s, which NumPy files cannot hold", in.Name, rt.name)
	}
	return nil
}

// WriteRaw writes tensors to w as a file of format f (safetensors, torch.save or .npz):
// infos declares them, in order, and data(i) returns tensor i's raw bytes when the writer
// comes to them, so that a checkpoint larger than memory is written one tensor at a time.
// The files are those EncodeSafetensors, EncodeTorch and WriteNPZ write: the same bytes for
// the same tensors.
func WriteRaw(w io.Writer, f Format, infos []RawInfo, o RawOptions, data func(i int) ([]byte, error)) error {
	seen := make(map[string]int, len(infos))
	for i, in := range infos {
		if in.Name == "" {
			return fmt.Errorf("arrays: an array has no name")
		}
		if !ValidName(in.Name) {
			return fmt.Errorf("arrays: tensor %q: its name is not valid UTF-8", in.Name)
		}
		if _, ok := seen[in.Name]; ok {
			return fmt.Errorf("arrays: two arrays are named %q", in.Name)
		}
		seen[in.Name] = i
		if in.Tied != "" {
			j, ok := seen[in.Tied]
			if !ok || infos[j].Tied != "" || infos[j].DType != in.DType || !slices.Equal(infos[j].Shape, in.Shape) {
				return fmt.Errorf("arrays: tensor %q is tied to %q, which is no earlier untied tensor of its type and shape (%s %s)", in.Name, in.Tied, in.DType, ShapeString(in.Shape))
			}
		}
		if err := CheckHeld(f, in); err != nil {
			return err
		}
	}
	get := func(i int) ([]byte, error) {
		b, err := data(i)
		if err != nil {
			return nil, err
		}
		if int64(len(b)) != infos[i].Bytes() {
			return nil, fmt.Errorf("arrays: tensor %q: %d bytes of data for shape %s of %s (%d bytes)", infos[i].Name, len(b), ShapeString(infos[i].Shape), infos[i].DType, infos[i].Bytes())
		}
		return b, nil
	}
	switch f {
	case FormatSafetensors:
		return writeSafetensorsRaw(w, infos, o.Metadata, get)
	case FormatTorch:
		return writeTorchRaw(w, infos, get)
	case FormatNPZ:
		return writeNPZRaw(w, infos, o.Compress, get)
	}
	return fmt.Errorf("arrays: cannot write a %s file of tensors (want safetensors, torch or npz)", f)
}

func writeSafetensorsRaw(w io.Writer, infos []RawInfo, meta map[string]string, data func(int) ([]byte, error)) error {
	var hdr strings.Builder
	hdr.WriteByte('{')
	if len(meta) > 0 {
		keys := make([]string, 0, len(meta))
		for k := range meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		hdr.WriteString(`"__metadata__":{`)
		for i, k := range keys {
			if i > 0 {
				hdr.WriteByte(',')
			}
			hdr.Write(quote(k))
			hdr.WriteByte(':')
			hdr.Write(quote(meta[k]))
		}
		hdr.WriteByte('}')
	}
	var off int64
	for i, in := range infos {
		if in.Name == "__metadata__" {
			return fmt.Errorf("arrays: the tensor name __metadata__ is reserved")
		}
		if i > 0 || len(meta) > 0 {
			hdr.WriteByte(',')
		}
		hdr.Write(quote(in.Name))
		shape := in.Shape
		if shape == nil {
			shape = []int{}
		}
		sh, _ := json.Marshal(shape)
		fmt.Fprintf(&hdr, `:{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}`, in.DType, sh, off, off+in.Bytes())
		off += in.Bytes()
	}
	hdr.WriteByte('}')
	h := hdr.String()
	if len(h) > MaxSafetensorsHeader {
		return fmt.Errorf("arrays: the safetensors header would be %d bytes, more than the limit of %d", len(h), MaxSafetensorsHeader)
	}
	h += strings.Repeat(" ", (8-len(h)%8)%8)
	if _, err := w.Write(append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), h...)); err != nil {
		return err
	}
	for i := range infos {
		b, err := data(i)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// writeTorchRaw writes a torch.save zip file holding an OrderedDict of name → tensor
// (contiguous, on the CPU), which torch.load(PATH, weights_only=True) and a module's
// load_state_dict read. The pickle uses protocol 2 and names only collections.OrderedDict,
// torch._utils._rebuild_tensor_v2 and the storage classes.
func writeTorchRaw(w io.Writer, infos []RawInfo, data func(int) ([]byte, error)) error {
	var p bytes.Buffer
	p.WriteString("\x80\x02ccollections\nOrderedDict\n)R(")
	pickleStr := func(s string) {
		p.WriteByte('X')
		p.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
		p.WriteString(s)
	}
	pickleInt := func(x int64) {
		if x >= -1<<31 && x < 1<<31 {
			p.WriteByte('J') // BININT, 4 bytes
			p.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(x))))
			return
		}
		p.WriteString("\x8a\x08") // LONG1 of 8 bytes
		p.Write(binary.LittleEndian.AppendUint64(nil, uint64(x)))
	}
	pickleInts := func(v []int64) {
		p.WriteByte('(')
		for _, x := range v {
			pickleInt(x)
		}
		p.WriteByte('t')
	}
	key := make([]int, len(infos)) // each tensor's storage: its own, or the one it is tied to
	index := make(map[string]int, len(infos))
	for i, in := range infos {
		index[in.Name], key[i] = i, i
		if in.Tied != "" {
			key[i] = index[in.Tied] // an earlier tensor: WriteRaw checked
		}
		shape := make([]int64, len(in.Shape))
		stride := make([]int64, len(in.Shape))
		s := int64(1)
		for k := len(in.Shape) - 1; k >= 0; k-- {
			shape[k], stride[k] = int64(in.Shape[k]), s
			s *= int64(in.Shape[k])
		}
		pickleStr(in.Name)
		p.WriteString("ctorch._utils\n_rebuild_tensor_v2\n((")
		pickleStr("storage")
		p.WriteString("ctorch\n" + rawTypes[in.DType].torch + "\n")
		pickleStr(strconv.Itoa(key[i]))
		pickleStr("cpu")
		pickleInt(s)
		p.WriteString("tQK\x00")
		pickleInts(shape)
		pickleInts(stride)
		p.WriteString("\x89ccollections\nOrderedDict\n)RtR")
	}
	p.WriteString("u.")

	cw := &countWriter{w: w}
	zw := zip.NewWriter(cw)
	add := func(name string, data []byte) error {
		// Pad the local header's extra field so that the data starts at a multiple of
		// torchAlign, as torch's writer does (it memory-maps storages).
		//lint:ignore SA1019 Modified would add an extra field and move the aligned data (zipDate).
		hdr := &zip.FileHeader{Name: name, Method: zip.Store, ModifiedDate: zipDate,
			CRC32: crc32.ChecksumIEEE(data), CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))}
		if err := zw.Flush(); err != nil {
			return err
		}
		start := cw.n + 30 + int64(len(name)) + 4
		if len(data) >= 1<<32-1 {
			start += 20 // the zip64 extra field archive/zip puts first
		}
		pad := (torchAlign - start%torchAlign) % torchAlign
		hdr.Extra = append([]byte{'F', 'B', byte(pad), byte(pad >> 8)}, make([]byte, pad)...)
		fw, err := zw.CreateRaw(hdr)
		if err != nil {
			return err
		}
		_, err = fw.Write(data)
		return err
	}
	if err := add("archive/data.pkl", p.Bytes()); err != nil {
		return err
	}
	if err := add("archive/byteorder", []byte("little")); err != nil {
		return err
	}
	for i := range infos {
		if key[i] != i {
			continue // its storage is the one it is tied to
		}
		b, err := data(i)
		if err != nil {
			return err
		}
		if err := add("archive/data/"+strconv.Itoa(i), b); err != nil {
			return err
		}
	}
	if err := add("archive/version", []byte("3\n")); err != nil {
		return err
	}
	return zw.Close()
}

// npyHeader returns the version 1.0 .npy header of a C-ordered array, padded as numpy.save
// pads it: the data starts at a multiple of 64 bytes.
func npyHeaderBytes(descr string, shape []int) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, ShapeString(shape))
	total := len(npyMagic) + 4 + len(dict) + 1
	pad := (64 - total%64) % 64
	hlen := len(dict) + pad + 1
	out := make([]byte, 0, len(npyMagic)+4+hlen)
	out = append(out, npyMagic...)
	out = append(out, 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(hlen))
	out = append(out, dict...)
	out = append(out, bytes.Repeat([]byte{' '}, pad)...)
	return append(out, '\n')
}

// npyDescr is the .npy type string of a raw type: little-endian, or "|" for single bytes.
func npyDescr(dtype string) string {
	rt := rawTypes[dtype]
	if rt.size == 1 {
		return "|" + rt.numpy
	}
	return "<" + rt.numpy
}

func writeNPZRaw(w io.Writer, infos []RawInfo, compress bool, data func(int) ([]byte, error)) error {
	zw := zip.NewWriter(w)
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	for i, in := range infos {
		b, err := data(i)
		if err != nil {
			return err
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: in.Name + ".npy", Method: method, Modified: zipTime})
		if err != nil {
			return err
		}
		if _, err := fw.Write(npyHeaderBytes(npyDescr(in.DType), in.Shape)); err != nil {
			return err
		}
		if _, err := fw.Write(b); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeArrays writes float arrays as tensors of dtype d with WriteRaw; each array must be
// valid (finite values of its shape).
func writeArrays(w io.Writer, f Format, arrays []Named, d DType, o RawOptions) error {
	infos := make([]RawInfo, len(arrays))
	for i, a := range arrays {
		if err := a.Array.Validate(); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
		infos[i] = RawInfo{Name: a.Name, DType: RawType(d), Shape: a.Array.Shape}
	}
	return WriteRaw(w, f, infos, o, func(i int) ([]byte, error) {
		b, err := appendFloats(make([]byte, 0, len(arrays[i].Array.Data)*d.Size()), arrays[i].Array.Data, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arrays[i].Name, err)
		}
		return b, nil
	})
}
