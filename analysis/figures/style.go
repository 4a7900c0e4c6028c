package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette is the Okabe–Ito palette without its yellow (too pale on white), which stays
// distinguishable with the common colour-vision deficiencies.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
}

// dashes tell overlaid series apart where their lines coincide (a good fit over its
// target) and in print without colour.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(5), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(1.5), vg.Points(3)},
}

// seriesStyle is the line style of series i: the first solid and a little wider, the others
// dashed over it.
func seriesStyle(i int) draw.LineStyle {
	w := vg.Points(1.1)
	if i == 0 {
		w = vg.Points(1.5)
	}
	return draw.LineStyle{Color: palette[i%len(palette)], Width: w, Dashes: dashes[i%len(dashes)]}
}

// targetStyle draws a distillation target: wide and light, so that a fit drawn over it in a
// thin line stays visible where the two agree.
func targetStyle() draw.LineStyle {
	return draw.LineStyle{Color: color.Gray{Y: 175}, Width: vg.Points(3.5)}
}

// channelStyle is the thin line of fitted channel i: solid through the palette's colours,
// then dashed, one pattern per further round of them, so that no two of the channels a
// figure names share a line.
func channelStyle(i int) draw.LineStyle {
	st := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1)}
	if round := i / len(palette); round > 0 {
		st.Dashes = dashes[1+(round-1)%(len(dashes)-1)]
	}
	return st
}

func poleGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: crossGlyph{}}
}

func zeroGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: ringGlyph{}}
}

// glyphWidth is the stroke of the pole and zero markers (gonum's are 0.5 pt, faint in print).
const glyphWidth = 1

// crossGlyph is a × marker.
type crossGlyph struct{}

func (crossGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(glyphWidth)})
	r := sty.Radius * math.Sqrt2 / 2
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	c.Stroke(p)
}

// ringGlyph is a ○ marker.
type ringGlyph struct{}

func (ringGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(glyphWidth)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// lineThumb is a legend thumbnail showing a line style.
type lineThumb draw.LineStyle

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(t), c.Min.X, y, c.Max.X, y)
}

// glyphThumb is a legend thumbnail showing a marker.
type glyphThumb draw.GlyphStyle

func (t glyphThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyphNoClip(draw.GlyphStyle(t), c.Center())
}

// lineGlyphThumb is a legend thumbnail showing a line with its marker.
type lineGlyphThumb struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

func (t lineGlyphThumb) Thumbnail(c *draw.Canvas) {
	lineThumb(t.line).Thumbnail(c)
	glyphThumb(t.glyph).Thumbnail(c)
}

// noThumb is an empty legend thumbnail, for a line of text.
type noThumb struct{}

func (noThumb) Thumbnail(*draw.Canvas) {}

// glyphLegend explains the pole–zero markers.
func glyphLegend() []legendEntry {
	black := color.Black
	return []legendEntry{
		{"poles", glyphThumb(poleGlyph(black))},
		{"zeros", glyphThumb(zeroGlyph(black))},
	}
}

var _ plot.Thumbnailer = lineThumb{}
