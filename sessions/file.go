package sessions

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Extension is the usual extension of a session file.
const Extension = ".ssmlab"

// BackupSuffix is appended to a session file's name to name the copy of its previous
// version that Save keeps.
const BackupSuffix = ".bak"

// saveHook, when set (by tests), is called at each stage of a save: "encoded",
// "backed-up" and "written".
var saveHook func(stage string)

func hook(stage string) {
	if saveHook != nil {
		saveHook(stage)
	}
}

// Load reads the session file at path and the kernels of its linked targets (a linked
// target whose source cannot be read keeps nil Kernels and says why in Err). A linked source
// outside the session file's directory is not read: its Err is an *OutsideError, and
// LoadWith or ReadOutside read it when the user allows. Errors are prefixed with the path.
func Load(path string) (*Session, error) { return LoadWith(path, LoadOptions{}) }

// LoadOptions are the choices of LoadWith.
type LoadOptions struct {
	// AllowOutside reads linked targets' sources wherever they are, not only under the
	// session file's directory.
	AllowOutside bool
}

// LoadWith is Load with options.
func LoadWith(path string, o LoadOptions) (*Session, error) {
	// Stat before reading: should the file change in between, the stamp is older than the
	// content, and a save finds a change where there is none rather than the other way.
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	s.disk.set(path, info, data)
	s.loadLinked(filepath.Dir(path), o.AllowOutside)
	return s, nil
}

// readKernels reads one array from an array file.
func readKernels(path, tensor string) (*arrays.Array, error) {
	af, err := arrays.Open(path)
	if err != nil {
		return nil, err
	}
	defer af.Close()
	a, err := af.Read(tensor)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Save writes the session to path so that a crash or a kill at any moment leaves the old or
// the new file, never a broken one: the new file is written to a temporary file in the same
// directory, synced and renamed over path. The previous version, if any, is kept as
// path+BackupSuffix (replaced atomically too). On success the session is clean, its Path is
// path, and its autosave file, no longer needed, is removed.
//
// Writers of one session file are serialised: Save holds the file's lock (atomicfile.Lock)
// as Update does. When path is the session's own file (the one it was loaded from or last
// saved to) and that file changed on disk since, Save writes nothing and returns a
// *ChangedError; SaveOver, for when the user chose to overwrite, saves without that check.
func (s *Session) Save(path string) error { return s.lockedSave(path, true) }

// SaveOver is Save without the check that the session's file is unchanged on disk.
func (s *Session) SaveOver(path string) error { return s.lockedSave(path, false) }

func (s *Session) lockedSave(path string, check bool) error {
	l, err := atomicfile.Lock(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	defer l.Unlock()
	if check {
		if err := s.CheckDisk(path); err != nil {
			return err
		}
	}
	return s.save(path)
}

// save writes the session to path; the caller holds path's lock.
func (s *Session) save(path string) error {
	data, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	hook("encoded")
	real, err := writeWithBackup(path, data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	hook("written")
	if info, err := os.Stat(real); err == nil {
		s.disk.set(path, info, data)
	}
	s.auto.mu.Lock()
	s.auto.release(true) // the work is in the file now
	s.auto.mu.Unlock()
	s.MarkSaved(path, s.gen)
	return nil
}

// writeWithBackup keeps the current file at path, if any, as its backup, then replaces it
// with data. It returns the file it wrote: path, or the file a link at path names.
func writeWithBackup(path string, data []byte) (string, error) {
	real, err := atomicfile.Target(path)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(real); err == nil {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("not a regular file")
		}
		// A file the write would refuse (read-only, atomicfile.ErrReadOnly) is refused
		// before its backup replaces the previous one.
		if err := atomicfile.Check(real); err != nil {
			return "", err
		}
		// The backup is made once the new file is complete, just before it replaces the
		// old one: a write that fails (a full disk) keeps the backup there was.
		return real, atomicfile.WriteFileBefore(real, data, func() error {
			if err := atomicfile.Backup(real, real+BackupSuffix); err != nil {
				return fmt.Errorf("keeping the previous version as %s: %w", real+BackupSuffix, userfile.PathErr(err))
			}
			hook("backed-up")
			return nil
		})
	}
	return real, atomicfile.WriteFile(real, data)
}

// IsSession reports whether the file at path looks like a session file: a JSON object whose
// first key is "format" with the value FormatName, as Marshal writes it, or whose name ends
// in Extension. It reads at most a few hundred bytes.
func IsSession(path string) bool {
	if filepath.Ext(path) == Extension {
		return true
	}
	head, err := userfile.Head(path, 256)
	return err == nil && sniffSession(head)
}

// sniffSession reports whether head starts like a session file: {"format": "ssmlab-session".
func sniffSession(head []byte) bool {
	rest := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n")
	for _, tok := range []string{"{", `"format"`, ":", strconv.Quote(FormatName)} {
		if !bytes.HasPrefix(rest, []byte(tok)) {
			return false
		}
		rest = bytes.TrimLeft(rest[len(tok):], " \t\r\n")
	}
	return true
}
