//go:build unix

package atomicfile

import "golang.org/x/sys/unix"

// accessWrite is access(2) for writing: an error wrapping fs.ErrPermission (EACCES) when the
// caller may not write path. A variable, so that tests stand in for a user's answer where
// they run as root.
var accessWrite = func(path string) error { return unix.Access(path, unix.W_OK) }
