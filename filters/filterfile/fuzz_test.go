package filterfile_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
)

// FuzzUnmarshal checks that decoding never panics, that every rejection is one line wrapping
// ErrInvalid, and that an accepted document is a fixed point of Marshal∘Unmarshal after one
// round (the first round may discretise, apply the S4 mapping or renormalise the text).
// The seed corpus is in testdata/fuzz/FuzzUnmarshal.
func FuzzUnmarshal(f *testing.F) {
	for _, doc := range codecDocs() {
		b, err := filterfile.Marshal(doc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := filterfile.Unmarshal(data)
		if err != nil {
			if !errors.Is(err, filters.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if (doc.Filter == nil) == (doc.Bank == nil) {
			t.Fatalf("accepted document holds Filter %v and Bank %v", doc.Filter, doc.Bank)
		}
		b1, err := filterfile.Marshal(doc)
		if err != nil {
			t.Fatalf("accepted document does not marshal: %v", err)
		}
		doc2, err := filterfile.Unmarshal(b1)
		if err != nil {
			t.Fatalf("marshalled document does not unmarshal: %v\n%s", err, b1)
		}
		b2, err := filterfile.Marshal(doc2)
		if err != nil {
			t.Fatalf("second Marshal: %v", err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("Marshal∘Unmarshal is not stable:\n%s\nthen\n%s", b1, b2)
		}
	})
}
