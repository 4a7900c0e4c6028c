package sessions

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/ssmlab/ssmlab/filters/filterfile"
)

// Added says what Add did with an item.
type Added struct {
	// ID is the item's: the new one's, or, with Existing, the one already there.
	ID string
	// Name is the name it is listed under: its own, or name-2, name-3, … where another item
	// of different content had it (Renamed).
	Name    string
	Renamed bool
	// Existing says that the session already held the item, under its name (or one Add
	// gave it on an earlier clash) and with identical content: nothing was added, so that
	// adding the same file twice (a script run again) adds it once.
	Existing bool
}

// Add adds an imported item to the session, unless an item of its name and identical content
// is there already (Added.Existing). Where another item has its name, it takes the first of
// name-2, name-3, … no item has (UniqueName), so that each name finds one item (Find).
func (s *Session) Add(it Item) (Added, error) {
	if (it.Entry == nil) == (it.Target == nil) {
		return Added{}, invalidf("an Item holds an Entry or a Target")
	}
	name := it.Name()
	if id, n, ok := s.findSame(it); ok {
		return Added{ID: id, Name: n, Existing: true}, nil
	}
	a := Added{Name: s.UniqueName(name, "")}
	a.Renamed = a.Name != name
	var err error
	if it.Entry != nil {
		e := *it.Entry
		e.Name = a.Name
		a.ID, err = s.AddEntry(e)
	} else {
		t := *it.Target
		t.Name = a.Name
		a.ID, err = s.AddTarget(t)
	}
	return a, err
}

// Name is the name of the item's entry or target.
func (it Item) Name() string {
	if it.Entry != nil {
		return it.Entry.Name
	}
	return it.Target.Name
}

var trailingNumber = regexp.MustCompile(`-\d+$`)

// UniqueName returns name, or else the first of name-2, name-3, … (a trailing -N of name
// replaced) that no filter or target other than except has (FreeName).
func (s *Session) UniqueName(name, except string) string {
	taken := map[string]bool{}
	for _, e := range s.Filters {
		taken[e.Name] = taken[e.Name] || e.ID != except
	}
	for _, t := range s.Targets {
		taken[t.Name] = taken[t.Name] || t.ID != except
	}
	// The items are finitely many, so a free name comes within len+2 tries.
	free, _ := FreeName(name, len(s.Filters)+len(s.Targets)+2, func(n string) (bool, error) {
		return taken[n], nil
	})
	return free
}

// FreeName is the one numbering of names, for items (UniqueName) and files alike: name where
// taken says it is free, or else the first free of base-2, base-3, …, base being name less a
// trailing -N, so that a copy of ring-2 is ring-3, not ring-2-2. ok is false, and the name
// "", where taken fails or none of the first tries names is free.
func FreeName(name string, tries int, taken func(string) (bool, error)) (free string, ok bool) {
	base := trailingNumber.ReplaceAllString(name, "")
	for i := 1; i <= tries; i++ {
		c := name
		if i > 1 {
			c = fmt.Sprintf("%s-%d", base, i)
		}
		t, err := taken(c)
		if err != nil {
			return "", false
		}
		if !t {
			return c, true
		}
	}
	return "", false
}

// findSame finds an item of it's kind with identical content (a filter's file text, a
// target's kernels bit for bit) named as it is, or as UniqueName would have renamed it.
func (s *Session) findSame(it Item) (id, name string, ok bool) {
	name = it.Name()
	base := trailingNumber.ReplaceAllString(name, "")
	named := func(n string) bool {
		return n == name || trailingNumber.MatchString(n) && trailingNumber.ReplaceAllString(n, "") == base
	}
	if it.Target != nil {
		for _, t := range s.Targets {
			if named(t.Name) && t.Kernels != nil && it.Target.Kernels != nil && t.Kernels.Equal(it.Target.Kernels) {
				return t.ID, t.Name, true
			}
		}
		return "", "", false
	}
	text := func(e Entry) []byte {
		b, err := filterfile.Marshal(Entry{Filter: e.Filter, Bank: e.Bank}.Document())
		if err != nil {
			return nil
		}
		return b
	}
	var mine []byte
	for _, e := range s.Filters {
		if !named(e.Name) {
			continue
		}
		if mine == nil {
			if mine = text(*it.Entry); mine == nil {
				return "", "", false
			}
		}
		if b := text(e); b != nil && bytes.Equal(b, mine) {
			return e.ID, e.Name, true
		}
	}
	return "", "", false
}
