package tui

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
)

// Live editing works on the forms that hold their poles (filters.PoleMover: zpk, diagonal,
// rotation). Moving a pole builds a new filter in O(n), so the responses can be recomputed
// within the interactive budget; the other forms are converted to zpk first. Tables and cell
// edits follow the form's filters.Fields, so this file knows no form.

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

// minAngle keeps a moved pair off the real axis, and minRadius off the origin: a pair cannot
// merge into two real poles by moving one member (at the origin its direction is lost, and
// the zpk and diagonal forms cannot hold it as a pair; a rotation block of radius 0 is
// typed as its ρ).
const (
	minAngle  = 1e-4
	minRadius = 1e-4
)

// stepLevel is a pole move per key press: r in radius (and along the real axis), th in angle
// (radians).
type stepLevel struct{ r, th float64 }

// nudge returns p moved by radial steps of s.r in radius and angular steps of s.th in angle.
// A real pole stays on the real axis and moves by the radius step both ways: radially away
// from (or towards) the origin, and along the axis (right is positive) for the angle keys. A
// move along the radius scales p, so that a pole on an axis stays on it exactly (through the
// angle, 1j moved to 3.06e-18+0.95j). A pair stops at minAngle from the real axis and at
// minRadius from the origin (or where it is, if nearer).
func nudge(p complex128, s stepLevel, radial, angular int) complex128 {
	if imag(p) == 0 {
		x := real(p)
		if radial != 0 {
			sign := 1.0
			if x < 0 {
				sign = -1
			}
			x = sign * math.Max(0, math.Abs(x)+float64(radial)*s.r)
		}
		return complex(x+float64(angular)*s.r, 0)
	}
	r := cmplx.Abs(p) + float64(radial)*s.r
	if r < minRadius {
		r = math.Min(minRadius, cmplx.Abs(p))
	}
	if angular == 0 {
		k := r / cmplx.Abs(p)
		return complex(real(p)*k, imag(p)*k)
	}
	th := cmplx.Phase(p) + float64(angular)*s.th
	th = math.Min(math.Max(th, minAngle), math.Pi-minAngle)
	return cmplx.Rect(r, th)
}

// cellRef addresses one editable value: field names the filters.Field, k the entry
// (row-major; entry 2i of a polar field is pair i's radius, 2i+1 its angle), part what of a
// complex value the cell shows ("" the value, "abs", "arg").
type cellRef struct {
	field string
	k     int
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

// tablesFor lays a filter out as tables, following its fields' views: the fields with one
// table title share a table, tables come by View.Place, and a table holding a matrix shows
// it as a block matrix with its vectors as a last column and a last row and its scalar in the
// corner ([A B; C D]).
func tablesFor(f filters.Filter) []table {
	fl, ok := f.(filters.Fielder)
	if !ok {
		return nil
	}
	type group struct {
		title  string
		fields []filters.Field
	}
	var groups []*group
	byTitle := map[string]*group{}
	for _, fd := range fl.Fields() {
		if fd.Kind == filters.FlagField {
			continue // a flag is part of the form, named in its title
		}
		g := byTitle[fd.View.Table]
		if g == nil {
			g = &group{title: fd.View.Table}
			byTitle[g.title] = g
			groups = append(groups, g)
		}
		g.fields = append(g.fields, fd)
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return a.fields[0].View.Place - b.fields[0].View.Place })
	var out []table
	for _, g := range groups {
		if slices.ContainsFunc(g.fields, func(fd filters.Field) bool { return fd.View.HideEmpty && fd.Len() == 0 }) {
			continue
		}
		title := g.title
		if v := g.fields[0].View; v.Measure != nil {
			title += fmt.Sprintf("  (%s = %s)", v.MeasureName, sci(v.Measure()))
		}
		switch {
		case slices.ContainsFunc(g.fields, func(fd filters.Field) bool { return len(fd.Shape) == 2 && fd.Kind == filters.RealField }):
			out = append(out, matrixTable(title, g.fields))
		case g.fields[0].Shape == nil:
			out = append(out, scalarTable(title, g.fields))
		default:
			out = append(out, columnTable(title, g.fields))
		}
	}
	return out
}

// scalarTable shows scalars one a row: name, value.
func scalarTable(title string, fields []filters.Field) table {
	return table{title: title, cols: []string{"", "value"}, rows: len(fields), cell: func(r, c int) (string, *cellRef) {
		if c == 0 {
			return fields[r].View.Heading, nil
		}
		return num(fields[r].Real[0]), &cellRef{field: fields[r].Name}
	}}
}

// column is one column of a columnTable.
type column struct {
	heading string
	cell    func(r int) (string, *cellRef)
}

// columnTable shows vectors side by side, one entry a row: a complex field's values (with
// modulus and angle for poles and zeros), a polar field's radius and angle.
func columnTable(title string, fields []filters.Field) table {
	var cols []column
	rows := 0
	for _, fd := range fields {
		fd := fd
		ref := func(k int, part string) *cellRef { return &cellRef{field: fd.Name, k: k, part: part} }
		switch fd.Kind {
		case filters.ComplexField:
			cols = append(cols, column{fd.View.Heading, func(r int) (string, *cellRef) { return cnum(fd.Complex[r]), ref(r, "") }})
			if fd.Pairs == fd.Name {
				sym := fd.View.Heading[strings.LastIndexByte(fd.View.Heading, ' ')+1:]
				cols = append(cols,
					column{"|" + sym + "|", func(r int) (string, *cellRef) { return filters.FormatModulus(cmplx.Abs(fd.Complex[r])), ref(r, "abs") }},
					column{"∠/π", func(r int) (string, *cellRef) { return num(cmplx.Phase(fd.Complex[r]) / math.Pi), ref(r, "arg") }})
			}
		case filters.PolarField:
			cols = append(cols,
				column{"ρ", func(r int) (string, *cellRef) { return filters.FormatModulus(fd.Real[2*r]), ref(2*r, "") }},
				column{"θ/π", func(r int) (string, *cellRef) { return num(fd.Real[2*r+1] / math.Pi), ref(2*r+1, "") }})
		default:
			cols = append(cols, column{fd.View.Heading, func(r int) (string, *cellRef) { return num(fd.Real[r]), ref(r, "") }})
		}
		rows = max(rows, fd.Shape[0])
	}
	heads := []string{fields[0].View.Index}
	for _, c := range cols {
		heads = append(heads, c.heading)
	}
	return table{title: title, cols: heads, rows: rows, cell: func(r, c int) (string, *cellRef) {
		if c == 0 {
			return fmt.Sprint(r + 1), nil
		}
		return cols[c-1].cell(r)
	}}
}

// matrixTable shows an n×n matrix M with, when the table has them, a vector as a last column,
// another as a last row and a scalar in the corner: [M v; w s].
func matrixTable(title string, fields []filters.Field) table {
	var (
		m          filters.Field
		vecs       []filters.Field
		corner     *filters.Field
		cols, rows []string
	)
	for i, fd := range fields {
		switch len(fd.Shape) {
		case 2:
			m = fd
		case 1:
			vecs = append(vecs, fd)
		default:
			corner = &fields[i]
		}
	}
	n := m.Shape[0]
	cols = []string{""}
	for j := range n {
		cols = append(cols, fmt.Sprintf("%s·%d", m.View.Heading, j+1))
	}
	var col, row *filters.Field
	if len(vecs) > 0 {
		col = &vecs[0]
		cols = append(cols, col.View.Heading)
	}
	if len(vecs) > 1 {
		row = &vecs[1]
		rows = []string{row.View.Heading}
	}
	return table{title: title, cols: cols, rows: n + len(rows), cell: func(r, c int) (string, *cellRef) {
		switch {
		case c == 0 && r < n:
			return fmt.Sprint(r + 1), nil
		case c == 0:
			return rows[0], nil
		case r < n && c <= n:
			return num(m.Real[r*n+c-1]), &cellRef{field: m.Name, k: r*n + c - 1}
		case r < n:
			return num(col.Real[r]), &cellRef{field: col.Name, k: r}
		case c <= n:
			return num(row.Real[c-1]), &cellRef{field: row.Name, k: c - 1}
		case corner != nil:
			return num(corner.Real[0]), &cellRef{field: corner.Name}
		}
		return "", nil
	}}
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

// fieldOf returns f's field called name.
func fieldOf(f filters.Filter, name string) (filters.Fielder, filters.Field, bool) {
	fl, ok := f.(filters.Fielder)
	if !ok {
		return nil, filters.Field{}, false
	}
	fields := fl.Fields()
	i := filters.FieldIndex(fields, name)
	if i < 0 {
		return nil, filters.Field{}, false
	}
	return fl, fields[i], true
}

// editText is the text an edit of ref starts from: the value at full precision (an angle in
// units of π, as shown).
func editText(f filters.Filter, ref cellRef) string {
	_, fd, ok := fieldOf(f, ref.field)
	switch {
	case !ok:
		return ""
	case fd.Kind == filters.ComplexField:
		v := fd.Complex[ref.k]
		switch ref.part {
		case "abs":
			return full(cmplx.Abs(v))
		case "arg":
			return full(cmplx.Phase(v) / math.Pi)
		}
		return fullC(v)
	case fd.Kind == filters.PolarField && ref.k%2 == 1:
		return full(fd.Real[ref.k] / math.Pi)
	}
	return full(fd.Real[ref.k])
}

// isComplexCell reports whether ref's cell holds a whole complex value.
func isComplexCell(f filters.Filter, ref cellRef) bool {
	_, fd, ok := fieldOf(f, ref.field)
	return ok && fd.Kind == filters.ComplexField && ref.part == ""
}

// applyEdit returns f with the value at ref set from text. Angles are in units of π, as
// shown; complex values are "a+bj" or polar "r@θ" (θ in radians); a member of a conjugate
// pair drags its partner along (filters.WithEntry).
func applyEdit(f filters.Filter, ref cellRef, text string) (filters.Filter, error) {
	fl, fd, ok := fieldOf(f, ref.field)
	if !ok {
		return nil, fmt.Errorf("%s cannot be edited", f.Form())
	}
	var v complex128
	if fd.Kind == filters.ComplexField {
		var err error
		if v, err = parseEntry(fd.Complex[ref.k], ref.part, text); err != nil {
			return nil, err
		}
	} else {
		x, err := parseReal(text)
		if err != nil {
			return nil, err
		}
		if fd.Kind == filters.PolarField && ref.k%2 == 1 {
			x *= math.Pi
		}
		v = complex(x, 0)
	}
	return filters.WithEntry(fl, ref.field, ref.k, v)
}

// parseEntry reads a complex entry's new value from text: the value, or its modulus or its
// angle (in units of π) with the rest of old kept.
func parseEntry(old complex128, part, text string) (complex128, error) {
	switch part {
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
