// Package fuzzcorpus keeps the fuzzers' seed corpora committed under testdata/fuzz in step
// with the seeds a package's tests build, so that `go test` runs them without -fuzz. It is
// for tests only; the flag -write-corpus it adds regenerates the corpora.
package fuzzcorpus

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var write = flag.Bool("write-corpus", false, "write the fuzzers' seed corpora to testdata/fuzz")

// Check checks that testdata/fuzz/NAME holds a file for each seed of every fuzzer NAME in
// corpora, or with -write-corpus writes them. A seed is the values of one corpus file, one a
// line, as the "go test fuzz v1" format writes them ("[]byte(\"…\")").
func Check(t testing.TB, corpora map[string][]string) {
	t.Helper()
	for name, seeds := range corpora {
		dir := filepath.Join("testdata", "fuzz", name)
		if !*write {
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) < len(seeds) {
				t.Errorf("%s: %d committed corpus files for %d seeds (%v): run go test -run TestSeedCorpus -write-corpus", dir, len(entries), len(seeds), err)
			}
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			text := "go test fuzz v1\n" + s + "\n"
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
