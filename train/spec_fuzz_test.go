package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
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

// TestParseSpecStrict checks that a job file is read as strictly as every other JSON file:
// a key twice is an error naming the key and where its second copy is, a syntax error says
// where, and a byte order mark is allowed.
func TestParseSpecStrict(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"{\"order\": 4,\n \"order\": 8}", `duplicate key "order" at line 2, column 2`},
		{"{\"order\": 4,\n \"steps\": }", "line 2, column 11"},
		{`{"order": 4} {"order": 8}`, "after the JSON value"},
		{`{"ordre": 4}`, `unknown key "ordre"`},
		{`{"order": "4"}`, `key "order": want a whole number, got a string`},
	} {
		_, err := ParseSpec([]byte(c.in))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want ErrInvalid saying %q", c.in, err, c.want)
		}
	}
	if s, err := ParseSpec([]byte("\ufeff{\"order\": 4}")); err != nil || s.Order != 4 {
		t.Errorf("with a byte order mark: order %d, err %v", s.Order, err)
	}
}
