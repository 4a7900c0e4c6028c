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

// diskVersion is the version of a session file a session was loaded from or saved as.
type diskVersion struct {
	mu   sync.Mutex
	path string      // absolute; "" when the session has no file yet
	info fs.FileInfo // the file's identity, size and modification time then
	sum  [sha256.Size]byte
}

func (d *diskVersion) set(path string, info fs.FileInfo, data []byte) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.path, d.info, d.sum = abs, info, sha256.Sum256(data)
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
	d := s.disk
	if d == nil {
		return nil
	}
	d.mu.Lock()
	known, info, sum := d.path, d.info, d.sum
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
	if os.SameFile(info, now) && info.Size() == now.Size() && info.ModTime().Equal(now.ModTime()) {
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
