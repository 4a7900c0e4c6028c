package cuda

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestPTXKey(t *testing.T) {
	base := PTXKey("src", []string{"--gpu-architecture=compute_90", "-DREAL=float"}, "12.4")
	if len(base) != 64 {
		t.Fatalf("key %q is not a hex SHA-256", base)
	}
	if PTXKey("src", []string{"--gpu-architecture=compute_90", "-DREAL=float"}, "12.4") != base {
		t.Error("the key is not deterministic")
	}
	for name, k := range map[string]string{
		"source":  PTXKey("src ", []string{"--gpu-architecture=compute_90", "-DREAL=float"}, "12.4"),
		"arch":    PTXKey("src", []string{"--gpu-architecture=compute_80", "-DREAL=float"}, "12.4"),
		"real":    PTXKey("src", []string{"--gpu-architecture=compute_90", "-DREAL=double"}, "12.4"),
		"nvrtc":   PTXKey("src", []string{"--gpu-architecture=compute_90", "-DREAL=float"}, "12.6"),
		"shifted": PTXKey("src--gpu-architecture=compute_90", []string{"-DREAL=float"}, "12.4"),
	} {
		if k == base {
			t.Errorf("changing the %s keeps the key", name)
		}
	}
	// Length prefixes keep parts from running into each other.
	if PTXKey("ab", []string{"c"}, "") == PTXKey("a", []string{"bc"}, "") {
		t.Error("parts run into each other")
	}
}

func TestPTXCacheStoreLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "ptx")
	c := PTXCache{Dir: dir}
	key := PTXKey("src", []string{"-DREAL=float"}, "12.4")
	if _, ok := c.Load(key); ok {
		t.Fatal("hit in an empty cache")
	}
	ptx := []byte(".version 8.4\n.target sm_90\n")
	if err := c.Store(key, ptx); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Load(key)
	if !ok || !bytes.Equal(got, ptx) {
		t.Fatalf("load: %q %v", got, ok)
	}
	if c.Path(key) != filepath.Join(dir, key+".ptx") || c.Path(key+".cubin") != filepath.Join(dir, key+".cubin") {
		t.Errorf("paths %s, %s", c.Path(key), c.Path(key+".cubin"))
	}
	// Atomic writes leave no temporary files behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("cache directory holds %d entries", len(entries))
	}
	// A truncated (empty) entry is a miss, and Remove drops an entry.
	if err := os.WriteFile(c.Path(key), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Load(key); ok {
		t.Error("an empty entry is a hit")
	}
	c.Remove(key)
	if _, err := os.Stat(c.Path(key)); !os.IsNotExist(err) {
		t.Errorf("Remove left %v", err)
	}
}

func TestPTXCacheDisabled(t *testing.T) {
	var c PTXCache
	if err := c.Store("k", []byte("x")); err != nil {
		t.Error(err)
	}
	if _, ok := c.Load("k"); ok {
		t.Error("a disabled cache hits")
	}
	c.Remove("k")
}

func TestDefaultPTXCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir)
	c := DefaultPTXCache()
	if c.Dir == "" {
		t.Skip("no user cache directory on this system")
	}
	if filepath.Base(c.Dir) != "ptx" || filepath.Base(filepath.Dir(c.Dir)) != "ssmlab" {
		t.Errorf("cache in %s", c.Dir)
	}
}
