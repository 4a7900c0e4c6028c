//go:build unix

package plan

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used, which other load on
// the machine disturbs less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
