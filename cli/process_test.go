package cli

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// asCLIEnv makes the test binary act as ssmlab (see TestMain).
const asCLIEnv = "SSMLAB_TEST_AS_CLI"

// TestMain lets the test binary act as ssmlab: with asCLIEnv set, it runs Main on its
// arguments and exits, so that tests can run real processes (signals, concurrent writers)
// without building the binary.
func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) != "" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// self is the test binary, as an absolute path: os.Args[0] is relative where the binary was
// started as ../cli.test (README, Backends), and the processes run in other directories.
func self() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}

// process returns a command running ssmlab with args in dir; its stdout and stderr go to the
// returned buffers.
func process(dir string, args ...string) (cmd *exec.Cmd, stdout, stderr *bytes.Buffer) {
	cmd = exec.Command(self(), args...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	cmd.Dir = dir
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, stdout, stderr
}
