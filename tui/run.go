package tui

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/mattn/go-isatty"

	"github.com/ssmlab/ssmlab/internal/sigexit"
)

// IsTerminal reports whether f is a terminal (main opens the workbench only on one).
func IsTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Main runs the workbench on the process's terminal, opening file when it is not empty,
// and returns the exit status. Notes for after the screen is restored (files saved on quit)
// and errors go to stderr.
//
// A signal that ends a run (sigexit.Signals: SIGTERM, SIGHUP as the terminal closes, SIGINT
// from another program, since the terminal's Ctrl-C is a key) ends the workbench as a second
// ctrl+c at the quit question does: the jobs are cancelled and the unsaved work is autosaved,
// up to date, for the next start to offer. Main says so and returns sigexit.Status, 143 for
// SIGTERM, as the command line does. A second signal ends it without waiting for a write in
// flight; Main then autosaves the work itself before it returns, as it does when the program
// ends on an error (the terminal gone).
func Main(file string, stderr io.Writer) int {
	m := New(Options{File: file})
	// Bubble Tea's own handler would quit at SIGTERM without the model seeing it (the last
	// second of edits not autosaved, exit 0), and it does not handle SIGHUP at all.
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithoutSignalHandler())
	caught := watchSignals(p)
	defer caught.stop()
	final, err := p.Run()
	fm, ok := final.(*Model)
	if !ok {
		fm = m
	}
	sig := caught.signal()
	if sig == nil && err == nil {
		for _, n := range fm.ExitNotes() {
			fmt.Fprintln(stderr, "ssmlab: "+n)
		}
		return 0
	}
	// Ended by a signal, or on an error (the terminal gone): the work is kept whichever
	// ended the program first.
	kept, keepErr := fm.keepUnsaved()
	var note string
	switch {
	case keepErr != nil:
		note = "the unsaved work could not be kept for recovery: " + oneLine(keepErr)
	case kept:
		note = "the unsaved work is kept for recovery: run ssmlab again to recover it"
	default:
		note = "nothing was unsaved"
	}
	if sig == nil {
		fmt.Fprintf(stderr, "ssmlab: %s; %s\n", err, note)
		return 1
	}
	fmt.Fprintf(stderr, "ssmlab: ended by %s; %s\n", sigexit.Name(sig), note)
	return sigexit.Status(sig)
}

// signalMsg is a signal that ends the run (sigexit.Signals).
type signalMsg struct{ sig os.Signal }

// signalWatch passes the signals that end a run to the program.
type signalWatch struct {
	sigs   chan os.Signal
	done   chan struct{}
	caught atomic.Pointer[os.Signal]
}

// watchSignals sends the first signal that ends a run to p as a signalMsg, and kills p at a
// second.
func watchSignals(p *tea.Program) *signalWatch {
	w := &signalWatch{sigs: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(w.sigs, sigexit.Signals...)
	go func() {
		for {
			select {
			case <-w.done:
				return
			case sig := <-w.sigs:
				if w.caught.CompareAndSwap(nil, &sig) {
					p.Send(signalMsg{sig: sig})
				} else {
					p.Kill()
				}
			}
		}
	}()
	return w
}

// signal returns the first signal caught; nil when none was.
func (w *signalWatch) signal() os.Signal {
	if s := w.caught.Load(); s != nil {
		return *s
	}
	return nil
}

func (w *signalWatch) stop() {
	signal.Stop(w.sigs)
	close(w.done)
}
