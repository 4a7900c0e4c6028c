// Package atomicfile writes files that are never seen half-written.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFile replaces path with data so that a crash or a kill at any moment leaves either the
// old or the new content: it writes a temporary file in the same directory, syncs it, renames
// it over path and syncs the directory. An existing file keeps its permissions; a new one
// gets 0666 less the umask, as os.WriteFile gives. A symbolic link is followed, so the file
// it points to is replaced rather than the link.
func WriteFile(path string, data []byte) error {
	// Replace the file a symbolic link points to, not the link.
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	var perm fs.FileMode
	if fi, err := os.Stat(path); err == nil {
		switch {
		case fi.IsDir():
			return fmt.Errorf("is a directory")
		case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
			// /dev/null, a terminal or a pipe: nothing to replace atomically.
			return os.WriteFile(path, data, 0)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("not a regular file")
		}
		perm = fi.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var (
		tmp *os.File
		err error
	)
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 36)+".tmp")
		// O_EXCL with 0666 lets the umask decide a new file's mode, as os.WriteFile does.
		tmp, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if perm != 0 {
		if err := tmp.Chmod(perm); err != nil {
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	// Make the rename durable; not every system can sync a directory, hence best effort.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
