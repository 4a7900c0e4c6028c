package train

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseSpec feeds job files to ParseSpec: it never panics, a spec it accepts validates
// without panicking, and writing an accepted spec back and reading it again gives the same
// job (the job file is how runs are reproduced).
func FuzzParseSpec(f *testing.F) {
	for _, s := range []Spec{DefaultSpec(), PaperSpec()} {
		data, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		`{}`, `{"model": "modal", "order": 3, "steps": 10}`, `{"order": -1}`, `{"model": "rtf"} {}`,
		`{"target": {"kernels": [[1, 0.5], []]}, "max_radius": 1e308}`, `{"optimizer": {"lr": "x"}}`,
		`{"seed": 18446744073709551615}`, `[`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data)
		if err != nil {
			return
		}
		_ = s.Validate(1, 1024)
		back, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("an accepted spec does not marshal: %v", err)
		}
		s2, err := ParseSpec(back)
		if err != nil {
			t.Fatalf("ParseSpec rejects its own output %s: %v", back, err)
		}
		again, _ := json.Marshal(s2)
		if !bytes.Equal(back, again) {
			t.Fatalf("round trip changed the spec:\n%s\n%s", back, again)
		}
	})
}

func TestParseSpecTrailingData(t *testing.T) {
	if _, err := ParseSpec([]byte(`{"order": 4} {"order": 8}`)); err == nil {
		t.Error("two objects accepted as one job")
	}
	s, err := ParseSpec([]byte("{\"order\": 4}\n"))
	if err != nil || s.Order != 4 {
		t.Errorf("order %d, err %v", s.Order, err)
	}
}
