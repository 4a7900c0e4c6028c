package arrays

import (
	"errors"
	"io"
	"strings"
)

// The zip archives read here (.npz and torch.save files) are read through archive/zip, which
// compares the CRC-32 of an entry's data with the zip directory's (or its data descriptor's)
// when a read reaches the entry's end, and only then: a reader that stops at the last byte
// it needs must finish the entry for a corrupted one to be caught, as numpy.load and
// torch.load catch it.

// finishEntry reads the rest of a zip entry opened with zip.File.Open, so that its checksum
// is checked; what is read is discarded, a few KiB at a time.
func finishEntry(rc io.Reader) error {
	_, err := io.Copy(io.Discard, rc)
	return err
}

// entryErr is an error met reading a zip entry's data, as ErrInvalid: archive/zip's
// (checksum error, unexpected EOF) without their "zip: " prefix, and inflate's (corrupt
// data), which carry no sentinel.
func entryErr(err error) error {
	if errors.Is(err, ErrInvalid) {
		return err
	}
	return invalidf("%s", trimZip(err))
}

// trimZip drops the "zip: " prefix of archive/zip's errors.
func trimZip(err error) string {
	return strings.TrimPrefix(err.Error(), "zip: ")
}
