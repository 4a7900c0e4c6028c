package sessions

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
)

// diskVersion is the version of a session file a session was loaded from or saved as: the
// one a save over that file must find there, or it would lose another writer's work.
type diskVersion struct {
	mu   sync.Mutex
	path string      // absolute; "" when the session has no file yet
	info fs.FileInfo // the file's identity, size and modification time then; nil: compare contents
	sum  [sha256.Size]byte
	// unknown is set when the version is not known (an autosave written without it): any
	// file at path counts as changed.
	unknown bool
}

func (d *diskVersion) set(path string, info fs.FileInfo, data []byte) {
	d.record(path, info, sha256.Sum256(data), false)
}

// record records the version of path whose content has the SHA-256 sum (info may be nil: the
// content is then compared whatever the file's stamps say), or, when unknown, that the
// version is not known.
func (d *diskVersion) record(path string, info fs.FileInfo, sum [sha256.Size]byte, unknown bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.path, d.info, d.sum, d.unknown = abs, info, sum, unknown
}

// follow records the version of path that an autosave's work follows: the content whose
// sum is base, or, when base is nil (not recorded), a version not known, so that a save over
// any file there asks first.
func (d *diskVersion) follow(path string, base *[sha256.Size]byte) {
	if base == nil {
		d.record(path, nil, [sha256.Size]byte{}, true)
		return
	}
	d.record(path, nil, *base, false)
}

// sumOf returns the SHA-256 sum of the version of abs recorded; ok is false when none is.
func (d *diskVersion) sumOf(abs string) (sum [sha256.Size]byte, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sum, d.path != "" && d.path == abs && !d.unknown
}

// ChangedError is the error of a save over a session file that changed on disk since the
// session was loaded from it or saved to it: another program, or another ssmlab, saved it in
// between, and saving would lose that work. SaveOver saves anyway.
type ChangedError struct {
	Path     string
	Modified time.Time // when the file on disk was last modified; zero if it was removed
	Removed  bool      // the file is gone
}

func (e *ChangedError) Error() string {
	if e.Removed {
		return fmt.Sprintf("%s was removed since this session was opened or saved", e.Path)
	}
	return fmt.Sprintf("%s was changed on disk at %s, since this session was opened or saved: saving would lose those changes", e.Path, e.Modified.Format("15:04:05"))
}

// CheckDisk returns a *ChangedError when path is the session's file (the one it was loaded
// from or last saved to) and that file changed on disk since; nil otherwise. It reads the
// file only when its size, modification time or identity changed, to compare contents.
func (s *Session) CheckDisk(path string) error {
	if s.disk == nil {
		return nil
	}
	return s.disk.check(path)
}

// check is CheckDisk against the version d records.
func (d *diskVersion) check(path string) error {
	d.mu.Lock()
	known, info, sum, unknown := d.path, d.info, d.sum, d.unknown
	d.mu.Unlock()
	abs, err := filepath.Abs(path)
	if known == "" || err != nil || abs != known {
		return nil
	}
	now, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return &ChangedError{Path: path, Removed: true}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	if unknown {
		return &ChangedError{Path: path, Modified: now.ModTime()}
	}
	if info != nil && os.SameFile(info, now) && info.Size() == now.Size() && info.ModTime().Equal(now.ModTime()) {
		return nil
	}
	data, err := userfile.ReadFile(abs)
	if err == nil {
		if got := sha256.Sum256(data); bytes.Equal(got[:], sum[:]) {
			return nil // touched, or rewritten with the same content
		}
	}
	return &ChangedError{Path: path, Modified: now.ModTime()}
}

// Update changes the session file at path as one step that no other writer interleaves
// with: under the file's lock (atomicfile.Lock, which Save and every Update take too) it
// loads the session (a new one when the file does not exist), calls change, and saves the
// result unless change returns an error, which Update then returns.
func Update(path string, change func(*Session) error) error {
	l, err := atomicfile.Lock(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	defer l.Unlock()
	s := New()
	if _, err := os.Lstat(path); err == nil {
		if s, err = Load(path); err != nil {
			return err
		}
	}
	if err := change(s); err != nil {
		return err
	}
	return s.save(path)
}
