package filters

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// everyForm returns one filter of each form with a conjugate pair and a real pole, all
// converted from a random stable dense filter of order 3 (seeded).
func everyForm(t *testing.T) []Fielder {
	t.Helper()
	d := randomStable(rand.New(rand.NewPCG(7, 1)), 3, 0.9)
	var out []Fielder
	for _, form := range Forms {
		g, _, err := Convert(d, form)
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		out = append(out, g.(Fielder))
	}
	return out
}

// TestFieldsRoundTrip checks that WithFields of a filter's Fields gives the filter back, bit
// for bit, and that the empty filter of each form names the same fields.
func TestFieldsRoundTrip(t *testing.T) {
	for _, f := range everyForm(t) {
		fields := f.Fields()
		g, err := f.WithFields(fields)
		if err != nil {
			t.Fatalf("%s: %v", f.Form(), err)
		}
		if !slices.EqualFunc(fields, g.(Fielder).Fields(), sameField) {
			t.Errorf("%s: fields differ after WithFields", f.Form())
		}
		var names, empty []string
		for _, fd := range fields {
			names = append(names, fd.Name)
		}
		e := Empty(f.Form())
		if e.Order() != 0 || e.Form() != f.Form() {
			t.Errorf("Empty(%s) is a %s of order %d", f.Form(), e.Form(), e.Order())
		}
		for _, fd := range e.Fields() {
			empty = append(empty, fd.Name)
			if fd.Len() != 0 && fd.Shape != nil {
				t.Errorf("Empty(%s) field %s has %d entries", f.Form(), fd.Name, fd.Len())
			}
		}
		if !slices.Equal(names, empty) {
			t.Errorf("%s fields %v, Empty's %v", f.Form(), names, empty)
		}
	}
}

func sameField(a, b Field) bool {
	return a.Name == b.Name && a.Kind == b.Kind && slices.Equal(a.Shape, b.Shape) &&
		slices.Equal(a.Real, b.Real) && slices.Equal(a.Complex, b.Complex)
}

// TestFieldsViewStorage checks that Fields copies nothing: a 256×256 A is A's own storage.
func TestFieldsViewStorage(t *testing.T) {
	d := randomStable(rand.New(rand.NewPCG(1, 2)), 256, 0.9)
	a := d.Fields()[0]
	if a.Name != "A" || !slices.Equal(a.Shape, []int{256, 256}) || &a.Real[0] != &d.A.RawMatrix().Data[0] {
		t.Errorf("A field %s %v does not view A", a.Name, a.Shape)
	}
}

// TestWithEntryWritesBack sets every entry to its own value: nothing may change.
func TestWithEntryWritesBack(t *testing.T) {
	for _, f := range everyForm(t) {
		want := f.Impulse(32)
		for _, fd := range f.Fields() {
			for k := range fd.Len() {
				if fd.Kind == FlagField {
					continue
				}
				v := complex(0, 0)
				if fd.Kind == ComplexField {
					v = fd.Complex[k]
				} else {
					v = complex(fd.Real[k], 0)
				}
				g, err := WithEntry(f, fd.Name, k, v)
				if err != nil {
					t.Errorf("%s %s[%d]: %v", f.Form(), fd.Name, k, err)
					continue
				}
				if e := relErr(g.Impulse(32), want); e != 0 {
					t.Errorf("%s %s[%d] written back moved h by %g", f.Form(), fd.Name, k, e)
				}
			}
		}
	}
}

func TestWithEntryKeepsPairs(t *testing.T) {
	z, err := NewZPK([]complex128{-0.5}, []complex128{0.5 + 0.5i, 0.5 - 0.5i, 0.25}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := WithEntry(z, "poles", 1, 0.6+0.2i) // the lower member, given in the upper half
	if err != nil {
		t.Fatal(err)
	}
	if p := g.(*ZPK).Poles; p[0] != 0.6+0.2i || p[1] != 0.6-0.2i || p[2] != 0.25 {
		t.Errorf("poles %v, want the pair 0.6±0.2j", p)
	}
	for _, tc := range []struct {
		name string
		k    int
		v    complex128
		want string
	}{
		{"poles", 0, 0.7, "0.7 is real, but 0.5+0.5j is one of a conjugate pair: it must stay complex"},
		{"poles", 2, 0.3 + 0.1i, "0.3+0.1j is complex, but 0.25 is real and has no conjugate partner"},
		{"gain", 0, 1 + 1i, "gain is real"},
	} {
		if _, err := WithEntry(z, tc.name, tc.k, tc.v); err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s[%d] = %v: got %v, want %q", tc.name, tc.k, tc.v, err, tc.want)
		}
	}

	d, err := NewDiagonal([]complex128{0.5 + 0.5i, 0.5 - 0.5i, 0.25}, []complex128{1 + 1i, 1 - 1i, 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err = WithEntry(d, "residues", 1, 3+4i)
	if err != nil {
		t.Fatal(err)
	}
	if r := g.(*Diagonal).Residues; r[0] != 3-4i || r[1] != 3+4i {
		t.Errorf("residues %v: the partner of residue 1 is residue 0, at its conjugate", r)
	}
	if _, err := WithEntry(d, "residues", 2, 1+1i); err == nil || !strings.Contains(err.Error(), "belongs to a real pole") {
		t.Errorf("a real pole's residue made complex: %v", err)
	}
}

// TestMovePole moves the first pole of every form that holds its poles, and a real one.
func TestMovePole(t *testing.T) {
	var movers int
	for _, f := range everyForm(t) {
		pm, ok := Fielder(f).(PoleMover)
		if _, held := HeldPoles(f); held != ok {
			t.Errorf("%s: HeldPoles reports %v, PoleMover %v", f.Form(), held, ok)
		}
		if !ok {
			continue
		}
		movers++
		poles := pm.HeldPoles()
		for i, p := range poles {
			var to complex128
			if imag(p) == 0 {
				to = complex(real(p)-0.05, 0)
			} else {
				to = cmplx.Rect(cmplx.Abs(p)*0.98, cmplx.Phase(p)+0.1)
			}
			g, err := pm.MovePole(i, to)
			if err != nil {
				t.Fatalf("%s pole %d: %v", f.Form(), i, err)
			}
			got, err := Poles(g)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(poles)
			want[i] = to
			if j := Partner(poles, i); j >= 0 {
				want[j] = cmplx.Conj(to)
			}
			if !sameRoots(got, want, 1e-12) {
				t.Errorf("%s pole %d → %v: poles %v, want %v", f.Form(), i, to, got, want)
			}
			// a real pole stays real, a pair's member complex
			bad := complex(real(to), 0.1)
			if imag(p) != 0 {
				bad = complex(real(to), 0)
			}
			if _, err := pm.MovePole(i, bad); err == nil || !errors.Is(err, ErrInvalid) {
				t.Errorf("%s pole %d moved to %v: %v", f.Form(), i, bad, err)
			}
		}
	}
	if movers != 3 {
		t.Errorf("%d forms hold their poles, want 3 (zpk, diagonal, rotation)", movers)
	}
	if z, ok := HeldZeros(&TransferFunction{}); !ok || z != nil {
		t.Errorf("an order-0 filter holds no zeros: %v, %v", z, ok)
	}
	if _, ok := HeldZeros(&TransferFunction{Den: []float64{0.5}, Num: []float64{1}}); ok {
		t.Error("a tf of order 1 reports held zeros")
	}
}

// sameRoots reports whether a and b hold the same roots to within tol, in any order.
func sameRoots(a, b []complex128, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && cmplx.Abs(x-y) <= tol*math.Max(1, cmplx.Abs(y)) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestRotationRadialMoveKeepsAngle: moving a block's pole along its radius keeps the angle as
// stored, though the pole's phase rounds it (θ = 0.02561769643903908 became
// 0.025617696439039002); a move of the angle changes it.
func TestRotationRadialMoveKeepsAngle(t *testing.T) {
	const theta = 0.02561769643903908
	r, err := NewRotation([][]float64{{1, 0}, {0, 1}}, []RotationBlock{{Radius: 0.9, Angle: theta}}, nil, []float64{1, 0}, []float64{0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := r.HeldPoles()[0]
	for _, k := range []float64{1.001, 0.5, 1e-3} {
		g, err := r.MovePole(0, complex(real(p)*k, imag(p)*k))
		if err != nil {
			t.Fatal(err)
		}
		if b := g.(*Rotation).Blocks[0]; b.Angle != theta || math.Abs(b.Radius-0.9*k) > 1e-15 {
			t.Errorf("×%g: block %+v, want angle %v", k, b, theta)
		}
	}
	g, err := r.MovePole(1, cmplx.Conj(cmplx.Rect(0.9, theta+1e-3))) // the conjugate member
	if err != nil {
		t.Fatal(err)
	}
	if b := g.(*Rotation).Blocks[0]; math.Abs(b.Angle-theta-1e-3) > 1e-15 {
		t.Errorf("an angular move: block %+v", b)
	}
}
