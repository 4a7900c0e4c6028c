package tui

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// fileStore is the Store over package sessions: it opens session files, filter and bank
// files and every format sessions.Import reads (.npy, .npz, .safetensors, CSV, target
// files), saves a filter or bank as a filter file and the whole workbench as a session.
type fileStore struct{}

func (fileStore) Open(path string) ([]Item, error) {
	if sessions.IsSession(path) {
		s, err := sessions.Load(path)
		if err != nil {
			return nil, err
		}
		var items []Item
		for _, e := range s.Filters {
			items = append(items, Item{Name: e.Name, Filter: e.Filter, Bank: e.Bank})
		}
		for _, t := range s.Targets {
			if t.Kernels == nil {
				continue // a linked target whose source is gone; Load said why in t.Err
			}
			items = append(items, Item{Name: t.Name, Kernels: rowsOf(t.Kernels)})
		}
		return items, nil
	}
	it, err := sessions.Import(path, sessions.ImportOptions{})
	if err != nil {
		return nil, err
	}
	if it.Target != nil {
		name := it.Target.Name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		return []Item{{Name: name, Kernels: rowsOf(it.Target.Kernels)}}, nil
	}
	return []Item{{Name: it.Entry.Name, Filter: it.Entry.Filter, Bank: it.Entry.Bank}}, nil
}

// rowsOf returns the kernels of a (length) or (channels, length) array.
func rowsOf(a *arrays.Array) [][]float64 {
	if len(a.Shape) != 2 {
		return [][]float64{a.Data}
	}
	rows := make([][]float64, a.Shape[0])
	for i := range rows {
		rows[i] = a.Data[i*a.Shape[1] : (i+1)*a.Shape[1]]
	}
	return rows
}

func (fileStore) Save(path string, it Item) error {
	if it.Kernels != nil {
		return fmt.Errorf("kernels are saved with the session (save-session PATH), not as a filter file")
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
		k, err := arrays.FromRows(it.Kernels)
		if err != nil {
			return sessions.Exported{}, err
		}
		item.Target = &sessions.Target{Name: it.Name, Kernels: k}
	} else {
		item.Entry = &sessions.Entry{Name: it.Name, Filter: it.Filter, Bank: it.Bank}
	}
	return sessions.ExportFile(path, []sessions.Item{item}, o)
}

func (fileStore) SaveSession(path string, items []Item) error {
	s := sessions.New()
	for _, it := range items {
		if it.Kernels != nil {
			k, err := arrays.FromRows(it.Kernels)
			if err != nil {
				return fmt.Errorf("%s: %w", it.Name, err)
			}
			if _, err := s.AddTarget(sessions.Target{Name: it.Name, Kernels: k}); err != nil {
				return fmt.Errorf("%s: %w", it.Name, err)
			}
			continue
		}
		if _, err := s.AddFilter(filters.Document{Name: it.Name, Filter: it.Filter, Bank: it.Bank}); err != nil {
			return fmt.Errorf("%s: %w", it.Name, err)
		}
	}
	return s.Save(path)
}
