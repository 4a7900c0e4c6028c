package arrays

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// readCSVLines is the line-at-a-time CSV reader ReadCSV replaced (it held each line, split
// into fields, and grew its data by appending, up to 12 times the numbers it read): the
// reference of FuzzCSVAgainstLines.
func readCSVLines(r io.Reader) (*Array, error) {
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

// FuzzCSVAgainstLines: the streaming reader, in one pass (ReadCSV) and in two (readCSVAt),
// accepts exactly what the line reader accepted, with the same numbers.
func FuzzCSVAgainstLines(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "# c\nx y\n1 2\n", "1,,2\n", "nan\n", "1e400\n", `"1","2"` + "\r\n", "a b,c\n1,2\n", "time (s), value\n0, 1\n", "1 , 2\n3,4", "1 2, 3\n", "5\n1,2\n", " \t1\t2\r\n3 4\n", "x\n", "1,2,\n", ",1\n", "\"a\" \"b\"\n1 2\n", "1\n\n#c\n2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := readCSVLines(bytes.NewReader(data))
		got, gerr := ReadCSV(bytes.NewReader(data))
		at, aerr := readCSVAt(bytes.NewReader(data), int64(len(data)))
		if (werr == nil) != (gerr == nil) || (werr == nil) != (aerr == nil) {
			t.Fatalf("%q: line reader %v, ReadCSV %v, readCSVAt %v", data, werr, gerr, aerr)
		}
		if werr == nil && (!got.Equal(want) || !at.Equal(want)) {
			t.Fatalf("%q: %v %v, want %v %v", data, got.Shape, got.Data, want.Shape, want.Data)
		}
		if gerr != nil && !errors.Is(gerr, ErrInvalid) {
			t.Fatalf("%q: %v is not ErrInvalid", data, gerr)
		}
	})
}
