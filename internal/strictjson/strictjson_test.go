package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// walk reads one value with Members and Elements, as the formats' readers do.
func walk(d *Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return d.Members(func(string) error { return walk(d) })
	case json.Delim('['):
		return d.Elements(func(int) error { return walk(d) })
	}
	return nil
}

func read(data string) error {
	d := NewDecoder([]byte(data))
	err := walk(d)
	if err == nil {
		err = d.End()
	}
	if cerr := Check([]byte(data)); (cerr == nil) != (err == nil) || err != nil && cerr.Error() != err.Error() {
		panic(fmt.Sprintf("Check gives %v where the walk gives %v", cerr, err))
	}
	return err
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"trailing comma", `{"form": "dense",}`, "bad JSON at line 1, column 18: invalid character '}' looking for beginning of object key string"},
		{"missing comma", "{\n  \"form\": \"dense\"\n  \"D\": 1\n}", "bad JSON at line 3, column 3: invalid character '\"' after object key:value pair"},
		{"columns count characters", "{\"name\": \"ππ\" x}", "bad JSON at line 1, column 15: invalid character 'x' after object key:value pair"},
		{"truncated", "{\"A\": [[1", "bad JSON at line 1, column 10: unexpected end of input"},
		{"empty", "", "bad JSON at line 1, column 1: unexpected end of input"},
		{"space only", " \n ", "bad JSON at line 2, column 2: unexpected end of input"},
		{"NaN", `{"h0": NaN}`, "bad JSON at line 1, column 8: invalid character 'N' looking for beginning of value (JSON has no NaN or infinity, which Python's json.dump writes: values must be finite numbers)"},
		{"-Infinity", `[1, -Infinity]`, "bad JSON at line 1, column 6: invalid character 'I' in numeric literal (JSON has no NaN or infinity, which Python's json.dump writes: values must be finite numbers)"},
		{"a word, not NaN", `{"h0": Nano}`, "bad JSON at line 1, column 8: invalid character 'N' looking for beginning of value"},
		{"trailing data", "{\"form\": \"dense\"}\n {}", "bad JSON at line 2, column 2: unexpected data (an object) after the JSON value"},
		{"duplicate", `{"form": "dense", "D": 1, "D": 2}`, `duplicate key "D" at line 1, column 27`},
		{"duplicate escaped", `{"a\"\\": 1, "a\"\\": 2}`, `duplicate key "a\"\\" at line 1, column 14`},
		{"duplicate nested", "{\"channels\": [\n  {\"x\": 1},\n  {\"y\": 1, \"y\": 2}\n]}", `duplicate key "y" at line 3, column 12`},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "bad JSON at line 1, column 65: nested more than 64 deep"},
		{"not UTF-8", "{\"name\": \"a\xffb\"}", "bad JSON at line 1, column 12: byte 0xff in a string is not UTF-8 (JSON text must be UTF-8)"},
		{"not UTF-8 in a key", "{\"π\xc3\": 1}", "bad JSON at line 1, column 4: byte 0xc3 in a string is not UTF-8 (JSON text must be UTF-8)"},
		{"a cut sequence", "[\"ok\",\n \"\xe2\x82\"]", "bad JSON at line 2, column 3: byte 0xe2 in a string is not UTF-8 (JSON text must be UTF-8)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := read(tc.data)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
			var se *SyntaxError
			var de *DuplicateKeyError
			if !errors.As(err, &se) && !errors.As(err, &de) {
				t.Errorf("%T is neither a *SyntaxError nor a *DuplicateKeyError", err)
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	for _, data := range []string{
		`{}`, `[]`, `1`, `"s"`, `null`, " {\"a\": [1, {\"b\": true}], \"c\": null} \n",
		"\ufeff{\"bom\": 1}",
		strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
		`{"a": {"x": 1}, "b": {"x": 1}}`, // the same key in two objects
	} {
		if err := read(data); err != nil {
			t.Errorf("%.40q: %v", data, err)
		}
	}
}

// TestObjectRefusesNotUTF8 checks that a member's value kept whole (Object, Value) is
// refused for a byte that is not UTF-8 as it is read, not only if a reader looks at it.
func TestObjectRefusesNotUTF8(t *testing.T) {
	d := NewDecoder([]byte("{\"a\": {\"n\": \"\xff\"},\n \"b\": 1}"))
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	_, err := d.Object()
	const want = "bad JSON at line 1, column 14: byte 0xff in a string is not UTF-8 (JSON text must be UTF-8)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestValuePositions checks that a Decoder over a part reports positions in the whole input.
func TestValuePositions(t *testing.T) {
	data := "{\"name\": \"x\",\n \"channels\": [{\"a\": 1},\n   {\"a\": 1, \"a\": 2}]}"
	d := NewDecoder([]byte(data))
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	o, err := d.Object()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.Keys, ","); got != "name,channels" || !o.Has("name") || o.Has("a") {
		t.Fatalf("keys %s", got)
	}
	ch, _ := o.Get("channels")
	if _, err := ch.Token(); err != nil {
		t.Fatal(err)
	}
	var errs []error
	err = ch.Elements(func(int) error {
		v, err := ch.Value()
		if err != nil {
			return err
		}
		if _, err := v.Token(); err != nil {
			return err
		}
		_, err = v.Object()
		errs = append(errs, err)
		return nil
	})
	if err != nil || len(errs) != 2 || errs[0] != nil {
		t.Fatalf("got %v, %v", err, errs)
	}
	if want := `duplicate key "a" at line 3, column 13`; errs[1] == nil || errs[1].Error() != want {
		t.Errorf("got %v, want %s", errs[1], want)
	}
	// Get gives a fresh Decoder each time.
	for range 2 {
		v, _ := o.Get("name")
		if tok, err := v.Token(); tok != "x" || err != nil {
			t.Errorf("name: %v, %v", tok, err)
		}
		if line, col := v.Position(); line != 1 || col != 13 {
			t.Errorf("after the name: line %d, column %d, want 1, 13 (the comma)", line, col)
		}
	}
}

func TestFloat(t *testing.T) {
	for _, tc := range []struct {
		tok  json.Token
		want float64
		err  string
	}{
		{json.Number("0.5"), 0.5, ""},
		{json.Number("-1e-400"), 0, ""}, // underflow rounds to zero, as encoding/json does
		{json.Number("1e400"), 0, "is the number 1e400, outside the range of float64"},
		{"NaN", 0, `is the string "NaN", want a number (numbers are unquoted, and NaN and infinities are not allowed)`},
		{nil, 0, "is null, want a number"},
		{true, 0, "is true, want a number"},
		{json.Delim('['), 0, "is an array, want a number"},
	} {
		x, err := Float(tc.tok)
		if tc.err == "" && (err != nil || x != tc.want) || tc.err != "" && (err == nil || err.Error() != tc.err) {
			t.Errorf("Float(%v) = %v, %v; want %v, %q", tc.tok, x, err, tc.want, tc.err)
		}
	}
}

func TestDescribe(t *testing.T) {
	long := strings.Repeat("π", 50)
	for _, tc := range []struct {
		tok  json.Token
		want string
	}{
		{json.Delim('{'), "an object"},
		{json.Delim(']'), `"]"`},
		{long, `the string "` + strings.Repeat("π", 40) + `…"`},
		{json.Number("12"), "the number 12"},
		{false, "false"},
	} {
		if got := Describe(tc.tok); got != tc.want {
			t.Errorf("Describe(%v) = %s, want %s", tc.tok, got, tc.want)
		}
	}
}

func TestUnmarshal(t *testing.T) {
	type point struct{ X, Y float64 }
	for _, tc := range []struct {
		data  string
		known bool
		want  point
		err   string // "" for none
	}{
		{`{"X": 1, "Y": 2}`, true, point{1, 2}, ""},
		// A byte order mark is ignored, as NewDecoder ignores it.
		{"\ufeff{\"X\": 1}", false, point{X: 1}, ""},
		{"\ufeff{\"X\": 1}", true, point{X: 1}, ""},
		{`{"X": 1, "X": 2}`, false, point{}, `duplicate key "X" at line 1, column 10`},
		{`{"X": 1} {}`, true, point{}, "after the JSON value"},
		{`{"X": 1, "Z": 2}`, false, point{X: 1}, ""},
		// In the file's words, not Go's ("json: unknown field", "cannot unmarshal string
		// into Go struct field point.X of type float64").
		{`{"X": 1, "Z": 2}`, true, point{}, `unknown key "Z"`},
		{`{"X": "a"}`, false, point{}, `key "X": want a number, got a string`},
		{`[1]`, false, point{}, `want an object, got an array`},
		// encoding/json alone would read the byte as U+FFFD.
		{"{\"X\": 1, \"Z\": \"\xff\"}", false, point{}, "byte 0xff in a string is not UTF-8"},
	} {
		var p point
		err := Unmarshal([]byte(tc.data), &p)
		if tc.known {
			err = UnmarshalKnown([]byte(tc.data), &p)
		}
		if err != nil && (strings.Contains(err.Error(), "json: ") || strings.Contains(err.Error(), "Go ")) {
			t.Errorf("%q (known %v): %v speaks of Go", tc.data, tc.known, err)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q (known %v): %v", tc.data, tc.known, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q (known %v): error %v, want one saying %q", tc.data, tc.known, err, tc.err)
		case tc.err == "" && p != tc.want:
			t.Errorf("%q (known %v) = %+v, want %+v", tc.data, tc.known, p, tc.want)
		}
	}
}

// FuzzDecoder checks the reader against encoding/json: it never panics, what it accepts is
// valid JSON, and valid JSON it refuses has a key twice or nests deeper than MaxDepth.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5e3, {"b": null}], "c": "ü"}`, `{"a": 1, "a": 2}`, `[[[]]]`, "\ufeff{}", `{"x":}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := read(string(data))
		valid := json.Valid(bytes.TrimPrefix(data, []byte("\ufeff")))
		var se *SyntaxError
		var de *DuplicateKeyError
		switch {
		case err == nil && !valid:
			t.Fatalf("accepted invalid JSON %q", data)
		case err != nil && !errors.As(err, &se) && !errors.As(err, &de):
			t.Fatalf("%T: %v", err, err)
		case err != nil && valid && !errors.As(err, &de) && !strings.Contains(err.Error(), "nested more than") &&
			!(strings.Contains(err.Error(), "is not UTF-8") && !utf8.Valid(data)):
			t.Fatalf("refused valid JSON %q: %v", data, err)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Fatalf("error spans lines: %q", err)
		}
	})
}

// TestUnmarshalKeyPath: a value of the wrong type is named by its keys from the top, without
// the Go name of an embedded struct, which is no key of the file (sysid data's "u" read
// `key "pair.u"`).
func TestUnmarshalKeyPath(t *testing.T) {
	type pair struct {
		U []float64 `json:"u"`
	}
	type doc struct {
		pair
		Channels []pair `json:"channels"`
		Inner    struct {
			N int `json:"n"`
		} `json:"inner"`
	}
	for data, want := range map[string]string{
		`{"u": "x"}`:                    `key "u": want an array, got a string`,
		`{"channels": [{"u": [true]}]}`: `key "channels.u": want a number, got true or false`,
		`{"inner": {"n": 1.5}}`:         `key "inner.n": want a whole number, got the number 1.5`,
	} {
		var d doc
		if err := UnmarshalKnown([]byte(data), &d); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", data, err, want)
		}
	}
}
