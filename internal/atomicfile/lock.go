package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Locked is a held Lock.
type Locked struct {
	f *os.File
}

// Lock serialises the writers of path that read, modify and write it: it waits until no
// other Lock of path (in any process) is held, and holds it until Unlock. The lock is an
// advisory flock on ".NAME.lock" next to path (with path's mode), created for the purpose and removed by Unlock
// (a killed holder leaves an empty one, reused by the next Lock); readers need none, since
// WriteFile never shows a half-written file. Where the system has no flock, Lock serialises
// nothing. A process must not hold two Locks of one path.
func Lock(path string) (*Locked, error) { return lock(path, true) }

// ErrLocked is the error of TryLock when another holder has the lock.
var ErrLocked = errors.New("locked by another process")

// TryLock is Lock without the wait: it returns ErrLocked when the lock is held, in this
// process or another. A holder that lives as long as its process marks a file as in use
// (a running workbench's autosave); the lock goes when the process dies, however it dies.
func TryLock(path string) (*Locked, error) { return lock(path, false) }

func lock(path string, wait bool) (*Locked, error) {
	target, err := Target(path)
	if err != nil {
		return nil, err
	}
	dir, base := split(target)
	name := dir + string(os.PathSeparator) + "." + base + ".lock"
	perm := os.FileMode(0o666) // empty, but no more open than the file itself
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm() | 0o400
	}
	for range 100 {
		f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE, perm)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, MissingDirError{filepath.Clean(dir)}
		}
		if err != nil {
			return nil, fmt.Errorf("locking: %w", err)
		}
		if err := lockFile(f, wait); err != nil {
			if errors.Is(err, errNoLocks) {
				return &Locked{f: f}, nil
			}
			f.Close()
			if errors.Is(err, errWouldBlock) {
				return nil, ErrLocked
			}
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		// The previous holder removes the file as it unlocks: a lock on a removed file
		// serialises nothing, so take the one now in place.
		fi, err1 := f.Stat()
		li, err2 := os.Lstat(name)
		if err1 == nil && err2 == nil && os.SameFile(fi, li) {
			return &Locked{f: f}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("locking %s: the lock file keeps changing", name)
}

// Unlock releases the lock.
func (l *Locked) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	// Remove before unlocking, so that a writer waiting on this file sees it gone and
	// retries on the next one.
	os.Remove(l.f.Name())
	err := l.f.Close()
	l.f = nil
	return err
}
