package arrays

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The zip format of torch.save (PyTorch ≥ 1.6; torch/serialization.py, _save): a zip archive
// whose entries sit under one top directory (ARCHIVE/, named after the file):
//
//	ARCHIVE/data.pkl    the pickled object: a state_dict is an OrderedDict of name → tensor
//	ARCHIVE/data/KEY    the raw bytes of storage KEY, in the byte order of ARCHIVE/byteorder
//	                    ("little" when absent)
//	ARCHIVE/version     the format version
//
// A tensor pickles as torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
// requires_grad, backward_hooks[, metadata]), its storage as the persistent ID
// ('storage', torch.FloatStorage, KEY, location, numel).

// legacyTorchMagic starts a torch.save file of the legacy (pre-1.6, non-zip) format: the
// pickled magic number 0x1950a86a20f9469cfc6c.
const legacyTorchMagic = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"

// torchRoots are the keys under which checkpoints keep a model's state_dict: Lightning's
// "state_dict" and the usual names of hand-written checkpoints. The first that holds a dict
// with tensors is read instead of the whole checkpoint, so that optimiser states stay out.
var torchRoots = []string{"state_dict", "model_state_dict", "model", "module"}

// torchDTypes maps torch's storage classes and dtypes to element types; ok is false for those
// Read does not convert (integers, booleans), which are listed as unsupported.
var torchDTypes = map[string]struct {
	name string
	d    DType
	size int
	ok   bool
}{
	"DoubleStorage": {"float64", Float64, 8, true}, "float64": {"float64", Float64, 8, true}, "double": {"float64", Float64, 8, true},
	"FloatStorage": {"float32", Float32, 4, true}, "float32": {"float32", Float32, 4, true}, "float": {"float32", Float32, 4, true},
	"HalfStorage": {"float16", Float16, 2, true}, "float16": {"float16", Float16, 2, true}, "half": {"float16", Float16, 2, true},
	"BFloat16Storage": {"bfloat16", BFloat16, 2, true}, "bfloat16": {"bfloat16", BFloat16, 2, true},
	"ComplexFloatStorage": {"complex64", Complex64, 8, true}, "complex64": {"complex64", Complex64, 8, true}, "cfloat": {"complex64", Complex64, 8, true},
	"ComplexDoubleStorage": {"complex128", Complex128, 16, true}, "complex128": {"complex128", Complex128, 16, true}, "cdouble": {"complex128", Complex128, 16, true},
	"LongStorage": {"int64", 0, 8, false}, "int64": {"int64", 0, 8, false}, "long": {"int64", 0, 8, false},
	"IntStorage": {"int32", 0, 4, false}, "int32": {"int32", 0, 4, false}, "int": {"int32", 0, 4, false},
	"ShortStorage": {"int16", 0, 2, false}, "int16": {"int16", 0, 2, false},
	"CharStorage": {"int8", 0, 1, false}, "int8": {"int8", 0, 1, false},
	"ByteStorage": {"uint8", 0, 1, false}, "uint8": {"uint8", 0, 1, false},
	"BoolStorage": {"bool", 0, 1, false}, "bool": {"bool", 0, 1, false},
}

// torchDType is a storage class or dtype an allowlisted global named.
type torchDType string

// torchStorage is a storage a persistent ID names.
type torchStorage struct {
	key   string
	dtype string // a torchDTypes key
	numel int64
}

// torchTensor is a view of a storage.
type torchTensor struct {
	storage *torchStorage
	offset  int64
	size    []int
	stride  []int64
}

// tiedKey spells the view a tensor is: two tensors of one key are the same elements in the
// same order (RawInfo.Tied).
func (tt *torchTensor) tiedKey() string {
	return fmt.Sprintf("%q %q %d %v %v", tt.storage.key, tt.storage.dtype, tt.offset, tt.size, tt.stride)
}

// torchCallable is an allowlisted function a pickle may call.
type torchCallable string

// Torch is an open torch.save zip file.
type Torch struct {
	r       io.ReaderAt
	size    int64
	files   map[string]*zip.File // storage key → entry
	checked map[string]bool      // storage keys whose entries' checksums were checked
	big     bool
	infos   []Info
	tensors map[string]*torchTensor
	// Root is the key of the checkpoint's dict whose tensors are listed ("state_dict" for a
	// Lightning checkpoint), or "" when the tensors are named from the top.
	Root string
	// skipped names the class of the first object read around (one holding no tensor).
	skipped string
	// nested is whether a tensor sits below the top level of what is read (a dict of dicts);
	// others are the paths of the values read that are no tensors (an epoch, the args), the
	// first maxOthers of them, of othersCount.
	nested      bool
	others      []string
	othersCount int
}

// maxOthers is how many of a file's values that are no tensors Torch names.
const maxOthers = 5

// Flattened says how a torch.save file's tensors sit in what is read (the checkpoint's root
// dict, or the whole file): nested is whether some sit below its top level, others are the
// paths of its values that are no tensors (at most 5 of them) and count their number. A
// writer of a state_dict keeps the tensors alone, named by their paths.
func (t *Torch) Flattened() (nested bool, others []string, count int) {
	return t.nested, slices.Clone(t.others), t.othersCount
}

// other records a value read that is no tensor.
func (t *Torch) other(name string) {
	if name == "" {
		return
	}
	if len(t.others) < maxOthers {
		t.others = append(t.others, name)
	}
	t.othersCount++
}

// IsLegacyTorch reports whether a file starts as a legacy (non-zip) torch.save file does.
func IsLegacyTorch(head []byte) bool { return bytes.HasPrefix(head, []byte(legacyTorchMagic)) }

// errLegacyTorch refuses the legacy format.
var errLegacyTorch = unsupportedf("torch: a torch.save file of the legacy format (PyTorch before 1.6, or _use_new_zipfile_serialization=False); ssmlab reads the zip format: load it in PyTorch and save it again with torch.save(obj, PATH), or with safetensors")

// isTorchZip reports whether a zip archive is a torch.save file: it has an entry DIR/data.pkl.
func isTorchZip(zr *zip.Reader) bool {
	for _, f := range zr.File {
		if dir, base := path.Split(f.Name); base == "data.pkl" && strings.Count(dir, "/") == 1 {
			return true
		}
	}
	return false
}

// OpenTorch reads the pickle of the torch.save zip archive in r (of the given size) and the
// names, dtypes and shapes of its tensors; the tensor data is read by Read. The pickle may
// hold tensors, storages and plain containers only; anything else is refused by name.
func OpenTorch(r io.ReaderAt, size int64) (*Torch, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, invalidf("torch: not a valid zip archive: %v", trimZip(err))
	}
	var pkl *zip.File
	dir := ""
	for _, f := range zr.File {
		if d, base := path.Split(f.Name); base == "data.pkl" && strings.Count(d, "/") == 1 {
			if pkl != nil {
				return nil, invalidf("torch: two data.pkl entries (%q and %q)", pkl.Name, f.Name)
			}
			pkl, dir = f, d
		}
	}
	if pkl == nil {
		return nil, invalidf("torch: the zip archive has no ARCHIVE/data.pkl entry: not a torch.save file")
	}
	for _, f := range zr.File {
		if f.Name == dir+"constants.pkl" {
			return nil, unsupportedf("torch: a TorchScript archive (torch.jit.save); save the model's state_dict with torch.save instead")
		}
	}
	t := &Torch{r: r, size: size, files: map[string]*zip.File{}, checked: map[string]bool{}, tensors: map[string]*torchTensor{}}
	for _, f := range zr.File {
		if key, ok := strings.CutPrefix(f.Name, dir+"data/"); ok && key != "" && !strings.Contains(key, "/") {
			t.files[key] = f
		}
		if f.Name == dir+"byteorder" {
			b, err := readEntry(f, 16)
			if err != nil {
				return nil, err
			}
			switch string(b) {
			case "little":
			case "big":
				t.big = true
			default:
				return nil, invalidf("torch: byteorder %q, want little or big", truncate(string(b), 16))
			}
		}
	}
	if pkl.UncompressedSize64 > maxPickle {
		return nil, invalidf("torch: data.pkl declares %d bytes, more than the limit of %d", pkl.UncompressedSize64, maxPickle)
	}
	data, err := readEntry(pkl, maxPickle)
	if err != nil {
		return nil, err
	}
	root, err := unpickle(data, t.hooks())
	if err != nil {
		return nil, within(err, "torch")
	}
	if d, ok := root.(*pyDict); ok {
		for _, k := range torchRoots {
			if v, ok := d.get(k); ok && holdsTensor(v, 0) {
				root, t.Root = v, k
				break
			}
		}
	}
	w := walker{t: t, seen: map[any]bool{}, clean: map[any]bool{}}
	if err := w.walk(root, "", 0); err != nil {
		return nil, within(err, "torch")
	}
	if len(t.infos) == 0 {
		if t.skipped != "" {
			return nil, within(refusal(t.skipped), "torch") // what it holds is what ssmlab does not read
		}
		return nil, invalidf("torch: the file holds no tensors")
	}
	return t, nil
}

// readEntry reads a whole zip entry of at most limit bytes.
func readEntry(f *zip.File, limit int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, invalidf("torch: entry %q: %s", f.Name, trimZip(err))
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, invalidf("torch: entry %q: %s", f.Name, trimZip(err))
	}
	if int64(len(b)) > limit {
		return nil, invalidf("torch: entry %q is longer than %d bytes", f.Name, limit)
	}
	return b, nil
}

// maxPickleDepth bounds the nesting of containers walked for tensors.
const maxPickleDepth = 64

// holdsTensor reports whether v is a dict holding a tensor, at any depth.
func holdsTensor(v any, depth int) bool {
	d, ok := v.(*pyDict)
	if !ok || depth > maxPickleDepth {
		return false
	}
	for _, x := range d.vals {
		if _, ok := x.(*torchTensor); ok || holdsTensor(x, depth+1) {
			return true
		}
	}
	return false
}

// containsTensor reports whether v holds a tensor anywhere: in a container, or in what the
// pickle gave an opaque object. seen holds the values already found to hold none (shared by
// every call of one walk, so that a value many objects share is searched once).
func containsTensor(v any, seen map[any]bool, depth int) bool {
	if depth > maxPickleDepth {
		return true // too deep to tell: treated as holding one, so refused
	}
	var items []any
	switch v := v.(type) {
	case *torchTensor:
		return true
	case *pyDict:
		items = append(slices.Clone(v.keys), v.vals...)
	case *pyList:
		items = v.items
	case *pyTuple:
		items = v.items
	case *pyOpaque:
		items = v.parts
	default:
		return false
	}
	if seen[v] {
		return false
	}
	seen[v] = true
	for _, x := range items {
		if containsTensor(x, seen, depth+1) {
			return true
		}
	}
	return false
}

// walker names the tensors of the unpickled object by their paths: dict keys and list
// indices joined by dots, as in a state_dict ("layers.0.kernel.C").
type walker struct {
	t     *Torch
	seen  map[any]bool
	clean map[any]bool // containsTensor's: values holding no tensor
}

func (w *walker) walk(v any, name string, depth int) error {
	if depth > maxPickleDepth {
		return invalidf("containers nested deeper than %d levels", maxPickleDepth)
	}
	join := func(k string) string {
		if name == "" {
			return k
		}
		return name + "." + k
	}
	switch v := v.(type) {
	case *torchTensor:
		if !ValidName(name) {
			return invalidf("tensor %q: its name is not valid UTF-8", name)
		}
		if _, dup := w.t.tensors[name]; dup {
			return invalidf("two tensors are named %q", name)
		}
		if len(w.t.infos) == MaxEntries {
			return invalidf("more than %d tensors", MaxEntries)
		}
		w.t.tensors[name] = v
		w.t.nested = w.t.nested || depth > 1
		dt := torchDTypes[v.storage.dtype]
		info := Info{Name: name, DType: dt.name, Shape: append([]int{}, v.size...), Supported: dt.ok}
		if dt.d == Complex64 || dt.d == Complex128 {
			info.Shape = append(info.Shape, 2)
			info.Complex = true
		}
		w.t.infos = append(w.t.infos, info)
		return nil
	case *pyOpaque:
		if containsTensor(v, w.clean, depth) {
			return refusal(v.global) // reading around it would lose its tensors
		}
		w.t.other(name)
		if w.t.skipped == "" {
			w.t.skipped = v.global
		}
		return nil
	case *pyDict, *pyList, *pyTuple:
		if w.seen[v] {
			return nil
		}
		w.seen[v] = true
	}
	switch v := v.(type) {
	case *pyDict:
		for i, k := range v.keys {
			var ks string
			switch k := k.(type) {
			case string:
				ks = k
			case int64:
				ks = strconv.FormatInt(k, 10)
			default:
				continue // only str and int keys name tensors
			}
			if err := w.walk(v.vals[i], join(ks), depth+1); err != nil {
				return err
			}
		}
	case *pyList:
		for i, x := range v.items {
			if err := w.walk(x, join(strconv.Itoa(i)), depth+1); err != nil {
				return err
			}
		}
	case *pyTuple:
		for i, x := range v.items {
			if err := w.walk(x, join(strconv.Itoa(i)), depth+1); err != nil {
				return err
			}
		}
	default: // None, a number, a string: a value no writer of tensors keeps
		w.t.other(name)
	}
	return nil
}

// refusal is the error for a global outside the allowlist.
func refusal(what string) error {
	return unsupportedf("refused: the pickle names the Python global %s; ssmlab reads tensors, storages and plain containers (dict, list, tuple, str, int, float, bool, None) only and never runs a file's code: save the model's state_dict (torch.save(model.state_dict(), PATH)) or use safetensors", what)
}

func (t *Torch) hooks() pickleHooks {
	return pickleHooks{global: torchGlobal, call: torchCall, persistent: t.persistent}
}

// torchGlobal is the allowlist: the functions that rebuild tensors and parameters, the
// OrderedDict class, the storage classes and dtypes, and the tensor classes as type markers.
// Any other global is a pyOpaque, skipped where it holds no tensor and refused where it
// does (walker.walk).
func torchGlobal(module, name string) (any, error) {
	switch module + "." + name {
	case "collections.OrderedDict",
		"torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3",
		"torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
		"torch._tensor._rebuild_from_type_v2", "_codecs.encode":
		return torchCallable(module + "." + name), nil
	case "torch.Tensor", "torch.nn.parameter.Parameter":
		return pyGlobal{module, name}, nil
	}
	if module == "torch" {
		if _, ok := torchDTypes[name]; ok {
			return torchDType(name), nil
		}
	}
	// Anything else is never imported or called: it stands for an object ssmlab does not read,
	// which may sit beside the model (a Lightning checkpoint's hyper_parameters) but not in it.
	return &pyOpaque{global: strconv.Quote(module + "." + name)}, nil
}

// torchCall applies an allowlisted function.
func torchCall(fn any, args []any) (any, error) {
	if o, ok := fn.(*pyOpaque); ok {
		return &pyOpaque{global: o.global, parts: args}, nil // not called: what it would build stays opaque
	}
	c, ok := fn.(torchCallable)
	if !ok {
		return nil, refusal(fmt.Sprintf("call of %s", typeName(fn)))
	}
	switch c {
	case "collections.OrderedDict":
		if len(args) != 0 {
			return nil, invalidf("OrderedDict with %d arguments", len(args))
		}
		return &pyDict{}, nil
	case "torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3":
		return rebuildTensor(string(c), args)
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		if len(args) < 1 {
			return nil, invalidf("%s without arguments", c)
		}
		if _, ok := args[0].(*torchTensor); !ok {
			return nil, invalidf("%s of %s, not a tensor", c, typeName(args[0]))
		}
		return args[0], nil
	case "torch._tensor._rebuild_from_type_v2":
		// (func, new_type, args, state): a tensor subclass; only Tensor and Parameter.
		if len(args) != 4 {
			return nil, invalidf("%s with %d arguments", c, len(args))
		}
		if g, ok := args[1].(pyGlobal); !ok || g.module != "torch" && g.module != "torch.nn.parameter" {
			return nil, refusal(fmt.Sprintf("%s (a tensor subclass)", typeName(args[1])))
		}
		inner, ok := args[2].(*pyTuple)
		if !ok {
			return nil, invalidf("%s with %s for arguments", c, typeName(args[2]))
		}
		return torchCall(args[0], inner.items)
	case "_codecs.encode": // how protocol 2 pickles bytes: encode(str, "latin1")
		if len(args) != 2 {
			return nil, invalidf("_codecs.encode with %d arguments", len(args))
		}
		s, ok1 := args[0].(string)
		enc, ok2 := args[1].(string)
		if !ok1 || !ok2 || enc != "latin1" && enc != "latin-1" {
			return nil, unsupportedf("_codecs.encode of %s as %v", typeName(args[0]), args[1])
		}
		b := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xff {
				return nil, invalidf("latin1 text holds U+%04X", r)
			}
			b = append(b, byte(r))
		}
		return b, nil
	}
	return nil, refusal(string(c))
}

func asInt(v any, what string) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	}
	return 0, invalidf("%s is %s, not an int", what, typeName(v))
}

func asInts(v any, what string) ([]int64, error) {
	t, ok := v.(*pyTuple)
	if !ok {
		if l, isList := v.(*pyList); isList {
			t = &pyTuple{items: l.items}
		} else {
			return nil, invalidf("%s is %s, not a tuple", what, typeName(v))
		}
	}
	if len(t.items) > MaxDims {
		return nil, invalidf("%s has %d dimensions, more than the limit of %d", what, len(t.items), MaxDims)
	}
	out := make([]int64, len(t.items))
	for i, x := range t.items {
		var err error
		if out[i], err = asInt(x, what); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rebuildTensor checks a tensor's view against its storage: (storage, offset, size, stride,
// …), with the dtype as the seventh argument of _rebuild_tensor_v3.
func rebuildTensor(fn string, args []any) (any, error) {
	if len(args) < 4 {
		return nil, invalidf("%s with %d arguments", fn, len(args))
	}
	st, ok := args[0].(*torchStorage)
	if !ok {
		return nil, invalidf("%s of %s, not a storage", fn, typeName(args[0]))
	}
	if strings.HasSuffix(fn, "_v3") {
		if len(args) < 7 {
			return nil, invalidf("%s with %d arguments", fn, len(args))
		}
		d, ok := args[6].(torchDType)
		if !ok {
			return nil, invalidf("%s with dtype %s", fn, typeName(args[6]))
		}
		if torchDTypes[string(d)].size != torchDTypes[st.dtype].size {
			return nil, unsupportedf("a %s view of a %s storage", d, torchDTypes[st.dtype].name)
		}
		st = &torchStorage{key: st.key, dtype: string(d), numel: st.numel}
	}
	off, err := asInt(args[1], "the storage offset")
	if err != nil {
		return nil, err
	}
	size, err := asInts(args[2], "the size")
	if err != nil {
		return nil, err
	}
	stride, err := asInts(args[3], "the stride")
	if err != nil {
		return nil, err
	}
	if len(size) != len(stride) {
		return nil, invalidf("size %v and stride %v differ in length", size, stride)
	}
	shape := make([]int, len(size))
	for i, s := range size {
		if s < 0 || s > MaxListed {
			return nil, invalidf("size %v is beyond the limit of %d elements", size, int64(MaxListed))
		}
		shape[i] = int(s)
	}
	n, err := rawElements(shape) // listed up to MaxListed; Read converts up to MaxElements
	if err != nil {
		return nil, err
	}
	// The last element's index must lie in the storage: offset + Σ (size-1)·stride < numel.
	if off < 0 || off > st.numel {
		return nil, invalidf("storage offset %d outside a storage of %d elements", off, st.numel)
	}
	if n > 0 {
		last := off
		for i, s := range stride {
			if s < 0 || s > st.numel {
				return nil, invalidf("stride %v for a storage of %d elements", stride, st.numel)
			}
			if size[i] > 1 && s > 0 && (size[i]-1) > (st.numel-1-last)/s {
				last = st.numel // past the storage; computing it could overflow
			} else {
				last += (size[i] - 1) * s
			}
			if last >= st.numel {
				return nil, invalidf("a view of size %v, stride %v at offset %d reaches past a storage of %d elements", size, stride, off, st.numel)
			}
		}
	}
	return &torchTensor{storage: st, offset: off, size: shape, stride: stride}, nil
}

// maxStorage bounds a storage's declared elements, so that views never overflow int64.
const maxStorage = 1 << 36

// persistent loads ('storage', storage_type, key, location, numel).
func (t *Torch) persistent(pid any) (any, error) {
	tup, ok := pid.(*pyTuple)
	if !ok || len(tup.items) != 5 {
		return nil, invalidf("persistent ID %s, want ('storage', type, key, location, numel)", typeName(pid))
	}
	if s, _ := tup.items[0].(string); s != "storage" {
		return nil, unsupportedf("persistent ID of kind %v", tup.items[0])
	}
	d, ok := tup.items[1].(torchDType)
	if !ok {
		return nil, invalidf("storage type %s", typeName(tup.items[1]))
	}
	key, ok := tup.items[2].(string)
	if !ok {
		return nil, invalidf("storage key %s", typeName(tup.items[2]))
	}
	numel, err := asInt(tup.items[4], "the storage size")
	if err != nil {
		return nil, err
	}
	if numel < 0 || numel > maxStorage {
		return nil, invalidf("storage %q declares %d elements, beyond the limit of %d", key, numel, int64(maxStorage))
	}
	f, ok := t.files[key]
	if !ok {
		return nil, invalidf("storage %q has no entry data/%s", key, key)
	}
	if need := uint64(numel) * uint64(torchDTypes[string(d)].size); f.UncompressedSize64 < need {
		return nil, invalidf("storage %q declares %d elements of %s (%d bytes), its entry holds %d bytes",
			key, numel, torchDTypes[string(d)].name, need, f.UncompressedSize64)
	}
	return &torchStorage{key: key, dtype: string(d), numel: numel}, nil
}

// Arrays lists the tensors in the order of the pickle. A complex tensor is listed with a
// trailing dimension 2 (real and imaginary parts), as Read returns it.
func (t *Torch) Arrays() []Info { return cloneInfos(t.infos) }

// Read reads and converts the named tensor to C order.
func (t *Torch) Read(name string) (*Array, error) {
	tt, ok := t.tensors[name]
	if !ok {
		return nil, notFound(name, t.infos)
	}
	dt := torchDTypes[tt.storage.dtype]
	if !dt.ok {
		return nil, unsupportedf("torch: tensor %q has dtype %s; ssmlab reads float64, float32, float16, bfloat16, complex64 and complex128", name, dt.name)
	}
	n, err := checkShape(tt.size) // listed up to MaxListed, read up to MaxElements
	if err != nil {
		return nil, within(err, fmt.Sprintf("torch: tensor %q", name))
	}
	comps := dt.d.components()
	if n == 0 {
		return New(t.shapeOf(tt, dt.d), []float64{})
	}
	// The span of storage the view covers.
	last := tt.offset
	for i, s := range tt.stride {
		last += int64(tt.size[i]-1) * s
	}
	span := last - tt.offset + 1
	if int64(n) > span {
		return nil, unsupportedf("torch: tensor %q repeats elements of its storage (a stride of 0, as expand makes); save a contiguous copy (tensor.contiguous())", name)
	}
	if span > MaxElements {
		return nil, invalidf("torch: tensor %q spans %d elements of its storage, more than the limit of %d", name, span, MaxElements)
	}
	raw, err := t.readStorage(tt.storage.key, tt.offset*int64(dt.size), span*int64(dt.size))
	if err != nil {
		return nil, within(err, fmt.Sprintf("torch: tensor %q", name))
	}
	flat := make([]float64, int(span)*comps)
	decodeFloats(flat, raw, dt.d, t.big)
	out := make([]float64, 0, n*comps)
	idx := make([]int, len(tt.size))
	for range n {
		var off int64
		for k, i := range idx {
			off += int64(i) * tt.stride[k]
		}
		out = append(out, flat[int(off)*comps:int(off+1)*comps]...)
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < tt.size[k] {
				break
			}
			idx[k] = 0
		}
	}
	a, err := New(t.shapeOf(tt, dt.d), out)
	if err != nil {
		return nil, within(err, fmt.Sprintf("torch: tensor %q", name))
	}
	return a, nil
}

// ReadInt reads an integer tensor of one element (a buffer such as S4's l_kernel).
func (t *Torch) ReadInt(name string) (int64, error) {
	tt, ok := t.tensors[name]
	if !ok {
		return 0, notFound(name, t.infos)
	}
	n, _ := checkShape(tt.size)
	dt := torchDTypes[tt.storage.dtype]
	if n != 1 || (dt.name != "int64" && dt.name != "int32") {
		return 0, unsupportedf("torch: tensor %q is not one int64 or int32", name)
	}
	raw, err := t.readStorage(tt.storage.key, tt.offset*int64(dt.size), int64(dt.size))
	if err != nil {
		return 0, within(err, fmt.Sprintf("torch: tensor %q", name))
	}
	var order binary.ByteOrder = binary.LittleEndian
	if t.big {
		order = binary.BigEndian
	}
	if dt.size == 4 {
		return int64(int32(order.Uint32(raw))), nil
	}
	return int64(order.Uint64(raw)), nil
}

func (t *Torch) shapeOf(tt *torchTensor, d DType) []int {
	shape := append([]int{}, tt.size...)
	if d.components() == 2 {
		shape = append(shape, 2)
	}
	return shape
}

// readStorage reads n bytes at off of a storage's entry. The first read of an entry goes
// through archive/zip to the entry's end, so that its checksum is checked once (zipentry.go);
// later reads of a stored entry, as torch.save writes them all, read only the view, in place.
func (t *Torch) readStorage(key string, off, n int64) ([]byte, error) {
	f := t.files[key]
	if uint64(off+n) > f.UncompressedSize64 {
		return nil, invalidf("storage %q holds %d bytes, the view needs %d", key, f.UncompressedSize64, off+n)
	}
	if f.Method == zip.Store {
		start, err := f.DataOffset()
		if err != nil {
			return nil, invalidf("entry %q: %s", f.Name, trimZip(err))
		}
		if start+off+n > t.size {
			return nil, invalidf("entry %q: truncated: the view needs bytes up to %d, the file has %d", f.Name, start+off+n, t.size)
		}
		if t.checked[key] {
			buf := make([]byte, n)
			if _, err := t.r.ReadAt(buf, start+off); err != nil {
				return nil, invalidf("entry %q: truncated: %v", f.Name, err)
			}
			return buf, nil
		}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, invalidf("entry %q: %s", f.Name, trimZip(err))
	}
	defer rc.Close()
	if _, err := io.CopyN(io.Discard, rc, off); err != nil {
		return nil, within(entryErr(err), fmt.Sprintf("entry %q", f.Name))
	}
	var buf []byte
	if f.Method == zip.Store {
		buf = make([]byte, n) // the data lies in the file, checked above
		// A chunk at a time, so that the checksum runs over each while it is in cache.
		for i := int64(0); i < n && err == nil; i += chunk {
			_, err = io.ReadFull(rc, buf[i:min(i+chunk, n)])
		}
	} else {
		// A compressed entry is read as a stream, so storage grows with the data actually
		// present, whatever the directory declares.
		buf, err = io.ReadAll(io.LimitReader(rc, n))
		if err == nil && int64(len(buf)) != n {
			return nil, invalidf("entry %q: truncated: %d bytes of %d", f.Name, len(buf), n)
		}
	}
	if err == nil && !t.checked[key] {
		err = finishEntry(rc)
	}
	if err != nil {
		return nil, within(entryErr(err), fmt.Sprintf("entry %q", f.Name))
	}
	t.checked[key] = true
	return buf, nil
}

// TorchOptions control EncodeTorch.
type TorchOptions struct {
	DType DType // Float64 (the zero value), Float32 or BFloat16
}

// torchAlign is the alignment of storage data in the archive, as torch.save writes it.
const torchAlign = 64

// EncodeTorch returns the arrays as a torch.save zip file holding an OrderedDict of name →
// tensor (contiguous, on the CPU), which torch.load(PATH, weights_only=True) and a module's
// load_state_dict read (WriteRaw's torch.save files).
func EncodeTorch(arrays []Named, o TorchOptions) ([]byte, error) {
	if !slices.Contains(writtenTypes, o.DType) {
		return nil, fmt.Errorf("arrays: cannot write %s to a torch file: writers write %s", o.DType, writtenNames(DType.String))
	}
	var b bytes.Buffer
	err := writeArrays(&b, FormatTorch, arrays, o.DType, RawOptions{})
	return b.Bytes(), err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// zipDate is 1980-01-01 in MS-DOS form. EncodeTorch sets it rather than a Modified time,
// for which archive/zip adds an extra field that would move the aligned data.
const zipDate = 1<<5 | 1
