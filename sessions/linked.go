package sessions

import (
	"fmt"
	"path/filepath"
	"strings"
)

// OutsideError is the Err of a linked target whose source lies outside the directory of the
// session file that names it (an absolute path, a path through "..", or a symbolic link out):
// a session file from elsewhere could otherwise make ssmlab read any file the user can. The
// source is read only when the user allows it (LoadOptions.AllowOutside, ReadOutside).
type OutsideError struct {
	Target string // the target's ID
	Path   string // the source as the session file names it
	File   string // the file it resolves to
	Dir    string // the session file's directory
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("target %s: its linked source %s (%s) is outside the session's directory %s, and is read only when allowed", e.Target, e.Path, e.File, e.Dir)
}

// loadLinked reads the kernels of linked targets, relative paths from dir; sources outside
// dir only when allowOutside.
func (s *Session) loadLinked(dir string, allowOutside bool) {
	for i := range s.Targets {
		if s.Targets[i].Linked {
			s.readLinked(&s.Targets[i], dir, allowOutside)
		}
	}
}

// readLinked reads one linked target's kernels, setting Kernels or Err.
func (s *Session) readLinked(t *Target, dir string, allowOutside bool) {
	p := t.Source.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if !allowOutside {
		if file, ok := inside(dir, p); !ok {
			t.Kernels, t.Err = nil, &OutsideError{Target: t.ID, Path: t.Source.Path, File: file, Dir: dir}
			return
		}
	}
	a, err := readKernels(p, t.Source.Tensor)
	if err == nil {
		err = checkKernels(a)
	}
	if err != nil {
		t.Kernels, t.Err = nil, err
		return
	}
	t.Kernels, t.Err = a, nil
}

// ReadOutside reads the kernels of the linked target id from its source even when that lies
// outside the session file's directory: for when the user, told by its *OutsideError, allows
// it.
func (s *Session) ReadOutside(id string) error {
	kind, i := s.Lookup(id)
	if kind != KindTarget || !s.Targets[i].Linked {
		return notFound(id)
	}
	dir := "."
	if s.Path != "" {
		dir = filepath.Dir(s.Path)
	}
	t := &s.Targets[i]
	s.readLinked(t, dir, true)
	return t.Err
}

// inside reports whether file lies under dir once symbolic links are resolved, and returns
// the file it resolves to (as far as it exists).
func inside(dir, file string) (string, bool) {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		realDir = dir
	}
	realFile, err := filepath.EvalSymlinks(file)
	if err != nil {
		realFile = filepath.Clean(file) // missing: reading it fails anyway
	}
	if a, err := filepath.Abs(realDir); err == nil {
		realDir = a
	}
	if a, err := filepath.Abs(realFile); err == nil {
		realFile = a
	}
	rel, err := filepath.Rel(realDir, realFile)
	ok := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
	return realFile, ok
}
