package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssmlab/ssmlab/internal/atomicfile"
)

// PTXCache keeps NVRTC's output on disk so that NVRTC runs once per kernel source, option
// set (architecture, macros) and NVRTC version: PTX in KEY.ptx, or CUBIN in KEY.cubin when the
// options ask for an sm_XY architecture. Entries are written atomically; a reader never sees
// half a file. The directory is the user's alone (0700, tightened when found looser): what
// it holds is loaded onto the GPU, and its names tell what the user ran. A directory that
// cannot be made private is not used.
type PTXCache struct {
	Dir string // "" disables the cache
}

// DefaultPTXCache is os.UserCacheDir()/ssmlab/ptx, or a disabled cache when the system has
// no cache directory.
func DefaultPTXCache() PTXCache {
	dir, err := os.UserCacheDir()
	if err != nil {
		return PTXCache{}
	}
	return PTXCache{Dir: filepath.Join(dir, "ssmlab", "ptx")}
}

// PTXKey is the cache key of source compiled with options by NVRTC version nvrtc: the hex
// SHA-256 of all three, each part length-prefixed so that no two inputs collide.
func PTXKey(source string, options []string, nvrtc string) string {
	h := sha256.New()
	part := func(s string) {
		var n [8]byte
		for i, l := 0, uint64(len(s)); i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
	part(source)
	part(strings.Join(options, "\x00"))
	part(nvrtc)
	return hex.EncodeToString(h.Sum(nil))
}

// Path is the file of key (a PTXKey, with ".cubin" appended for machine code).
func (c PTXCache) Path(key string) string {
	if strings.HasSuffix(key, ".cubin") {
		return filepath.Join(c.Dir, key)
	}
	return filepath.Join(c.Dir, key+".ptx")
}

// Load returns the PTX stored under key, if any. An empty or unreadable entry is a miss, and
// so is every entry of a directory that cannot be made private.
func (c PTXCache) Load(key string) ([]byte, bool) {
	if c.Dir == "" {
		return nil, false
	}
	if _, err := os.Stat(c.Dir); err != nil || atomicfile.MkdirPrivate(c.Dir) != nil {
		return nil, false
	}
	data, err := os.ReadFile(c.Path(key))
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return nil, false
	}
	return data, true
}

// Store writes ptx under key, atomically.
func (c PTXCache) Store(key string, ptx []byte) error {
	if c.Dir == "" {
		return nil
	}
	if err := atomicfile.MkdirPrivate(c.Dir); err != nil {
		return err
	}
	return atomicfile.WriteFile(c.Path(key), ptx)
}

// Remove drops key's entry (one the driver would not load).
func (c PTXCache) Remove(key string) {
	if c.Dir != "" {
		os.Remove(c.Path(key))
	}
}

// CompileCached returns the PTX (or CUBIN) of source for options: from the cache when
// present, else compiled by n and stored. A failure to store is not an error (the code is
// still returned).
func (c PTXCache) CompileCached(n *NVRTC, source, name string, options []string) (code []byte, key string, cached bool, err error) {
	major, minor, err := n.Version()
	if err != nil {
		return nil, "", false, err
	}
	key = PTXKey(source, options, VersionString(major*1000+minor*10))
	if emitsCUBIN(options) {
		key += ".cubin"
	}
	if code, ok := c.Load(key); ok {
		return code, key, true, nil
	}
	if code, _, err = n.Compile(source, name, options); err != nil {
		return nil, key, false, err
	}
	_ = c.Store(key, code)
	return code, key, false, nil
}
