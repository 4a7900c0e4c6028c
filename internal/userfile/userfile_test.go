package userfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestReadAllLimit(t *testing.T) {
	const limit = 1 << 10
	for _, n := range []int{0, 1, limit} {
		data, err := readAll(bytes.NewReader(make([]byte, n)), limit)
		if err != nil || len(data) != n {
			t.Errorf("%d bytes: got %d bytes, %v", n, len(data), err)
		}
	}
	_, err := readAll(bytes.NewReader(make([]byte, limit+1)), limit)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != limit || err.Error() != "the file is larger than the 0 MiB limit" {
		t.Errorf("one byte over: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path); err != nil || string(data) != "{}" {
		t.Errorf("got %q, %v", data, err)
	}

	missing := filepath.Join(dir, "missing.json")
	_, err := ReadFile(missing)
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != missing+": no such file or directory" {
		t.Errorf("missing file: %v", err)
	}

	// A regular file over the limit is refused from its size, before it is read.
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxSize+1); err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(big); !errors.As(err, &tl) || !strings.HasPrefix(err.Error(), big+": ") {
		t.Errorf("big file: %v", err)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npy")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, size, err := Open(path)
	if err != nil || size != 5 {
		t.Fatalf("got size %d, %v", size, err)
	}
	f.Close()

	if _, _, err := Open(dir); err == nil || err.Error() != dir+": not a regular file: a directory" {
		t.Errorf("directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	// A FIFO without a writer: an ordinary open waited for one forever (session info, import,
	// export, analyze and distill hung on a linked target or an argument that was a FIFO).
	// /dev/zero was read to the size limit before it was refused.
	for _, p := range []string{fifo, "/dev/zero"} {
		var nr *NotRegularError
		if _, _, err := Open(p); !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), p+": not a regular file: a ") {
			t.Errorf("Open(%s): %v", p, err)
		}
		if _, err := ReadFile(p); !errors.As(err, &nr) {
			t.Errorf("ReadFile(%s): %v", p, err)
		}
		if _, err := Head(p, 16); !errors.As(err, &nr) {
			t.Errorf("Head(%s): %v", p, err)
		}
	}
}

// TestReadFileAllocates: reading a file allocates about its size once (io.ReadAll grew its
// buffer step by step: 105 MB allocated for a 44 MB session file).
func TestReadFileAllocates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, bytes.Repeat([]byte("0123456789"), 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := ReadFile(path)
	runtime.ReadMemStats(&after)
	if err != nil || len(data) != 10<<20 {
		t.Fatalf("%d bytes, %v", len(data), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 11<<20 {
		t.Errorf("reading 10 MiB allocated %.1f MiB", float64(got)/(1<<20))
	}
}
