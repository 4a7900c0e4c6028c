package tui

import (
	"path/filepath"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
)

// fileStore is the default Store: one filter or bank per filter file (docs/formats.md),
// through the filters codec. Sessions are in memory until the sessions package lands.
type fileStore struct{}

func (fileStore) Open(path string) ([]Item, error) {
	doc, err := filters.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := doc.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return []Item{{Name: name, Filter: doc.Filter, Bank: doc.Bank}}, nil
}

func (fileStore) Save(path string, it Item) error {
	return filters.WriteFile(path, filters.Document{Name: it.Name, Filter: it.Filter, Bank: it.Bank})
}
