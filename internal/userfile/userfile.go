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

func readAll(r io.Reader, limit int64) ([]byte, error) { return readSized(r, limit, 0) }

// readSized is readAll into a buffer of size bytes (and one more), size being what the file
// is expected to hold: io.ReadAll grows its buffer by half again each time, and reading a
// 44 MB session file that way allocated 105 MB.
func readSized(r io.Reader, limit, size int64) ([]byte, error) {
	// One allocation of the size the file had when opened, and a byte more to see that it
	// has not grown since (bytes.Buffer's growth allocated twice the file under -race).
	r = io.LimitReader(r, limit+1)
	data := make([]byte, 0, max(min(size, limit), 0)+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew while read
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, PathErr(err)
		}
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// ReadFile reads the regular file at path whole, at most MaxSize bytes (a larger one is
// refused before it is read; anything but a regular file is refused as Open does). Errors
// are prefixed with the path.
func ReadFile(path string) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > MaxSize {
		return nil, fmt.Errorf("%s: %w", path, &TooLargeError{Limit: MaxSize})
	}
	data, err := readSized(f, MaxSize, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// Head returns up to n bytes from the start of the regular file at path (to recognise its
// format), refusing what Open refuses.
func Head(path string, n int) ([]byte, error) {
	f, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("%s: %w", path, PathErr(err))
	}
	return head[:k], nil
}

// NotRegularError is the error for a path that names something other than a regular file:
// a directory, a named pipe (whose open would wait for a writer, and whose reading would
// never end), a device (/dev/zero never ends either), a socket.
type NotRegularError struct {
	Kind string // "a directory", "a named pipe (FIFO)", "a device", …
}

func (e *NotRegularError) Error() string {
	msg := "not a regular file: " + e.Kind
	if e.Kind == kindPipe {
		msg += " (pipe data to standard input with FILE -)"
	}
	return msg
}

const kindPipe = "a named pipe (FIFO)"

// NotRegular is the *NotRegularError of a file of mode m: for a writer that refuses a
// directory as Open does.
func NotRegular(m fs.FileMode) *NotRegularError { return &NotRegularError{Kind: kindOf(m)} }

// kindOf names a file type for NotRegularError.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return kindPipe
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// Open opens the regular file at path for reading in place (array files, read by offset) and
// returns its size. Anything else is refused with a *NotRegularError before a byte is read,
// and without waiting: the file is opened non-blocking (a named pipe without a writer would
// block an ordinary open forever) and its type checked on the open descriptor, so that no
// swap between a check and the open can slip a pipe in. Errors are prefixed with the path;
// the caller closes the file.
func Open(path string) (*os.File, int64, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, PathErr(err))
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Kind: kindOf(fi.Mode())}
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
