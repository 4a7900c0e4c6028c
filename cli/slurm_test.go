package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scaleBlocks returns the code blocks of docs/scale.md marked <!-- scale: NAME -->.
func scaleBlocks(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	re := regexp.MustCompile("(?s)<!-- scale: ([a-z.]+) -->\n```[a-z]*\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2]
	}
	for _, name := range []string{"distill.sbatch", "merge.sbatch", "submit", "rerun", "kubernetes"} {
		if out[name] == "" {
			t.Fatalf("docs/scale.md has no block marked %q", name)
		}
	}
	return out
}

// daemon runs a Slurm or munge daemon in the foreground until the test ends, and waits for
// its output to say ready: it returns the output so far when the daemon ends first or says
// nothing in time. At the end of the test its process group gets SIGTERM, then SIGKILL if it
// is not gone within ten seconds (slurmd's job steps may linger).
func daemon(t *testing.T, ready string, env []string, name string, args ...string) (ok bool, said string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w // files: Wait does not wait for the group to close them
	if err := cmd.Start(); err != nil {
		w.Close()
		r.Close()
		return false, err.Error()
	}
	w.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		r.Close()
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var b strings.Builder
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, open := <-lines:
			if !open {
				return false, b.String()
			}
			b.WriteString(line + "\n")
			if strings.Contains(line, ready) {
				go func() {
					for range lines {
					}
				}()
				return true, b.String()
			}
		case <-timeout:
			return false, b.String() + "(no word for 30 s)"
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestSlurm starts a single-node Slurm (munged, slurmctld, slurmd) in a temporary directory,
// submits the array job and the dependent merge exactly as docs/scale.md writes them, with 3
// shards of the test checkpoint, and checks the merged checkpoint against a single run, byte
// for byte; then, as if task 1 had failed, removes its part and the checkpoint, runs the
// docs' rerun block (task 1 alone, then the merge) and checks the checkpoint again (the rerun
// of one task fitted the whole job, and the merge failed: QA F2). It skips, saying why, where
// Slurm is not installed or does not start.
func TestSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Slurm")
	}
	blocks := scaleBlocks(t)
	for _, bin := range []string{"munged", "slurmctld", "slurmd", "sbatch"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("Slurm is not installed (%s: %v): Debian's slurmctld, slurmd, slurm-client and munge provide it (.ci/run installs them as root)", bin, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("starting slurmd needs root (CI runs as root)")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	dir, err := os.MkdirTemp("", "slurm") // short: munge's socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"munge", "state", "spool", "job"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	if f, err := os.Open("/dev/urandom"); err == nil {
		io.ReadFull(f, key)
		f.Close()
	}
	if err := os.WriteFile(filepath.Join(dir, "munge", "munge.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "munge", "munge.socket")
	base := os.Environ()
	if ok, said := daemon(t, "Created 2 work threads", base, "munged", "-F", "-f", "--socket="+socket,
		"--key-file="+filepath.Join(dir, "munge", "munge.key"), "--pid-file="+filepath.Join(dir, "munge", "munged.pid"),
		"--seed-file="+filepath.Join(dir, "munge", "seed"), "--num-threads=2"); !ok {
		t.Skipf("munged does not start: %s", said)
	}
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`ClusterName=ssmlabtest
SlurmctldHost=%[1]s
AuthType=auth/munge
AuthInfo=socket=%[2]s
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
DependencyParameters=kill_invalid_depend
NodeName=%[1]s CPUs=64 RealMemory=262144 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, socket, freePort(t), freePort(t), dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(slices.Clone(base), "SLURM_CONF="+conf)
	if ok, said := daemon(t, "Running as primary controller", env, "slurmctld", "-D", "-v", "-f", conf); !ok {
		t.Skipf("slurmctld does not start: %s", said)
	}
	if ok, said := daemon(t, "slurmd started", env, "slurmd", "-D", "-v", "-f", conf); !ok {
		t.Skipf("slurmd does not start: %s", said)
	}

	// The jobs: the docs' scripts, run by this test binary acting as ssmlab.
	jobs := filepath.Join(dir, "job")
	for _, name := range []string{"distill.sbatch", "merge.sbatch"} {
		if err := os.WriteFile(filepath.Join(jobs, name), []byte(blocks[name]), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ckpt := filepath.Join(jobs, "model.safetensors")
	data := copyModel(t, ckpt)
	flags := strings.Join(modelRecipe, " ")
	submit := strings.Replace(blocks["submit"], `SHARDS=8`, `SHARDS=3`, 1)
	submit = strings.Replace(submit, `SSMLAB=$PWD/ssmlab DISTILL_FLAGS="--order 16"`, fmt.Sprintf(`SSMLAB=%s DISTILL_FLAGS=%q`, self(), flags), 1)
	if submit == blocks["submit"] {
		t.Fatal("the submit block's settings changed: update this test")
	}
	// runJobs runs a block of the docs in the job directory, waits for the merge it submits
	// last and returns the logs of the jobs it ran (those matching logs).
	runJobs := func(what, block, logs string) string {
		t.Helper()
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
		cmd.Dir = jobs
		cmd.Env = append(slices.Clone(env), asCLIEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
		m := regexp.MustCompile(`Submitted batch job (\d+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("%s: sbatch said: %s", what, out)
		}
		merge, _ := strconv.Atoi(string(m[1]))
		// Wait for the merge without polling: a job that depends on it, submitted with
		// --wait, for at most five minutes.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		wait := exec.CommandContext(ctx, "sbatch", "--wait", "--quiet", fmt.Sprintf("--dependency=afterany:%d", merge), "--output=/dev/null", "--wrap=true")
		wait.Env = env
		if out, err := wait.CombinedOutput(); err != nil {
			query := func(args ...string) []byte {
				c := exec.Command(args[0], args[1:]...)
				c.Env = env
				b, _ := c.CombinedOutput()
				return b
			}
			state, nodes := query("squeue", "--all", "-o", "%i %T %r"), query("sinfo", "-N", "-o", "%N %T %E")
			t.Fatalf("%s: waiting for the merge: %v\n%s\nsqueue:\n%s\nsinfo:\n%s", what, err, out, state, nodes)
		}
		files, _ := filepath.Glob(filepath.Join(jobs, logs))
		var said bytes.Buffer
		for _, l := range files {
			b, _ := os.ReadFile(l)
			fmt.Fprintf(&said, "== %s\n%s", filepath.Base(l), b)
			os.Remove(l) // a later block's glob sees only its own jobs' logs
		}
		if !strings.Contains(said.String(), "== ssmlab-merge-") {
			t.Fatalf("%s: the merge left no log:\n%s", what, said.String())
		}
		return said.String()
	}
	said := runJobs("submitting", submit, "ssmlab-*.log")
	if n := strings.Count(said, "== ssmlab-"); n != 4 {
		t.Fatalf("%d job logs, want 3 tasks and the merge:\n%s", n, said)
	}
	for i := range 3 {
		if !strings.Contains(said, fmt.Sprintf("shard %d/3 (--shard)", i)) {
			t.Errorf("no task says it is shard %d/3:\n%s", i, said)
		}
	}
	distilled := filepath.Join(jobs, "distilled.safetensors")
	if _, err := os.Stat(distilled); err != nil {
		t.Fatalf("the merge wrote no checkpoint: %v\n%s", err, said)
	}
	// A single run of the same recipe on a copy of the same name (the manifest names it).
	other := t.TempDir()
	copyCkpt := filepath.Join(other, "model.safetensors")
	if err := os.WriteFile(copyCkpt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	single := filepath.Join(other, "single.safetensors")
	args := append(append([]string{"distill", copyCkpt}, modelRecipe...), "-o", single)
	if r := run(t, "", args...); r.code != 0 {
		t.Fatal(r)
	}
	sameDistilled(t, single, distilled)

	// Task 1 failed: its part and the checkpoint are missing. The docs' rerun block, in the
	// submit block's environment, runs it alone, then the merge.
	for _, f := range []string{distilled, distilled + ".manifest.json", distilled + ".shard-1-of-3.json"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	var exports []string
	for _, line := range strings.Split(submit, "\n") {
		if strings.HasPrefix(line, "export ") {
			exports = append(exports, line)
		}
	}
	said = runJobs("running task 1 again", strings.Join(exports, "\n")+"\n"+blocks["rerun"], "ssmlab-*.log")
	if n := strings.Count(said, "== ssmlab-distill-"); n != 1 || !strings.Contains(said, "shard 1/3 (--shard)") {
		t.Fatalf("the rerun: %d task logs, want one, of shard 1/3:\n%s", n, said)
	}
	if _, err := os.Stat(distilled + ".shard-1-of-3.json"); err != nil || strings.Contains(said, "ssmlab: ") {
		t.Fatalf("the rerun wrote no part (%v), or a job failed:\n%s", err, said)
	}
	if _, err := os.Stat(distilled); err != nil {
		t.Fatalf("the merge after the rerun wrote no checkpoint: %v\n%s", err, said)
	}
	sameDistilled(t, single, distilled)
}

// TestKubernetesManifest checks docs/scale.md's Indexed Job: indexed, one pod per shard,
// --shards equal to completions, the same output as the merge, which names every part. No
// cluster runs it here; Debian's python3-yaml reads it.
func TestKubernetesManifest(t *testing.T) {
	manifest := scaleBlocks(t)["kubernetes"]
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import yaml").Run(); err != nil {
		t.Skipf("needs %s with yaml (Debian's python3-yaml): %v", py, err)
	}
	cmd := exec.Command(py, "-c", "import json, sys, yaml; json.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)")
	cmd.Stdin = strings.NewReader(manifest)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Command []string `json:"command"`
	}
	var docs []struct {
		Kind string `json:"kind"`
		Spec struct {
			CompletionMode string `json:"completionMode"`
			Completions    int    `json:"completions"`
			Parallelism    int    `json:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []container `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &docs); err != nil || len(docs) != 2 {
		t.Fatalf("%v: %d documents", err, len(docs))
	}
	job, merge := docs[0], docs[1]
	if job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions < 2 || merge.Kind != "Job" {
		t.Fatalf("%+v", docs)
	}
	distill := job.Spec.Template.Spec.Containers[0].Command
	n := job.Spec.Completions
	i := slices.Index(distill, "--shards")
	o := slices.Index(distill, "-o")
	if len(distill) < 3 || distill[1] != "distill" || i < 0 || distill[i+1] != strconv.Itoa(n) || o < 0 {
		t.Fatalf("the distill command %q: want --shards %d and -o", distill, n)
	}
	out0 := distill[o+1]
	want := []string{distill[0], "merge"}
	for k := range n {
		want = append(want, fmt.Sprintf("%s.shard-%d-of-%d.json", out0, k, n))
	}
	want = append(want, "-o", out0)
	if got := merge.Spec.Template.Spec.Containers[0].Command; !slices.Equal(got, want) {
		t.Errorf("the merge command %q, want %q", got, want)
	}
	// The distill command parses: run it with the index and the shard count in place.
	args := append(slices.Clone(distill[1:]), "--shard", "0/"+strconv.Itoa(n))
	args[1] = modelCkpt
	args[slices.Index(args, "-o")+1] = filepath.Join(t.TempDir(), "k8s.safetensors")
	args = append(args, "--layers", "none-such")
	if r := run(t, "", args...); r.code != ExitUsage || !strings.Contains(r.stderr, "no layer to distil: --layers \"none-such\" picks none") {
		t.Errorf("%v", r)
	}
}
