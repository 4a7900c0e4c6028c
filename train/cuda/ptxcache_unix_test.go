//go:build unix

package cuda

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPTXCacheIsPrivate: the cache directory is created 0700, and one left 0755 by an older
// version is tightened before it is read or written.
func TestPTXCacheIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	base := t.TempDir()
	c := PTXCache{Dir: filepath.Join(base, "ssmlab", "ptx")}
	key := PTXKey("src", nil, "11.8")
	if err := c.Store(key, []byte("ptx")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{c.Dir, filepath.Dir(c.Dir)} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want 0700", dir, fi.Mode(), err)
		}
	}
	for _, use := range []string{"load", "store"} {
		if err := os.Chmod(c.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if use == "load" {
			if _, ok := c.Load(key); !ok {
				t.Error("a miss after tightening")
			}
		} else if err := c.Store(key, []byte("ptx")); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(c.Dir); fi.Mode().Perm() != 0o700 {
			t.Errorf("after %s: %v, want 0700", use, fi.Mode())
		}
	}
	// A missing directory is a miss, and Load does not create it.
	gone := PTXCache{Dir: filepath.Join(base, "none")}
	if _, ok := gone.Load(key); ok {
		t.Error("a hit in a missing directory")
	}
	if _, err := os.Stat(gone.Dir); !os.IsNotExist(err) {
		t.Errorf("Load created %s: %v", gone.Dir, err)
	}
}
