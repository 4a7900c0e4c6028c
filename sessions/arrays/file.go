package arrays

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ssmlab/ssmlab/internal/userfile"
)

// Format names an array file format.
type Format string

// The formats Open reads.
const (
	FormatNPY         Format = "npy"
	FormatNPZ         Format = "npz"
	FormatSafetensors Format = "safetensors"
	FormatCSV         Format = "csv"
	// FormatTorch is a torch.save file (.pt, .pth, .bin, .ckpt) of the zip format.
	FormatTorch Format = "torch"
)

// Sniff names the format of a file from its first bytes (at least 9 of them, when the file
// has that many) and, for CSV, which has no magic, its name: .npy files start with their
// magic string, .npz and torch.save files are zip archives (FormatNPZ here; OpenReader tells
// them apart by their entries), a legacy torch.save file starts with its pickled magic
// number, a .safetensors file with a header length and '{'. It reports false for anything
// else, such as JSON.
func Sniff(head []byte, name string) (Format, bool) {
	switch {
	case bytes.HasPrefix(head, []byte(npyMagic)):
		return FormatNPY, true
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return FormatNPZ, true
	case bytes.HasPrefix(head, []byte(legacyTorchMagic[:9])):
		return FormatTorch, true
	case len(head) >= 9 && head[8] == '{' && binary.LittleEndian.Uint64(head) <= MaxSafetensorsHeader:
		return FormatSafetensors, true
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv", ".tsv", ".txt":
		return FormatCSV, true
	}
	return "", false
}

// Describe names a format Sniff reports, for a message about a file given where another
// kind is read: "an .npz or torch.save zip archive", since Sniff does not tell
// those two apart.
func (f Format) Describe() string {
	switch f {
	case FormatNPY:
		return "a NumPy .npy file"
	case FormatNPZ:
		return "an .npz or torch.save zip archive"
	case FormatTorch:
		return "a torch.save file"
	case FormatSafetensors:
		return "a safetensors file"
	case FormatCSV:
		return "a CSV file"
	}
	return string(f)
}

// ValidName reports whether a tensor may be named name, in a file read or written: a name is
// UTF-8 text. A safetensors header is JSON (whose encoder would replace the other bytes,
// renaming the tensor), torch.load decodes a pickle's strings as UTF-8, numpy.savez flags its
// entries' names UTF-8, and a name read names a session's item and the tensor a target came
// from, which a session file, JSON, keeps.
func ValidName(name string) bool { return utf8.ValidString(name) }

// File is an open array file of any format Open reads. An .npy or CSV file holds one array,
// named "".
type File struct {
	Format   Format
	r        io.ReaderAt
	c        io.Closer // nil when opened by OpenReader
	size     int64
	npy      *npyHeader
	npz      *NPZ
	st       *Safetensors
	torch    *Torch
	csv      *Array // read by Open, handed to the first Read (a later one reads the file again)
	csvShape []int
	path     string // as given to Open; "" when opened by OpenReader
}

// Path is the path the file was opened at by Open, "" for one opened by OpenReader: where
// a reader looks for what the format cannot hold beside it (a distilled checkpoint's
// manifest).
func (f *File) Path() string { return f.path }

// At sets the path f was read from, for a file opened by OpenReader on that file's
// content, and returns f.
func (f *File) At(path string) *File {
	f.path = path
	return f
}

// Open opens the array file at path, recognised by Sniff, and reads its headers (a CSV file
// is read whole). Errors are prefixed with the path.
func Open(path string) (*File, error) {
	f, size, err := userfile.Open(path)
	if err != nil {
		return nil, err
	}
	af, err := OpenReader(f, size, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	af.c, af.path = f, path
	return af, nil
}

// OpenReader is Open for a file of the given size read through r; name is used only to
// recognise a CSV file by its extension.
func OpenReader(r io.ReaderAt, size int64, name string) (*File, error) {
	head := make([]byte, len(legacyTorchMagic))
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	format, ok := Sniff(head[:n], name)
	if !ok {
		return nil, unsupportedf("not an array file ssmlab knows: .npy, .npz, .safetensors and torch.save (.pt) files are recognised by their first bytes, CSV by a .csv, .tsv or .txt name")
	}
	if format == FormatTorch && IsLegacyTorch(head[:n]) {
		return nil, errLegacyTorch
	}
	if format == FormatNPZ {
		zr, err := zip.NewReader(r, size)
		if err != nil {
			// npz and torch.save files are both zip archives, told apart by their entries,
			// which a damaged one no longer lists: naming one of them would mislead.
			return nil, invalidf("not a valid zip archive (an .npz or torch.save file, cut short or damaged?): %v", trimZip(err))
		}
		if isTorchZip(zr) {
			format = FormatTorch
		}
	}
	af := &File{Format: format, r: r, size: size}
	switch format {
	case FormatNPY:
		if af.npy, err = readNPYHeader(io.NewSectionReader(r, 0, size)); err != nil {
			return nil, err
		}
		if got := size - af.npy.offset; got != af.npy.dataBytes() {
			return nil, sizeMismatch(af.npy, got)
		}
	case FormatNPZ:
		af.npz, err = OpenNPZ(r, size)
	case FormatSafetensors:
		af.st, err = OpenSafetensors(r, size)
	case FormatTorch:
		af.torch, err = OpenTorch(r, size)
	case FormatCSV:
		if af.csv, err = readCSVAt(r, size); err == nil {
			af.csvShape = af.csv.Shape
		}
	}
	if err != nil {
		return nil, err
	}
	return af, nil
}

// Arrays lists the arrays of the file.
func (af *File) Arrays() []Info {
	switch af.Format {
	case FormatNPY:
		return listed([]Info{af.npy.info("")}, npyListed)
	case FormatNPZ:
		return af.npz.Arrays()
	case FormatSafetensors:
		return af.st.Arrays()
	case FormatTorch:
		return af.torch.Arrays()
	}
	return []Info{{DType: "csv", Shape: append([]int(nil), af.csvShape...), Supported: true}}
}

// Metadata returns a safetensors file's "__metadata__" map (nil for other formats).
func (af *File) Metadata() map[string]string {
	if af.st == nil {
		return nil
	}
	return af.st.Metadata
}

// Root returns the key of a torch checkpoint's dict whose tensors the file lists
// ("state_dict" for a Lightning checkpoint), or "".
func (af *File) Root() string {
	if af.torch == nil {
		return ""
	}
	return af.torch.Root
}

// Flattened is Torch.Flattened for a torch.save file, and nothing for the other formats,
// whose tensors are flat and alone.
func (af *File) Flattened() (nested bool, others []string, count int) {
	if af.torch == nil {
		return false, nil, 0
	}
	return af.torch.Flattened()
}

// Read reads the named array ("" for the only array of an .npy or CSV file).
func (af *File) Read(name string) (*Array, error) {
	switch af.Format {
	case FormatNPZ:
		return af.npz.Read(name)
	case FormatSafetensors:
		return af.st.Read(name)
	case FormatTorch:
		return af.torch.Read(name)
	}
	if name != "" {
		return nil, fmt.Errorf("%w %q: a %s file holds one array, named \"\"", ErrNotFound, name, af.Format)
	}
	if af.Format == FormatCSV {
		// The array read by Open goes to the caller, not a copy of it: a CSV file's numbers
		// are held once.
		if a := af.csv; a != nil {
			af.csv = nil
			return a, nil
		}
		return readCSVAt(af.r, af.size)
	}
	raw := make([]byte, af.npy.dataBytes()) // checked against the file's size by Open
	if _, err := af.r.ReadAt(raw, af.npy.offset); err != nil && !(err == io.EOF && len(raw) == 0) {
		return nil, userfile.PathErr(err)
	}
	return decodeNPYData(af.npy, raw)
}

// ReadInt reads an integer tensor of one element, int64 or int32 (a buffer such as S4's
// l_kernel), from a torch.save, safetensors or .npz file; an .npy or CSV file holds none.
func (af *File) ReadInt(name string) (int64, error) {
	if af.torch != nil {
		return af.torch.ReadInt(name)
	}
	infos, err := af.RawInfos()
	if err != nil {
		return 0, err
	}
	i := slices.IndexFunc(infos, func(r RawInfo) bool { return r.Name == name })
	if i < 0 {
		return 0, notFound(name, af.Arrays())
	}
	in := infos[i]
	if n, _ := rawElements(in.Shape); n != 1 || in.DType != "I64" && in.DType != "I32" {
		return 0, unsupportedf("%s: tensor %q is %s of shape %s, not one int64 or int32", af.Format, name, rawTypes[in.DType].name, ShapeString(in.Shape))
	}
	raw, err := af.ReadRaw(name) // little-endian, whatever the file's byte order
	if err != nil {
		return 0, err
	}
	if in.DType == "I32" {
		return int64(int32(binary.LittleEndian.Uint32(raw))), nil
	}
	return int64(binary.LittleEndian.Uint64(raw)), nil
}

// Close closes the file (a no-op for OpenReader's).
func (af *File) Close() error {
	if af.c == nil {
		return nil
	}
	return af.c.Close()
}
