package figures

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrInvalid is wrapped by the errors of bad input to New and NewDistillation.
var ErrInvalid = errors.New("invalid figure data")

// PixelsError says that a figure's size at its DPI is above MaxPixels; it wraps ErrInvalid.
// It is its own type because the size and DPI are the caller's choice, so a front end can
// name the settings to lower.
type PixelsError struct {
	Width, Height vg.Length
	DPI           int
	Pixels        float64
}

func (e *PixelsError) Error() string {
	return fmt.Sprintf("%v: %.0f pixels at %d DPI, above the limit %d", ErrInvalid, e.Pixels, e.DPI, MaxPixels)
}

func (e *PixelsError) Unwrap() error { return ErrInvalid }

// ErrFormat is wrapped by the error of an unsupported image format.
var ErrFormat = errors.New("unsupported image format")

// Format is an image file format.
type Format string

// The formats Render writes.
const (
	SVG Format = "svg"
	PDF Format = "pdf"
	PNG Format = "png"
)

// Formats lists the formats in the order messages name them.
var Formats = []Format{SVG, PDF, PNG}

// FormatOf returns the format named by path's extension (.svg, .pdf or .png, in any case).
func FormatOf(path string) (Format, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == string(f) {
			return f, nil
		}
	}
	if ext == "" {
		return "", fmt.Errorf("%w: %q has no extension (want .svg, .pdf or .png)", ErrFormat, path)
	}
	return "", fmt.Errorf("%w %q (want .svg, .pdf or .png)", ErrFormat, "."+ext)
}

// Sizes and limits.
const (
	// DefaultDPI is the resolution of PNG files when Options.DPI is 0.
	DefaultDPI = 150
	// MinSide and MaxSide bound a figure's width and height.
	MinSide = 1 * vg.Inch
	MaxSide = 20 * vg.Inch
	// MaxPixels bounds the pixel count of a PNG file (width × height at its DPI).
	MaxPixels = 50_000_000
	// FixedDate is the creation and modification date written into PDF files, in the PDF
	// date syntax, so that a figure renders to the same bytes every time.
	FixedDate = "20000101000000"
)

// Default panel sizes: a response panel is wider than tall; a figure of pole–zero panels
// alone is square.
const (
	panelWidth  = 4.8 * vg.Inch
	panelHeight = 3 * vg.Inch
	squareSide  = 4 * vg.Inch
)

// Figure is a grid of panels with a title and a legend, ready to render.
type Figure struct {
	title      string
	cells      [][]cell // rows of columns; a nil plot is an empty cell
	legend     []legendEntry
	width      vg.Length
	height     vg.Length
	dpi        int
	panelCount int
}

// cell is one panel of the grid.
type cell struct {
	p      *plot.Plot
	square bool // keep the data area square (pole–zero panels)
}

// legendEntry is one line of the figure's legend.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// Size returns the figure's width and height.
func (f *Figure) Size() (w, h vg.Length) { return f.width, f.height }

// Panels returns the number of panels.
func (f *Figure) Panels() int { return f.panelCount }

// layout sets the figure's size from its grid and the options, and checks it.
func (f *Figure) layout(o Options, allSquare bool) error {
	rows := len(f.cells)
	cols := 0
	if rows > 0 {
		cols = len(f.cells[0])
	}
	pw, ph := panelWidth, panelHeight
	if allSquare {
		pw, ph = squareSide, squareSide
	}
	lw, _ := f.legendSize()
	// A grid too large for MaxSide at the default panel size gets smaller panels: a
	// distillation of 10 or more channels has four columns and a legend, 22 in wide.
	if cols > 0 {
		pw = min(pw, (MaxSide-lw)/vg.Length(cols))
	}
	f.width = vg.Length(cols)*pw + lw
	if o.Width != 0 {
		f.width = o.Width
	}
	// A title wider than the figure (a preset's name records its recipe: "cheby1 order=5
	// band=bandpass wlo=… whi=… ripple=1" is 6.6 in at 14 pt) is cut by the page's edges:
	// it is broken into lines at spaces instead.
	f.title = wrapText(titleStyle(), f.title, f.width-2*gap)
	th := f.titleHeight()
	if rows > 0 {
		ph = min(ph, (MaxSide-th)/vg.Length(rows))
	}
	f.height = vg.Length(rows)*ph + th
	if o.Height != 0 {
		f.height = o.Height
	}
	f.dpi = o.DPI
	if f.dpi == 0 {
		f.dpi = DefaultDPI
	}
	for _, s := range []struct {
		name string
		v    vg.Length
	}{{"width", f.width}, {"height", f.height}} {
		if s.v < MinSide || s.v > MaxSide {
			return fmt.Errorf("%w: %s %.4gin outside [%g, %g] in", ErrInvalid, s.name, s.v/vg.Inch, MinSide/vg.Inch, MaxSide/vg.Inch)
		}
	}
	if f.dpi < 36 || f.dpi > 1200 {
		return fmt.Errorf("%w: DPI %d outside [36, 1200]", ErrInvalid, f.dpi)
	}
	if px := (f.width / vg.Inch * vg.Length(f.dpi)) * (f.height / vg.Inch * vg.Length(f.dpi)); px > MaxPixels {
		return &PixelsError{Width: f.width, Height: f.height, DPI: f.dpi, Pixels: float64(px)}
	}
	return nil
}

// Text styles of the figure's own text (gonum/plot styles the panels).
func titleStyle() text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, 14),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// wrapText breaks s at spaces into lines no wider than w in style st, as far as its words
// allow (a word wider than w keeps a line of its own).
func wrapText(st text.Style, s string, w vg.Length) string {
	if s == "" || st.Width(s) <= w {
		return s
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case st.Width(line+" "+word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// gap is the space around the title, the legend and between panels.
const gap = 0.12 * vg.Inch

func (f *Figure) titleHeight() vg.Length {
	if f.title == "" {
		return 0
	}
	st := titleStyle()
	return st.Height(f.title) + 2*gap
}

func (f *Figure) newLegend(pdf bool) plot.Legend {
	l := plot.NewLegend()
	l.Left = true
	l.Top = true
	l.TextStyle.Font.Size = 10
	l.ThumbnailWidth = 0.3 * vg.Inch
	l.Padding = 0.04 * vg.Inch
	for _, e := range f.legend {
		name := e.name
		if pdf {
			name = pdfText(name)
		}
		l.Add(name, e.thumb)
	}
	return l
}

// legendSize is the space the legend takes on the right, gaps included.
func (f *Figure) legendSize() (w, h vg.Length) {
	if len(f.legend) == 0 {
		return 0, 0
	}
	l := f.newLegend(false)
	r := l.Rectangle(draw.Canvas{})
	return r.Size().X + 2*gap, r.Size().Y
}

// Render draws the figure in the given format and returns the file's bytes. Rendering the
// same figure twice gives the same bytes.
func (f *Figure) Render(format Format) ([]byte, error) {
	var c vg.CanvasWriterTo
	switch format {
	case SVG:
		c = vgsvg.New(f.width, f.height)
	case PDF:
		c = vgpdf.New(f.width, f.height)
	case PNG:
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(f.dpi),
			vgimg.UseBackgroundColor(color.White))}
	default:
		return nil, fmt.Errorf("%w %q (want svg, pdf or png)", ErrFormat, format)
	}
	f.draw(draw.New(c), format == PDF)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figures: writing %s: %w", format, err)
	}
	out := buf.Bytes()
	if format == PDF {
		out = fixPDFDates(out)
	}
	return out, nil
}

// draw lays the figure out on dc: the title on top, the legend on the right, the panels in
// the rest, their data areas aligned by plot.Align.
func (f *Figure) draw(dc draw.Canvas, pdf bool) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	area := dc
	if th := f.titleHeight(); th > 0 {
		st := titleStyle()
		title := f.title
		if pdf {
			title = pdfText(title)
		}
		dc.FillText(st, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - gap}, title)
		area = draw.Crop(area, 0, 0, 0, -th)
	}
	if lw, _ := f.legendSize(); lw > 0 {
		l := f.newLegend(pdf)
		lc := draw.Crop(area, area.Size().X-lw+gap, -gap, 0, -gap)
		l.Draw(lc)
		area = draw.Crop(area, 0, -lw, 0, 0)
	}
	top := vg.Length(0)
	if f.title == "" {
		top = -gap / 2
	}
	area = draw.Crop(area, gap/2, -gap/2, gap/2, top)

	rows, cols := len(f.cells), len(f.cells[0])
	plots := make([][]*plot.Plot, rows)
	for i, row := range f.cells {
		plots[i] = make([]*plot.Plot, cols)
		for j, c := range row {
			if c.p == nil {
				continue
			}
			p := c.p
			if pdf {
				q := *p
				q.Title.Text = pdfText(q.Title.Text)
				q.X.Label.Text = pdfText(q.X.Label.Text)
				q.Y.Label.Text = pdfText(q.Y.Label.Text)
				p = &q
			}
			plots[i][j] = p
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 2 * gap, PadY: 2 * gap}
	canvases := plot.Align(plots, tiles, area)
	for i, row := range plots {
		for j, p := range row {
			if p == nil {
				continue
			}
			c := canvases[i][j]
			if f.cells[i][j].square {
				c = squareData(p, c)
			}
			p.Draw(c)
		}
	}
}

// squareData crops c so that p's data area in it is square, centred in c. The space the axes
// take does not depend on the canvas size, so one correction is exact.
func squareData(p *plot.Plot, c draw.Canvas) draw.Canvas {
	d := p.DataCanvas(c)
	w, h := d.Size().X, d.Size().Y
	switch {
	case w > h:
		cut := (w - h) / 2
		return draw.Crop(c, cut, -cut, 0, 0)
	case h > w:
		cut := (h - w) / 2
		return draw.Crop(c, 0, 0, cut, -cut)
	}
	return c
}

// pdfDate matches the dates the PDF library writes from the clock.
var pdfDate = regexp.MustCompile(`/(CreationDate|ModDate) \(D:\d{14}\)`)

// fixPDFDates replaces the clock dates of a PDF file by FixedDate. The replacement has the
// same length, so the cross-reference table's byte offsets stay right.
func fixPDFDates(b []byte) []byte {
	return pdfDate.ReplaceAllFunc(b, func(m []byte) []byte {
		i := bytes.Index(m, []byte("(D:"))
		out := append([]byte{}, m[:i+3]...)
		out = append(out, FixedDate...)
		return append(out, ')')
	})
}

// pdfReplacements spell out the characters the figures use that the PDF backend's code page
// lacks.
var pdfReplacements = strings.NewReplacer(
	"ω", "omega", "π", "pi", "τ", "tau", "φ", "phi", "λ", "lambda", "ρ", "rho", "θ", "theta",
	"Δ", "Delta", "σ", "sigma", "α", "alpha", "→", "->", "←", "<-", "≤", "<=", "≥", ">=",
	"·", ".", "×", "x", "−", "-", "–", "-", "—", "-", "…", "...", "±", "+/-", "₀", "0", "₁", "1",
	"²", "^2", "⁻¹", "^-1", "√", "sqrt", "∞", "inf", "°", " deg", "“", "\"", "”", "\"", "‘", "'", "’", "'",
)

// pdfText writes s in ASCII for the PDF backend, spelling out the characters it knows and
// replacing the others by "?".
func pdfText(s string) string {
	s = pdfReplacements.Replace(s)
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
