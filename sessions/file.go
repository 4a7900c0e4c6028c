package sessions

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
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
// target whose source cannot be read keeps nil Kernels and says why in Err). Errors are
// prefixed with the path.
func Load(path string) (*Session, error) {
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	s.loadLinked(filepath.Dir(path))
	return s, nil
}

// loadLinked reads the kernels of linked targets, relative paths from dir.
func (s *Session) loadLinked(dir string) {
	for i := range s.Targets {
		t := &s.Targets[i]
		if !t.Linked {
			continue
		}
		p := t.Source.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		a, err := readKernels(p, t.Source.Tensor)
		if err == nil {
			err = checkKernels(a)
		}
		if err != nil {
			t.Kernels, t.Err = nil, err
			continue
		}
		t.Kernels, t.Err = a, nil
	}
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
func (s *Session) Save(path string) error {
	data, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	hook("encoded")
	if err := writeWithBackup(path, data); err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	hook("written")
	if s.autosave != "" {
		_ = os.Remove(s.autosave) // best effort: a leftover is offered for recovery, no harm
	}
	s.MarkSaved(path, s.gen)
	return nil
}

// writeWithBackup keeps the current file at path, if any, as its backup, then replaces it
// with data.
func writeWithBackup(path string, data []byte) error {
	real := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		real = p
	}
	if fi, err := os.Stat(real); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("not a regular file")
		}
		if err := keepBackup(real); err != nil {
			return fmt.Errorf("keeping the previous version as %s: %w", real+BackupSuffix, userfile.PathErr(err))
		}
		hook("backed-up")
	}
	return atomicfile.WriteFile(path, data)
}

// keepBackup makes path+BackupSuffix a copy of path, atomically: a hard link (or, where the
// file system has none, a synced copy) under a temporary name is renamed over the backup.
func keepBackup(path string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp := filepath.Join(dir, "."+base+BackupSuffix+"."+strconv.FormatUint(uint64(rand.Uint32()), 36)+".tmp")
	if err := os.Link(path, tmp); err != nil {
		if err := copyFile(path, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path+BackupSuffix); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// IsSession reports whether the file at path looks like a session file: a JSON object whose
// first key is "format" with the value FormatName, as Marshal writes it, or whose name ends
// in Extension. It reads at most a few hundred bytes.
func IsSession(path string) bool {
	if filepath.Ext(path) == Extension {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	return sniffSession(head[:n])
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
