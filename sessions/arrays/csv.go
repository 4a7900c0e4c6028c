package arrays

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// MaxCSVSize is the largest CSV text ReadCSV accepts (1 GiB).
const MaxCSVSize = 1 << 30

// ReadCSV reads a table of numbers: one row per line, fields separated by commas or, in a
// file whose first row has no comma, by spaces and tabs (numpy.savetxt's default). Blank
// lines and lines starting with '#' are skipped, and so is a first row none of whose fields
// looks like a number (a header of column names). Every row must have the same number of fields,
// and every field must be a finite number. The result has shape (rows, columns).
func ReadCSV(r io.Reader) (*Array, error) {
	br := bufio.NewReader(io.LimitReader(r, MaxCSVSize+1))
	var (
		data      []float64
		rows      int
		cols      = -1
		comma     bool
		read      int64
		lineNo    int
		firstData = true
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it whole.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		read += int64(len(line))
		if read > MaxCSVSize {
			return nil, invalidf("csv: the text exceeds the limit of %d MiB", MaxCSVSize>>20)
		}
		if len(line) > 0 {
			lineNo++
			text := bytes.TrimSpace(line)
			if len(text) > 0 && text[0] != '#' {
				if firstData {
					comma = bytes.IndexByte(text, ',') >= 0
				}
				fields := splitFields(text, comma)
				if firstData && isHeader(fields) {
					firstData = false
				} else {
					firstData = false
					if cols == -1 {
						cols = len(fields)
					} else if len(fields) != cols {
						return nil, invalidf("csv: line %d has %d fields, the first row %d: rows must have equal lengths", lineNo, len(fields), cols)
					}
					if len(data)+len(fields) > MaxElements {
						return nil, invalidf("csv: more than %d numbers", MaxElements)
					}
					for j, f := range fields {
						x, err := parseField(f)
						if err != nil {
							return nil, invalidf("csv: line %d, field %d: %v", lineNo, j+1, err)
						}
						data = append(data, x)
					}
					rows++
				}
			}
		}
		if err == io.EOF {
			break
		}
	}
	if rows == 0 {
		return nil, invalidf("csv: no rows of numbers")
	}
	return New([]int{rows, cols}, data)
}

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
