// Package sigexit names the signals that end an ssmlab run early, on the command line and in
// the workbench alike, and the exit status each gives.
package sigexit

import (
	"os"
	"syscall"
)

// Signals end a run: Ctrl-C (SIGINT; in the workbench's raw terminal Ctrl-C is a key, and
// SIGINT comes from another program), kill's default (SIGTERM), a closed terminal (SIGHUP).
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Base plus a signal's number is the exit status of a run that signal ended: 130 for Ctrl-C,
// 143 for SIGTERM, 129 for SIGHUP, the status shells give a process the signal killed.
const Base = 128

// Status returns Base plus sig's number (SIGINT's for a signal without one).
func Status(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return Base + int(n)
	}
	return Base + int(syscall.SIGINT)
}

// Name returns the signal's name as kill(1) spells it: "SIGTERM".
func Name(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}
