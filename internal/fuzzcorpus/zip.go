package fuzzcorpus

import (
	"archive/zip"
	"bytes"
	"io"
	"time"
)

// Rezip returns the zip archive data with only the entries keep accepts, in their order,
// each with its compressed bytes, method and checksum as they were but without extra fields
// (torch.save pads its entries with one to align the data; NumPy adds zip64 ones), or nil
// when keep accepts none.
func Rezip(data []byte, keep func(name string) bool) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	n := 0
	for _, f := range zr.File {
		if !keep(f.Name) {
			continue
		}
		h := f.FileHeader
		h.Extra, h.Modified = nil, time.Time{} // a Modified time would add an extra field
		h.Flags &^= 0x8                        // no data descriptor: CreateRaw writes the sizes first
		w, err := zw.CreateRaw(&h)
		if err != nil {
			return nil, err
		}
		r, err := f.OpenRaw()
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(w, r); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SplitZip returns each entry of the zip archive data as an archive of its own (Rezip).
func SplitZip(data []byte) ([][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, f := range zr.File {
		one, err := Rezip(data, func(name string) bool { return name == f.Name })
		if err != nil {
			return nil, err
		}
		out = append(out, one)
	}
	return out, nil
}
