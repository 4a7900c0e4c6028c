//go:build unix

package userfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without waiting for a named pipe's writer. O_NONBLOCK
// changes nothing for a regular file.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
