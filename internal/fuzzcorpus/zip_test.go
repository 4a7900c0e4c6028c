package fuzzcorpus

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"
)

// TestSplitZip: each entry comes out as an archive of its own, with its name, method and
// contents as they were and no extra field.
func TestSplitZip(t *testing.T) {
	entries := []struct {
		name   string
		method uint16
		data   string
	}{{"a/data.pkl", zip.Store, "pickle"}, {"a/data/0", zip.Deflate, "storage storage storage"}}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		// An extra field of padding, as torch.save writes to align the data.
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method, Extra: []byte{'F', 'B', 4, 0, 0, 0, 0, 0}})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	parts, err := SplitZip(b.Bytes())
	if err != nil || len(parts) != len(entries) {
		t.Fatalf("%d parts, %v", len(parts), err)
	}
	for i, p := range parts {
		zr, err := zip.NewReader(bytes.NewReader(p), int64(len(p)))
		if err != nil || len(zr.File) != 1 {
			t.Fatalf("part %d: %v", i, err)
		}
		f := zr.File[0]
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc) // checks the CRC
		if err != nil || f.Name != entries[i].name || f.Method != entries[i].method || string(got) != entries[i].data || len(f.Extra) != 0 {
			t.Errorf("part %d: %q method %d %q extra %v (%v), want %+v", i, f.Name, f.Method, got, f.Extra, err, entries[i])
		}
	}
	if none, err := Rezip(b.Bytes(), func(string) bool { return false }); none != nil || err != nil {
		t.Errorf("Rezip keeping nothing: %d bytes, %v", len(none), err)
	}
}
