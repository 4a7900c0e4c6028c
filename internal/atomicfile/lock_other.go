//go:build !unix

package atomicfile

import (
	"errors"
	"os"
)

// errNoLocks says that the system has no flock: temporary files left by a kill stay, and
// Lock serialises nothing.
var errNoLocks = errors.New("no file locks")

// oNoFollow is 0 where the system has no O_NOFOLLOW: the lock is never written there (no
// flock, no holder to name), so a link is only opened, as before.
const oNoFollow = 0

// errWouldBlock is never returned where there are no locks.
var errWouldBlock = errors.New("the lock is held")

func lockFile(*os.File, bool) error { return errNoLocks }

func openNoFollow(name string) (*os.File, error) { return os.Open(name) }

func matchGroup(*os.File, string) {}
