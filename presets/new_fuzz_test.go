package presets

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzNew builds a preset from fuzzed name=value arguments (as ssmlab preset and the
// workbench's :preset take them): no input panics, a refusal is one line, and what is built
// is valid and finite, and its name (which records every value used) builds it again.
func FuzzNew(f *testing.F) {
	f.Add(uint8(0), "")
	for i, p := range All() {
		var args []string
		for _, q := range p.Params {
			if q.Default != "" {
				args = append(args, q.Name+"="+q.Default)
			}
		}
		f.Add(uint8(i), strings.Join(args, " "))
	}
	f.Add(uint8(1), "order=3 dt=pi/4")
	f.Add(uint8(2), "seed=-1 order=0")
	f.Fuzz(func(t *testing.T, pick uint8, text string) {
		all := All()
		p := all[int(pick)%len(all)]
		values := map[string]string{}
		for _, a := range strings.Fields(text) {
			k, v, _ := strings.Cut(a, "=")
			if n, err := strconv.ParseFloat(v, 64); err == nil && math.Abs(n) > 64 && p.param(k) != nil && p.param(k).Kind == Int {
				return // large sizes (a bank of 256 channels of order 256) are slow to build, not wrong
			}
			values[k] = v
		}
		r, err := p.New(values)
		if err != nil {
			if err.Error() == "" || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("%s %q: error %q is not one line", p.Name, text, err)
			}
			return
		}
		check(t, p.Name+" "+text, r)
		// The name records every value: it builds the same preset again.
		fields := strings.Fields(r.Name)
		if len(fields) == 0 || fields[0] != p.Name {
			t.Fatalf("%s %q: result named %q", p.Name, text, r.Name)
		}
		again := map[string]string{}
		for _, a := range fields[1:] {
			k, v, ok := strings.Cut(a, "=")
			if !ok {
				t.Fatalf("%s %q: result named %q", p.Name, text, r.Name)
			}
			again[k] = v
		}
		r2, err := p.New(again)
		if err != nil || r2.Name != r.Name {
			t.Fatalf("%s %q named %q builds again as %q, %v", p.Name, text, r.Name, r2.Name, err)
		}
	})
}

func check(t *testing.T, what string, r Result) {
	t.Helper()
	switch {
	case r.Filter != nil:
		if err := r.Filter.Validate(); err != nil {
			t.Fatalf("%s: invalid filter: %v", what, err)
		}
	case r.Bank != nil:
		if err := r.Bank.Validate(); err != nil {
			t.Fatalf("%s: invalid bank: %v", what, err)
		}
	case len(r.Kernels) > 0:
		for _, k := range r.Kernels {
			for _, v := range k {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: kernel value %v", what, v)
				}
			}
		}
	default:
		t.Fatalf("%s: nothing built and no error", what)
	}
}
