package filterfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/userfile"
)

// maxSize is userfile.MaxSize, lowered by tests of the writer's limit.
var maxSize = userfile.MaxSize

// Write encodes doc (see Marshal) and writes it to w.
func Write(w io.Writer, doc filters.Document) error {
	b, err := Marshal(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Marshal encodes doc as two-space indented JSON with a trailing newline: the fields of each
// filter in the order of its form's Fields, vectors, complex pairs and rotation blocks on one
// line each, a matrix one row a line. A document whose text would exceed userfile.MaxSize is
// an error wrapping filters.ErrInvalid, since it could not be read back.
func Marshal(doc filters.Document) ([]byte, error) {
	var w writer
	switch {
	case doc.Filter != nil && doc.Bank != nil:
		return nil, invalidf("a Document holds a Filter or a Bank, not both")
	case doc.Filter != nil:
		if err := doc.Filter.Validate(); err != nil {
			return nil, err
		}
		if err := w.filter("", doc.Name, doc.Filter); err != nil {
			return nil, err
		}
	case doc.Bank != nil:
		if err := doc.Bank.Validate(); err != nil {
			return nil, err
		}
		o := w.open("")
		if doc.Name != "" {
			o.key("name")
			w.string(doc.Name)
		}
		o.key("channels")
		w.b = append(w.b, "[\n"...)
		for i, c := range doc.Bank.Channels {
			if i > 0 {
				w.b = append(w.b, ",\n"...)
			}
			w.b = append(w.b, "    "...)
			if err := w.filter("    ", "", c); err != nil {
				return nil, fmt.Errorf("channel %d: %w", i, err)
			}
		}
		w.b = append(w.b, "\n  ]"...)
		o.close()
	default:
		return nil, invalidf("empty Document: set its Filter or its Bank")
	}
	// Refuse to write what Unmarshal would refuse to read.
	if len(w.b)+1 > maxSize {
		return nil, invalidf("the encoded document has %d bytes, more than the %d MiB limit of a file", len(w.b)+1, maxSize>>20)
	}
	return append(w.b, '\n'), nil
}

// writer builds the indented JSON text.
type writer struct {
	b []byte
}

// objectWriter writes the members of one object, one a line.
type objectWriter struct {
	w      *writer
	indent string // of the braces
	n      int
}

func (w *writer) open(indent string) *objectWriter {
	w.b = append(w.b, '{')
	return &objectWriter{w: w, indent: indent}
}

func (o *objectWriter) key(k string) {
	if o.n > 0 {
		o.w.b = append(o.w.b, ',')
	}
	o.n++
	o.w.b = append(o.w.b, '\n')
	o.w.b = append(o.w.b, o.indent...)
	o.w.b = append(o.w.b, "  "...)
	o.w.string(k)
	o.w.b = append(o.w.b, ": "...)
}

func (o *objectWriter) close() {
	o.w.b = append(o.w.b, '\n')
	o.w.b = append(o.w.b, o.indent...)
	o.w.b = append(o.w.b, '}')
}

func (w *writer) filter(indent, name string, f filters.Filter) error {
	fl, ok := f.(filters.Fielder)
	if !ok {
		return invalidf("no file format for %T (form %q): it has no Fields", f, f.Form())
	}
	o := w.open(indent)
	if name != "" {
		o.key("name")
		w.string(name)
	}
	o.key("form")
	w.string(string(f.Form()))
	inner := indent + "  "
	for _, fd := range fl.Fields() {
		if fd.Kind == filters.FlagField {
			if fd.Real[0] != 0 {
				o.key(fd.Name)
				w.b = append(w.b, "true"...)
			}
			continue
		}
		o.key(fd.Name)
		switch {
		case fd.Kind == filters.ComplexField:
			w.complexes(fd.Complex)
		case fd.Kind == filters.PolarField:
			w.blocks(inner, fd.Real)
		case len(fd.Shape) == 2:
			w.matrix(inner, fd.Real, fd.Shape[0])
		case len(fd.Shape) == 1:
			w.vector(fd.Real)
		default:
			w.number(fd.Real[0])
		}
	}
	o.close()
	return nil
}

func (w *writer) string(s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	w.b = append(w.b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// number writes x as encoding/json does: the shortest text that parses back to x.
func (w *writer) number(x float64) {
	abs := math.Abs(x)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, x, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7.
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

func (w *writer) vector(v []float64) {
	w.b = append(w.b, '[')
	for i, x := range v {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.number(x)
	}
	w.b = append(w.b, ']')
}

func (w *writer) complexes(v []complex128) {
	w.b = append(w.b, '[')
	for i, x := range v {
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		w.b = append(w.b, '[')
		w.number(real(x))
		w.b = append(w.b, ", "...)
		w.number(imag(x))
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, ']')
}

// lines writes n items, one a line, in brackets ("[]" for none).
func (w *writer) lines(indent string, n int, item func(i int)) {
	if n == 0 {
		w.b = append(w.b, "[]"...)
		return
	}
	w.b = append(w.b, '[')
	for i := range n {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, '\n')
		w.b = append(w.b, indent...)
		w.b = append(w.b, "  "...)
		item(i)
	}
	w.b = append(w.b, '\n')
	w.b = append(w.b, indent...)
	w.b = append(w.b, ']')
}

// matrix writes the n×n row-major matrix a one row a line.
func (w *writer) matrix(indent string, a []float64, n int) {
	w.lines(indent, n, func(i int) { w.vector(a[i*n : (i+1)*n]) })
}

// blocks writes (radius, angle) pairs as rotation block objects, one a line.
func (w *writer) blocks(indent string, pairs []float64) {
	w.lines(indent, len(pairs)/2, func(i int) {
		w.b = append(w.b, `{"radius": `...)
		w.number(pairs[2*i])
		w.b = append(w.b, `, "angle": `...)
		w.number(pairs[2*i+1])
		w.b = append(w.b, '}')
	})
}
