package filters_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// touchesProcess are the imports through which a package reaches files, standard streams,
// the environment or other processes.
var touchesProcess = []string{
	"os", "os/exec", "os/signal", "syscall", "io/ioutil", "net", "plugin",
	"github.com/ssmlab/ssmlab/internal/atomicfile", "github.com/ssmlab/ssmlab/internal/userfile",
}

// TestFiltersTouchNoFiles checks the package's promise that numerics never touch files or the
// process: neither filters nor any package of this module it depends on imports one of
// touchesProcess. (Standard packages such as fmt import os themselves; what matters is that
// no code of ours calls it.) filters/filterfile works on streams: its own imports hold none
// either, and it reaches internal/userfile only for the size limit and the bounded ReadAll of
// the caller's reader.
func TestFiltersTouchNoFiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports:", err)
	}
	const module = "github.com/ssmlab/ssmlab/"
	out, err := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}:{{join .Imports " "}}`,
		module+"filters", module+"filters/filterfile").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		imports[pkg] = strings.Fields(deps)
	}
	check := func(pkg string, allowed ...string) {
		for _, imp := range imports[pkg] {
			for _, bad := range touchesProcess {
				if imp == bad && !slices.Contains(allowed, imp) {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
		}
	}
	// filters and every package of this module below it.
	seen := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		if seen[pkg] || !strings.HasPrefix(pkg, module) {
			return
		}
		seen[pkg] = true
		check(pkg)
		for _, imp := range imports[pkg] {
			walk(imp)
		}
	}
	walk(module + "filters")
	if len(seen) == 0 || imports[module+"filters"] == nil {
		t.Fatalf("go list gave nothing for filters:\n%s", out)
	}
	check(module+"filters/filterfile", module+"internal/userfile")
}
