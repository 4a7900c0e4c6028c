package arrays_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// randomArray returns an array of the given shape with values of widely varying magnitude
// (including subnormals, -0 and large numbers), from a fixed seed.
func randomArray(t testing.TB, seed uint64, shape ...int) *arrays.Array {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float64, n)
	for i := range data {
		switch i % 7 {
		case 3:
			data[i] = math.Copysign(0, -1)
		case 5:
			data[i] = 5e-324 * float64(rng.IntN(100))
		default:
			data[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		}
	}
	a, err := arrays.New(shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var roundTripShapes = [][]int{{}, {0}, {1}, {7}, {3, 5}, {2, 0}, {0, 4}, {2, 3, 4}, {1, 1, 1, 2}}

func TestNPYRoundTrip(t *testing.T) {
	for i, shape := range roundTripShapes {
		a := randomArray(t, uint64(i), shape...)
		b, err := arrays.EncodeNPY(a, arrays.Float64)
		if err != nil {
			t.Fatal(err)
		}
		if (len(b)-len(a.Data)*8)%64 != 0 {
			t.Errorf("%v: the header of %d bytes is not padded to 64", shape, len(b)-len(a.Data)*8)
		}
		got, err := arrays.DecodeNPY(b)
		if err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		if !got.Equal(a) {
			t.Errorf("%v: DecodeNPY∘EncodeNPY changed the array", shape)
		}
		got, err = arrays.ReadNPY(bytes.NewReader(b))
		if err != nil || !got.Equal(a) {
			t.Errorf("%v: ReadNPY: %v", shape, err)
		}
	}
}

func TestNPYFloat32(t *testing.T) {
	a := randomArray(t, 9, 4, 6)
	b, err := arrays.EncodeNPY(a, arrays.Float32)
	if err != nil {
		t.Fatal(err)
	}
	got, err := arrays.DecodeNPY(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range a.Data {
		if got.Data[i] != float64(float32(x)) {
			t.Fatalf("entry %d: %v, want float32(%v) = %v", i, got.Data[i], x, float32(x))
		}
	}
	big, _ := arrays.New([]int{2}, []float64{1, 1e39})
	if _, err := arrays.EncodeNPY(big, arrays.Float32); err == nil || !strings.Contains(err.Error(), "overflows float32") {
		t.Errorf("1e39 as float32: %v", err)
	}
	if _, err := arrays.EncodeNPY(a, arrays.Float16); err == nil {
		t.Error("writing float16 should fail")
	}
}

func TestNPZRoundTrip(t *testing.T) {
	named := []arrays.Named{
		{Name: "ab", Array: randomArray(t, 1, 8, 4)},
		{Name: "h_0", Array: randomArray(t, 2, 4)},
		{Name: "layers.0/odd name", Array: randomArray(t, 3)},
		{Name: "empty", Array: randomArray(t, 4, 0, 3)},
	}
	for _, compress := range []bool{false, true} {
		b, err := arrays.EncodeNPZ(named, arrays.NPZOptions{Compress: compress})
		if err != nil {
			t.Fatal(err)
		}
		z, err := arrays.OpenNPZ(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		infos := z.Arrays()
		if len(infos) != len(named) {
			t.Fatalf("%d arrays, want %d", len(infos), len(named))
		}
		for i, n := range named {
			if infos[i].Name != n.Name || infos[i].DType != "float64" || !slices.Equal(infos[i].Shape, n.Array.Shape) {
				t.Errorf("info %d = %+v", i, infos[i])
			}
			got, err := z.Read(n.Name)
			if err != nil || !got.Equal(n.Array) {
				t.Errorf("compress=%v %q: %v", compress, n.Name, err)
			}
		}
	}
	if _, err := arrays.EncodeNPZ([]arrays.Named{named[0], named[0]}, arrays.NPZOptions{}); err == nil {
		t.Error("duplicate names should fail")
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	named := []arrays.Named{
		{Name: "layers.0.filter.ab", Array: randomArray(t, 1, 8, 4)},
		{Name: "layers.0.filter.h_0", Array: randomArray(t, 2, 4)},
		{Name: "scalar", Array: randomArray(t, 3)},
		{Name: "empty", Array: randomArray(t, 4, 0, 3)},
		{Name: `quote " and \ and ü`, Array: randomArray(t, 5, 2)},
	}
	meta := map[string]string{"format": "pt", "by": "ssmlab"}
	for _, dt := range []arrays.DType{arrays.Float64, arrays.Float32} {
		b, err := arrays.EncodeSafetensors(named, arrays.SafetensorsOptions{DType: dt, Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		if hlen := int(b[0]) | int(b[1])<<8; (8+hlen)%8 != 0 {
			t.Errorf("header of %d bytes is not padded to 8", hlen)
		}
		s, err := arrays.OpenSafetensors(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Metadata["by"] != "ssmlab" || len(s.Metadata) != 2 {
			t.Errorf("metadata %v", s.Metadata)
		}
		for _, n := range named {
			got, err := s.Read(n.Name)
			if err != nil {
				t.Fatalf("%q: %v", n.Name, err)
			}
			want := n.Array
			if dt == arrays.Float32 {
				want = want.Clone()
				for i, x := range want.Data {
					want.Data[i] = float64(float32(x))
				}
			}
			if !got.Equal(want) {
				t.Errorf("%s %q: values differ", dt, n.Name)
			}
		}
	}
}

func TestCSVRoundTrip(t *testing.T) {
	for i, shape := range [][]int{{}, {1}, {9}, {3, 5}, {1, 40}} {
		a := randomArray(t, uint64(i), shape...)
		b, err := arrays.EncodeCSV(a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := arrays.ReadCSV(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		if !slices.Equal(got.Data, a.Data) {
			t.Errorf("%v: values differ", shape)
		}
		for k := range a.Data {
			if math.Float64bits(got.Data[k]) != math.Float64bits(a.Data[k]) {
				t.Fatalf("%v: entry %d: %v, want %v", shape, k, got.Data[k], a.Data[k])
			}
		}
	}
	if _, err := arrays.EncodeCSV(randomArray(t, 1, 2, 2, 2)); err == nil {
		t.Error("a 3-D array should not encode as CSV")
	}
}

func TestCSVVariants(t *testing.T) {
	want := []float64{1, 2.5, -3, 4e-3, 5, 6}
	for name, text := range map[string]string{
		"commas":           "1,2.5,-3\n4e-3,5,6\n",
		"spaces":           "1 2.5   -3\n4e-3\t5 6",
		"crlf and blanks":  "\r\n1, 2.5, -3\r\n\r\n4e-3, 5, 6\r\n",
		"comments, header": "# made by hand\na,b,c\n1,2.5,-3\n# between\n4e-3,5,6\n",
		"quoted":           `"x","y","z"` + "\n" + `"1","2.5","-3"` + "\n4e-3,5,6\n",
	} {
		a, err := arrays.ReadCSV(strings.NewReader(text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !slices.Equal(a.Shape, []int{2, 3}) || !slices.Equal(a.Data, want) {
			t.Errorf("%s: got %v %v", name, a.Shape, a.Data)
		}
	}
}

// expectError checks that err is one line wrapping sentinel and containing want.
func expectError(t *testing.T, what string, err, sentinel error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want one containing %q", what, want)
	case !errors.Is(err, sentinel):
		t.Errorf("%s: %v does not wrap %v", what, err, sentinel)
	case strings.Contains(err.Error(), "\n"):
		t.Errorf("%s: error spans lines: %q", what, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: %q does not contain %q", what, err, want)
	}
}

func TestCSVErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "no rows"},
		{"only comments", "# nothing\n\n", "no rows"},
		{"ragged", "1,2,3\n4,5\n", "line 2 has 2 fields, the first row 3"},
		{"nan", "1,2\nnan,3\n", "line 2, field 1: nan is not finite"},
		{"inf", "1,-Inf\n", "-Inf is not finite"},
		{"overflow", "1e400,1\n", "outside the range of float64"},
		{"bad number", "1,2\n3,x4\n", `"x4" is not a number`},
		{"malformed first row", "1.2.3,4\n", `"1.2.3" is not a number`},
		{"empty field", "1,,3\n", "empty field"},
	} {
		_, err := arrays.ReadCSV(strings.NewReader(tc.text))
		expectError(t, tc.name, err, arrays.ErrInvalid, tc.want)
	}
}

func TestArrayJSON(t *testing.T) {
	for i, shape := range roundTripShapes {
		a := randomArray(t, uint64(i), shape...)
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		packed := bytes.Contains(b, []byte(`"dtype"`))
		if wantPacked := a.Len() > arrays.InlineMax || (a.Len() == 0 && len(shape) != 1); packed != wantPacked {
			t.Errorf("%v: packed = %v, want %v: %s", shape, packed, wantPacked, b)
		}
		var got arrays.Array
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%v: %v\n%s", shape, err, b)
		}
		if !got.Equal(a) {
			t.Errorf("%v: JSON round trip changed the array: %s", shape, b)
		}
	}
	big := randomArray(t, 1, 4, 100)
	b, _ := json.Marshal(big)
	if len(b) > 8*400*4/3+100 {
		t.Errorf("a packed array of 400 numbers takes %d bytes", len(b))
	}
}

func TestArrayJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"ragged", "[[1, 2], [3]]", "ragged"},
		{"mixed", "[1, [2]]", "mix numbers and arrays"},
		{"mixed2", "[[1], 2]", "mix numbers and arrays"},
		{"string", `["1"]`, `hold the string "1"`},
		{"object in array", `[{}]`, "want numbers or arrays"},
		{"overflow", "[1e999]", "outside the range"},
		{"unknown key", `{"dtype": "<f8", "shape": [], "data": "", "x": 1}`, `unknown key "x"`},
		{"dup key", `{"dtype": "<f8", "dtype": "<f8"}`, `duplicate key "dtype"`},
		{"missing key", `{"dtype": "<f8", "shape": [1]}`, `lacks the key "data"`},
		{"f4", `{"dtype": "<f4", "shape": [1], "data": "AACAPw=="}`, `dtype "<f4"`},
		{"short data", `{"dtype": "<f8", "shape": [2], "data": "AAAAAAAA8D8="}`, "needs 16 bytes"},
		{"huge shape", `{"dtype": "<f8", "shape": [1000000, 1000000], "data": ""}`, "exceeds the limit"},
		{"negative", `{"dtype": "<f8", "shape": [-1], "data": ""}`, "negative"},
		{"nan", `{"dtype": "<f8", "shape": [1], "data": "AAAAAAAA+H8="}`, "NaN"},
		{"not base64", `{"dtype": "<f8", "shape": [1], "data": "!!!!!!!!!!!="}`, "not base64"},
		{"trailing", "[1] [2]", "after top-level value"},
		{"deep", strings.Repeat("[", 40) + strings.Repeat("]", 40), "nested arrays"},
	} {
		var a arrays.Array
		err := json.Unmarshal([]byte(tc.text), &a)
		// encoding/json wraps nothing, so test the message; Packed/nested errors come from us.
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := arrays.New([]int{2, 2}, []float64{1, 2, 3}); !errors.Is(err, arrays.ErrInvalid) {
		t.Errorf("short data: %v", err)
	}
	_, err := arrays.New([]int{2, 2}, []float64{1, 2, math.Inf(1), 3})
	expectError(t, "inf", err, arrays.ErrInvalid, "entry (1, 0) is +Inf")
	if _, err := arrays.FromRows([][]float64{{1, 2}, {3}}); !errors.Is(err, arrays.ErrInvalid) {
		t.Errorf("ragged rows: %v", err)
	}
	a, err := arrays.FromRows([][]float64{{1, 2}, {3, 4}, {5, 6}})
	if err != nil || !slices.Equal(a.Shape, []int{3, 2}) || a.Rows()[2][1] != 6 {
		t.Errorf("FromRows: %v %v", a, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := arrays.Open(filepath.Join(dir, "missing.npy")); err == nil || !strings.Contains(err.Error(), "missing.npy: no such file") {
		t.Errorf("missing file: %v", err)
	}
	_, err := arrays.Open(write("filter.json", []byte(`{"form": "tf"}`)))
	expectError(t, "json", err, arrays.ErrUnsupported, "not an array file")
	good, _ := arrays.EncodeNPY(randomArray(t, 1, 10), arrays.Float64)
	_, err = arrays.Open(write("short.npy", good[:len(good)-3]))
	expectError(t, "truncated npy", err, arrays.ErrInvalid, "the file holds 77 bytes after the header")
	_, err = arrays.Open(write("long.npy", append(good, 0)))
	expectError(t, "trailing bytes", err, arrays.ErrInvalid, "holds 81 bytes after the header")
	af, err := arrays.Open(write("good.npy", good))
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	if _, err := af.Read("x"); !errors.Is(err, arrays.ErrNotFound) {
		t.Errorf("Read(x) of an npy: %v", err)
	}
}
