package arrays

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// MaxCSVSize is the largest CSV text ReadCSV accepts (1 GiB).
const MaxCSVSize = 1 << 30

// ReadCSV reads a table of numbers: one row per line, fields separated by commas or, in a
// file whose first row has no comma, by spaces and tabs (numpy.savetxt's default). Blank
// lines and lines starting with '#' are skipped, and so is a first row none of whose fields
// looks like a number (a header of column names). Every row must have the same number of fields,
// and every field must be a finite number. The result has shape (rows, columns).
//
// The text is read field by field, never a line at a time, so that memory stays near the
// numbers held however the text is laid out (a file of one line of seven million numbers
// included): the numbers go into chunks joined at the end, at most about twice their size.
// OpenReader, which can read a file twice, counts first and fills one slice of the exact
// size.
func ReadCSV(r io.Reader) (*Array, error) {
	var chunks [][]float64
	cur := make([]float64, 0, 1<<12)
	rows, cols, err := scanCSV(r, func(x float64) {
		if len(cur) == cap(cur) {
			chunks = append(chunks, cur)
			cur = make([]float64, 0, min(2*cap(cur), 1<<20))
		}
		cur = append(cur, x)
	})
	if err != nil {
		return nil, err
	}
	data := make([]float64, 0, rows*cols)
	for _, c := range chunks {
		data = append(data, c...)
	}
	return New([]int{rows, cols}, append(data, cur...))
}

// readCSVAt reads a CSV file of the given size in two passes: one that counts the rows and
// columns, one that parses into a slice of that size.
func readCSVAt(r io.ReaderAt, size int64) (*Array, error) {
	rows, cols, err := scanCSV(io.NewSectionReader(r, 0, size), nil)
	if err != nil {
		return nil, err
	}
	data := make([]float64, 0, rows*cols)
	rows2, cols2, err := scanCSV(io.NewSectionReader(r, 0, size), func(x float64) {
		if len(data) < cap(data) {
			data = append(data, x)
		}
	})
	if err != nil {
		return nil, err
	}
	if rows2 != rows || cols2 != cols || len(data) != rows*cols {
		return nil, invalidf("csv: the file changed while it was read")
	}
	return New([]int{rows, cols}, data)
}

// csvScan walks CSV text byte by byte.
type csvScan struct {
	br     *bufio.Reader
	read   int64
	lineNo int
	comma  bool
	cols   int
	rows   int
	n      int
	value  func(float64) // nil: count only
	field  []byte        // the field being read
	fields int           // fields of the current row so far
	// headerSeen is set once the first row was a header.
	headerSeen bool
}

// scanCSV reads the table, calling value (when not nil) with each number in order, and
// returns its shape.
func scanCSV(r io.Reader, value func(float64)) (rows, cols int, err error) {
	c := &csvScan{br: bufio.NewReaderSize(io.LimitReader(r, MaxCSVSize+1), 1<<16), cols: -1, value: value}
	first := true
	for {
		b, err := c.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		c.lineNo++
		// Leading space, blank lines and comments.
		for isSpace(b) {
			if b, err = c.next(); err != nil {
				break
			}
		}
		switch {
		case err == io.EOF || b == '\n':
			if err == io.EOF {
				err = nil
			}
		case b == '#':
			err = c.skipLine()
		case b >= utf8.RuneSelf:
			// Perhaps a Unicode space: the line is read whole and split as text.
			err = c.wholeLine([]byte{b}, first)
			first = first && c.rows == 0 && c.cols < 0 && !c.headerSeen
		case first:
			first = false
			err = c.firstRow(b)
		default:
			err = c.row(b)
		}
		if err != nil && err != io.EOF {
			return 0, 0, err
		}
	}
	if c.rows == 0 {
		return 0, 0, invalidf("csv: no rows of numbers")
	}
	return c.rows, c.cols, nil
}

// next returns the next byte, failing past MaxCSVSize.
func (c *csvScan) next() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		if c.read++; c.read > MaxCSVSize {
			return 0, invalidf("csv: the text exceeds the limit of %d MiB", MaxCSVSize>>20)
		}
	}
	return b, err
}

func (c *csvScan) skipLine() error {
	for {
		b, err := c.next()
		if err != nil || b == '\n' {
			return err
		}
	}
}

// isSpace reports whether b is an ASCII space (unicode.IsSpace; other spaces are not ASCII).
func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f' }

// firstRow reads the first row, which decides the separator and may be a header, from its
// first byte b. A row whose first field looks like a number is data, and the byte after that
// field (past spaces) decides the separator: a comma, or else spaces. Otherwise the row is
// read whole, as a header must be to know that none of its fields is a number.
func (c *csvScan) firstRow(b byte) error {
	tok := []byte{b}
	var err error
	for {
		if b, err = c.next(); err != nil || b == ',' || b == '\n' || isSpace(b) {
			break
		}
		tok = append(tok, b)
	}
	if looksNumeric(tok) && isASCII(tok) {
		for err == nil && isSpace(b) {
			b, err = c.next()
		}
		c.comma = err == nil && b == ','
		if err := c.emit(tok); err != nil {
			return err
		}
		if err != nil || b == '\n' {
			return c.endRow()
		}
		if !c.comma {
			c.field = append(c.field[:0], b) // the start of the second field
		}
		return c.rest()
	}
	// Maybe a header: read the whole line.
	if err == nil && b != '\n' {
		tok = append(tok, b)
	} else if err == nil {
		c.br.UnreadByte()
		c.read--
	}
	return c.wholeLine(tok, true)
}

// wholeLine reads the rest of a line that starts with prefix and takes it as the line reader
// did: trimmed, split at commas or at spaces (Unicode ones too), skipped when blank or a
// comment, and, when first, a header when none of its fields looks like a number (which also
// decides the separator).
func (c *csvScan) wholeLine(prefix []byte, first bool) error {
	line := prefix
	for {
		b, err := c.next()
		if err == io.EOF || err == nil && b == '\n' {
			break
		}
		if err != nil {
			return err
		}
		line = append(line, b)
	}
	text := bytes.TrimSpace(line)
	if len(text) == 0 || text[0] == '#' {
		return nil
	}
	if first {
		c.comma = bytes.IndexByte(text, ',') >= 0
	}
	fields := splitFields(text, c.comma)
	if first && isHeader(fields) {
		c.headerSeen = true
		return nil
	}
	for _, f := range fields {
		if err := c.emit(f); err != nil {
			return err
		}
	}
	return c.endRow()
}

func isASCII(b []byte) bool {
	for _, x := range b {
		if x >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// row reads a data row from its first byte b.
func (c *csvScan) row(b byte) error {
	c.field = append(c.field[:0], b)
	if c.comma && b == ',' {
		c.field = c.field[:0]
		if err := c.emit(nil); err != nil {
			return err
		}
	}
	return c.rest()
}

// rest reads the rest of a row whose current field is in c.field.
func (c *csvScan) rest() error {
	for {
		b, err := c.next()
		end := err == io.EOF || err == nil && b == '\n'
		if err != nil && err != io.EOF {
			return err
		}
		switch {
		case end:
			if c.comma {
				if err := c.emit(bytes.TrimSpace(c.field)); err != nil {
					return err
				}
			} else if err := c.emitWords(); err != nil {
				return err
			}
			return c.endRow()
		case c.comma && b == ',':
			if err := c.emit(bytes.TrimSpace(c.field)); err != nil {
				return err
			}
			c.field = c.field[:0]
		case !c.comma && isSpace(b):
			if err := c.emitWords(); err != nil {
				return err
			}
		default:
			c.field = append(c.field, b)
		}
	}
}

// emitWords takes the field of a space-separated row, which non-ASCII spaces may split.
func (c *csvScan) emitWords() error {
	f := c.field
	c.field = c.field[:0]
	if isASCII(f) {
		if len(f) == 0 {
			return nil
		}
		return c.emit(f)
	}
	for _, w := range bytes.Fields(f) {
		if err := c.emit(w); err != nil {
			return err
		}
	}
	return nil
}

// emit takes one field of the current row.
func (c *csvScan) emit(f []byte) error {
	c.fields++
	if c.n++; c.n > MaxElements {
		return invalidf("csv: more than %d numbers", MaxElements)
	}
	if c.cols >= 0 && c.fields > c.cols {
		return c.ragged()
	}
	if c.value == nil && len(f) > 0 {
		return nil // counting: the second pass parses
	}
	x, err := parseField(f)
	if err != nil {
		return invalidf("csv: line %d, field %d: %v", c.lineNo, c.fields, err)
	}
	if c.value != nil {
		c.value(x)
	}
	return nil
}

func (c *csvScan) ragged() error {
	// Count the rest of the line for the message.
	n := c.fields
	if c.comma {
		for {
			b, err := c.next()
			if err != nil || b == '\n' {
				break
			}
			if b == ',' {
				n++
			}
		}
	} else {
		rest, _ := c.br.ReadSlice('\n')
		n += len(bytes.Fields(rest))
	}
	return invalidf("csv: line %d has %d fields, the first row %d: rows must have equal lengths", c.lineNo, n, c.cols)
}

func (c *csvScan) endRow() error {
	switch {
	case c.cols < 0:
		c.cols = c.fields
	case c.fields != c.cols:
		return invalidf("csv: line %d has %d fields, the first row %d: rows must have equal lengths", c.lineNo, c.fields, c.cols)
	}
	c.rows++
	c.fields = 0
	return nil
}

// looksNumeric reports whether a field is a number, or a malformed one (which is reported
// rather than taken for a header).
func looksNumeric(f []byte) bool { return !isHeader([][]byte{f}) && len(unquote(f)) > 0 }

// splitFields splits a line at commas, or at runs of spaces and tabs.
func splitFields(line []byte, comma bool) [][]byte {
	if !comma {
		return bytes.Fields(line)
	}
	fields := bytes.Split(line, []byte{','})
	for i, f := range fields {
		fields[i] = bytes.TrimSpace(f)
	}
	return fields
}

// isHeader reports whether no field of a row is a number, not even a malformed or
// non-finite one: a row of column names.
func isHeader(fields [][]byte) bool {
	for _, f := range fields {
		f = unquote(f)
		if len(f) == 0 {
			continue
		}
		if _, err := strconv.ParseFloat(string(f), 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return false
		}
		if c := f[0]; c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9') {
			return false // a malformed number: report it rather than skip the row
		}
	}
	return true
}

func unquote(f []byte) []byte {
	if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		return bytes.TrimSpace(f[1 : len(f)-1])
	}
	return f
}

func parseField(f []byte) (float64, error) {
	f = unquote(f)
	if len(f) == 0 {
		return 0, fmt.Errorf("empty field")
	}
	x, err := strconv.ParseFloat(string(f), 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%.40s is outside the range of float64", f)
	case err != nil:
		return 0, fmt.Errorf("%.40q is not a number", f)
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%.40s is not finite: values must be finite", f)
	}
	return x, nil
}

// EncodeCSV writes a 1-D array as one line and a 2-D array as one line per row, fields
// separated by commas, each number in the shortest form that reads back to the same float64.
func EncodeCSV(a *Array) ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	rows, cols := 1, len(a.Data)
	switch len(a.Shape) {
	case 0, 1:
	case 2:
		rows, cols = a.Shape[0], a.Shape[1]
	default:
		return nil, fmt.Errorf("arrays: CSV holds 1-D or 2-D arrays, not shape %s", ShapeString(a.Shape))
	}
	if cols == 0 {
		return nil, fmt.Errorf("arrays: CSV cannot hold an array of shape %s: it has no columns", ShapeString(a.Shape))
	}
	var b []byte
	for i := range rows {
		for j := range cols {
			if j > 0 {
				b = append(b, ',')
			}
			b = AppendNumber(b, a.Data[i*cols+j])
		}
		b = append(b, '\n')
	}
	return b, nil
}

// WriteCSV writes EncodeCSV(a) to w.
func WriteCSV(w io.Writer, a *Array) error {
	b, err := EncodeCSV(a)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
