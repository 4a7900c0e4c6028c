package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Locked is a held Lock.
type Locked struct {
	f *os.File
}

// Lock serialises the writers of path that read, modify and write it: it waits until no
// other Lock of path (in any process) is held, and holds it until Unlock. The lock is an
// advisory flock on ".NAME.lock" next to path (with path's mode, or for a path yet to be
// made no more open than its directory: 0600 in a private one), created for the purpose and
// removed by Unlock (one left more open, by a killed holder, is tightened as it is taken); its holder writes its process ID in it, for TryLock's error to name (a
// killed holder leaves the file, whose flock the kernel released, reused by the next Lock).
// Readers need none, since WriteFile never shows a half-written file. Where the system has no
// flock, Lock serialises nothing. A process must not hold two Locks of one path.
func Lock(path string) (*Locked, error) { return lock(path, true) }

// ErrLocked is the error of TryLock when another holder has the lock.
var ErrLocked = errors.New("locked by another process")

// HeldError is TryLock's error when another holder has the lock: it is ErrLocked, and names
// the holder's process ID where the lock file holds it (0 where it does not: a lock file the
// holder could not write, or the moment between its flock and the write).
type HeldError struct{ PID int }

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s (pid %d)", ErrLocked, e.PID)
	}
	return ErrLocked.Error()
}

func (e *HeldError) Unwrap() error { return ErrLocked }

// TryLock is Lock without the wait: it returns a *HeldError (ErrLocked) when the lock is
// held, in this process or another. A holder that lives as long as its process marks a file
// as in use (a running workbench's autosave, a distillation writing its output); the lock
// goes when the process dies, however it dies.
func TryLock(path string) (*Locked, error) { return lock(path, false) }

// lockRetries bounds how often lock opens the lock file again because the holder it waited
// for removed it (each time another holder finished): 100 ran out with six goroutines taking
// the lock 20 times each on a loaded machine (TestLockSerialises), where the bound is only a
// guard against a file replaced without end.
const lockRetries = 1 << 16

func lock(path string, wait bool) (*Locked, error) {
	target, err := Target(path)
	if err != nil {
		return nil, err
	}
	dir, base := split(target)
	name := dir + string(os.PathSeparator) + "." + base + ".lock"
	// Empty, but no more open than the file itself, or than its directory lets it be where
	// there is no file yet (an autosave's, in a directory only its owner can enter, is
	// private as the autosave will be).
	perm := os.FileMode(0o666)
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm() | 0o400
	} else if di, err := os.Stat(dir); err == nil {
		perm &= di.Mode().Perm() | 0o600
	}
	for range lockRetries {
		// Opened for writing, to hold the holder's process ID, where it can be without
		// following a link (a link planted in a shared directory must not have the file it
		// points to cut short); else read-only, as a lock needs no more.
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|oNoFollow, perm)
		writable := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			f, err = os.OpenFile(name, os.O_RDONLY|os.O_CREATE, perm)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, missingDir(dir)
		}
		if err != nil {
			if _, serr := os.Lstat(name); errors.Is(serr, fs.ErrNotExist) {
				return nil, noNewFile(dir, err) // the lock file cannot be made: the directory's doing
			}
			return nil, fmt.Errorf("locking: %w", err)
		}
		if err := lockFile(f, wait); err != nil {
			if errors.Is(err, errNoLocks) {
				return &Locked{f: f}, nil
			}
			if errors.Is(err, errWouldBlock) {
				held := &HeldError{PID: holder(f)}
				f.Close()
				return nil, held
			}
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		// The previous holder removes the file as it unlocks: a lock on a removed file
		// serialises nothing, so take the one now in place.
		fi, err1 := f.Stat()
		li, err2 := os.Lstat(name)
		if err1 == nil && err2 == nil && os.SameFile(fi, li) {
			if writable && fi.Mode().IsRegular() {
				// best effort: without it, TryLock's error names no process
				if f.Truncate(0) == nil {
					_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
				}
				if open := fi.Mode().Perm(); open&^perm != 0 {
					_ = f.Chmod(open & perm) // best effort, as above
				}
			}
			return &Locked{f: f}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("locking %s: the lock file keeps changing", name)
}

// holder is the process ID the lock file f holds, 0 when it holds none.
func holder(f *os.File) int {
	b := make([]byte, 24)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
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
