package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagFilesRefuseDash: a flag that names a file (--job, --data, --session, --input) given
// "-" is refused as the command-line mistake it is, exit 2, as plot's --ladder and export's
// FILE are: --job - and --data - said "ssmlab: -: no such file or directory" (exit 1), and
// import --session - wrote a session file named "-" in the working directory (exit 0).
func TestFlagFilesRefuseDash(t *testing.T) {
	dir := t.TempDir()
	kernels := writeText(t, dir, "k.json", `{"kernels": [[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]]}`)
	t.Chdir(dir) // a file named "-" would land here
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"distill", kernels, "--order", "1", "--job", "-"}, "distill: --job reads a file, not stdin"},
		{[]string{"train", "--task", "delay", "--job", "-"}, "train: --job reads a file, not stdin"},
		{[]string{"train", "--task", "sysid", "--data", "-"}, "train: --data reads a file, not stdin"},
		{[]string{"import", kernels, "--session", "-"}, "import: --session names a session file, not stdout"},
		{[]string{"merge", "part.json", "--input", "-", "-o", filepath.Join(dir, "m.safetensors")}, "merge: --input reads a file, not stdin"},
	} {
		r := run(t, `{"u": [1, 0, 0, 0], "y": [1, 0, 0, 0]}`, c.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %v, want exit 2 saying %q", c.args, r, c.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
		t.Errorf("a file named \"-\" was written")
	}
}
