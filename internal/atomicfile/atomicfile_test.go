package atomicfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

func TestWriteFileReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := atomicfile.WriteFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(got) != "two" || fi.Mode().Perm() != 0o600 {
		t.Errorf("content %q, mode %v", got, fi.Mode().Perm())
	}
	if names := numtest.DirNames(t, dir); len(names) != 1 {
		t.Errorf("files left in the directory: %q, want only f.json", names)
	}
}

// TestTemporaryFileMode checks the temporary file's mode while it is written: never more
// open than the file it replaces (it was 0666 less the umask, then chmod-ed: a 0600 session's
// copy was world-readable while written), and for a new file the mode the file gets.
func TestTemporaryFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		name     string
		existing fs.FileMode // 0: no file yet
		want     fs.FileMode // the final mode
	}{
		{"private file", 0o600, 0o600},
		{"read-only file", 0o400, 0o400},
		{"group file", 0o640, 0o640},
		{"new file", 0, 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.ssmlab")
			if tc.existing != 0 {
				if err := os.WriteFile(path, []byte("old"), tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			if tc.existing&0o200 == 0 {
				// Only root replaces a read-only file (see TestReadOnlyTarget): stand in
				// its access(2), which lets it write any file.
				defer atomicfile.SetAccessWrite(func(string) error { return nil })()
			}
			var seen []fs.FileMode
			atomicfile.SetTestHook(func(_, tmp string) {
				fi, err := os.Stat(tmp)
				if err != nil {
					t.Errorf("temporary file: %v", err)
					return
				}
				seen = append(seen, fi.Mode().Perm())
			})
			defer atomicfile.SetTestHook(nil)
			if err := atomicfile.WriteFile(path, []byte("new")); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 2 {
				t.Fatalf("the hook saw %d stages, want 2", len(seen))
			}
			for _, m := range seen {
				if m&0o077&^tc.want != 0 { // others than the owner
					t.Errorf("the temporary file had mode %v while written; the file allows %v", m, tc.want)
				}
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != tc.want {
				t.Errorf("the file has mode %v, want %v", fi.Mode().Perm(), tc.want)
			}
		})
	}
}

func TestWriteFileFollowsSymlinkInItsDirectory(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := atomicfile.WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(target)
	fi, _ := os.Lstat(link)
	if string(got) != "new" || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("target %q; link still a link: %v", got, fi.Mode()&os.ModeSymlink != 0)
	}
}

// TestWriteFileRefusesLinkElsewhere: a link into another directory (planted, say, in a shared
// directory and pointing at the user's files) is not followed, and neither is a dangling one.
func TestWriteFileRefusesLinkElsewhere(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	secret := filepath.Join(elsewhere, "secret")
	if err := os.WriteFile(secret, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link, dangling := filepath.Join(dir, "out.json"), filepath.Join(dir, "dangling.json")
	if err := os.Symlink(secret, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "missing"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, dangling} {
		err := atomicfile.WriteFile(p, []byte("overwritten"))
		if !errors.Is(err, atomicfile.ErrLinkElsewhere) {
			t.Errorf("%s: err = %v, want ErrLinkElsewhere", filepath.Base(p), err)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "keep me" {
		t.Errorf("the link's target now holds %q", got)
	}
	if names := numtest.DirNames(t, elsewhere); len(names) != 1 {
		t.Errorf("files in the other directory: %q", names)
	}
	if names := numtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("files in the link's directory: %q, want the two links", names)
	}
}

// TestWriteFileDevices: a link to a device (/dev/stdout is one, into /proc) is written
// through, as is the device itself.
func TestWriteFileDevices(t *testing.T) {
	if err := atomicfile.WriteFile(os.DevNull, []byte("discarded")); err != nil {
		t.Errorf("writing to %s: %v", os.DevNull, err)
	}
	link := filepath.Join(t.TempDir(), "null")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := atomicfile.WriteFile(link, []byte("discarded")); err != nil {
		t.Errorf("writing through a link to %s: %v", os.DevNull, err)
	}
}

func TestWriteFileFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	// A directory in the way: the write must fail and leave nothing behind.
	path := filepath.Join(dir, "d")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("x")); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if names := numtest.DirNames(t, dir); len(names) != 1 {
		t.Errorf("entries left: %q, want only the directory", names)
	}
}

// TestStaleTemporaryFilesRemoved: a temporary file that no writer holds (left by a kill) is
// removed by the next write of its file; one a live writer holds, and other files, stay.
func TestStaleTemporaryFilesRemoved(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.ssmlab")
	stale := filepath.Join(dir, ".s.ssmlab.3kq9z1.tmp")
	live := filepath.Join(dir, ".s.ssmlab.x7.tmp")
	others := []string{".s.ssmlab.bak.3kq9z1.tmp", ".t.ssmlab.3kq9z1.tmp", ".s.ssmlab.NOT.tmp", "s.ssmlab.3kq9z1.tmp"}
	for _, n := range append([]string{stale, live}, others...) {
		if !filepath.IsAbs(n) {
			n = filepath.Join(dir, n)
		}
		if err := os.WriteFile(n, []byte("leftover"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Skip("no flock here:", err)
	}
	if err := atomicfile.WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live writer's temporary file was removed: %v", err)
	}
	for _, n := range others {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s, not a temporary file of s.ssmlab, was removed", n)
		}
	}
}

// TestBackupOfALink: when the backup already is a hard link to the file (a save killed after
// keeping its backup leaves them so), rename(2) between them does nothing; the temporary link
// must not stay behind.
func TestBackupOfALink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.ssmlab")
	if err := os.WriteFile(path, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, path+".bak"); err != nil {
		t.Skip("no hard links here:", err)
	}
	if err := atomicfile.Backup(path, path+".bak"); err != nil {
		t.Fatal(err)
	}
	if names := numtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("files left: %q, want the file and its backup", names)
	}
	// And an ordinary backup replaces the old one.
	if err := atomicfile.WriteFile(path, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Backup(path, path+".bak"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path + ".bak"); string(got) != "v2" {
		t.Errorf("backup holds %q, want v2", got)
	}
	if names := numtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("files left: %q, want the file and its backup", names)
	}
}

// TestLockSerialises: read-modify-write cycles under Lock lose no update; the lock file goes
// with the last Unlock.
func TestLockSerialises(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "count")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 6, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range rounds {
				l, err := atomicfile.Lock(path)
				if err != nil {
					t.Error(err)
					return
				}
				data, _ := os.ReadFile(path)
				if err := atomicfile.WriteFile(path, append(data, 'x')); err != nil {
					t.Error(err)
				}
				if err := l.Unlock(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	data, _ := os.ReadFile(path)
	if len(data) != writers*rounds {
		t.Errorf("%d updates survived of %d", len(data), writers*rounds)
	}
	if names := numtest.DirNames(t, dir); len(names) != 1 || strings.HasSuffix(names[0], ".lock") {
		t.Errorf("files left: %q", names)
	}
}

// WriteWith writes what its function writes, and a failing function leaves the old file and
// no temporary one.
func TestWriteWith(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := atomicfile.WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.WriteWith(path, func(w io.Writer) error {
		if _, err := w.Write(bytes.Repeat([]byte("x"), 3<<20)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the function's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("the file holds %d bytes after a failed write", len(b))
	}
	if names := numtest.DirNames(t, dir); len(names) != 1 {
		t.Errorf("entries left: %q", names)
	}
	want := bytes.Repeat([]byte("0123456789"), 300_000)
	if err := atomicfile.WriteWith(path, func(w io.Writer) error {
		for i := 0; i < len(want); i += 7001 {
			if _, err := w.Write(want[i:min(i+7001, len(want))]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, want) {
		t.Fatalf("the file holds %d bytes, want %d", len(b), len(want))
	}
}

// TestTryLock: TryLock fails with ErrLocked while another Lock of the file is held (here by
// this process, through another open file: flock locks belong to open files), and takes the
// lock once it is released.
func TestTryLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	path := filepath.Join(t.TempDir(), "f")
	held, err := atomicfile.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := atomicfile.TryLock(path); !errors.Is(err, atomicfile.ErrLocked) {
		l.Unlock()
		t.Fatalf("TryLock of a held lock: %v", err)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	l, err := atomicfile.TryLock(path)
	if err != nil {
		t.Fatalf("TryLock of a free lock: %v", err)
	}
	if _, err := atomicfile.TryLock(path); !errors.Is(err, atomicfile.ErrLocked) {
		t.Errorf("a second TryLock: %v", err)
	}
	l.Unlock()
}

// TestTryLockNamesHolder: TryLock's error names the process that holds the lock, from the
// lock file its holder writes; a lock file left by a holder that is gone (killed: its flock
// went with it) is taken and rewritten; a lock file that is a link is refused, as it was,
// and the file it points to is not written.
func TestTryLockNamesHolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	lockName := filepath.Join(dir, ".f.lock")
	if err := os.WriteFile(lockName, []byte("999999999\n"), 0o644); err != nil { // a killed holder's
		t.Fatal(err)
	}
	held, err := atomicfile.TryLock(path)
	if err != nil {
		t.Fatalf("a lock file nobody holds: %v", err)
	}
	_, err = atomicfile.TryLock(path)
	var he *atomicfile.HeldError
	if !errors.As(err, &he) || he.PID != os.Getpid() || !errors.Is(err, atomicfile.ErrLocked) || !strings.HasSuffix(err.Error(), fmt.Sprintf("(pid %d)", os.Getpid())) {
		t.Errorf("TryLock of a held lock: %v, want the holder's pid %d", err, os.Getpid())
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}

	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, lockName); err != nil {
		t.Fatal(err)
	}
	if l, err := atomicfile.Lock(path); err == nil {
		l.Unlock()
		t.Errorf("a lock file that is a link was taken")
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Errorf("the file the lock file links to now holds %q", data)
	}
}

// TestLockFileMode: the lock file of a file yet to be made in a directory only its owner can
// enter (an autosave's) is private, as the file will be: it was created 0666 less the umask
// (0644). One a killed holder left more open is tightened as it is taken; that of an
// existing file is no more open than the file.
func TestLockFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock, no modes")
	}
	dir := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "f")
	lockName := filepath.Join(dir, ".f.lock")
	mode := func() fs.FileMode {
		t.Helper()
		fi, err := os.Stat(lockName)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	l, err := atomicfile.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(); m != 0o600 {
		t.Errorf("no file yet: the lock file has mode %v, want 0600", m)
	}
	l.Unlock()
	if err := os.WriteFile(lockName, []byte("999999999\n"), 0o644); err != nil { // a killed holder's
		t.Fatal(err)
	}
	if err := os.Chmod(lockName, 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err = atomicfile.TryLock(path); err != nil {
		t.Fatal(err)
	}
	if m := mode(); m != 0o600 {
		t.Errorf("a lock file left 0644: mode %v, want 0600", m)
	}
	l.Unlock()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err = atomicfile.Lock(path); err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if m := mode(); m != 0o600 {
		t.Errorf("a 0600 file in a 0755 directory: the lock file has mode %v, want 0600", m)
	}
}

// TestCheck: Check gives the error WriteFile would (a directory in the way, a missing
// directory) and changes nothing: an existing file keeps its content, no file is left.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "d")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{path, filepath.Join(dir, "new"), os.DevNull} {
		if err := atomicfile.Check(ok); err != nil {
			t.Errorf("Check(%s): %v", ok, err)
		}
	}
	for _, bad := range []string{sub, filepath.Join(dir, "missing", "f")} {
		err := atomicfile.Check(bad)
		if err == nil || (atomicfile.WriteFile(bad, []byte("x")) == nil) {
			t.Errorf("Check(%s): %v, and WriteFile failing too", bad, err)
		}
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "old" {
		t.Errorf("the existing file reads %q, %v", data, err)
	}
	if names := numtest.DirNames(t, dir); strings.Join(names, " ") != "d f" {
		t.Errorf("entries left: %q, want d and f", names)
	}
}

// TestReadOnlyTarget: an existing file its writer may not write (chmod 444) is refused, by
// WriteFile, WriteWith and Check alike, and stays as it was; the rename that replaces a file
// needs only the directory's permission, so it was replaced, keeping its mode 444 (QA F1).
// Root, whom access(2) lets write any file, would pass the check: as root the test stands in
// the answer access(2) gives the file's owner, from the mode's owner bits.
func TestReadOnlyTarget(t *testing.T) {
	if os.Geteuid() == 0 {
		defer atomicfile.SetAccessWrite(func(path string) error {
			fi, err := os.Stat(path)
			if err == nil && fi.Mode().Perm()&0o200 == 0 {
				return syscall.EACCES
			}
			return err
		})()
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.json")
	if err := os.WriteFile(path, []byte("PROTECTED"), 0o444); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"WriteFile": atomicfile.WriteFile(path, []byte("new")),
		"WriteWith": atomicfile.WriteWith(path, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }),
		"Check":     atomicfile.Check(path),
	} {
		if !errors.Is(err, atomicfile.ErrReadOnly) || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s: %v, want ErrReadOnly naming %s", what, err, path)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != "PROTECTED" {
		t.Errorf("the read-only file now reads %q", data)
	}
	if names := numtest.DirNames(t, dir); strings.Join(names, " ") != "keep.json" {
		t.Errorf("entries left: %q, want keep.json alone", names)
	}
	// A backup is the package's own copy: a read-only one (a hard link to a read-only
	// file, from an earlier Backup) is replaced, or no later save could keep one.
	src := filepath.Join(dir, "s.ssmlab")
	if err := os.WriteFile(src, []byte("current"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Backup(src, path); err != nil {
		t.Errorf("Backup over a read-only backup: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "current" {
		t.Errorf("the backup reads %q, want the current file", data)
	}
}

// TestReadOnlyTargetAsRoot: root, whom access(2) lets write any file, replaces a read-only
// one, as cp does; the file keeps its mode.
func TestReadOnlyTargetAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		defer atomicfile.SetAccessWrite(func(string) error { return nil })()
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("old"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if data, _ := os.ReadFile(path); string(data) != "new" || fi.Mode().Perm() != 0o444 {
		t.Errorf("reads %q with mode %v, want new with 0444", data, fi.Mode().Perm())
	}
}

// TestMissingDirectory: a path in a directory that does not exist says so, for a write, a
// check and a lock alike; they said "no such file or directory", or "locking: open
// DIR/.NAME.lock: …", which read as if the file itself were missing.
func TestMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	path := filepath.Join(dir, "x.json")
	want := "the directory " + dir + " does not exist"
	_, lockErr := atomicfile.Lock(path)
	for what, err := range map[string]error{
		"WriteFile": atomicfile.WriteFile(path, []byte("{}")),
		"Check":     atomicfile.Check(path),
		"Lock":      lockErr,
	} {
		if !errors.Is(err, fs.ErrNotExist) || err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
}

// TestDirectoryTakingNoFiles: a directory that is there but where creating a file says "no
// such file or directory" (/proc) is not called missing: a write said "the directory /proc
// does not exist".
func TestDirectoryTakingNoFiles(t *testing.T) {
	if fi, err := os.Stat("/proc/self"); err != nil || !fi.IsDir() {
		t.Skip("no /proc")
	}
	path := "/proc/ssmlab-test.json"
	_, lockErr := atomicfile.Lock(path)
	for what, err := range map[string]error{
		"WriteFile": atomicfile.WriteFile(path, []byte("{}")),
		"Check":     atomicfile.Check(path),
		"Lock":      lockErr,
	} {
		if err == nil || strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "/proc") {
			t.Errorf("%s: %v, want an error not calling /proc missing", what, err)
		}
	}
}

// TestWriteFileBefore: before runs once the new content is complete, in its temporary file,
// and before the target is replaced; its error leaves the target as it was and no temporary
// file.
func TestWriteFileBefore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen string
	err := atomicfile.WriteFileBefore(path, []byte("new"), func() error {
		got, _ := os.ReadFile(path)
		seen = string(got)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "f" {
				if tmp, _ := os.ReadFile(filepath.Join(dir, e.Name())); string(tmp) == "new" {
					seen += "+complete"
				}
			}
		}
		return errors.New("no")
	})
	if err == nil || err.Error() != "no" || seen != "old+complete" {
		t.Fatalf("err %v; before saw %q, want the old file and the new content complete", err, seen)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("the file holds %q after before failed", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("files left: %v", ents)
	}
	if err := atomicfile.WriteFileBefore(path, []byte("new"), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Fatalf("the file holds %q", got)
	}
}

const readOnlyDirEnv = "SSMLAB_READ_ONLY_DIR"

// TestReadOnlyDirectory: a file in a directory its writer may not add files to is refused by
// WriteFile, Check and Lock with an error that names the directory, where it read
// "FILE: permission denied" once the caller dropped the temporary or lock file's name, though
// FILE itself was writable (QA: import --session into a read-only directory). Root writes any
// directory: as root the test runs itself again as nobody.
func TestReadOnlyDirectory(t *testing.T) {
	if dir := os.Getenv(readOnlyDirEnv); dir != "" {
		path := filepath.Join(dir, "s.ssmlab")
		_, lockErr := atomicfile.Lock(path)
		for what, err := range map[string]error{
			"WriteFile": atomicfile.WriteFile(path, []byte("new")),
			"Check":     atomicfile.Check(path),
			"Lock":      lockErr,
		} {
			fmt.Printf("%s: %v (permission %v)\n", what, err, errors.Is(err, fs.ErrPermission))
		}
		os.Exit(0)
	}
	if runtime.GOOS != "linux" {
		t.Skip("runs itself as another user on Linux")
	}
	base, err := os.MkdirTemp("", "readonlydir")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "ro"), 0o755); os.RemoveAll(base) })
	ro := filepath.Join(base, "ro")
	bin := filepath.Join(base, "test")
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "s.ssmlab"), []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ro, "s.ssmlab"), 0o666); err != nil { // writable, whoever runs
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyDirectory$", "-test.count=1")
	cmd.Env = append(os.Environ(), readOnlyDirEnv+"="+ro)
	cmd.Dir = base
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, what := range []string{"WriteFile", "Check", "Lock"} {
		want := what + ": the directory " + ro + " is read-only to this user (permission denied)"
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), what+": ") {
			t.Errorf("%s's error does not name the directory:\n%s", what, out)
		}
	}
	if strings.Count(string(out), "(permission true)") != 3 {
		t.Errorf("not every error is fs.ErrPermission:\n%s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(ro, "s.ssmlab")); string(data) != "old" {
		t.Errorf("the file reads %q", data)
	}
}
