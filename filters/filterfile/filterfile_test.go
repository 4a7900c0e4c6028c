package filterfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// awkward are values whose shortest decimal text is long, subnormal, signed zero or extreme.
var awkward = []float64{0.1, 1.0 / 3, math.Copysign(0, -1), math.Pi, 1e-7, 1e21, 5e-324, math.MaxFloat64,
	-math.SmallestNonzeroFloat64 * 3, 123456789.123456789, -2.5e-300}

func codecDocs() map[string]filters.Document {
	a := awkward
	single := func(f filters.Filter) filters.Document { return filters.Document{Filter: f} }
	docs := map[string]filters.Document{
		"dense": {Name: "two states", Filter: must(filters.NewDense(
			[][]float64{{a[0], a[1]}, {a[2], a[3]}}, []float64{a[4], a[5]}, []float64{a[6], a[7]}, a[8]))},
		"dense/order0": single(must(filters.NewDense(nil, nil, nil, 2))),
		"diagonal": single(must(filters.NewDiagonal(
			[]complex128{complex(0.9, a[1]), complex(0.9, -a[1]), complex(a[2], 0)},
			[]complex128{complex(a[0], a[4]), complex(a[0], -a[4]), complex(a[9], 0)}, a[10]))),
		"diagonal/order0": single(must(filters.NewDiagonal(nil, nil, -1))),
		"companion":       single(must(filters.NewCompanion([]float64{a[0], a[1], a[2]}, []float64{a[3], a[4], a[5]}, a[6], false))),
		"companion/observable": {Name: `quote " and <tag> & ünïcode`, Filter: must(filters.NewCompanion(
			[]float64{-0.5}, []float64{a[7]}, 0, true))},
		"companion/order0": single(must(filters.NewCompanion(nil, nil, 0.5, false))),
		"tf":               single(must(filters.NewTransferFunction([]float64{a[9], a[10]}, []float64{a[0], a[8]}, a[1]))),
		"tf/order0":        single(must(filters.NewTransferFunction(nil, nil, 0))),
		"zpk": single(must(filters.NewZPK(
			[]complex128{complex(a[0], 0)},
			[]complex128{complex(0.5, a[1]), complex(0.5, -a[1]), complex(a[2], 0)}, a[3], a[4]))),
		"zpk/order0": single(must(filters.NewZPK(nil, nil, 3, 1))),
		"rotation": single(must(filters.NewRotation(
			[][]float64{{1, 0, 0}, {0, a[0], a[1]}, {0, -a[1], a[3]}},
			[]filters.RotationBlock{{Radius: 0.9, Angle: a[1]}}, []float64{a[2]},
			[]float64{a[3], a[4], a[5]}, []float64{a[6], a[8], a[9]}, a[10]))),
		"rotation/order0": single(must(filters.NewRotation(nil, nil, nil, nil, nil, 7))),
		"bank": {Name: "layer 0", Bank: must(filters.NewBank([]filters.Filter{
			must(filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0)),
			must(filters.NewTransferFunction(nil, nil, a[0])),
			must(filters.NewTransferFunction([]float64{a[1], a[2]}, []float64{a[3], a[4]}, a[5])),
		}))},
		"bank/dense": {Bank: must(filters.NewBank([]filters.Filter{
			must(filters.NewDense([][]float64{{0.5}}, []float64{1}, []float64{1}, 0)),
		}))},
	}
	return docs
}

func TestCodecRoundTrip(t *testing.T) {
	for name, doc := range codecDocs() {
		t.Run(name, func(t *testing.T) {
			b, err := filterfile.Marshal(doc)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, err := filterfile.Unmarshal(b)
			if err != nil {
				t.Fatalf("Unmarshal: %v\n%s", err, b)
			}
			if got.Name != doc.Name {
				t.Errorf("name %q, want %q", got.Name, doc.Name)
			}
			if err := sameDoc(got, doc); err != nil {
				t.Errorf("%v\n%s", err, b)
			}
			b2, err := filterfile.Marshal(got)
			if err != nil {
				t.Fatalf("second Marshal: %v", err)
			}
			if !bytes.Equal(b, b2) {
				t.Errorf("second Marshal differs:\n%s\nthen\n%s", b, b2)
			}
			if !bytes.HasSuffix(b, []byte("}\n")) || bytes.Contains(b, []byte("\t")) {
				t.Errorf("want two-space indentation and a trailing newline:\n%s", b)
			}
		})
	}
}

// sameDoc compares the numbers bit for bit (so -0 differs from 0).
func sameDoc(got, want filters.Document) error {
	if (got.Bank == nil) != (want.Bank == nil) {
		return fmt.Errorf("bank %v, want %v", got.Bank != nil, want.Bank != nil)
	}
	if want.Bank == nil {
		return sameFilter(got.Filter, want.Filter)
	}
	if len(got.Bank.Channels) != len(want.Bank.Channels) {
		return fmt.Errorf("%d channels, want %d", len(got.Bank.Channels), len(want.Bank.Channels))
	}
	for i := range want.Bank.Channels {
		if err := sameFilter(got.Bank.Channels[i], want.Bank.Channels[i]); err != nil {
			return fmt.Errorf("channel %d: %v", i, err)
		}
	}
	return nil
}

func sameFilter(got, want filters.Filter) error {
	g, w := flatten(got), flatten(want)
	if got.Form() != want.Form() || len(g) != len(w) {
		return fmt.Errorf("got %s with %d numbers, want %s with %d", got.Form(), len(g), want.Form(), len(w))
	}
	for i := range w {
		if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
			return fmt.Errorf("number %d is %v, want %v", i, g[i], w[i])
		}
	}
	return nil
}

// flatten lists every number of a filter, with its flags as 0/1.
func flatten(f filters.Filter) []float64 {
	var v []float64
	cplx := func(c []complex128) {
		v = append(v, float64(len(c)))
		for _, x := range c {
			v = append(v, real(x), imag(x))
		}
	}
	vec := func(x []float64) {
		v = append(v, float64(len(x)))
		v = append(v, x...)
	}
	switch f := f.(type) {
	case *filters.Dense:
		for _, r := range f.Rows() {
			vec(r)
		}
		vec(f.B)
		vec(f.C)
		v = append(v, f.D)
	case *filters.Diagonal:
		cplx(f.Poles)
		cplx(f.Residues)
		v = append(v, f.H0)
	case *filters.Companion:
		vec(f.Den)
		vec(f.Num)
		v = append(v, f.H0)
		if f.Observable {
			v = append(v, 1)
		}
	case *filters.TransferFunction:
		vec(f.Den)
		vec(f.Num)
		v = append(v, f.H0)
	case *filters.ZPK:
		cplx(f.Zeros)
		cplx(f.Poles)
		v = append(v, f.Gain, f.H0)
	case *filters.Rotation:
		for i := range f.Order() {
			vec(f.P.RawRowView(i))
		}
		for _, b := range f.Blocks {
			v = append(v, b.Radius, b.Angle)
		}
		vec(f.Real)
		vec(f.B)
		vec(f.C)
		v = append(v, f.D)
	default:
		panic(fmt.Sprintf("unknown filter %T", f))
	}
	return v
}

func TestMarshalLayout(t *testing.T) {
	doc := filters.Document{Name: "n", Filter: must(filters.NewRotation(
		[][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, []filters.RotationBlock{{Radius: 0.5, Angle: 1}},
		[]float64{-0.25}, []float64{1, 0, 1}, []float64{0, 1, 1}, 1e-7))}
	want := `{
  "name": "n",
  "form": "rotation",
  "P": [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1]
  ],
  "blocks": [
    {"radius": 0.5, "angle": 1}
  ],
  "real": [-0.25],
  "B": [1, 0, 1],
  "C": [0, 1, 1],
  "D": 1e-7
}
`
	b, err := filterfile.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	bank := filters.Document{Bank: must(filters.NewBank([]filters.Filter{
		must(filters.NewDense([][]float64{{0.5}}, []float64{1}, []float64{2}, 0)),
	}))}
	want = `{
  "channels": [
    {
      "form": "dense",
      "A": [
        [0.5]
      ],
      "B": [1],
      "C": [2],
      "D": 0
    }
  ]
}
`
	if b, err = filterfile.Marshal(bank); err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}

// TestUnmarshalTransforms checks that continuous time and the S4 convention are applied as
// filters.Continuous and filters.FromS4 apply them.
func TestUnmarshalTransforms(t *testing.T) {
	dense := must(filters.NewDense([][]float64{{-1, 2}, {-2, -1}}, []float64{1, 0.5}, []float64{0.25, 1}, 0.5))
	diag := must(filters.NewDiagonal([]complex128{-1 + 2i, -1 - 2i, -3}, []complex128{1 + 1i, 1 - 1i, 0.5}, 0.5))
	const denseKeys = `"form": "dense", "A": [[-1, 2], [-2, -1]], "B": [1, 0.5], "C": [0.25, 1], "D": 0.5`
	const diagKeys = `"form": "diagonal", "poles": [[-1, 2], [-1, -2], [-3, 0]], "residues": [[1, 1], [1, -1], [0.5, 0]], "h0": 0.5`
	for _, tc := range []struct {
		name, text string
		want       func() (filters.Filter, error)
	}{
		{"dense/control", `{` + denseKeys + `, "convention": "control"}`,
			func() (filters.Filter, error) { return dense, nil }},
		{"dense/s4", `{` + denseKeys + `, "convention": "s4"}`,
			func() (filters.Filter, error) { return filters.FromS4(dense) }},
		{"dense/bilinear", `{` + denseKeys + `, "continuous": true, "dt": 0.1, "discretization": "bilinear"}`,
			func() (filters.Filter, error) {
				return (&filters.Continuous{System: dense, Dt: 0.1, Method: filters.Bilinear}).Discretize()
			}},
		{"dense/zoh/s4", `{` + denseKeys + `, "continuous": true, "dt": 0.1, "discretization": "zoh", "convention": "s4"}`,
			func() (filters.Filter, error) {
				f, err := (&filters.Continuous{System: dense, Dt: 0.1, Method: filters.ZOH}).Discretize()
				if err != nil {
					return nil, err
				}
				return filters.FromS4(f)
			}},
		{"diagonal/gbt", `{` + diagKeys + `, "continuous": true, "dt": 0.01, "discretization": "gbt", "alpha": 0.25}`,
			func() (filters.Filter, error) {
				return (&filters.Continuous{System: diag, Dt: 0.01, Method: filters.GBT, Alpha: 0.25}).Discretize()
			}},
		{"diagonal/zoh/s4", `{` + diagKeys + `, "continuous": true, "dt": 0.01, "discretization": "zoh", "convention": "s4"}`,
			func() (filters.Filter, error) {
				f, err := (&filters.Continuous{System: diag, Dt: 0.01, Method: filters.ZOH}).Discretize()
				if err != nil {
					return nil, err
				}
				return filters.FromS4(f)
			}},
		{"diagonal/euler", `{` + diagKeys + `, "continuous": true, "dt": 0.01, "discretization": "euler"}`,
			func() (filters.Filter, error) {
				return (&filters.Continuous{System: diag, Dt: 0.01, Method: filters.Euler}).Discretize()
			}},
		{"dense/backward_euler", `{` + denseKeys + `, "continuous": true, "dt": 0.5, "discretization": "backward_euler"}`,
			func() (filters.Filter, error) {
				return (&filters.Continuous{System: dense, Dt: 0.5, Method: filters.BackwardEuler}).Discretize()
			}},
		{"companion/s4", `{"form": "companion", "a": [-0.5, 0.25], "b": [1, 2], "h0": 0.5, "convention": "s4"}`,
			func() (filters.Filter, error) {
				return filters.FromS4(must(filters.NewCompanion([]float64{-0.5, 0.25}, []float64{1, 2}, 0.5, false)))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := filterfile.Unmarshal([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			want, err := tc.want()
			if err != nil {
				t.Fatal(err)
			}
			if err := sameFilter(doc.Filter, want); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestUnmarshalAccepts(t *testing.T) {
	for _, text := range []string{
		`{"form": "dense", "A": [], "B": [], "C": [], "D": 2}`,
		`{"form": "dense", "D": 2}`,
		`{"form": "dense"}`,
		`{"form": "tf", "a": [0.5], "b": [1]}`, // h0 defaults to 0
		`{"form": "zpk", "gain": 0}`,
		`{"form": "zpk", "zeros": [], "poles": [[0.5, 0]], "gain": 1}`,
		`{"form": "companion", "a": [0.5], "b": [1], "observable": false}`,
		`{"form": "dense", "continuous": false}`,
		`{"channels": [{"name": "ignored", "form": "tf", "a": [], "b": [], "h0": 1}]}`,
		" \n{\"form\": \"dense\"}\n\n",
		`{"form": "dense", "D": 1e-400}`, // underflows to 0, as strconv.ParseFloat rounds
		`{"form": "dense", "D": -0}`,
		"\ufeff{\"form\": \"dense\"}", // a byte order mark
	} {
		if _, err := filterfile.Unmarshal([]byte(text)); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	const tf = `"form": "tf", "a": [0.5], "b": [1]`
	const dense = `"form": "dense", "A": [[0.5, 0], [0, 0.25]], "B": [1, 1], "C": [1, 1]`
	const diag = `"form": "diagonal", "poles": [[-1, 0]], "residues": [[1, 0]]`
	long := func(key string, n int, item string) string {
		return `"` + key + `": [` + strings.Repeat(item+", ", n-1) + item + `]`
	}
	for _, tc := range []struct {
		name, text, want string
		is               error
	}{
		{"json/syntax", `{"form": "dense",}`, "bad JSON at line 1, column 18", nil},
		{"json/syntax-line", "{\n  \"form\": \"dense\"\n  \"D\": 1\n}", "bad JSON at line 3, column 3: invalid character '\"' after object key:value pair", nil},
		{"json/syntax-utf8", "{\"name\": \"ππ\" x}", "bad JSON at line 1, column 15", nil},
		{"json/truncated", `{"form": "dense", "A": [[1`, "unexpected end of input", nil},
		{"json/empty", "  ", "empty input", nil},
		{"json/array", `[{"form": "dense"}]`, "one JSON object, not an array", nil},
		{"json/trailing", `{"form": "dense"} {}`, "after the JSON value", nil},
		{"json/duplicate", `{"form": "dense", "D": 1, "D": 2}`, `duplicate key "D"`, nil},
		{"form/unknown", `{"form": "state-space"}`, `unknown form "state-space"`, nil},
		{"form/number", `{"form": 3}`, `"form" is the number 3, want a string`, nil},
		{"form/missing", `{"A": []}`, `missing key "form"`, nil},
		{"key/unknown", `{` + dense + `, "d": 1}`, `unknown key "d" in a dense filter`, nil},
		{"key/other-form", `{` + tf + `, "observable": true}`, `unknown key "observable" in a tf filter`, nil},
		{"key/block", `{"form": "rotation", "P": [[1, 0], [0, 1]], "blocks": [{"radius": 1, "angel": 0}], "real": [], "B": [1, 1], "C": [1, 1]}`,
			`"blocks" entry 0 has unknown key "angel"`, nil},
		{"key/bank", `{"form": "tf", "channels": [{` + tf + `}]}`, `unknown key "form" in a bank`, nil},
		{"name/number", `{` + tf + `, "name": 1}`, `"name" is the number 1, want a string`, nil},
		{"shape/ragged", `{"form": "dense", "A": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0], [0, 0, 0, 1]], "B": [1, 1, 1, 1], "C": [1, 1, 1, 1]}`,
			`"A" row 2 has 3 entries, want 4`, nil},
		{"shape/not-square", `{"form": "dense", "A": [[1, 0]], "B": [1], "C": [1]}`, `"A" row 0 has 2 entries, want 1`, nil},
		{"shape/B", `{"form": "dense", "A": [[1]], "B": [1, 2], "C": [1]}`, "B has length 2, want 1", nil},
		{"shape/A-number", `{"form": "dense", "A": 1, "B": [1], "C": [1]}`, `"A" is the number 1, want an array of rows`, nil},
		{"shape/A-flat", `{"form": "dense", "A": [1], "B": [1], "C": [1]}`, `"A" row 0 is the number 1, want an array of numbers`, nil},
		{"shape/b", `{"form": "tf", "a": [0.5, 0.1], "b": [1]}`, "b has length 1, want 2", nil},
		{"shape/residues", `{"form": "diagonal", "poles": [[0.5, 0]], "residues": []}`, "residues has length 0, want 1", nil},
		{"shape/zeros", `{"form": "zpk", "zeros": [[1, 0], [2, 0]], "poles": [[0.5, 0]], "gain": 1}`, "2 zeros but only 1 pole", nil},
		{"shape/P", `{"form": "rotation", "P": [[1]], "blocks": [{"radius": 1, "angle": 0}], "real": [], "B": [1, 1], "C": [1, 1]}`,
			"P has size 1 but the blocks and real eigenvalues give order 2", nil},
		{"shape/blocks", `{"form": "rotation", "P": [[1, 0], [0, 1]], "blocks": [[1, 0]], "real": [], "B": [1, 1], "C": [1, 1]}`,
			`"blocks" entry 0 is an array, want an object`, nil},
		{"shape/radius", `{"form": "rotation", "P": [[1, 0], [0, 1]], "blocks": [{"angle": 0}], "real": [], "B": [1, 1], "C": [1, 1]}`,
			`"blocks" entry 0: invalid filter: missing key "radius"`, nil},
		{"value/nan-string", `{` + tf + `, "h0": "NaN"}`, `"h0" is the string "NaN", want a number`, nil},
		{"value/inf-string", `{"form": "dense", "A": [[1]], "B": ["Infinity"], "C": [1]}`, `"B" entry 0 is the string "Infinity", want a number`, nil},
		{"value/nan-bare", `{` + tf + `, "h0": NaN}`, "bad JSON at line 1", nil},
		{"value/huge", `{"form": "dense", "A": [[1, 0], [0, 1e400]], "B": [1, 1], "C": [1, 1]}`,
			`"A" row 1 entry 1 is the number 1e400, outside the range of float64`, nil},
		{"value/huge-negative", `{"form": "zpk", "zeros": [], "poles": [[-1e999, 0]], "gain": 1}`,
			`"poles" entry 0 part 0 is the number -1e999, outside the range`, nil},
		{"value/null", `{` + dense + `, "D": null}`, `"D" is null, want a number`, nil},
		{"value/bool", `{` + dense + `, "D": true}`, `"D" is true, want a number`, nil},
		{"value/string-in-row", `{"form": "dense", "A": [["1"]], "B": [1], "C": [1]}`, `"A" row 0 entry 0 is the string "1"`, nil},
		{"missing/gain", `{"form": "zpk", "zeros": [], "poles": [[0.5, 0]]}`, `missing key "gain"`, nil},
		{"missing/gain-order0", `{"form": "zpk"}`, `missing key "gain"`, nil},
		{"missing/C", `{"form": "dense", "A": [[0.5]], "B": [1]}`, `missing key "C"`, nil},
		{"missing/A", `{"form": "dense", "B": [1], "C": [1]}`, `missing key "A"`, nil},
		{"missing/a", `{"form": "tf", "b": [1]}`, `missing key "a"`, nil},
		{"missing/poles", `{"form": "diagonal", "residues": [[1, 0]]}`, `missing key "poles"`, nil},
		{"missing/zeros", `{"form": "zpk", "poles": [[0.5, 0]], "gain": 1}`, `missing key "zeros"`, nil},
		{"missing/blocks", `{"form": "rotation", "P": [[1]], "real": [0.5], "B": [1], "C": [1]}`, `missing key "blocks"`, nil},
		{"bank/mixed", `{"channels": [{` + tf + `}, {` + dense + `}]}`, "channel 1 is dense but channel 0 is tf", nil},
		{"bank/channel", `{"channels": [{` + tf + `}, {` + tf + `}, {"form": "tf", "a": [0.5], "b": "x"}]}`,
			`channel 2: invalid filter: "b" is the string "x", want an array of numbers`, nil},
		{"bank/channel-ragged", `{"channels": [{` + dense + `}, {"form": "dense", "A": [[0.5, 0], [0]], "B": [1, 1], "C": [1, 1]}]}`,
			`channel 1: invalid filter: "A" row 1 has 1 entry, want 2`, nil},
		{"bank/empty", `{"channels": []}`, "a bank needs at least one channel", nil},
		{"bank/not-array", `{"channels": {}}`, `"channels" is an object, want an array of filters`, nil},
		{"bank/not-object", `{"channels": [[]]}`, "channel 0 is an array, want a filter object", nil},
		{"bank/no-form", `{"channels": [{"a": []}]}`, `channel 0: invalid filter: missing key "form"`, nil},
		{"order/A", `{"form": "dense", ` + long("A", filters.MaxOrder+1, "[]") + `}`, `"A" has more than 4096 rows`, nil},
		{"order/a", `{"form": "tf", ` + long("a", filters.MaxOrder+1, "0") + `, ` + long("b", filters.MaxOrder+1, "0") + `}`,
			`"a" has more than 4096 entries`, nil},
		{"order/poles", `{"form": "diagonal", ` + long("poles", filters.MaxOrder+1, "[0, 0]") + `}`, `"poles" has more than 4096 entries`, nil},
		{"order/blocks", `{"form": "rotation", ` + long("blocks", filters.MaxOrder/2+1, `{"radius": 0, "angle": 0}`) + `}`,
			`"blocks" has more than 2048 entries`, nil},
		{"complex/number", `{"form": "diagonal", "poles": [0.5], "residues": [[1, 0]]}`,
			`"poles" entry 0 is the number 0.5, want a complex number as a [re, im] pair`, nil},
		{"complex/short", `{"form": "diagonal", "poles": [[0.5]], "residues": [[1, 0]]}`, `"poles" entry 0 has 1 entry, want a [re, im] pair`, nil},
		{"complex/long", `{"form": "diagonal", "poles": [[0.5, 0, 0]], "residues": [[1, 0]]}`, `"poles" entry 0 has more than 2 entries`, nil},
		{"complex/object", `{"form": "diagonal", "poles": [{"re": 0.5, "im": 0}], "residues": [[1, 0]]}`, `"poles" entry 0 is an object`, nil},
		{"complex/string", `{"form": "diagonal", "poles": [[0.5, "0"]], "residues": [[1, 0]]}`, `"poles" entry 0 part 1 is the string "0"`, nil},
		{"complex/unpaired", `{"form": "diagonal", "poles": [[0.5, 0.5]], "residues": [[1, 0]]}`, "has no conjugate partner", nil},
		{"rotation/radius", `{"form": "rotation", "P": [[1, 0], [0, 1]], "blocks": [{"radius": -1, "angle": 0}], "real": [], "B": [1, 1], "C": [1, 1]}`,
			"negative radius", nil},
		{"rotation/singular", `{"form": "rotation", "P": [[1, 1], [1, 1]], "blocks": [{"radius": 1, "angle": 0}], "real": [], "B": [1, 1], "C": [1, 1]}`,
			"the rotation basis P is singular", nil},
		{"time/form", `{` + tf + `, "continuous": true, "dt": 1, "discretization": "zoh"}`, "continuous time is supported for the dense and diagonal forms", nil},
		{"time/bool", `{` + dense + `, "continuous": "yes"}`, `"continuous" is the string "yes", want true or false`, nil},
		{"time/dt-missing", `{` + dense + `, "continuous": true, "discretization": "zoh"}`, `missing key "dt"`, nil},
		{"time/method-missing", `{` + dense + `, "continuous": true, "dt": 1}`, `missing key "discretization"`, nil},
		{"time/dt-negative", `{` + diag + `, "continuous": true, "dt": -1, "discretization": "zoh"}`, "dt must be positive", nil},
		{"time/method", `{"form": "dense", "continuous": true, "dt": 1, "discretization": "tustin"}`, `unknown discretization "tustin"`, nil},
		{"time/alpha-missing", `{` + dense + `, "continuous": true, "dt": 1, "discretization": "gbt"}`, `missing key "alpha"`, nil},
		{"time/alpha-unused", `{` + dense + `, "continuous": true, "dt": 1, "discretization": "zoh", "alpha": 0.5}`, `"alpha" applies only to`, nil},
		{"time/alpha-range", `{` + diag + `, "continuous": true, "dt": 1, "discretization": "gbt", "alpha": 2}`, "alpha 2 is outside [0, 1]", nil},
		{"time/discrete-dt", `{` + dense + `, "dt": 1}`, `key "dt" needs "continuous": true`, nil},
		{"time/zoh-overflow", `{"form": "dense", "A": [[1e300, 0], [1e300, 0]], "B": [1, 1], "C": [1, 1], "continuous": true, "dt": 1e10, "discretization": "zoh"}`,
			"zoh: ‖[A B]·Δt‖₁ overflows float64 (Δt = 1e+10, ‖[A B]‖₁ = 2e+300)", nil},
		{"convention/unknown", `{` + dense + `, "convention": "lssl"}`, `unknown convention "lssl"`, nil},
		{"convention/tf", `{` + tf + `, "convention": "s4"}`, "the S4 convention applies to state-space forms", nil},
		{"convention/overflow", `{"form": "dense", "A": [[1e300]], "B": [1], "C": [1e300], "convention": "s4"}`, "C[0] is +Inf", nil},
		{"observable/string", `{"form": "companion", "a": [0.5], "b": [1], "observable": "true"}`,
			`"observable" is the string "true", want true or false`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := filterfile.Unmarshal([]byte(tc.text))
			if err == nil {
				t.Fatalf("no error; got %+v", doc)
			}
			msg := err.Error()
			if !errors.Is(err, filters.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error does not wrap %v: %v", tc.is, err)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("want one line, got %q", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("got %q, want it to contain %q", msg, tc.want)
			}
		})
	}
}

// TestUnmarshalAllocation checks that a short file cannot make the decoder allocate for the
// large filter it claims to be.
func TestUnmarshalAllocation(t *testing.T) {
	rows := "[" + strings.Repeat("[],", filters.MaxOrder-1) + "[]]"
	data := []byte(`{"form": "rotation", "P": ` + rows + `}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := filterfile.Unmarshal(data); err == nil {
		t.Fatal("no error")
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 32*uint64(len(data))+1<<20 {
		t.Errorf("decoding %d bytes allocated %d bytes", len(data), got)
	}
}

func TestUnmarshalTooLarge(t *testing.T) {
	data := make([]byte, userfile.MaxSize+1)
	_, err := filterfile.Unmarshal(data)
	if !errors.Is(err, filters.ErrInvalid) || !strings.Contains(err.Error(), "larger than the 256 MiB limit") {
		t.Errorf("got %v", err)
	}
}

func TestMarshalErrors(t *testing.T) {
	tf := must(filters.NewTransferFunction(nil, nil, 1))
	bad := &filters.Dense{D: math.NaN()}
	for _, tc := range []struct {
		name string
		doc  filters.Document
		want string
	}{
		{"empty", filters.Document{}, "empty Document"},
		{"both", filters.Document{Filter: tf, Bank: must(filters.NewBank([]filters.Filter{tf}))}, "not both"},
		{"invalid", filters.Document{Filter: bad}, "D[0] is NaN"},
		{"bank", filters.Document{Bank: &filters.Bank{Channels: []filters.Filter{tf, bad}}}, "channel 1"},
		{"unknown", filters.Document{Filter: otherFilter{tf: tf}}, "no file format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := filterfile.Marshal(tc.doc)
			if err == nil || !errors.Is(err, filters.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

// TestMarshalTooLarge checks that Marshal refuses a document Unmarshal could not read.
func TestMarshalTooLarge(t *testing.T) {
	defer filterfile.SetMaxSize(1 << 20)()
	const n = 240 // 240² entries of 20 bytes exceed 1 MiB
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, n)
		for j := range rows[i] {
			rows[i][j] = 0.1234567890123456
		}
	}
	d := must(filters.NewDense(rows, make([]float64, n), make([]float64, n), 0))
	_, err := filterfile.Marshal(filters.Document{Filter: d})
	if !errors.Is(err, filters.ErrInvalid) || !strings.Contains(err.Error(), "more than the 1 MiB limit") {
		t.Errorf("got %v", err)
	}
}

// otherFilter is a Filter without Fields, which the file format does not know.
type otherFilter struct{ tf *filters.TransferFunction }

func (f otherFilter) Form() filters.Form                        { return f.tf.Form() }
func (f otherFilter) Order() int                                { return f.tf.Order() }
func (f otherFilter) Validate() error                           { return f.tf.Validate() }
func (f otherFilter) Impulse(n int) []float64                   { return f.tf.Impulse(n) }
func (f otherFilter) FreqResponse(omega []float64) []complex128 { return f.tf.FreqResponse(omega) }

// TestReadWrite checks the stream functions: Write then Read gives the document back, a
// writer's error is returned, and a stream over the size limit is refused as it is read.
func TestReadWrite(t *testing.T) {
	doc := codecDocs()["rotation"]
	var buf bytes.Buffer
	if err := filterfile.Write(&buf, doc); err != nil {
		t.Fatal(err)
	}
	got, err := filterfile.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameDoc(got, doc); err != nil {
		t.Error(err)
	}
	if err := filterfile.Write(failingWriter{}, doc); !errors.Is(err, errWrite) {
		t.Errorf("a failing writer: %v", err)
	}
	if err := filterfile.Write(&buf, filters.Document{}); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("an empty document: %v", err)
	}
	_, err = filterfile.Read(iotest.ErrReader(errWrite))
	if !errors.Is(err, errWrite) {
		t.Errorf("a failing reader: %v", err)
	}
	var tooLarge *userfile.TooLargeError
	_, err = filterfile.Read(io.LimitReader(zeros{}, userfile.MaxSize+1))
	if !errors.As(err, &tooLarge) || !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("a stream over the limit: %v", err)
	}
}

var errWrite = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

// zeros reads as endless spaces.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = ' '
	}
	return len(b), nil
}

func ExampleUnmarshal() {
	doc, err := filterfile.Unmarshal([]byte(`{
  "name": "one-pole smoother",
  "form": "tf",
  "a": [-0.5],
  "b": [0.5],
  "h0": 0
}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(doc.Name, doc.Filter.Form(), doc.Filter.Order())
	fmt.Println(doc.Filter.Impulse(5))

	_, err = filterfile.Unmarshal([]byte(`{"form": "dense", "A": [[0.5, 0], [0.5]], "B": [1, 0], "C": [0, 1]}`))
	fmt.Println(err)
	fmt.Println(errors.Is(err, filters.ErrInvalid))
	// Output:
	// one-pole smoother tf 1
	// [0 0.5 0.25 0.125 0.0625]
	// invalid filter: "A" row 1 has 1 entry, want 2 (A is 2×2: it must be square)
	// true
}

func ExampleMarshal() {
	zpk, err := filters.NewZPK([]complex128{-1}, []complex128{0.5 + 0.5i, 0.5 - 0.5i}, 0.25, 0)
	if err != nil {
		log.Fatal(err)
	}
	b, err := filterfile.Marshal(filters.Document{Name: "resonator", Filter: zpk})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Output:
	// {
	//   "name": "resonator",
	//   "form": "zpk",
	//   "zeros": [[-1, 0]],
	//   "poles": [[0.5, 0.5], [0.5, -0.5]],
	//   "gain": 0.25,
	//   "h0": 0
	// }
}
