// Package atomicfile replaces files so that they are never seen half-written, never readable
// by more people than the file they replace, and leave no temporary file behind.
//
// # Invariants
//
//   - A crash or a kill at any moment of WriteFile or Backup leaves the old or the new file:
//     the new content goes to a temporary file in the same directory, which is synced and
//     renamed over the target, and the directory is synced.
//   - A temporary file is created with the mode the result will have, or 0600 when the
//     target exists (its mode, and group where the system allows, are set once the content
//     is complete), never 0666 less the umask and chmod-ed afterwards.
//   - Temporary files are named ".NAME.RANDOM.tmp" and locked (flock) while written. Every
//     failure removes its own; a kill leaves one that nobody holds, which the next write of
//     NAME removes.
//   - The target is replaced, not written through, except for devices and pipes (/dev/null,
//     a terminal, /dev/stdout), which have nothing to replace and are written directly.
//   - An existing target its writer may not write (chmod 444, another user's file in a shared
//     directory) is refused with ErrReadOnly, as cp and a shell's > refuse it: the rename
//     needs only the directory's write permission and would replace it anyway. The test is
//     access(2)'s, so root, whom access(2) lets write any file, replaces a read-only file as
//     cp does. Backup's copy is the package's own file and is replaced whatever its mode.
//   - A symbolic link is followed only to a file in its own directory (existing or not), so
//     that the rename stays in the directory the user named; a link into another directory
//     is refused with ErrLinkElsewhere (a planted link cannot redirect a write).
//
// Lock serialises the writers of one file that read, modify and write it.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLinkElsewhere is the error for a target that is a symbolic link into another directory,
// or to a missing file.
var ErrLinkElsewhere = errors.New("a symbolic link out of its directory")

// ErrReadOnly is the error, wrapped in a *fs.PathError naming the file, for an existing
// target the caller may not write (see the package's invariants).
var ErrReadOnly = fmt.Errorf("the file is read-only to this user (%w), so it is not replaced", fs.ErrPermission)

// testHook, when set (by tests), is called with the temporary file's name once it is
// created and locked, and again once its content is written.
var testHook func(stage, tmp string)

// WriteFile replaces path with data (see the package's invariants). An existing file keeps
// its permissions; a new one gets 0666 less the umask, as os.WriteFile gives.
func WriteFile(path string, data []byte) error {
	return replace(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteFileBefore is WriteFile that calls before once the new content is complete and synced,
// just before it replaces path (for a device or a pipe, before writing): a session's save
// keeps the old file as its backup there, so that a write that fails (a full disk) changes
// neither the file nor its backup. An error from before leaves path unchanged and is returned.
func WriteFileBefore(path string, data []byte, before func() error) error {
	return replaceBefore(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}, before)
}

// WriteWith replaces path with what fill writes (as WriteFile does), for content written
// piece by piece rather than held in memory whole (a checkpoint of many gigabytes). When fill
// fails, path is unchanged and its error is returned.
func WriteWith(path string, fill func(w io.Writer) error) error {
	return WriteWithBefore(path, fill, nil)
}

// WriteWithBefore is WriteWith that calls before as WriteFileBefore does: once the new
// content is complete and synced, just before it replaces path (a checkpoint's distillation
// writes its manifest there, so that a manifest that cannot be written leaves the checkpoint
// as it was).
func WriteWithBefore(path string, fill func(w io.Writer) error, before func() error) error {
	return replaceBefore(path, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	}, before)
}

// Backup makes backup an exact copy of the regular file path, atomically: a hard link under a
// temporary name renamed over backup (a synced copy where the file system has no hard links).
// Both names must be in one directory. Nothing changes when backup already is path.
func Backup(path, backup string) error {
	src, err := os.Stat(path)
	if err != nil {
		return err
	}
	if dst, err := os.Stat(backup); err == nil && os.SameFile(src, dst) {
		// rename(2) between two links to one file does nothing and would leave the
		// temporary link behind: the backup is already what it should be.
		return nil
	}
	dir, base := split(backup)
	removeStale(dir, base)
	tmp, err := linkTemp(path, dir, base)
	if errors.Is(err, errNoLinks) {
		return copyOver(path, backup, src.Mode().Perm())
	}
	if err != nil {
		return err
	}
	defer tmp.Close()
	if err := os.Rename(tmp.Name(), backup); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// Should backup have become another link to path meanwhile, the rename did nothing.
	os.Remove(tmp.Name())
	syncDir(dir)
	return nil
}

// copyOver replaces backup with a copy of path.
func copyOver(path, backup string, perm fs.FileMode) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	return replaceRegular(backup, perm, true, func(f *os.File) error {
		_, err := io.Copy(f, in)
		return err
	}, nil)
}

// Target returns the file WriteFile(path) replaces: path itself, or the file a symbolic link
// at path names when it is in the link's directory (it may not exist yet). A link into
// another directory is an error wrapping ErrLinkElsewhere.
func Target(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil // a missing file is created; other errors come up when writing
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		// A link to a file yet to be made: followed within its directory too.
		dest, _ := os.Readlink(path)
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) && sameDir(path, dest) {
			return dest, nil
		}
		return "", fmt.Errorf("%w: it points to %s, which does not exist in its directory", ErrLinkElsewhere, dest)
	}
	rfi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !rfi.Mode().IsRegular() {
		return real, nil // /dev/stdout and the like: written directly
	}
	if !sameDir(path, real) {
		return "", fmt.Errorf("%w: it points into another directory, to %s; name that file itself to write it", ErrLinkElsewhere, real)
	}
	return real, nil
}

// sameDir reports whether the files a and b are in one directory.
func sameDir(a, b string) bool {
	here, err1 := os.Stat(filepath.Dir(a))
	there, err2 := os.Stat(filepath.Dir(b))
	return err1 == nil && err2 == nil && os.SameFile(here, there)
}

// Check reports, without changing anything, whether WriteFile(path) can be expected to
// succeed: it returns the error WriteFile would give for a target that is a directory, not a
// regular file or a link elsewhere, a read-only file, or in a directory where no temporary
// file can be created (missing, read-only). Commands that write several files check them all before writing any,
// so that a bad last path does not leave the first ones written.
func Check(path string) error {
	path, fi, err := target(path)
	if err != nil || (fi != nil && !fi.Mode().IsRegular()) {
		return err // a device or a pipe is written directly: nothing to try
	}
	dir, base := split(path)
	tmp, err := createTemp(dir, base, 0o600)
	if err != nil {
		return err
	}
	os.Remove(tmp.Name())
	tmp.Close() // after the removal: the lock marks a live temporary file
	return nil
}

// target resolves path as Target does and returns the file's information, nil when it does
// not exist yet; a directory, a file that is neither regular nor a device or pipe, and a
// regular file the caller may not write (ErrReadOnly) are errors.
func target(path string) (string, fs.FileInfo, error) {
	path, err := Target(path)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil, nil
	case err != nil:
		return "", nil, err
	case fi.IsDir():
		return "", nil, errors.New("is a directory")
	case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		return path, fi, nil // opening it for writing checks the permission
	case fi.Mode().IsRegular():
		if errors.Is(accessWrite(path), fs.ErrPermission) {
			return "", nil, &fs.PathError{Op: "replace", Path: path, Err: ErrReadOnly}
		}
		return path, fi, nil
	}
	return "", nil, errors.New("not a regular file")
}

// replace writes path through fill, as WriteFile describes.
func replace(path string, fill func(*os.File) error) error {
	return replaceBefore(path, fill, nil)
}

// replaceBefore is replace that calls before, when not nil, just before the rename.
func replaceBefore(path string, fill func(*os.File) error, before func() error) error {
	path, fi, err := target(path)
	switch {
	case err != nil:
		return err
	case fi == nil:
		return replaceRegular(path, 0o666, false, fill, before)
	case !fi.Mode().IsRegular():
		// /dev/null, a terminal or a pipe: nothing to replace atomically.
		if before != nil {
			if err := before(); err != nil {
				return err
			}
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := fill(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return replaceRegular(path, fi.Mode().Perm(), true, fill, before)
}

// replaceRegular writes a temporary file through fill and renames it over path. When exists,
// the temporary file is private until complete and then gets perm (and path's group);
// otherwise it is created with perm less the umask, the mode the new file keeps.
func replaceRegular(path string, perm fs.FileMode, exists bool, fill func(*os.File) error, before func() error) error {
	dir, base := split(path)
	removeStale(dir, base)
	createPerm := perm
	if exists {
		createPerm = 0o600
	}
	tmp, err := createTemp(dir, base, createPerm)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp.Name())
		}
		tmp.Close() // after the rename or removal: the lock marks a live temporary file
	}()
	if testHook != nil {
		testHook("created", tmp.Name())
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if testHook != nil {
		testHook("written", tmp.Name())
	}
	if exists {
		matchGroup(tmp, path)
		if err := tmp.Chmod(perm); err != nil {
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	syncDir(dir)
	return nil
}

func split(path string) (dir, base string) {
	dir, base = filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return dir, base
}

// syncDir makes a rename durable; not every system can sync a directory, hence best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// tempName returns a fresh temporary name for base in dir.
func tempName(dir, base string) string {
	return filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
}

// isTempOf reports whether name is a temporary name tempName gives for base.
func isTempOf(name, base string) bool {
	mid, ok := strings.CutPrefix(name, "."+base+".")
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, ".tmp")
	if !ok || mid == "" || len(mid) > 13 {
		return false
	}
	for _, c := range mid {
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// MissingDirError is the error of a path whose directory does not exist (the temporary
// file's name would only say "no such file or directory").
type MissingDirError struct{ Dir string }

func (e MissingDirError) Error() string { return "the directory " + e.Dir + " does not exist" }
func (e MissingDirError) Unwrap() error { return fs.ErrNotExist }

// missingDir is the error of creating a file in dir that said "no such file or directory": a
// MissingDirError, unless dir is there and takes no new files (/proc), which it says.
func missingDir(dir string) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot create a file in the directory %s: it takes no new files", dir)
	}
	return MissingDirError{dir}
}

// noNewFile is the error of creating a new file in dir: where the directory's permissions
// refuse it, it names the directory, since "FILE: permission denied" reads as FILE's own
// (which may well be writable) once a caller drops the temporary file's name.
func noNewFile(dir string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("the directory %s is read-only to this user (%w): a file in it is replaced by a new one written beside it", filepath.Clean(dir), fs.ErrPermission)
	}
	return err
}

// createTemp creates and locks a new temporary file for base in dir.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		f, err := os.OpenFile(tempName(dir, base), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, missingDir(dir)
		}
		if err != nil {
			return nil, noNewFile(dir, err)
		}
		if claim(f) {
			return f, nil
		}
	}
	return nil, errors.New("cannot create a temporary file")
}

// errNoLinks says that the file system has no hard links.
var errNoLinks = errors.New("no hard links")

// linkTemp links path to a new temporary name for base in dir, locked, and returns it open.
func linkTemp(path, dir, base string) (*os.File, error) {
	for range 100 {
		name := tempName(dir, base)
		err := os.Link(path, name)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err != nil {
			return nil, errNoLinks // EPERM, ENOTSUP, ...: a file system without hard links
		}
		f, err := os.Open(name)
		if err != nil {
			os.Remove(name)
			return nil, err
		}
		if claim(f) {
			return f, nil
		}
	}
	return nil, errors.New("cannot create a temporary link")
}

// claim locks a temporary file just created and reports whether it is still in place: a
// concurrent removeStale may have taken the unlocked file for a dead writer's and removed it.
func claim(f *os.File) bool {
	if err := lockFile(f, true); err != nil && !errors.Is(err, errNoLocks) {
		f.Close()
		return false
	}
	fi, err1 := f.Stat()
	li, err2 := os.Lstat(f.Name())
	if err1 != nil || err2 != nil || !os.SameFile(fi, li) {
		f.Close()
		return false
	}
	return true
}

// removeStale removes the temporary files for base in dir that no live writer holds: those
// left by writers that were killed. Best effort.
func removeStale(dir, base string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !isTempOf(e.Name(), base) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		f, err := openNoFollow(name)
		if err != nil {
			continue
		}
		if lockFile(f, false) == nil {
			fi, err1 := f.Stat()
			li, err2 := os.Lstat(name)
			if err1 == nil && err2 == nil && os.SameFile(fi, li) {
				os.Remove(name)
			}
		}
		f.Close()
	}
}
