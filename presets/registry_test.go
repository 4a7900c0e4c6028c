package presets

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters/filterfile"
)

func TestRegistryWellFormed(t *testing.T) {
	name := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	param := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	seen := map[string]bool{}
	for _, p := range All() {
		if !name.MatchString(p.Name) || seen[p.Name] {
			t.Errorf("bad or duplicate preset name %q", p.Name)
		}
		seen[p.Name] = true
		if p.Description == "" || p.Source == "" || p.Output == "" || p.Build == nil {
			t.Errorf("%s: missing description, source, output or build", p.Name)
		}
		if strings.Contains(p.Description, "\n") {
			t.Errorf("%s: the description must be one line", p.Name)
		}
		pseen := map[string]bool{}
		for _, q := range p.Params {
			if !param.MatchString(q.Name) || pseen[q.Name] {
				t.Errorf("%s: bad or duplicate parameter %q", p.Name, q.Name)
			}
			pseen[q.Name] = true
			if q.Help == "" {
				t.Errorf("%s %s: no help", p.Name, q.Name)
			}
			if (q.Kind == Choice) != (len(q.Choices) > 0) {
				t.Errorf("%s %s: choices and kind disagree", p.Name, q.Name)
			}
			if q.Kind != Choice && !(q.Min <= q.Max) {
				t.Errorf("%s %s: empty range", p.Name, q.Name)
			}
		}
	}
}

// TestEveryPresetBuilds builds every preset with its defaults, checks that the result has the
// announced output, that it is valid and finite, and that the same seed gives the same bytes.
func TestEveryPresetBuilds(t *testing.T) {
	for _, p := range All() {
		t.Run(p.Name, func(t *testing.T) {
			r, err := p.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.Name, p.Name) {
				t.Errorf("result name %q", r.Name)
			}
			if r.Note != "" {
				t.Errorf("the defaults give a note: %s", r.Note)
			}
			doc, ok := r.Document()
			if !ok {
				if p.Output != "kernels" || len(r.Kernels) == 0 {
					t.Fatalf("no filter, and output %q", p.Output)
				}
				return
			}
			if r.Filter == nil || r.Bank != nil {
				t.Fatal("defaults should give one filter")
			}
			if !strings.HasPrefix(p.Output, string(r.Filter.Form())) {
				t.Errorf("form %s, announced %q", r.Filter.Form(), p.Output)
			}
			if err := r.Filter.Validate(); err != nil {
				t.Fatal(err)
			}
			for i, h := range r.Filter.Impulse(64) {
				if math.IsNaN(h) || math.IsInf(h, 0) {
					t.Fatalf("h[%d] = %v", i, h)
				}
			}
			data, err := filterfile.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			// The name records every value used: building from it gives the same bytes.
			fields := strings.Fields(r.Name)
			values := map[string]string{}
			for _, f := range fields[1:] {
				k, v, _ := strings.Cut(f, "=")
				values[k] = v
			}
			again, err := New(fields[0], values)
			if err != nil {
				t.Fatalf("rebuilding from the name %q: %v", r.Name, err)
			}
			doc2, _ := again.Document()
			data2, _ := filterfile.Marshal(doc2)
			if !bytes.Equal(data, data2) {
				t.Errorf("rebuilding from the name %q gives a different filter", r.Name)
			}
			if p.param("seed") != nil {
				other, err := p.New(map[string]string{"seed": "1"})
				if err != nil {
					t.Fatal(err)
				}
				doc3, _ := other.Document()
				data3, _ := filterfile.Marshal(doc3)
				if bytes.Equal(data, bytes.Replace(data3, []byte("seed=1"), []byte("seed=0"), 1)) {
					t.Error("seeds 0 and 1 give the same filter")
				}
			}
		})
	}
}

func TestBanks(t *testing.T) {
	for _, p := range All() {
		if p.param("channels") == nil || p.Output == "kernels" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			r, err := p.New(map[string]string{"channels": "3", "order": strconv.Itoa(orderFor(p))})
			if err != nil {
				t.Fatal(err)
			}
			if r.Bank == nil || len(r.Bank.Channels) != 3 {
				t.Fatalf("want a bank of 3, got %+v", r)
			}
			if err := r.Bank.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// orderFor returns a small order every preset with an order accepts.
func orderFor(p *Preset) int {
	if p.Name == "rotrnn" {
		return 8
	}
	return 4
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		preset string
		values map[string]string
		kind   error
		want   []string
	}{
		{"buter", nil, ErrUnknownPreset, []string{`"buter"`, "butter, cheby1"}},
		{"butter", map[string]string{"wn": "0.3"}, ErrParam, []string{`"wn"`, "order, band, wc, wlo, whi"}},
		{"delay", map[string]string{"seed": "1"}, ErrParam, []string{`"seed"`, "delay accepts: d"}},
		{"butter", map[string]string{"order": "4.5"}, ErrParam, []string{"order=4.5", "not an integer", "[1, 64]"}},
		{"butter", map[string]string{"order": "0"}, ErrParam, []string{"order=0", "out of range", "integer in [1, 64]"}},
		{"butter", map[string]string{"wc": "4"}, ErrParam, []string{"wc=4", "(0, π)"}},
		{"butter", map[string]string{"wc": "pi"}, ErrParam, []string{"wc=pi", "(0, π)"}},
		{"butter", map[string]string{"wc": "fast"}, ErrParam, []string{"wc=fast", "not a number"}},
		{"butter", map[string]string{"band": "notch"}, ErrParam, []string{"band=notch", "lowpass, highpass, bandpass, bandstop"}},
		{"butter", map[string]string{"band": "bandpass", "wc": "1"}, ErrParam, []string{"wc", "wlo and whi"}},
		{"butter", map[string]string{"wlo": "1"}, ErrParam, []string{"wlo and whi", "takes wc"}},
		{"cheby1", map[string]string{"band": "bandstop", "wlo": "2", "whi": "1"}, ErrParam, []string{"wlo=2", "below whi=1"}},
		{"rotrnn", map[string]string{"order": "10", "heads": "2"}, ErrParam, []string{"order=10", "heads=2", "even"}},
		{"rotrnn", map[string]string{"gamma_min": "0.9", "gamma_max": "0.5"}, ErrParam, []string{"gamma_min=0.9"}},
		{"hippo-fout", map[string]string{"order": "5"}, ErrParam, []string{"order=5", "even"}},
		{"hippo-legs", map[string]string{"dt": "0.1", "dt_min": "0.01"}, ErrParam, []string{"dt", "dt_min"}},
		{"hippo-legs", map[string]string{"dt_min": "0.5", "dt_max": "0.1"}, ErrParam, []string{"dt_min=0.5", "dt_max=0.1"}},
		{"hippo-legs", map[string]string{"dt": "0"}, ErrParam, []string{"dt=0", "(0, 1000]"}},
		{"s4d-lin", map[string]string{"order": "7"}, ErrParam, []string{"order=7", "even"}},
		{"lru", map[string]string{"r_max": "1"}, ErrParam, []string{"r_max=1", "[0, 1)"}},
		{"lru", map[string]string{"r_min": "0.9", "r_max": "0.5"}, ErrParam, []string{"r_min=0.9"}},
		{"householder", map[string]string{"order": "4", "reflections": "5"}, ErrParam, []string{"reflections=5", "order=4"}},
		{"hyena", map[string]string{"emb_dim": "4"}, ErrParam, []string{"emb_dim=4", "odd"}},
		{"hyena", map[string]string{"length": "1048576", "channels": "8"}, ErrParam, []string{"limit"}},
		{"hyena", map[string]string{"length": "1048576", "width": "1024", "channels": "1"}, ErrParam, []string{"multiply-adds", "limit"}},
		{"s4d-real", map[string]string{"order": "4096", "channels": "1000"}, ErrParam, []string{"channels=1000", "limit"}},
	} {
		t.Run(c.preset+" "+strings.Join(slices.Sorted(mapKeys(c.values)), " "), func(t *testing.T) {
			_, err := New(c.preset, c.values)
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want one wrapping %v", err, c.kind)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}

// TestParamNotFinite: a float parameter's NaN, infinity or value beyond float64 is refused as
// a float flag's is (WantFinite, "wc: want a finite number …"), without echoing the value; it
// read "wc=nan is not a number (the number is not finite): want a number in (0, π)".
func TestParamNotFinite(t *testing.T) {
	want := "butter: " + WantFinite("wc").Error()
	for _, v := range []string{"nan", "NaN", "inf", "-Inf", "1e999", "-1e400", "1e308pi", "pi/1e-320"} {
		_, err := New("butter", map[string]string{"wc": v})
		if !errors.Is(err, ErrParam) || err.Error() != want {
			t.Errorf("wc=%s: %v, want %q of kind ErrParam", v, err, want)
		}
	}
	if want != "butter: wc: want a finite number (within ±1.8e+308)" {
		t.Errorf("WantFinite words it %q", want)
	}
}

// A cut-off too small for float64 is refused, naming the smallest that designs accurately,
// and that value (like a normal cut-off) then builds a stable filter of the nominal gain.
func TestIIRCutoffLimit(t *testing.T) {
	for _, name := range []string{"butter", "cheby1"} {
		_, err := New(name, map[string]string{"order": "8", "wc": "1e-17"})
		if !errors.Is(err, ErrParam) {
			t.Fatalf("%s wc=1e-17: error %v, want one wrapping ErrParam", name, err)
		}
		m := regexp.MustCompile(`wc=1e-17 .* smallest workable wc is (\S+)$`).FindStringSubmatch(err.Error())
		if m == nil {
			t.Fatalf("%s wc=1e-17: error %q does not name wc and the smallest workable value", name, err)
		}
		for _, wc := range []string{m[1], "pi/4"} {
			if _, err := New(name, map[string]string{"order": "8", "wc": wc}); err != nil {
				t.Errorf("%s wc=%s: %v", name, wc, err)
			}
		}
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestArgs(t *testing.T) {
	p, _ := Lookup("butter")
	a, err := p.Parse(map[string]string{"wc": "pi/8", "band": "highpass"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Int("order") != 4 || a.Float("wc") != math.Pi/8 || a.Choice("band") != "highpass" {
		t.Errorf("args %v", a)
	}
	if !a.Given("wc") || a.Given("order") || !a.Has("order") {
		t.Error("Given/Has disagree with what was given")
	}
	if got, want := a.String(), "order=4 band=highpass wc=0.39269908169872414"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("reading an undeclared parameter did not panic")
		}
	}()
	a.Float("ripple")
}

func TestParseFloat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{
		{"0.5", 0.5}, {"1e-3", 1e-3}, {"-2", -2}, {"pi", math.Pi}, {"π", math.Pi}, {"-pi", -math.Pi}, {"+pi", math.Pi},
		{"pi/4", math.Pi / 4}, {"3pi/4", 3 * math.Pi / 4}, {"3*pi/4", 3 * math.Pi / 4}, {"2π", 2 * math.Pi},
		{"-pi/2", -math.Pi / 2}, {"0.25pi", 0.25 * math.Pi}, {"1/3", 1.0 / 3}, {" 7 ", 7},
		// the workbench's entries took spaces around "*" and before "pi"
		{"2 * pi", 2 * math.Pi}, {"0.5 pi", math.Pi / 2}, {"3π / 4", 3 * math.Pi / 4}, {"pi/-4", -math.Pi / 4},
		{"1e-400", 0}, {"5e-324", 5e-324},
	} {
		if got, err := ParseFloat(c.in); err != nil || got != c.want {
			t.Errorf("ParseFloat(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "pi/", "/4", "pie", "2pipi", "*pi", "-*pi", "--1", "1/pi", "pi*2", "x", "1/2/3",
		"pi/0", "1/0", "0x1p-2", "1_0", "2 2"} {
		if got, err := ParseFloat(in); err == nil || errors.Is(err, ErrNotFinite) {
			t.Errorf("ParseFloat(%q) = %v, %v; want an error that is not ErrNotFinite", in, got, err)
		}
	}
	// Non-finite numbers and results are refused by name; pi/Inf once read as 0 in the
	// workbench, and 1e308pi overflows though each part is finite.
	for _, in := range []string{"NaN", "inf", "-Inf", "Infinity", "1e999", "pi/Inf", "pi/NaN", "Infpi", "1e308pi", "1e308*π",
		"pi/1e-320", "1e308/1e-10", "-1e999/2"} {
		if got, err := ParseFloat(in); !errors.Is(err, ErrNotFinite) || !strings.Contains(err.Error(), "not finite") {
			t.Errorf("ParseFloat(%q) = %v, %v; want ErrNotFinite", in, got, err)
		}
	}
}

// FuzzParseFloat fuzzes the one reader of typed numbers (preset arguments, the workbench's
// entries): what it accepts is finite and reads back the same from its shortest decimal, and
// as a multiple of π and over 2 reads as that multiple and half; a number strconv reads as
// NaN or infinite is refused as not finite.
func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"0.5", "pi/4", "-3*pi/2", "1e-300", "2π", "1/3", "NaN", "pi/0", "pi/Inf", "1e308pi",
		"pi/1e-320", "2 * pi", "0.5 π / 3", "1_0", "0x1p-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseFloat(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseFloat(%q): an empty error", s)
			}
			if y, serr := strconv.ParseFloat(strings.TrimSpace(s), 64); (serr == nil || errors.Is(serr, strconv.ErrRange)) &&
				(math.IsNaN(y) || math.IsInf(y, 0)) && !strings.ContainsAny(s, "_xX") && !errors.Is(err, ErrNotFinite) {
				t.Fatalf("ParseFloat(%q) = %v, not refused as not finite", s, err)
			}
			return
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("ParseFloat(%q) = %v", s, x)
		}
		g := strconv.FormatFloat(x, 'g', -1, 64)
		if y, err := ParseFloat(g); err != nil || y != x {
			t.Fatalf("%q → %v does not round-trip: %v, %v", s, x, y, err)
		}
		if y, err := ParseFloat(g + "/2"); err != nil || y != x/2 {
			t.Fatalf("%q/2 = %v, %v; want %v", g, y, err, x/2)
		}
		want := x * math.Pi
		y, err := ParseFloat(g + "pi")
		if math.IsInf(want, 0) {
			if !errors.Is(err, ErrNotFinite) {
				t.Fatalf("%qpi = %v, %v; want ErrNotFinite", g, y, err)
			}
		} else if err != nil || y != want {
			t.Fatalf("%qpi = %v, %v; want %v", g, y, err, want)
		}
	})
}

// TestDocsCoverEveryPreset checks that docs/presets.md has a section for every preset and
// names every parameter.
func TestDocsCoverEveryPreset(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "presets.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, p := range All() {
		i := strings.Index(doc, "\n### "+p.Name+"\n")
		if i < 0 {
			t.Errorf("docs/presets.md has no section ### %s", p.Name)
			continue
		}
		section := doc[i+1:]
		if j := strings.Index(section[4:], "\n#"); j >= 0 {
			section = section[:j+4]
		}
		for _, q := range p.Params {
			if !strings.Contains(section, "`"+q.Name+"`") {
				t.Errorf("docs/presets.md § %s does not name `%s`", p.Name, q.Name)
			}
		}
	}
}
