package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions"
)

// fileStore is the Store over package sessions: it opens session files, filter and bank
// files and every format sessions.Import reads (.npy, .npz, .safetensors, CSV, target
// files), saves a filter or bank as a filter file and the session as a session file.
type fileStore struct{}

func (fileStore) Open(path string) (Opened, error) {
	if sessions.IsSession(path) {
		s, err := sessions.Load(path)
		return Opened{Session: s}, err
	}
	it, err := sessions.Import(path, sessions.ImportOptions{})
	if err != nil {
		return Opened{}, err
	}
	if t := it.Target; t != nil {
		name := t.Name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		return Opened{Items: []Item{{Name: name, Kernels: t.Kernels, Source: t.Source}}}, nil
	}
	return Opened{Items: []Item{{Name: it.Entry.Name, Filter: it.Entry.Filter, Bank: it.Entry.Bank}}}, nil
}

func (fileStore) Save(path string, it Item) error {
	if it.Kernels != nil {
		return fmt.Errorf("kernels are saved with the session (ctrl+s), not as a filter file")
	}
	data, err := filterfile.Marshal(filters.Document{Name: it.Name, Filter: it.Filter, Bank: it.Bank})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

func (fileStore) Export(path string, it Item, o sessions.ExportOptions) (sessions.Exported, error) {
	var item sessions.Item
	if it.Kernels != nil {
		item.Target = &sessions.Target{Name: it.Name, Kernels: it.Kernels}
	} else {
		item.Entry = &sessions.Entry{Name: it.Name, Filter: it.Filter, Bank: it.Bank}
	}
	return sessions.ExportFile(path, []sessions.Item{item}, o)
}

// ExistsError is the error of a save as a session file over a file that exists and is not
// the session's own.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string { return e.Path + " exists" }

func (fileStore) SaveSession(s *sessions.Session, path string, over bool) error {
	if over {
		return s.SaveOver(path)
	}
	if !samePath(path, s.Path) {
		if _, err := os.Lstat(path); err == nil {
			return &ExistsError{Path: path}
		}
	}
	return s.Save(path)
}

// samePath reports whether a and b name one file as far as their names tell.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}
