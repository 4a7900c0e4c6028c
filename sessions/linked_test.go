package sessions_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
)

// TestLinkedSourcesConfined: a session file read from elsewhere named linked sources outside
// its directory (../../elsewhere/secret.csv, an absolute path, a link out of the directory),
// and Load read them. Now only sources under the session's directory are read; the others
// carry an *OutsideError until the user allows them.
func TestLinkedSourcesConfined(t *testing.T) {
	root := t.TempDir()
	dir, elsewhere := filepath.Join(root, "a", "b"), filepath.Join(root, "elsewhere")
	for _, d := range []string{filepath.Join(dir, "sub"), elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	csv := []byte("1,2,3\n")
	for _, p := range []string{filepath.Join(elsewhere, "secret.csv"), filepath.Join(dir, "sub", "ok.csv")} {
		if err := os.WriteFile(p, csv, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "out")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	s := sessions.New()
	ids := map[string]bool{} // ID → inside
	for _, tc := range []struct {
		path   string
		inside bool
	}{
		{"sub/ok.csv", true},
		{"../../elsewhere/secret.csv", false},
		{filepath.Join(elsewhere, "secret.csv"), false},
		{"out/secret.csv", false},
		{"sub/../../../elsewhere/secret.csv", false},
	} {
		id := must(s.AddTarget(sessions.Target{Name: tc.path, Linked: true, Source: &sessions.Source{Path: tc.path}}))
		ids[id] = tc.inside
	}
	path := filepath.Join(dir, "s.ssmlab")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	check := func(s *sessions.Session, allowed bool) {
		t.Helper()
		for id, in := range ids {
			tg, _ := s.Target(id)
			var oe *sessions.OutsideError
			switch {
			case in || allowed:
				if tg.Err != nil || tg.Kernels == nil {
					t.Errorf("%s (%s): %v", id, tg.Name, tg.Err)
				}
			case !errors.As(tg.Err, &oe) || tg.Kernels != nil || oe.Path != tg.Name:
				t.Errorf("%s (%s) outside: kernels %v, err %v", id, tg.Name, tg.Kernels, tg.Err)
			}
		}
	}
	got := must(sessions.Load(path))
	check(got, false)
	check(must(sessions.LoadWith(path, sessions.LoadOptions{AllowOutside: true})), true)
	for id, in := range ids {
		if !in {
			if err := got.ReadOutside(id); err != nil {
				t.Errorf("ReadOutside(%s): %v", id, err)
			}
		}
	}
	check(got, true)
	if got.ReadOutside("t99") == nil {
		t.Error("ReadOutside of a missing target: no error")
	}
}
