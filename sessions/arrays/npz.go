package arrays

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ssmlab/ssmlab/internal/plural"
)

// MaxEntries is the most arrays an .npz or .safetensors file may hold.
const MaxEntries = 1 << 16

// Info describes one array of a file without its data.
type Info struct {
	Name string
	// DType names the element type as torch and NumPy do, whatever the container: "float64"
	// for an .npy "<f8" or ">f8", a safetensors "F64" and a torch.float64 alike; "int64",
	// "bfloat16", "bool". A type ssmlab does not know keeps the file's spelling.
	DType string
	Shape []int
	// Supported says whether Read can convert the dtype to float64.
	Supported bool
	// Complex marks a complex array: Shape ends in a dimension 2, its real and imaginary
	// parts, as Read returns it.
	Complex bool
}

// NPZ is an open NumPy .npz archive (a zip file of .npy files, as numpy.savez and
// numpy.savez_compressed write it). Its arrays are named after their entries without the
// ".npy" suffix; entries of other kinds are ignored.
type NPZ struct {
	infos   []Info // DType as the entry's header spells it ("<f8"); Arrays names it
	files   map[string]*zip.File
	headers map[string]*npyHeader // nil for an unsupported dtype
}

// OpenNPZ reads the directory of the archive in r (of the given size) and the .npy header of
// every entry. A compressed entry is read as a stream, checked against the sizes its header
// and the zip directory declare, so a zip bomb is refused by its declared sizes before it is
// inflated, and a lying directory is caught as the data arrives.
func OpenNPZ(r io.ReaderAt, size int64) (*NPZ, error) {
	zr, err := zip.NewReader(r, size)
	// Names are only keys here, never paths to extract to: a non-local name is harmless.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, invalidf("npz: not a valid zip archive: %v", trimZip(err))
	}
	z := &NPZ{files: map[string]*zip.File{}, headers: map[string]*npyHeader{}}
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".npy") {
			continue
		}
		if len(z.infos) == MaxEntries {
			return nil, invalidf("npz: more than %d arrays", MaxEntries)
		}
		name := strings.TrimSuffix(f.Name, ".npy")
		if !ValidName(name) {
			return nil, invalidf("npz: entry %q: its name is not valid UTF-8", f.Name)
		}
		if _, dup := z.files[name]; dup {
			return nil, invalidf("npz: the entry %q appears twice", f.Name)
		}
		h, err := z.header(f)
		info := Info{Name: name}
		switch {
		case err == nil:
			info = h.info(name)
		case errors.Is(err, ErrUnsupported) && h != nil:
			info.DType, info.Shape, h = h.descr, h.shape, nil
		case errors.Is(err, ErrUnsupported):
			info.DType = "unsupported"
		default:
			return nil, within(err, fmt.Sprintf("npz: entry %q", f.Name))
		}
		z.files[name], z.headers[name] = f, h
		z.infos = append(z.infos, info)
	}
	if len(z.infos) == 0 {
		return nil, invalidf("npz: the zip archive holds no .npy entries, and no data.pkl as a torch.save file would: not an array file")
	}
	return z, nil
}

// header reads and checks the .npy header of an entry against the directory's sizes.
func (z *NPZ) header(f *zip.File) (*npyHeader, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, invalidf("%s", trimZip(err))
	}
	defer rc.Close()
	h, err := readNPYHeader(rc)
	if err != nil {
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupported) {
			return h, err
		}
		// A zip or inflate error: corrupt data.
		return nil, invalidf("%s", trimZip(err))
	}
	if want := uint64(h.offset) + uint64(h.dataBytes()); f.UncompressedSize64 != want {
		return nil, invalidf("npy header declares shape %s of %s (%d bytes in all), the zip directory %d bytes",
			ShapeString(h.shape), h.descr, want, f.UncompressedSize64)
	}
	return h, nil
}

// Arrays lists the arrays in the archive's order.
func (z *NPZ) Arrays() []Info { return listed(z.infos, npyListed) }

// npyListed gives listed the raw type of a .npy type string.
func npyListed(descr string) (string, bool) {
	raw, _, ok := npyRawType(descr)
	return raw, ok
}

// Read reads and converts the named array.
func (z *NPZ) Read(name string) (*Array, error) {
	f, ok := z.files[name]
	if !ok {
		return nil, notFound(name, z.infos)
	}
	h := z.headers[name]
	if h == nil {
		// Re-read the header for its message.
		_, err := z.header(f)
		return nil, within(err, fmt.Sprintf("npz: entry %q", f.Name))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, invalidf("npz: entry %q: %s", f.Name, trimZip(err))
	}
	defer rc.Close()
	if _, err := readNPYHeader(rc); err != nil {
		return nil, within(err, fmt.Sprintf("npz: entry %q", f.Name))
	}
	// readNPYData reads past the data, to the entry's end: the checksum is checked.
	a, err := readNPYData(h, rc)
	if err != nil {
		return nil, within(entryErr(err), fmt.Sprintf("npz: entry %q", f.Name))
	}
	return a, nil
}

func notFound(name string, infos []Info) error {
	return fmt.Errorf("%w %q (the file holds %s)", ErrNotFound, name, ListNames(infos))
}

// ListNames quotes the names of the first ten arrays, saying how many more there are: what
// a message of a name the file does not hold lists.
func ListNames(infos []Info) string {
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = strconv.Quote(in.Name)
	}
	return plural.First(names, 10, " ")
}

func cloneInfos(in []Info) []Info {
	out := make([]Info, len(in))
	for i, x := range in {
		x.Shape = append([]int(nil), x.Shape...)
		out[i] = x
	}
	return out
}

// Named is an array with a name, for the writers of multi-array files.
type Named struct {
	Name  string
	Array *Array
}

// NPZOptions control WriteNPZ.
type NPZOptions struct {
	DType    DType // Float64 (the zero value) or Float32
	Compress bool  // deflate the entries, as numpy.savez_compressed does
}

// zipTime is the modification time of every entry WriteNPZ writes, so that equal arrays give
// equal files (1980-01-01, the earliest time zip can store).
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteNPZ writes the arrays as an .npz archive that numpy.load reads: one entry NAME.npy per
// array, in order. Names must be distinct and not empty.
func WriteNPZ(w io.Writer, arrays []Named, o NPZOptions) error {
	if err := checkWritable(o.DType); err != nil {
		return err
	}
	return writeArrays(w, FormatNPZ, arrays, o.DType, RawOptions{Compress: o.Compress})
}

// EncodeNPZ returns what WriteNPZ writes.
func EncodeNPZ(arrays []Named, o NPZOptions) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteNPZ(&b, arrays, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
