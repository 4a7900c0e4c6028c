//go:build !unix

package cputime

import "time"

var start = time.Now()

// Process falls back to the wall time since the process started where getrusage is
// missing.
func Process() time.Duration { return time.Since(start) }

// Measured reports whether Process measures CPU time (false: it is wall time).
const Measured = false
