package filters

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// FieldKind says what the entries of a Field are.
type FieldKind uint8

// The kinds of fields.
const (
	RealField    FieldKind = iota + 1 // float64 entries
	ComplexField                      // complex128 entries
	PolarField                        // (radius, angle in radians) pairs: the blocks ρ·R(θ) of a rotation
	FlagField                         // one bool, held as the entry 0 or 1
)

// Field is one named part of a representation: a scalar, a vector or a square matrix of real or
// complex numbers, a list of polar pairs, or a flag. The fields of a form are the keys of its
// filter file (docs/formats.md) and the tables of the workbench.
type Field struct {
	// Name is the field's key in a filter file ("A", "poles", "h0").
	Name string
	Kind FieldKind
	// Shape is nil for a scalar or a flag, {n} for a vector, {n, n} for a square matrix, and
	// {k, 2} for k polar pairs.
	Shape []int
	// Real holds the entries of a real, polar or flag field, Complex those of a complex field,
	// in row-major order (a polar pair is radius, then angle). Fields returns the filter's own
	// storage: read it, never write it.
	Real    []float64
	Complex []complex128
	// Optional marks a scalar or flag that a file may leave out (meaning 0, or false). Array
	// fields are needed unless the filter has order 0; other scalars always.
	Optional bool
	// Pairs names the field whose conjugate pairs the entries follow: the field itself for
	// poles and zeros, the poles for a diagonal filter's residues; "" when the entries are
	// free. WithEntry keeps such entries conjugate-closed.
	Pairs string
	// View says how a front end lays the field out.
	View FieldView
}

// FieldView says how a front end shows a field in tables.
type FieldView struct {
	// Table is the title of the field's table; the fields with one title share a table.
	// Scalars with no title share an untitled table of values.
	Table string
	// Heading is the field's column heading, or its row label as a scalar.
	Heading string
	// Index is the heading of the row numbers of the field's table ("#", "k", "i").
	Index string
	// Place orders the tables: by increasing Place of their first field, then as the fields.
	Place int
	// HideEmpty hides the table while the field has no entries.
	HideEmpty bool
	// Measure, when set, is a number worth showing with the table's title under the name
	// MeasureName, computed only when shown (a basis's distance from orthogonality).
	Measure     func() float64
	MeasureName string
}

// Len returns the number of entries: 1 for a scalar or a flag.
func (fd Field) Len() int {
	if fd.Kind == ComplexField {
		return len(fd.Complex)
	}
	return len(fd.Real)
}

// Fielder is a Filter whose representation is a list of fields. Every form of this package
// is one; its Fields are its filter file's keys, in the file's order.
type Fielder interface {
	Filter
	// Fields returns the filter's fields, viewing its storage.
	Fields() []Field
	// WithFields returns a filter of the same form built from fields (by Name; a field left
	// out is zero) through the form's constructor, which validates it and copies the entries.
	WithFields(fields []Field) (Filter, error)
}

// Empty returns the order-0 filter of form with every field zero. Its Fields name and shape
// the form's fields, and its WithFields builds filters of the form.
func Empty(form Form) Fielder {
	switch form {
	case FormDense:
		return &Dense{}
	case FormDiagonal:
		return &Diagonal{}
	case FormCompanion:
		return &Companion{}
	case FormRotation:
		return &Rotation{}
	case FormTF:
		return &TransferFunction{}
	case FormZPK:
		return &ZPK{}
	}
	panic(fmt.Sprintf("filters: Empty of unknown form %q", form))
}

// FieldIndex returns the index of the field called name, or -1.
func FieldIndex(fields []Field, name string) int {
	for i, fd := range fields {
		if fd.Name == name {
			return i
		}
	}
	return -1
}

// WithEntry returns f with entry k of its field called name (row-major; entry 2i of a polar
// field is pair i's radius, 2i+1 its angle) set to v, built and checked by the form's
// constructor. A real entry refuses an imaginary part. An entry in conjugate pairs (Pairs)
// drags its partner along: a pole (or zero) that is one of a pair stays complex, with its
// partner at conj(v); a real one stays real; a residue follows its pole's pairing. A pair's
// member keeps the sign of its imaginary part, so that it stays matched with its residue.
func WithEntry(f Fielder, name string, k int, v complex128) (Filter, error) {
	fields := f.Fields()
	i := FieldIndex(fields, name)
	if i < 0 {
		panic(fmt.Sprintf("filters: %s has no field %q", f.Form(), name))
	}
	fd := &fields[i]
	if k < 0 || k >= fd.Len() {
		panic(fmt.Sprintf("filters: entry %d of %q out of range [0, %d)", k, name, fd.Len()))
	}
	if fd.Kind != ComplexField {
		if imag(v) != 0 {
			return nil, invalidf("%s is real: want a real value, not %v", name, v)
		}
		fd.Real = clone(fd.Real)
		fd.Real[k] = real(v)
		return f.WithFields(fields)
	}
	fd.Complex = cloneC(fd.Complex)
	switch {
	case fd.Pairs == "":
		fd.Complex[k] = v
	case fd.Pairs == name:
		if err := setRoot(fd.Complex, k, v); err != nil {
			return nil, err
		}
	default:
		roots := fields[FieldIndex(fields, fd.Pairs)].Complex
		j := Partner(roots, k)
		if j < 0 && imag(v) != 0 {
			return nil, invalidf("%s is complex, but %s %d belongs to a real pole: it must stay real", formatC(v), name, k+1)
		}
		fd.Complex[k] = v
		if j >= 0 {
			fd.Complex[j] = conj(v)
		}
	}
	return f.WithFields(fields)
}

// fieldSet reads the fields given to WithFields by name; a field left out is zero.
type fieldSet []Field

func (s fieldSet) get(name string, kind FieldKind) (Field, bool) {
	i := FieldIndex(s, name)
	if i < 0 {
		return Field{}, false
	}
	if s[i].Kind != kind {
		panic(fmt.Sprintf("filters: field %q of kind %d, want %d", name, s[i].Kind, kind))
	}
	return s[i], true
}

func (s fieldSet) real(name string) []float64 {
	fd, _ := s.get(name, RealField)
	return fd.Real
}

func (s fieldSet) complexes(name string) []complex128 {
	fd, _ := s.get(name, ComplexField)
	return fd.Complex
}

func (s fieldSet) scalar(name string) float64 {
	if fd, ok := s.get(name, RealField); ok && len(fd.Real) > 0 {
		return fd.Real[0]
	}
	return 0
}

func (s fieldSet) flag(name string) bool {
	fd, ok := s.get(name, FlagField)
	return ok && len(fd.Real) > 0 && fd.Real[0] != 0
}

// rows returns a matrix field's rows, viewing its entries.
func (s fieldSet) rows(name string) [][]float64 {
	fd, ok := s.get(name, RealField)
	if !ok || len(fd.Shape) != 2 || fd.Shape[0] == 0 {
		return nil
	}
	r, c := fd.Shape[0], fd.Shape[1]
	if len(fd.Real) != r*c {
		panic(fmt.Sprintf("filters: field %q has %d entries for shape %v", name, len(fd.Real), fd.Shape))
	}
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = fd.Real[i*c : (i+1)*c : (i+1)*c]
	}
	return rows
}

func (s fieldSet) blocks(name string) []RotationBlock {
	fd, _ := s.get(name, PolarField)
	b := make([]RotationBlock, len(fd.Real)/2)
	for i := range b {
		b[i] = RotationBlock{Radius: fd.Real[2*i], Angle: fd.Real[2*i+1]}
	}
	return b
}

// Field constructors for the forms' Fields methods.

func scalarField(name string, x float64, optional bool, v FieldView) Field {
	if v.Heading == "" {
		v.Heading = name
	}
	return Field{Name: name, Kind: RealField, Real: []float64{x}, Optional: optional, View: v}
}

func vectorField(name string, x []float64, v FieldView) Field {
	return Field{Name: name, Kind: RealField, Shape: []int{len(x)}, Real: x, View: v}
}

func complexField(name string, x []complex128, pairs string, v FieldView) Field {
	return Field{Name: name, Kind: ComplexField, Shape: []int{len(x)}, Complex: x, Pairs: pairs, View: v}
}

func flagField(name string, b bool) Field {
	x := 0.0
	if b {
		x = 1
	}
	return Field{Name: name, Kind: FlagField, Real: []float64{x}, Optional: true}
}

// matrixField views the n×n matrix m (nil for n = 0) as a field, copying it only when its
// rows are not contiguous.
func matrixField(name string, m *mat.Dense, n int, v FieldView) Field {
	fd := Field{Name: name, Kind: RealField, Shape: []int{n, n}, Real: []float64{}, View: v}
	if n == 0 {
		return fd
	}
	if g := m.RawMatrix(); g.Stride == n {
		fd.Real = g.Data[: n*n : n*n]
		return fd
	}
	fd.Real = make([]float64, n*n)
	for i := range n {
		copy(fd.Real[i*n:(i+1)*n], m.RawRowView(i))
	}
	return fd
}

func conj(v complex128) complex128 { return complex(real(v), -imag(v)) }
