package filters

// The fields of each form, in the order of its filter file (docs/formats.md), with the
// workbench's tables.

// Fields returns A, B, C and D, shown as the block matrix [A B; C D].
func (f *Dense) Fields() []Field {
	v := FieldView{Table: "[A B; C D]"}
	return []Field{
		matrixField("A", f.A, f.Order(), withHeading(v, "A")),
		vectorField("B", f.B, withHeading(v, "B")),
		vectorField("C", f.C, withHeading(v, "C")),
		scalarField("D", f.D, true, withHeading(v, "D")),
	}
}

// WithFields returns NewDense of the fields.
func (f *Dense) WithFields(fields []Field) (Filter, error) {
	s := fieldSet(fields)
	return NewDense(s.rows("A"), s.real("B"), s.real("C"), s.scalar("D"))
}

// Fields returns the poles and residues, as one table of modes, and h0.
func (f *Diagonal) Fields() []Field {
	v := FieldView{Table: "modes  h[t] = Σ rᵢ λᵢ^(t-1)", Index: "#"}
	return []Field{
		complexField("poles", f.Poles, "poles", withHeading(v, "pole λ")),
		complexField("residues", f.Residues, "poles", withHeading(v, "residue r")),
		scalarField("h0", f.H0, true, FieldView{}),
	}
}

// WithFields returns NewDiagonal of the fields.
func (f *Diagonal) WithFields(fields []Field) (Filter, error) {
	s := fieldSet(fields)
	return NewDiagonal(s.complexes("poles"), s.complexes("residues"), s.scalar("h0"))
}

// coefficientFields are the fields of the tf and companion forms.
func coefficientFields(title string, a, b []float64, h0 float64) []Field {
	v := FieldView{Table: title, Index: "k"}
	return []Field{
		vectorField("a", a, withHeading(v, "a_k")),
		vectorField("b", b, withHeading(v, "b_k")),
		scalarField("h0", h0, true, FieldView{}),
	}
}

// Fields returns a, b, h0 and the observable flag.
func (f *Companion) Fields() []Field {
	title := "controllable companion  A row 1 = -a"
	if f.Observable {
		title = "observable companion  A col 1 = -a"
	}
	return append(coefficientFields(title, f.Den, f.Num, f.H0), flagField("observable", f.Observable))
}

// WithFields returns NewCompanion of the fields.
func (f *Companion) WithFields(fields []Field) (Filter, error) {
	s := fieldSet(fields)
	return NewCompanion(s.real("a"), s.real("b"), s.scalar("h0"), s.flag("observable"))
}

// Fields returns a, b and h0.
func (f *TransferFunction) Fields() []Field {
	return coefficientFields("H(z) = h0 + Σ b_k z^-k / (1 + Σ a_k z^-k)", f.Den, f.Num, f.H0)
}

// WithFields returns NewTransferFunction of the fields.
func (f *TransferFunction) WithFields(fields []Field) (Filter, error) {
	s := fieldSet(fields)
	return NewTransferFunction(s.real("a"), s.real("b"), s.scalar("h0"))
}

// Fields returns the zeros, the poles, the gain and h0; the poles are shown first.
func (f *ZPK) Fields() []Field {
	return []Field{
		complexField("zeros", f.Zeros, "zeros", FieldView{Table: "zeros", Heading: "z", Index: "#", Place: 2}),
		complexField("poles", f.Poles, "poles", FieldView{Table: "poles", Heading: "p", Index: "#", Place: 1}),
		scalarField("gain", f.Gain, false, FieldView{Place: 3}),
		scalarField("h0", f.H0, true, FieldView{Place: 3}),
	}
}

// WithFields returns NewZPK of the fields.
func (f *ZPK) WithFields(fields []Field) (Filter, error) {
	s := fieldSet(fields)
	return NewZPK(s.complexes("zeros"), s.complexes("poles"), s.scalar("gain"), s.scalar("h0"))
}

// Fields returns P, the blocks, the real eigenvalues, B, C and D; P is shown last, with its
// distance from orthogonality.
func (f *Rotation) Fields() []Field {
	blocks := make([]float64, 0, 2*len(f.Blocks))
	for _, b := range f.Blocks {
		blocks = append(blocks, b.Radius, b.Angle)
	}
	io := FieldView{Table: "B, C", Index: "i", Place: 3}
	return []Field{
		matrixField("P", f.P, f.Order(), FieldView{Table: "basis P", Heading: "P", Place: 5, HideEmpty: true,
			Measure: f.Orthogonality, MeasureName: "‖PᵀP−I‖"}),
		{Name: "blocks", Kind: PolarField, Shape: []int{len(f.Blocks), 2}, Real: blocks,
			View: FieldView{Table: "blocks ρ·R(θ)", Heading: "ρ·R(θ)", Index: "#", Place: 1}},
		vectorField("real", f.Real, FieldView{Table: "real eigenvalues", Heading: "r", Index: "#", Place: 2, HideEmpty: true}),
		vectorField("B", f.B, withHeading(io, "B")),
		vectorField("C", f.C, withHeading(io, "C")),
		scalarField("D", f.D, true, FieldView{Place: 4}),
	}
}

// WithFields returns NewRotation of the fields.
func (f *Rotation) WithFields(fields []Field) (Filter, error) {
	s := fieldSet(fields)
	return NewRotation(s.rows("P"), s.blocks("blocks"), s.real("real"), s.real("B"), s.real("C"), s.scalar("D"))
}

func withHeading(v FieldView, heading string) FieldView {
	v.Heading = heading
	return v
}

// Every form is a Fielder; the pole-holding ones are PoleMovers.
var (
	_ Fielder    = (*Dense)(nil)
	_ Fielder    = (*Diagonal)(nil)
	_ Fielder    = (*Companion)(nil)
	_ Fielder    = (*TransferFunction)(nil)
	_ Fielder    = (*ZPK)(nil)
	_ Fielder    = (*Rotation)(nil)
	_ PoleMover  = (*ZPK)(nil)
	_ PoleMover  = (*Diagonal)(nil)
	_ PoleMover  = (*Rotation)(nil)
	_ ZeroHolder = (*ZPK)(nil)
)
