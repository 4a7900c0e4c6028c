package atomicfile

import (
	"fmt"
	"os"
)

// MkdirPrivate makes dir, and any missing parents, a directory only its owner can enter
// (0700), for per-user state such as caches and autosaves. A dir that exists with
// permissions for others (0755 from an older version, say) is tightened to 0700; an error
// says why it could not be (a directory of another user, a file in the way).
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s is open to other users (%#o) and cannot be made private: %w", dir, perm, err)
		}
	}
	return nil
}
