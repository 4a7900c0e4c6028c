// Package userfile reads the files a user names: it is the one place that opens them and
// bounds what is read whole, for every front end and format (filter, session and target
// files, job specs, reports, standard input).
//
// Formats read streams (filters/filterfile on an io.Reader); this package turns a path into
// one. "-" for standard input is the front end's business: it passes its stdin to ReadAll.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxSize is the largest input read whole (256 MiB): a filter, session or target file, or
// standard input. One limit serves them all because each holds what the others hold: a
// session embeds filter documents and targets' kernels, so a filter or target that fits a
// session must fit a file of its own, and the other way round. At about 20 bytes a number in
// text it holds some 13 million numbers (a dense filter of order 3600, or 200 Hyena kernels
// of 65 536 samples); larger kernels belong in an array file (.npy, .safetensors), read in
// place, or in a session as a linked target.
const MaxSize = 256 << 20

// TooLargeError is the error for input longer than its limit.
type TooLargeError struct {
	Limit int64 // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the file is larger than the %d MiB limit", e.Limit>>20)
}

// ReadAll reads r to its end, at most MaxSize bytes: more is a *TooLargeError, found after
// reading one byte past the limit.
func ReadAll(r io.Reader) ([]byte, error) { return readAll(r, MaxSize) }

func readAll(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, PathErr(err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// ReadFile reads the file at path whole, at most MaxSize bytes (a regular file larger than
// that is refused before it is read). Errors are prefixed with the path.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, PathErr(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxSize {
		return nil, fmt.Errorf("%s: %w", path, &TooLargeError{Limit: MaxSize})
	}
	data, err := ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// Open opens the regular file at path for reading in place (array files, read by offset) and
// returns its size. Anything else (a directory, a pipe, a device) is refused. Errors are
// prefixed with the path; the caller closes the file.
func Open(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, PathErr(err))
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, PathErr(err))
	}
	return f, fi.Size(), nil
}

// PathErr drops the operation and path of an *fs.PathError, which a caller's prefix repeats:
// "open x.json: no such file or directory" becomes "no such file or directory".
func PathErr(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
