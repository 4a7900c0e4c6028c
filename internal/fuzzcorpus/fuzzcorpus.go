// Package fuzzcorpus keeps the fuzzers' seed corpora committed under testdata/fuzz in step
// with the seeds a package's tests build, so that `go test` runs them without -fuzz, and
// keeps the seeds small. It is for tests only; the flag -write-corpus it adds regenerates
// the corpora.
//
// Seeds must be small: the fuzzer minimises each new input that reaches new code, trying
// to remove every span of its bytes, in time quadratic in its length (up to
// -fuzzminimizetime, 60 s by default), and the inputs it finds are mutations of the seeds.
// Seeds of 1.4 to 2.6 KB (golden torch.save and .npz files) held 10-second runs of the
// torch and raw-tensor fuzzers to a dozen executions, all spent minimising. Rezip and
// SplitZip cut a golden zip archive down to the entries a seed needs; MaxSeed bounds a
// seed. A zip archive of one tensor is still a few hundred bytes, whose minimisation takes
// seconds: short runs of the zip formats' fuzzers do better with -fuzzminimizetime=0x.
package fuzzcorpus

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var write = flag.Bool("write-corpus", false, "write the fuzzers' seed corpora to testdata/fuzz")

// Check checks that testdata/fuzz/NAME holds, as seed-00, seed-01, …, each seed of every
// fuzzer NAME in corpora as it is now, or with -write-corpus writes them. A seed is the
// values of one corpus file, one a line, as the "go test fuzz v1" format writes them
// ("[]byte(\"…\")"). Files beyond the seeds (inputs a fuzzing run found) are left alone.
func Check(t testing.TB, corpora map[string][]string) {
	t.Helper()
	for name, seeds := range corpora {
		dir := filepath.Join("testdata", "fuzz", name)
		if *write {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i, s := range seeds {
			path := filepath.Join(dir, fmt.Sprintf("seed-%02d", i))
			text := "go test fuzz v1\n" + s + "\n"
			if *write {
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != text {
				t.Errorf("%s is not seed %d as the tests build it now (%v): run go test -run TestSeedCorpus -write-corpus", path, i, err)
			}
		}
	}
}

// MaxSeed is the most bytes a seed may hold.
const MaxSeed = 1 << 10

// CheckSmall fails for each of the fuzzer name's seeds that holds more than MaxSeed bytes.
func CheckSmall(t testing.TB, name string, seeds [][]byte) {
	t.Helper()
	for i, s := range seeds {
		if len(s) > MaxSeed {
			t.Errorf("%s: seed %d holds %d bytes, more than %d: fuzzing would spend its time minimising the inputs it finds", name, i, len(s), MaxSeed)
		}
	}
}
