package arrays_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// npyFile builds a .npy file with a header of the given version and dict, padded as NumPy
// pads it, followed by data.
func npyFile(major byte, dict string, data []byte) []byte {
	lenSize := 2
	if major > 1 {
		lenSize = 4
	}
	total := 8 + lenSize + len(dict) + 1
	pad := (64 - total%64) % 64
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	b := append([]byte("\x93NUMPY"), major, 0)
	if lenSize == 2 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	return append(append(b, hdr...), data...)
}

func f8(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func dict(descr, fortran, shape string) string {
	return fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape)
}

// badNPY are malformed, lying or unsupported .npy files and the error each must give; they
// also seed FuzzDecodeNPY.
func badNPY() []struct {
	name     string
	data     []byte
	sentinel error
	want     string
} {
	good := dict("<f8", "False", "(2,)")
	return []struct {
		name     string
		data     []byte
		sentinel error
		want     string
	}{
		{"empty", nil, arrays.ErrInvalid, "too short"},
		{"wrong magic", append([]byte("\x93NUMPZ\x01\x00"), make([]byte, 100)...), arrays.ErrInvalid, "wrong magic"},
		{"version 4", append([]byte("\x93NUMPY\x04\x00"), make([]byte, 100)...), arrays.ErrUnsupported, "format version 4.0"},
		{"header past the end", append([]byte("\x93NUMPY\x01\x00\xff\x00"), "{'descr'"...), arrays.ErrInvalid, "the header is 255 bytes long but the file ends first"},
		{"header length 4 GiB", append([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"), "{"...), arrays.ErrInvalid, "header length 4294967295 exceeds the limit"},
		{"shape larger than data", npyFile(1, dict("<f8", "False", "(3,)"), f8(1, 2)), arrays.ErrInvalid, "declares shape (3,) of <f8 (24 bytes of data), but the file holds 16 bytes"},
		{"shape smaller than data", npyFile(1, dict("<f8", "False", "(1,)"), f8(1, 2)), arrays.ErrInvalid, "declares shape (1,) of <f8 (8 bytes of data), but the file holds 16 bytes"},
		{"gigantic shape", npyFile(1, dict("<f8", "False", "(1000000, 1000000)"), nil), arrays.ErrInvalid, "exceeds the limit of 67108864 elements"},
		{"gigantic dimension", npyFile(1, dict("<f8", "False", "(99999999999999999999999,)"), nil), arrays.ErrInvalid, "exceeds the limit"},
		{"too many dims", npyFile(1, dict("<f8", "False", "("+strings.Repeat("1,", 33)+")"), nil), arrays.ErrInvalid, "more than 32 dimensions"},
		{"int64", npyFile(1, dict("<i8", "False", "(2,)"), f8(1, 2)), arrays.ErrUnsupported, `dtype "<i8" (signed integer)`},
		{"native order", npyFile(1, dict("=f8", "False", "(2,)"), f8(1, 2)), arrays.ErrUnsupported, "native byte order"},
		{"complex256", npyFile(1, dict("<c32", "False", "(1,)"), f8(1, 2, 3, 4)), arrays.ErrUnsupported, "complex"},
		{"structured", npyFile(1, "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (1,), }", f8(1)), arrays.ErrUnsupported, "structured dtype"},
		{"unknown key", npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': True}", f8(1, 2)), arrays.ErrInvalid, `unknown key "x"`},
		{"missing key", npyFile(1, "{'descr': '<f8', 'shape': (2,)}", f8(1, 2)), arrays.ErrInvalid, `no "fortran_order" key`},
		{"duplicate key", npyFile(1, "{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", f8(1, 2)), arrays.ErrInvalid, "appears twice"},
		{"fortran not bool", npyFile(1, dict("<f8", "'yes'", "(2,)"), f8(1, 2)), arrays.ErrInvalid, "'fortran_order' is not True or False"},
		{"shape not a tuple", npyFile(1, dict("<f8", "False", "(2)"), f8(1, 2)), arrays.ErrInvalid, "trailing comma"},
		{"negative shape", npyFile(1, dict("<f8", "False", "(-2,)"), f8(1, 2)), arrays.ErrInvalid, "non-negative integer"},
		{"junk after dict", npyFile(1, good+" junk", f8(1, 2)), arrays.ErrInvalid, "unexpected text after the dict"},
		{"unterminated", npyFile(1, "{'descr': '<f8", nil), arrays.ErrInvalid, "unsupported character in a string"},
		{"nan", npyFile(1, good, f8(1, math.NaN())), arrays.ErrInvalid, "entry (1,) is NaN"},
		{"inf", npyFile(1, dict("<f8", "True", "(1, 2)"), f8(math.Inf(-1), 0)), arrays.ErrInvalid, "entry (0, 0) is -Inf"},
	}
}

func TestNPYBadInput(t *testing.T) {
	for _, tc := range badNPY() {
		_, err := arrays.DecodeNPY(tc.data)
		expectError(t, tc.name, err, tc.sentinel, tc.want)
		// The stream reader gives the same verdict (its messages about lengths differ).
		if _, err := arrays.ReadNPY(bytes.NewReader(tc.data)); !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: ReadNPY: %v does not wrap %v", tc.name, err, tc.sentinel)
		}
	}
}

func TestNPYHeaderForms(t *testing.T) {
	for _, d := range []string{
		`{"descr": "<f8", "fortran_order": False, "shape": (2,)}`,               // double quotes
		"{'descr':'<f8','fortran_order':False,'shape':(2L,)}",                   // Python 2
		"{ 'shape' : ( 2 , ) ,\n 'fortran_order' : False , 'descr' : '<f8' , }", // spaces, any order
	} {
		a, err := arrays.DecodeNPY(npyFile(1, d, f8(1, 2)))
		if err != nil || a.Data[1] != 2 {
			t.Errorf("%s: %v", d, err)
		}
	}
	for _, major := range []byte{2, 3} {
		if _, err := arrays.DecodeNPY(npyFile(major, dict("<f8", "False", "(2,)"), f8(1, 2))); err != nil {
			t.Errorf("version %d: %v", major, err)
		}
	}
}

// zipWith builds a zip archive holding the given entries, stored.
func zipWith(t testing.TB, entries map[string][]byte, order ...string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range order {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(entries[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// lyingZip builds a zip archive with one deflated entry whose directory declares
// uncompressed bytes and the given CRC, holding the deflate stream of actual.
func lyingZip(t testing.TB, name string, declared uint64, crc uint32, actual []byte) []byte {
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(actual)
	fw.Close()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// flipBit returns a copy of the zip archive data with one bit flipped in the data of the
// named (stored) entry, at byte at of it, as a disk or a download might corrupt it.
func flipBit(t *testing.T, data []byte, entry string, at int64) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == entry {
			start, err := f.DataOffset()
			if err != nil || f.Method != zip.Store || uint64(at) >= f.UncompressedSize64 {
				t.Fatalf("%s: cannot flip byte %d of %+v: %v", entry, at, f.FileHeader, err)
			}
			bad := bytes.Clone(data)
			bad[start+at] ^= 0x10
			return bad
		}
	}
	t.Fatalf("no entry %s", entry)
	return nil
}

// readAllNPZ opens an archive and reads every array, returning the first error.
func readAllNPZ(data []byte) error {
	z, err := arrays.OpenNPZ(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	for _, in := range z.Arrays() {
		if _, err := z.Read(in.Name); err != nil {
			return err
		}
	}
	return nil
}

// bombHeader is the .npy header of a 512 MiB float64 array: MaxElements values.
var bombHeader = npyFile(1, dict("<f8", "False", fmt.Sprintf("(%d,)", arrays.MaxElements)), nil)

func badNPZ(t testing.TB) []struct {
	name string
	data []byte
	want string
} {
	good := npyFile(1, dict("<f8", "False", "(2,)"), f8(1, 2))
	corrupt, _ := arrays.EncodeNPZ([]arrays.Named{{Name: "x", Array: arrays.Vector(make([]float64, 64))}}, arrays.NPZOptions{Compress: true})
	corrupt = bytes.Clone(corrupt)
	corrupt[60] ^= 0xff // inside the deflate stream
	crc := crc32.ChecksumIEEE(good)
	return []struct {
		name string
		data []byte
		want string
	}{
		{"not a zip", []byte("PK\x03\x04 this is not a zip"), "not a valid zip archive"},
		{"no npy entries", zipWith(t, map[string][]byte{"a.txt": []byte("hi")}, "a.txt"), "holds no .npy entries"},
		{"duplicate entry", zipWith(t, map[string][]byte{"a.npy": good}, "a.npy", "a.npy"), `"a.npy" appears twice`},
		{"bad npy inside", zipWith(t, map[string][]byte{"a.npy": good[:20]}, "a.npy"), `entry "a.npy": npy: truncated`},
		{"npy shape lies", zipWith(t, map[string][]byte{"a.npy": npyFile(1, dict("<f8", "False", "(3,)"), f8(1, 2))}, "a.npy"), "the zip directory 144 bytes"},
		{"corrupt deflate", corrupt, `entry "x.npy"`},
		// A zip bomb that admits its size is refused before anything is inflated...
		{"bomb beyond the limit", lyingZip(t, "b.npy", 1<<40, 0, npyFile(1, dict("<f8", "False", "(137438953472,)"), make([]byte, 1024))), "exceeds the limit"},
		// ...and one that claims 512 MiB but holds little stops when its data runs out.
		{"bomb that lies", lyingZip(t, "b.npy", uint64(len(bombHeader))+8*arrays.MaxElements, 0, append(bytes.Clone(bombHeader), make([]byte, 1<<20)...)), "(536870912 bytes of data), but the file holds"},
		{"directory lies about size", lyingZip(t, "a.npy", 1000, crc, good), "the zip directory 1000 bytes"},
		{"bad checksum", lyingZip(t, "a.npy", uint64(len(good)), crc^1, good), "checksum error"},
	}
}

func TestNPZBadInput(t *testing.T) {
	for _, tc := range badNPZ(t) {
		expectError(t, tc.name, readAllNPZ(tc.data), arrays.ErrInvalid, tc.want)
	}
}

// TestNPZChecksumRaw: ReadRaw, which copies a tensor's bytes into a checkpoint, catches a
// corrupted entry by its CRC-32 as Read does.
func TestNPZChecksumRaw(t *testing.T) {
	data, err := arrays.EncodeNPZ([]arrays.Named{{Name: "x", Array: arrays.Vector([]float64{1, 2, 3})}}, arrays.NPZOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := flipBit(t, data, "x.npy", 130) // in the second value
	af, err := arrays.OpenReader(bytes.NewReader(bad), int64(len(bad)), "x.npz")
	if err != nil {
		t.Fatal(err)
	}
	_, err = af.ReadRaw("x")
	expectError(t, "ReadRaw", err, arrays.ErrInvalid, `npz: entry "x.npy": checksum error`)
	_, err = af.Read("x")
	expectError(t, "Read", err, arrays.ErrInvalid, `npz: entry "x.npy": checksum error`)
}

// stFile builds a safetensors file from a header text and a buffer.
func stFile(header string, buf []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), buf...)
}

func badSafetensors() []struct {
	name     string
	data     []byte
	sentinel error
	want     string
} {
	type tc = struct {
		name     string
		data     []byte
		sentinel error
		want     string
	}
	x := `"x":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}`
	return []tc{
		{"short", []byte{1, 2, 3}, arrays.ErrInvalid, "too few for the header length"},
		{"header past end", append(binary.LittleEndian.AppendUint64(nil, 1000), "{}"...), arrays.ErrInvalid, "header length 1000 runs past the end of the file (10 bytes)"},
		{"header too long", append(binary.LittleEndian.AppendUint64(nil, 1<<40), "{}"...), arrays.ErrInvalid, "exceeds the limit of 100000000 bytes"},
		{"no brace", stFile(`["x"]`, nil), arrays.ErrInvalid, "does not start with '{'"},
		{"bad json", stFile(`{"x":`, nil), arrays.ErrInvalid, "bad JSON at line 1, column 6: unexpected end of input"},
		{"duplicate tensor", stFile("{"+x+","+x+"}", f8(1, 2)), arrays.ErrInvalid, `safetensors: header: duplicate key "x" at line 1, column 56`},
		{"duplicate key", stFile(`{"x":{"dtype":"F64","dtype":"F64"}}`, nil), arrays.ErrInvalid, `tensor "x": duplicate key "dtype"`},
		{"unknown dtype", stFile(`{"x":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, f8(1, 2)), arrays.ErrUnsupported, `unknown dtype "F128"`},
		{"unknown key", stFile(`{"x":{"dtype":"F64","shape":[1],"data_offsets":[0,8],"y":1}}`, f8(1)), arrays.ErrInvalid, `unknown key "y"`},
		{"missing key", stFile(`{"x":{"dtype":"F64","shape":[1]}}`, f8(1)), arrays.ErrInvalid, `no "data_offsets"`},
		{"shape lies", stFile(`{"x":{"dtype":"F64","shape":[3],"data_offsets":[0,16]}}`, f8(1, 2)), arrays.ErrInvalid, "shape (3,) of F64 needs 24 bytes, data_offsets [0, 16] give 16"},
		{"gigantic shape", stFile(`{"x":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,16]}}`, f8(1, 2)), arrays.ErrInvalid, "exceeds the limit"},
		{"negative shape", stFile(`{"x":{"dtype":"F64","shape":[-2],"data_offsets":[0,16]}}`, f8(1, 2)), arrays.ErrInvalid, "non-negative integer"},
		{"float offsets", stFile(`{"x":{"dtype":"F64","shape":[2],"data_offsets":[0,16.0]}}`, f8(1, 2)), arrays.ErrInvalid, "non-negative integer"},
		{"reversed offsets", stFile(`{"x":{"dtype":"F64","shape":[0],"data_offsets":[16,0]}}`, f8(1, 2)), arrays.ErrInvalid, "end before they begin"},
		{"three offsets", stFile(`{"x":{"dtype":"F64","shape":[2],"data_offsets":[0,16,32]}}`, f8(1, 2)), arrays.ErrInvalid, "more than 2 entries"},
		{"overlap", stFile(`{"x":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"y":{"dtype":"F64","shape":[1],"data_offsets":[8,16]}}`, f8(1, 2)), arrays.ErrInvalid, "overlaps"},
		{"hole", stFile(`{"x":{"dtype":"F64","shape":[1],"data_offsets":[8,16]}}`, f8(1, 2)), arrays.ErrInvalid, "has a hole"},
		{"trailing bytes", stFile("{"+x+"}", f8(1, 2, 3)), arrays.ErrInvalid, "8 bytes after the last tensor"},
		{"truncated", stFile("{"+x+"}", f8(1)), arrays.ErrInvalid, "need 16 bytes of data, the file holds 8"},
		{"offset beyond file", stFile(`{"x":{"dtype":"F64","shape":[1],"data_offsets":[4611686018427387000,4611686018427387008]}}`, nil), arrays.ErrInvalid, "has a hole"},
		{"metadata not string", stFile(`{"__metadata__":{"a":1}}`, nil), arrays.ErrInvalid, `value of "a" is the number 1, want a string`},
		{"metadata twice", stFile(`{"__metadata__":{},"__metadata__":{}}`, nil), arrays.ErrInvalid, `duplicate key "__metadata__"`},
		{"trailing json", stFile(`{} {}`, nil), arrays.ErrInvalid, "unexpected data (an object) after"},
		{"not utf8", stFile("{\"\xff\":{}}", nil), arrays.ErrInvalid, "not UTF-8"},
		{"nan", stFile("{"+x+"}", f8(1, math.NaN())), arrays.ErrInvalid, "entry (1,) is NaN"},
	}
}

func TestSafetensorsBadInput(t *testing.T) {
	for _, tc := range badSafetensors() {
		err := readAllSafetensors(tc.data)
		expectError(t, tc.name, err, tc.sentinel, tc.want)
	}
}

func readAllSafetensors(data []byte) error {
	s, err := arrays.OpenSafetensors(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	for _, in := range s.Arrays() {
		if _, err := s.Read(in.Name); err != nil {
			return err
		}
	}
	return nil
}

// TestHostileInputAllocatesLittle reads files that declare far more data than they hold and
// checks that the failed reads allocated little: sizes are checked before storage is made,
// and a stream's storage grows only with the data that arrives.
func TestHostileInputAllocatesLittle(t *testing.T) {
	// allocLimit is the most a refused read may allocate: the 1 MiB read chunk and the data
	// actually present (up to 1 MiB here), with room for the decoders' own buffers.
	const allocLimit = 8 << 20
	cases := map[string]func() error{
		"npy declaring 512 MiB": func() error {
			_, err := arrays.DecodeNPY(append(bytes.Clone(bombHeader), f8(1, 2, 3)...))
			return err
		},
		"npy stream declaring 512 MiB": func() error {
			_, err := arrays.ReadNPY(bytes.NewReader(append(bytes.Clone(bombHeader), make([]byte, 1<<20)...)))
			return err
		},
		"npz bomb that lies": func() error {
			return readAllNPZ(lyingZip(t, "b.npy", uint64(len(bombHeader))+8*arrays.MaxElements, 0, append(bytes.Clone(bombHeader), make([]byte, 1<<20)...)))
		},
		"safetensors declaring 512 MiB": func() error {
			hdr := fmt.Sprintf(`{"x":{"dtype":"F64","shape":[%d],"data_offsets":[0,%d]}}`, arrays.MaxElements, 8*arrays.MaxElements)
			return readAllSafetensors(stFile(hdr, f8(1, 2)))
		},
		"packed JSON declaring 512 MiB": func() error {
			var a arrays.Array
			return json.Unmarshal([]byte(fmt.Sprintf(`{"dtype": "<f8", "shape": [%d], "data": "AAAA"}`, arrays.MaxElements)), &a)
		},
	}
	for name, read := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := read()
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > allocLimit {
			t.Errorf("%s: allocated %d MiB before failing: %v", name, got>>20, err)
		}
	}
}

// TestTensorNamesAreUTF8: a tensor whose name is not valid UTF-8 is refused, naming it, by
// the .npz and torch.save readers (the safetensors reader refuses such a header) and by the
// writers. The readers took the name as it was, and import named an item after it that no
// session could save; a distilled checkpoint copied it into a safetensors header as U+FFFD,
// renaming the tensor, or fitted every layer and then failed, for a layer prefix.
func TestTensorNamesAreUTF8(t *testing.T) {
	good := npyFile(1, dict("<f8", "False", "(2,)"), f8(1, 2))
	// A state_dict of one float64 tensor of 2 elements, named by the BINUNICODE string key.
	torchFile := func(key string) []byte {
		pkl := "\x80\x02ccollections\nOrderedDict\n)R(X" + string(binary.LittleEndian.AppendUint32(nil, uint32(len(key)))) + key +
			"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nDoubleStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuJ\x02\x00\x00\x00tQK\x00(J\x02\x00\x00\x00t(J\x01\x00\x00\x00t\x89ccollections\nOrderedDict\n)RtRu."
		return torchZip(t, []byte(pkl), map[string][]byte{"archive/data/0": f8(1, 2)})
	}
	for _, name := range []string{"k", "café", "\xab", "x\xffy"} {
		for format, data := range map[string][]byte{
			"npz":   zipWith(t, map[string][]byte{"b.npy": good, name + ".npy": good}, "b.npy", name+".npy"),
			"torch": torchFile(name),
		} {
			af, err := arrays.OpenReader(bytes.NewReader(data), int64(len(data)), "x")
			if utf8.ValidString(name) {
				if err != nil {
					t.Errorf("%s %q: %v", format, name, err)
					continue
				}
				if _, err := af.Read(name); err != nil {
					t.Errorf("%s %q: %v", format, name, err)
				}
				continue
			}
			quoted := strings.Trim(fmt.Sprintf("%q", name), `"`) // the entry's name has ".npy" after it
			expectError(t, fmt.Sprintf("%s %q", format, name), err, arrays.ErrInvalid, quoted)
		}
		for _, format := range []arrays.Format{arrays.FormatNPZ, arrays.FormatTorch, arrays.FormatSafetensors} {
			var b bytes.Buffer
			err := arrays.WriteRaw(&b, format, []arrays.RawInfo{{Name: name, DType: "F64", Shape: []int{2}}}, arrays.RawOptions{},
				func(int) ([]byte, error) { return f8(1, 2), nil })
			if valid := utf8.ValidString(name); valid != (err == nil) || !valid && (b.Len() > 0 || !strings.Contains(err.Error(), fmt.Sprintf("%q", name))) {
				t.Errorf("writing %q to %s: %v, %d bytes written", name, format, err, b.Len())
			}
		}
	}
}
