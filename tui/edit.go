package tui

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// Live editing works on the forms that hold their poles: zpk (zeros and gain held), diagonal
// (residues held) and rotation (B, C and the basis held). Moving a pole builds a new filter in
// O(n), so the responses can be recomputed within the interactive budget; the other forms are
// converted to zpk first.

// errNeedsHeldPoles says that a pole cannot be moved in place in this form.
var errNeedsHeldPoles = errors.New("this form does not hold its poles")

// poleReps lists the poles the user can select: each real pole, and the member with a
// positive imaginary part of each conjugate pair.
func poleReps(poles []complex128) []int {
	var out []int
	for i, p := range poles {
		if imag(p) >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// partner returns the index of the conjugate partner of roots[i] (-1 for a real root).
func partner(roots []complex128, i int) int {
	if imag(roots[i]) == 0 {
		return -1
	}
	best, bd := -1, math.Inf(1)
	c := cmplx.Conj(roots[i])
	for j, r := range roots {
		if j == i {
			continue
		}
		if d := cmplx.Abs(r - c); d < bd {
			best, bd = j, d
		}
	}
	return best
}

// minAngle keeps a moved pair off the real axis: a pair cannot merge into two real poles by
// moving one member.
const minAngle = 1e-4

// nudge returns p moved by dr in radius and dth in angle; a real pole moves along the real
// axis by dth (right is positive) and away from the origin by dr.
func nudge(p complex128, dr, dth float64) complex128 {
	if imag(p) == 0 {
		x := real(p)
		if dr != 0 {
			s := 1.0
			if x < 0 {
				s = -1
			}
			x = s * math.Max(0, math.Abs(x)+dr)
		}
		return complex(x+dth, 0)
	}
	r := math.Max(0, cmplx.Abs(p)+dr)
	th := cmplx.Phase(p) + dth
	th = math.Min(math.Max(th, minAngle), math.Pi-minAngle)
	return cmplx.Rect(r, th)
}

// setPole returns f with its pole i (in the order of heldPolesZeros) and its partner replaced
// by p and its conjugate. f must hold its poles.
func setPole(f filters.Filter, i int, p complex128) (filters.Filter, error) {
	switch g := f.(type) {
	case *filters.ZPK:
		poles := slices.Clone(g.Poles)
		if err := replaceRoot(poles, i, p); err != nil {
			return nil, err
		}
		return filters.NewZPK(g.Zeros, poles, g.Gain, g.H0)
	case *filters.Diagonal:
		poles := slices.Clone(g.Poles)
		if err := replaceRoot(poles, i, p); err != nil {
			return nil, err
		}
		for j, q := range poles {
			if q == poles[i] && j != i {
				return nil, fmt.Errorf("the diagonal form cannot hold a repeated pole %s", cnum(q))
			}
		}
		return filters.NewDiagonal(poles, g.Residues, g.H0)
	case *filters.Rotation:
		h := *g
		h.Blocks = slices.Clone(g.Blocks)
		h.Real = slices.Clone(g.Real)
		nb := 2 * len(g.Blocks)
		switch {
		case i < nb:
			if imag(p) == 0 {
				return nil, fmt.Errorf("a rotation block's poles stay a conjugate pair")
			}
			if i%2 == 1 {
				p = cmplx.Conj(p)
			}
			h.Blocks[i/2] = filters.RotationBlock{Radius: cmplx.Abs(p), Angle: cmplx.Phase(p)}
		case i-nb < len(g.Real):
			h.Real[i-nb] = real(p)
		default:
			return nil, fmt.Errorf("pole %d out of range", i)
		}
		return &h, nil
	}
	return nil, errNeedsHeldPoles
}

// replaceRoot sets roots[i] = p and its partner to conj(p), refusing to turn a pair into two
// real roots or a real root into half a pair.
func replaceRoot(roots []complex128, i int, p complex128) error {
	if i < 0 || i >= len(roots) {
		return fmt.Errorf("index %d out of range", i)
	}
	j := partner(roots, i)
	switch {
	case j < 0 && imag(p) != 0:
		return fmt.Errorf("%s is real and has no conjugate partner: it must stay real", cnum(roots[i]))
	case j >= 0 && imag(p) == 0:
		return fmt.Errorf("%s is one of a conjugate pair: it must stay complex", cnum(roots[i]))
	}
	if j >= 0 && math.Signbit(imag(p)) != math.Signbit(imag(roots[i])) {
		p = cmplx.Conj(p)
	}
	roots[i] = p
	if j >= 0 {
		roots[j] = cmplx.Conj(p)
	}
	return nil
}

// cellRef addresses one editable value of a form: field names the slice or matrix, i and j
// the entry, part what of a complex value the cell shows ("" the value, "abs", "arg").
type cellRef struct {
	field string
	i, j  int
	part  string
}

// table is one block of the representation view, with cells produced on demand so that a
// 256×256 matrix costs only what is on screen.
type table struct {
	title string
	cols  []string // headers; column 0 holds row labels
	rows  int
	cell  func(r, c int) (string, *cellRef)
}

func scalars(names []string, vals []float64, fields []string) table {
	return table{title: "", cols: []string{"", "value"}, rows: len(names), cell: func(r, c int) (string, *cellRef) {
		if c == 0 {
			return names[r], nil
		}
		return num(vals[r]), &cellRef{field: fields[r]}
	}}
}

func rootTable(title, sym string, roots []complex128, field string) table {
	return table{title: title, cols: []string{"#", sym, "|" + sym + "|", "∠/π"}, rows: len(roots), cell: func(r, c int) (string, *cellRef) {
		p := roots[r]
		switch c {
		case 0:
			return fmt.Sprint(r + 1), nil
		case 1:
			return cnum(p), &cellRef{field: field, i: r}
		case 2:
			return num(cmplx.Abs(p)), &cellRef{field: field, i: r, part: "abs"}
		}
		return num(cmplx.Phase(p) / math.Pi), &cellRef{field: field, i: r, part: "arg"}
	}}
}

func coefTable(title string, a, b []float64) table {
	return table{title: title, cols: []string{"k", "a_k", "b_k"}, rows: len(a), cell: func(r, c int) (string, *cellRef) {
		switch c {
		case 0:
			return fmt.Sprint(r + 1), nil
		case 1:
			return num(a[r]), &cellRef{field: "a", i: r}
		}
		return num(b[r]), &cellRef{field: "b", i: r}
	}}
}

// tablesFor lays a filter out as tables.
func tablesFor(f filters.Filter) []table {
	switch g := f.(type) {
	case *filters.Dense:
		n := g.Order()
		cols := []string{""}
		for j := range n {
			cols = append(cols, fmt.Sprintf("A·%d", j+1))
		}
		cols = append(cols, "B")
		t := table{title: "[A B; C D]", cols: cols, rows: n + 1, cell: func(r, c int) (string, *cellRef) {
			switch {
			case c == 0 && r < n:
				return fmt.Sprint(r + 1), nil
			case c == 0:
				return "C", nil
			case r < n && c <= n:
				return num(g.A.At(r, c-1)), &cellRef{field: "A", i: r, j: c - 1}
			case r < n:
				return num(g.B[r]), &cellRef{field: "B", i: r}
			case c <= n:
				return num(g.C[c-1]), &cellRef{field: "C", i: c - 1}
			}
			return num(g.D), &cellRef{field: "D"}
		}}
		return []table{t}
	case *filters.Diagonal:
		t := table{title: "modes  h[t] = Σ rᵢ λᵢ^(t-1)", cols: []string{"#", "pole λ", "|λ|", "∠/π", "residue r"}, rows: len(g.Poles),
			cell: func(r, c int) (string, *cellRef) {
				p := g.Poles[r]
				switch c {
				case 0:
					return fmt.Sprint(r + 1), nil
				case 1:
					return cnum(p), &cellRef{field: "pole", i: r}
				case 2:
					return num(cmplx.Abs(p)), &cellRef{field: "pole", i: r, part: "abs"}
				case 3:
					return num(cmplx.Phase(p) / math.Pi), &cellRef{field: "pole", i: r, part: "arg"}
				}
				return cnum(g.Residues[r]), &cellRef{field: "res", i: r}
			}}
		return []table{t, scalars([]string{"h0"}, []float64{g.H0}, []string{"h0"})}
	case *filters.Companion:
		title := "controllable companion  A row 1 = -a"
		if g.Observable {
			title = "observable companion  A col 1 = -a"
		}
		return []table{coefTable(title, g.Den, g.Num), scalars([]string{"h0"}, []float64{g.H0}, []string{"h0"})}
	case *filters.TransferFunction:
		return []table{coefTable("H(z) = h0 + Σ b_k z^-k / (1 + Σ a_k z^-k)", g.Den, g.Num),
			scalars([]string{"h0"}, []float64{g.H0}, []string{"h0"})}
	case *filters.ZPK:
		return []table{rootTable("poles", "p", g.Poles, "pole"), rootTable("zeros", "z", g.Zeros, "zero"),
			scalars([]string{"gain", "h0"}, []float64{g.Gain, g.H0}, []string{"gain", "h0"})}
	case *filters.Rotation:
		n := g.Order()
		blocks := table{title: "blocks ρ·R(θ)", cols: []string{"#", "ρ", "θ/π"}, rows: len(g.Blocks), cell: func(r, c int) (string, *cellRef) {
			b := g.Blocks[r]
			switch c {
			case 0:
				return fmt.Sprint(r + 1), nil
			case 1:
				return num(b.Radius), &cellRef{field: "rho", i: r}
			}
			return num(b.Angle / math.Pi), &cellRef{field: "theta", i: r}
		}}
		out := []table{blocks}
		if len(g.Real) > 0 {
			out = append(out, table{title: "real eigenvalues", cols: []string{"#", "r"}, rows: len(g.Real), cell: func(r, c int) (string, *cellRef) {
				if c == 0 {
					return fmt.Sprint(r + 1), nil
				}
				return num(g.Real[r]), &cellRef{field: "real", i: r}
			}})
		}
		out = append(out, table{title: "B, C", cols: []string{"i", "B", "C"}, rows: n, cell: func(r, c int) (string, *cellRef) {
			switch c {
			case 0:
				return fmt.Sprint(r + 1), nil
			case 1:
				return num(g.B[r]), &cellRef{field: "B", i: r}
			}
			return num(g.C[r]), &cellRef{field: "C", i: r}
		}}, scalars([]string{"D"}, []float64{g.D}, []string{"D"}))
		if n > 0 {
			cols := []string{""}
			for j := range n {
				cols = append(cols, fmt.Sprintf("P·%d", j+1))
			}
			out = append(out, table{title: fmt.Sprintf("basis P  (‖PᵀP−I‖ = %s)", sci(g.Orthogonality())), cols: cols, rows: n,
				cell: func(r, c int) (string, *cellRef) {
					if c == 0 {
						return fmt.Sprint(r + 1), nil
					}
					return num(g.P.At(r, c-1)), &cellRef{field: "P", i: r, j: c - 1}
				}})
		}
		return out
	}
	return nil
}

// kernelTable shows the samples of a kernel.
func kernelTable(h []float64) []table {
	return []table{{title: "kernel h[t]", cols: []string{"t", "h[t]"}, rows: len(h), cell: func(r, c int) (string, *cellRef) {
		if c == 0 {
			return fmt.Sprint(r), nil
		}
		return num(h[r]), nil
	}}}
}

// editText is the text an edit of ref starts from: the value at full precision.
func editText(f filters.Filter, ref cellRef) string {
	get := func(v complex128) string {
		switch ref.part {
		case "abs":
			return full(cmplx.Abs(v))
		case "arg":
			return full(cmplx.Phase(v) / math.Pi)
		}
		return fullC(v)
	}
	switch g := f.(type) {
	case *filters.Dense:
		switch ref.field {
		case "A":
			return full(g.A.At(ref.i, ref.j))
		case "B":
			return full(g.B[ref.i])
		case "C":
			return full(g.C[ref.i])
		case "D":
			return full(g.D)
		}
	case *filters.Diagonal:
		switch ref.field {
		case "pole":
			return get(g.Poles[ref.i])
		case "res":
			return get(g.Residues[ref.i])
		case "h0":
			return full(g.H0)
		}
	case *filters.Companion:
		return coefText(g.Den, g.Num, g.H0, ref)
	case *filters.TransferFunction:
		return coefText(g.Den, g.Num, g.H0, ref)
	case *filters.ZPK:
		switch ref.field {
		case "pole":
			return get(g.Poles[ref.i])
		case "zero":
			return get(g.Zeros[ref.i])
		case "gain":
			return full(g.Gain)
		case "h0":
			return full(g.H0)
		}
	case *filters.Rotation:
		switch ref.field {
		case "rho":
			return full(g.Blocks[ref.i].Radius)
		case "theta":
			return full(g.Blocks[ref.i].Angle / math.Pi)
		case "real":
			return full(g.Real[ref.i])
		case "B":
			return full(g.B[ref.i])
		case "C":
			return full(g.C[ref.i])
		case "D":
			return full(g.D)
		case "P":
			return full(g.P.At(ref.i, ref.j))
		}
	}
	return ""
}

func coefText(a, b []float64, h0 float64, ref cellRef) string {
	switch ref.field {
	case "a":
		return full(a[ref.i])
	case "b":
		return full(b[ref.i])
	}
	return full(h0)
}

// applyEdit returns f with the value at ref set from text. Angles are in units of π, as
// shown; complex values are "a+bj" or polar "r@θ" (θ in radians); a member of a conjugate
// pair drags its partner along.
func applyEdit(f filters.Filter, ref cellRef, text string) (filters.Filter, error) {
	real1 := func() (float64, error) { return parseReal(text) }
	cplx := func(old complex128) (complex128, error) {
		switch ref.part {
		case "abs":
			r, err := parseReal(text)
			if err != nil || r < 0 {
				return 0, fmt.Errorf("want a modulus ≥ 0, got %q", text)
			}
			return cmplx.Rect(r, cmplx.Phase(old)), nil
		case "arg":
			th, err := parseReal(text)
			if err != nil {
				return 0, err
			}
			v := cmplx.Rect(cmplx.Abs(old), th*math.Pi)
			if imag(old) == 0 && (th == 0 || th == 1 || th == -1) {
				v = complex(real(v), 0)
			}
			return v, nil
		}
		return parseComplex(text)
	}
	switch g := f.(type) {
	case *filters.Dense:
		v, err := real1()
		if err != nil {
			return nil, err
		}
		h := &filters.Dense{B: slices.Clone(g.B), C: slices.Clone(g.C), D: g.D}
		if g.A != nil {
			h.A = mat.DenseCopyOf(g.A)
		}
		switch ref.field {
		case "A":
			h.A.Set(ref.i, ref.j, v)
		case "B":
			h.B[ref.i] = v
		case "C":
			h.C[ref.i] = v
		case "D":
			h.D = v
		}
		return h, h.Validate()
	case *filters.Diagonal:
		if ref.field == "h0" {
			v, err := real1()
			if err != nil {
				return nil, err
			}
			return filters.NewDiagonal(g.Poles, g.Residues, v)
		}
		poles, res := slices.Clone(g.Poles), slices.Clone(g.Residues)
		target := poles
		if ref.field == "res" {
			target = res
		}
		v, err := cplx(target[ref.i])
		if err != nil {
			return nil, err
		}
		// A residue pairs with its pole's partner.
		j := partner(poles, ref.i)
		if j < 0 && imag(v) != 0 {
			return nil, fmt.Errorf("%s belongs to a real pole: it must stay real", ref.field)
		}
		if j >= 0 && ref.field == "pole" && imag(v) == 0 {
			return nil, fmt.Errorf("pole %d is one of a conjugate pair: it must stay complex", ref.i+1)
		}
		target[ref.i] = v
		if j >= 0 {
			target[j] = cmplx.Conj(v)
		}
		return filters.NewDiagonal(poles, res, g.H0)
	case *filters.Companion:
		a, b, h0, err := editCoefs(g.Den, g.Num, g.H0, ref, text)
		if err != nil {
			return nil, err
		}
		return filters.NewCompanion(a, b, h0, g.Observable)
	case *filters.TransferFunction:
		a, b, h0, err := editCoefs(g.Den, g.Num, g.H0, ref, text)
		if err != nil {
			return nil, err
		}
		return filters.NewTransferFunction(a, b, h0)
	case *filters.ZPK:
		zeros, poles, gain, h0 := slices.Clone(g.Zeros), slices.Clone(g.Poles), g.Gain, g.H0
		switch ref.field {
		case "gain", "h0":
			v, err := real1()
			if err != nil {
				return nil, err
			}
			if ref.field == "gain" {
				gain = v
			} else {
				h0 = v
			}
		default:
			roots := poles
			if ref.field == "zero" {
				roots = zeros
			}
			v, err := cplx(roots[ref.i])
			if err != nil {
				return nil, err
			}
			if err := replaceRoot(roots, ref.i, v); err != nil {
				return nil, err
			}
		}
		return filters.NewZPK(zeros, poles, gain, h0)
	case *filters.Rotation:
		v, err := real1()
		if err != nil {
			return nil, err
		}
		h := *g
		h.Blocks, h.Real, h.B, h.C = slices.Clone(g.Blocks), slices.Clone(g.Real), slices.Clone(g.B), slices.Clone(g.C)
		switch ref.field {
		case "rho":
			h.Blocks[ref.i].Radius = v
		case "theta":
			h.Blocks[ref.i].Angle = v * math.Pi
		case "real":
			h.Real[ref.i] = v
		case "B":
			h.B[ref.i] = v
		case "C":
			h.C[ref.i] = v
		case "D":
			h.D = v
		case "P":
			h.P = mat.DenseCopyOf(g.P)
			h.P.Set(ref.i, ref.j, v)
		}
		return &h, h.Validate()
	}
	return nil, fmt.Errorf("%s cannot be edited", f.Form())
}

func editCoefs(a, b []float64, h0 float64, ref cellRef, text string) ([]float64, []float64, float64, error) {
	v, err := parseReal(text)
	if err != nil {
		return nil, nil, 0, err
	}
	a, b = slices.Clone(a), slices.Clone(b)
	switch ref.field {
	case "a":
		a[ref.i] = v
	case "b":
		b[ref.i] = v
	default:
		h0 = v
	}
	return a, b, h0, nil
}
