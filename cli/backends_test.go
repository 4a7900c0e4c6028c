package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/train"
)

// skipWithGPU skips the tests of the no-GPU behaviour on a machine that has one.
func skipWithGPU(t *testing.T) string {
	t.Helper()
	info, err := train.DetectGPU()
	if err == nil {
		t.Skipf("this machine has a GPU (%s)", info)
	}
	return train.NoGPUReason(err)
}

func TestBackendsWithoutGPU(t *testing.T) {
	reason := skipWithGPU(t)
	r := run(t, "", "backends")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%v", r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "cpu: available (pure Go, ") || !strings.HasSuffix(lines[0], "; "+sumsWords(train.CPUSums())+")") ||
		lines[1] != "gpu: unavailable: "+reason || lines[2] != "auto: cpu" {
		t.Errorf("ssmlab backends printed:\n%s", r.stdout)
	}
	if strings.HasPrefix(reason, "no GPU") || reason == "" {
		t.Errorf("reason %q", reason)
	}

	r = run(t, "", "backends", "--json")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("%v", r)
	}
	var doc backendsDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.CPU.Available || doc.CPU.Threads < 1 || doc.CPU.Sums != train.CPUSums() || doc.GPU.Available || doc.GPU.Reason != reason || doc.GPU.Info != nil || doc.Auto != "cpu" {
		t.Errorf("%+v", doc)
	}
	if r := run(t, "", "backends", "extra"); r.code != ExitUsage {
		t.Errorf("an argument: %v", r)
	}
}

// TestSumsWords: the cpu line says which sums run, and what the portable ones cost.
func TestSumsWords(t *testing.T) {
	if got := sumsWords("avx2"); got != "variable projection's sums in AVX2 kernels" {
		t.Errorf("avx2: %q", got)
	}
	if got := sumsWords("go"); !strings.Contains(got, "portable Go loops, 4–8× slower") {
		t.Errorf("go: %q", got)
	}
}

// TestAutoLine checks what backends says auto picks on a machine with a GPU, which the
// tests here cannot show.
func TestAutoLine(t *testing.T) {
	if got, want := autoLine("gpu"), "gpu (the Adam recipe; variable projection, the default distillation, runs on the CPU)"; got != want {
		t.Errorf("autoLine(gpu) = %q, want %q", got, want)
	}
	if got := autoLine("cpu"); got != "cpu" {
		t.Errorf("autoLine(cpu) = %q", got)
	}
}

func TestBackendFlagWithoutGPU(t *testing.T) {
	reason := skipWithGPU(t)
	dir := t.TempDir()
	in := writeDoc(t, dir, "target.json", filters.Document{Filter: testFilter(t)})
	rep := filepath.Join(dir, "report.json")

	r := run(t, "", "distill", in, "--order", "3", "--length", "64", "--backend", "auto", "--report", rep, "-o", filepath.Join(dir, "out.json"))
	if r.code != 0 || !strings.Contains(r.stderr, "backend: cpu ("+reason+")\n") || !strings.Contains(r.stderr, "on cpu\n") {
		t.Errorf("auto: %v", r)
	}

	for _, name := range []string{"gpu", "gpu64"} {
		for _, args := range [][]string{
			{"distill", in, "--order", "3", "--length", "64"},
			{"train", "--task", "delay", "--order", "3", "--steps", "1", "--length", "64", "--kernel-length", "16", "--delay", "4"},
		} {
			r = run(t, "", append(args, "--backend", name)...)
			// "ssmlab: problem", as every failure not of one file (it read "ssmlab: --backend
			// gpu: …", a command-line mistake's form without its command, at exit 1).
			want := "ssmlab: no GPU backend on this machine for --backend " + name + ": " + reason + "; use --backend cpu or auto\n"
			if r.code != ExitFailure || r.stdout != "" || !strings.HasSuffix(r.stderr, want) {
				t.Errorf("%s %s: %v\nwant stderr %q", args[0], name, r, want)
			}
			// from a --job file, the setting is the file's key (it named --backend, which
			// was not given); a --backend given over it is named as the flag
			job := filepath.Join(dir, "job-"+name+".json")
			if err := os.WriteFile(job, []byte(`{"backend": "`+name+`"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			r = run(t, "", append(args, "--job", job)...)
			want = "ssmlab: no GPU backend on this machine for " + job + "'s backend " + name + ": " + reason + "; use --backend cpu or auto\n"
			if r.code != ExitFailure || r.stdout != "" || !strings.HasSuffix(r.stderr, want) {
				t.Errorf("%s --job {backend %s}: %v\nwant stderr %q", args[0], name, r, want)
			}
			r = run(t, "", append(args, "--job", job, "--backend", name)...)
			if want := "for --backend " + name + ": "; r.code != ExitFailure || !strings.Contains(r.stderr, want) {
				t.Errorf("%s --job {backend %s} --backend %[2]s: %v\nwant stderr with %q", args[0], name, r, want)
			}
		}
	}
}

// TestBackendsJSONDocumented: every key backends --json can print, a GPU's info too, is
// named ("key") in the command's help, which a script reading it goes by; none was.
func TestBackendsJSONDocumented(t *testing.T) {
	doc := backendsDoc{CPU: cpuDoc{Available: true}, GPU: gpuDoc{Available: true, Reason: "r", Info: &train.Info{Libraries: []string{"l"}}}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	help := newBackends(&streams{}).Long
	var walk func(path string, m map[string]any)
	walk = func(path string, m map[string]any) {
		for k, v := range m {
			if !strings.Contains(help, `"`+k+`"`) {
				t.Errorf("backends --help does not name %s%s", path, k)
			}
			if sub, ok := v.(map[string]any); ok {
				walk(path+k+".", sub)
			}
		}
	}
	walk("", m)
}
