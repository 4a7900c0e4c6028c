//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestMkdirPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	base := t.TempDir()
	perm := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}

	fresh := filepath.Join(base, "a", "b")
	if err := MkdirPrivate(fresh); err != nil {
		t.Fatal(err)
	}
	if p, q := perm(fresh), perm(filepath.Dir(fresh)); p != 0o700 || q != 0o700 {
		t.Errorf("new directories %#o and parent %#o, want 0700", p, q)
	}

	for _, loose := range []os.FileMode{0o755, 0o777, 0o710, 0o701} {
		dir := filepath.Join(base, "loose")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, loose); err != nil {
			t.Fatal(err)
		}
		if err := MkdirPrivate(dir); err != nil {
			t.Fatal(err)
		}
		if p := perm(dir); p != 0o700 {
			t.Errorf("an existing %#o directory is %#o after MkdirPrivate, want 0700", loose, p)
		}
		os.Remove(dir)
	}

	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MkdirPrivate(file); err == nil {
		t.Error("a file in the way: no error")
	}
	if err := MkdirPrivate(filepath.Join(file, "sub")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as parent: %v", err)
	}
}
