// Command ssmlab is a terminal workbench for linear state-space filters (S4, LRU, RotRNN,
// RTF). See README.md, or run `ssmlab --help`.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ssmlab/ssmlab/cli"
	"github.com/ssmlab/ssmlab/tui"
)

func main() {
	args := os.Args[1:]
	if file, ok := workbench(args); ok {
		if tui.IsTerminal(os.Stdin) && tui.IsTerminal(os.Stdout) {
			os.Exit(tui.Main(file, os.Stderr))
		}
		if file != "" {
			fmt.Fprintf(os.Stderr, "ssmlab: %s: the workbench needs a terminal (in scripts, use ssmlab convert or analyze)\n", file)
			os.Exit(cli.ExitUsage)
		}
		// no arguments and no terminal: the CLI prints its help
	}
	os.Exit(cli.Main(args, os.Stdin, os.Stdout, os.Stderr))
}

// workbench reports whether args ask for the workbench: no arguments, or a single FILE that
// is neither a flag nor a subcommand. A FILE that looks like a path but does not exist is
// reported here, before the screen is taken over; any other word goes to the CLI, which
// knows its commands and suggests the nearest.
func workbench(args []string) (file string, ok bool) {
	switch {
	case len(args) == 0:
		return "", true
	case len(args) != 1, strings.HasPrefix(args[0], "-"), cli.IsCommand(args[0]):
		return "", false
	}
	if _, err := os.Stat(args[0]); err == nil {
		return args[0], true
	} else if strings.ContainsAny(args[0], `./\`) {
		fmt.Fprintf(os.Stderr, "ssmlab: %s\n", strings.TrimPrefix(err.Error(), "stat "))
		os.Exit(cli.ExitFailure)
	}
	return "", false
}
