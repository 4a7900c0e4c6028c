package sessions_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The crash tests run this test binary again as a helper process that saves a large session
// over and over, and kill it with SIGKILL at chosen moments: the helper reports each stage
// of each save on a pipe, and the parent kills it as soon as it reads the stage it wants.
// After every kill, the session file and its backup must each load as a complete session of
// one of the generations saved.

const (
	helperEnv     = "SSMLAB_SAVE_HELPER" // "stages", "race" or "autosave"
	helperPathEnv = "SSMLAB_SAVE_PATH"
	helperLastEnv = "SSMLAB_SAVE_LAST" // the helper's last save; it then waits to be killed
)

// helperKernels is the size of the helper's target: about 5 MiB of session file, so that
// writing it takes long enough to be interrupted (700 KiB under the race detector, which
// slows the helper down about tenfold).
var helperKernels = map[bool]int{false: 1 << 19, true: 1 << 16}[raceEnabled]

// generationSession is the session a helper saves as generation gen: its target is named
// "gen N" and its first kernel sample is N.
func generationSession(t testing.TB, gen int, k *arrays.Array) *sessions.Session {
	s := sessions.New()
	must(s.AddFilter(filters.Document{Name: "dense", Filter: filtertest.Dense()}))
	k = k.Clone()
	k.Data[0] = float64(gen)
	must(s.AddTarget(sessions.Target{Name: "gen " + strconv.Itoa(gen), Kernels: k}))
	return s
}

// TestSaveHelperProcess is the helper; it does nothing in a normal test run.
func TestSaveHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	path := os.Getenv(helperPathEnv)
	if mode == "autosave" {
		autosaveAndWait(t, path)
	}
	k := kernels(t, 1, helperKernels)
	out := bufio.NewWriter(os.Stdout)
	gen := 0
	sessions.SetSaveHook(func(stage string) {
		fmt.Fprintf(out, "%s %d\n", stage, gen)
		out.Flush()
		if mode == "stages" {
			var b [1]byte
			if _, err := os.Stdin.Read(b[:]); err != nil {
				os.Exit(3)
			}
		}
	})
	last, err := strconv.Atoi(os.Getenv(helperLastEnv))
	if err != nil {
		last = 1000
	}
	for gen = 1; gen <= last; gen++ {
		if err := generationSession(t, gen, k).Save(path); err != nil {
			fmt.Fprintf(out, "error %v\n", err)
			out.Flush()
			os.Exit(2)
		}
	}
	// No save after the last, whenever the kill lands: a loaded machine can deliver it saves
	// later than the stage that triggered it (it once found generation 5 where 1 or 2 was due).
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// helper starts the helper process in mode, saving to path.
func helper(t *testing.T, mode, path string, env ...string) (*exec.Cmd, *bufio.Reader, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSaveHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode, helperPathEnv+"="+path), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(stdout), stdin
}

// next reads the helper's next "stage gen" line.
func next(t *testing.T, r *bufio.Reader) (string, int) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("helper stopped: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 || f[0] == "error" {
		t.Fatalf("helper says %q", line)
	}
	gen, _ := strconv.Atoi(f[1])
	return f[0], gen
}

// kill ends the helper with SIGKILL and reaps it.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// generationOf loads a session file and returns the generation it holds.
func generationOf(t *testing.T, path string) int {
	t.Helper()
	s, err := sessions.Load(path)
	if err != nil {
		t.Fatalf("after a kill, %s does not load: %v", filepath.Base(path), err)
	}
	if len(s.Targets) != 1 || len(s.Filters) != 1 {
		t.Fatalf("after a kill, %s holds %s", filepath.Base(path), s.Summary())
	}
	gen, err := strconv.Atoi(strings.TrimPrefix(s.Targets[0].Name, "gen "))
	if err != nil || s.Targets[0].Kernels.Data[0] != float64(gen) || s.Targets[0].Kernels.Len() != helperKernels {
		t.Fatalf("after a kill, %s holds a mixed session (%q)", filepath.Base(path), s.Targets[0].Name)
	}
	return gen
}

// TestKillAtEachStage kills the helper at each stage of a save (after encoding, after the
// backup, after the new file replaced the old) and checks which version survives.
func TestKillAtEachStage(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tc := range []struct {
		stage   string
		saves   int // which save to kill (the first, or a later one)
		wantNew bool
	}{
		{"encoded", 1, false}, {"backed-up", 1, false}, {"written", 1, true},
		{"encoded", 3, false}, {"backed-up", 3, false}, {"written", 3, true},
	} {
		t.Run(fmt.Sprintf("%s of save %d", tc.stage, tc.saves), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "work.ssmlab")
			if err := generationSession(t, 0, kernels(t, 1, helperKernels)).Save(path); err != nil {
				t.Fatal(err)
			}
			cmd, out, in := helper(t, "stages", path)
			for {
				stage, gen := next(t, out)
				if stage == tc.stage && gen == tc.saves {
					kill(t, cmd)
					break
				}
				in.Write([]byte{'c'})
			}
			want := tc.saves - 1
			if tc.wantNew {
				want = tc.saves
			}
			if got := generationOf(t, path); got != want {
				t.Errorf("the file holds generation %d, want %d", got, want)
			}
			// The backup is the version before the one in the file, when there is one.
			bak := path + sessions.BackupSuffix
			if _, err := os.Stat(bak); err == nil {
				if got := generationOf(t, bak); got != tc.saves-1 && got != tc.saves-2 {
					t.Errorf("the backup holds generation %d", got)
				}
			}
		})
	}
}

// killLoopEnv sets how many kills TestKillDuringWrite makes (default 12; the figure
// is 200: SSMLAB_KILL_LOOP=200 go test -run TestKillDuringWrite ./sessions, about a minute).
const killLoopEnv = "SSMLAB_KILL_LOOP"

// TestKillDuringWrite kills the helper with SIGKILL at random moments of its saves: once it
// has encoded, kept its backup or written a random one of its first three saves, while it goes
// on (the helper does not wait for the test), so that the kill lands anywhere in making the
// backup or writing, syncing and renaming the 5 MiB file. After every kill the file and its
// backup must each be a complete old or new version, no file in the directory may be
// readable by others than the session's 0600 allows, and temporary files may not pile up: the
// next save removes those a kill left. After the last kill, one more save leaves nothing but
// the session and its backup.
func TestKillDuringWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	kills := envCount(t, killLoopEnv, 12)
	dir := t.TempDir()
	path := filepath.Join(dir, "work.ssmlab")
	if err := generationSession(t, 0, kernels(t, 1, helperKernels)).Save(path); err != nil {
		t.Fatal(err)
	}
	const mode = 0o600
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(kills), 21))
	survived := map[string]int{}
	maxLeft := 0
	for i := range kills {
		before := generationOf(t, path)
		target := 1 + rng.IntN(3)
		cmd, out, _ := helper(t, "race", path, helperLastEnv+"="+strconv.Itoa(target))
		trigger := []string{"encoded", "backed-up", "written"}[rng.IntN(3)]
		for {
			stage, gen := next(t, out)
			if stage == trigger && gen == target {
				kill(t, cmd)
				break
			}
		}
		old := target - 1
		if target == 1 {
			old = before // the helper's first save replaces what the last run left
		}
		switch got := generationOf(t, path); got {
		case old:
			survived["old"]++
		case target:
			survived["new"]++
		default:
			t.Errorf("kill %d: the file holds generation %d, want %d or %d", i, got, old, target)
		}
		if _, err := os.Stat(path + sessions.BackupSuffix); err == nil {
			generationOf(t, path+sessions.BackupSuffix)
		}
		left := 0
		for _, e := range must(os.ReadDir(dir)) {
			fi := must(e.Info())
			if fi.Mode().Perm()&0o077&^mode != 0 {
				t.Errorf("kill %d: %s has mode %v; the session allows %v", i, e.Name(), fi.Mode().Perm(), os.FileMode(mode))
			}
			if strings.HasSuffix(e.Name(), ".tmp") {
				left++
			}
		}
		// One kill leaves at most the temporary file and the backup's temporary link of
		// the save it interrupted.
		if left > 2 {
			t.Errorf("kill %d: %d temporary files in the directory: leftovers pile up", i, left)
		}
		maxLeft = max(maxLeft, left)
		if left > 0 {
			survived["left a temporary file"]++
		}
	}
	if err := generationSession(t, kills+1, kernels(t, 1, helperKernels)).Save(path); err != nil {
		t.Fatal(err)
	}
	if names := numtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("after a save following the kills, the directory holds %q, want the session and its backup", names)
	}
	t.Logf("after %d kills during a save: the old version survived %d times, the new one %d times; %d kills left temporary files (at most %d), each removed by the next save",
		kills, survived["old"], survived["new"], survived["left a temporary file"], maxLeft)
}

// autosaveAndWait is the helper's "autosave" mode: it autosaves an unsaved session into dir,
// says where, and waits, running, until it is killed.
func autosaveAndWait(t *testing.T, dir string) {
	s := sessions.New()
	must(s.AddFilter(filters.Document{Name: "saved", Filter: filtertest.Dense()}))
	s.MarkSaved("", s.Generation())
	must(s.AddTarget(sessions.Target{Name: "unsaved", Kernels: kernels(t, 1, 8)}))
	p, err := s.Autosave(dir)
	fmt.Printf("autosaved %s %v\n", p, err)
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// TestAutosaveOfKilledProcess: a running ssmlab's autosave is private (0600 in a directory
// tightened to 0700), and so is the lock it holds on it (.NAME.lock, created 0644), and offered to no other process while it runs; once it is killed, the
// next start is offered its work, which recovers with the same unsaved items.
func TestAutosaveOfKilledProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := filepath.Join(t.TempDir(), "autosave")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, out, _ := helper(t, "autosave", dir)
	line, err := out.ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "autosaved" || f[2] != "<nil>" {
		kill(t, cmd)
		t.Fatalf("helper says %q (%v)", line, err)
	}
	path := f[1]
	for _, c := range []struct {
		name string
		want os.FileMode
	}{{dir, 0o700}, {path, 0o600}, {filepath.Join(dir, "."+filepath.Base(path)+".lock"), 0o600}} {
		if fi, err := os.Stat(c.name); err != nil || fi.Mode().Perm() != c.want {
			t.Errorf("%s: %v, mode %v, want %v", c.name, err, fi.Mode().Perm(), c.want)
		}
	}
	if list := must(sessions.ListAutosaves(dir)); len(list) != 0 {
		t.Errorf("the autosave of a running process is offered: %+v", list)
	}
	if err := sessions.DiscardAutosave(path); err == nil || !strings.Contains(err.Error(), "in use by another ssmlab") {
		t.Errorf("discarding a running process's autosave: %v", err)
	}
	kill(t, cmd)
	list := must(sessions.ListAutosaves(dir))
	if len(list) != 1 || list[0].Path != path || list[0].Summary != "1 filter, 1 target, 0 jobs" {
		t.Fatalf("after the kill: %+v", list)
	}
	r := must(sessions.RecoverAutosave(path))
	if len(r.Targets) != 1 || !r.ItemDirty(r.Targets[0].ID) || r.ItemDirty(r.Filters[0].ID) {
		t.Errorf("recovered %s: the unsaved target is not marked (or the saved filter is)", r.Summary())
	}
	if _, err := sessions.RecoverAutosave(path); err == nil {
		t.Error("one autosave recovered twice at once")
	}
	r.RemoveAutosave()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("RemoveAutosave left %s: %v", path, err)
	}
}

// envCount returns the positive integer in the environment variable name, or def when unset.
func envCount(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}
