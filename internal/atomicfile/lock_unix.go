//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// errNoLocks says that the system or file system has no flock.
var errNoLocks = errors.New("no file locks")

// oNoFollow makes an open fail on a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// errWouldBlock says that another holder has the lock, to a lock that does not wait.
var errWouldBlock = syscall.EWOULDBLOCK

// lockFile takes an exclusive flock on f, waiting for it when wait is set.
func lockFile(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EINVAL):
			return errNoLocks
		}
		return err
	}
}

// openNoFollow opens name for reading without following a symbolic link or blocking on a
// pipe.
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// matchGroup gives the temporary file tmp the group of the file it replaces, where the system
// allows (the owner may give a file to a group they belong to). Best effort.
func matchGroup(tmp *os.File, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if ti, err := tmp.Stat(); err == nil {
		if have, ok := ti.Sys().(*syscall.Stat_t); ok && have.Gid == want.Gid {
			return
		}
	}
	_ = tmp.Chown(-1, int(want.Gid))
}
