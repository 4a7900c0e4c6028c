package tui

import (
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/mattn/go-isatty"
)

// IsTerminal reports whether f is a terminal (main opens the workbench only on one).
func IsTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Main runs the workbench on the process's terminal, opening file when it is not empty,
// and returns the exit status. Notes for after the screen is restored (files saved on quit)
// and errors go to stderr.
func Main(file string, stderr io.Writer) int {
	m := New(Options{File: file})
	p := tea.NewProgram(m, tea.WithAltScreen())
	final, err := p.Run()
	if err != nil {
		fmt.Fprintf(stderr, "ssmlab: %s\n", err)
		return 1
	}
	if fm, ok := final.(*Model); ok {
		for _, n := range fm.ExitNotes() {
			fmt.Fprintln(stderr, "ssmlab: "+n)
		}
	}
	return 0
}
