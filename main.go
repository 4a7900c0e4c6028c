// Command ssmlab is a terminal workbench for linear state-space filters (S4, LRU, RotRNN,
// RTF). See README.md, or run `ssmlab --help`.
package main

import (
	"os"

	"github.com/ssmlab/ssmlab/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
