package sessions_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
)

// The memory test reads a large CSV file (and a JSON target file) in a helper process (this test binary again) and
// measures the peak resident memory the import added (VmHWM of /proc/self/status), against
// the 8 bytes a number the kernels hold. The line reader used up to 12 times that (a 135 MiB
// file of one line: 700 MB for 56 MB of numbers); a target file's tree of its text 35 times.

const (
	memHelperEnv = "SSMLAB_MEMORY_HELPER" // the file to import
	// memSizeEnv sets the CSV text's size in MiB (default 48; the figure is 128).
	memSizeEnv = "SSMLAB_CSV_MIB"
	// memRatio is the most peak memory a reader may add per byte of numbers it holds: one
	// copy of the numbers, and the garbage collector's headroom over what is live.
	memRatio = 3.0
	// jsonRatio is the same per byte of JSON text, which is read whole: the text, the
	// numbers (a third of its size) and the garbage of its tokens before a collection.
	jsonRatio = 3.5
)

// peakRSS returns VmHWM in bytes.
func peakRSS(t testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// TestMemoryHelperProcess imports the file memHelperEnv names and prints
// "added-bytes number-bytes"; it does nothing in a normal run.
func TestMemoryHelperProcess(t *testing.T) {
	path := os.Getenv(memHelperEnv)
	if path == "" {
		return
	}
	before := peakRSS(t)
	it, err := sessions.Import(path, sessions.ImportOptions{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	after := peakRSS(t)
	fmt.Println(after-before, 8*it.Target.Kernels.Len())
	os.Exit(0)
}

func TestCSVImportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	if raceEnabled {
		t.Skip("-race keeps shadow memory beside every allocation: peak memory says nothing of the reader")
	}
	mib := envCount(t, memSizeEnv, 48)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	const perNumber = 20 // "-0.12345678901234567" and a separator
	n := mib << 20 / perNumber
	for _, shape := range []struct {
		name string
		cols int
		sep  string
		json bool // a target file, {"name": …, "kernels": [[…], …]}
	}{{"64 rows", n / 64, ",", false}, {"one row", n, ",", false}, {"one column", 1, " ", false}, {"target file", n / 64, ",", true}} {
		t.Run(shape.name, func(t *testing.T) {
			path := filepath.Join(dir, "k.csv")
			if shape.json {
				path = filepath.Join(dir, "k.json")
			}
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w := bufio.NewWriter(f)
			rowEnd, end := "\n", "\n"
			if shape.json {
				w.WriteString(`{"name": "k", "kernels": [[`)
				rowEnd, end = "],\n[", "]]}\n"
			}
			for i := range n / shape.cols * shape.cols {
				if i > 0 {
					if i%shape.cols == 0 {
						w.WriteString(rowEnd)
					} else {
						w.WriteString(shape.sep)
					}
				}
				w.WriteString(strconv.FormatFloat(rng.NormFloat64(), 'f', 17, 64)[:19])
			}
			w.WriteString(end)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), memHelperEnv+"="+path)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper: %v: %s", err, out)
			}
			var added, held int64
			if _, err := fmt.Sscan(string(out), &added, &held); err != nil {
				t.Fatalf("helper says %q", out)
			}
			fi, _ := os.Stat(path)
			// A JSON file is read whole (the strict JSON reader works on bytes): its text,
			// 2.6 times its numbers, is what it holds while it reads.
			what, base, limit := "numbers", held, memRatio
			if shape.json {
				what, base, limit = "text", fi.Size(), jsonRatio
			}
			ratio := float64(added) / float64(base)
			t.Logf("%s: %d MiB of text, %d MiB of numbers: peak memory grew by %d MiB (%.2f× the %s)", shape.name, fi.Size()>>20, held>>20, added>>20, ratio, what)
			if ratio > limit {
				t.Errorf("%s: the import took %.2f× the %s it holds, want at most %g×", shape.name, ratio, what, limit)
			}
		})
	}
}
