package sessions

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// UIState is the part of the terminal UI's state worth restoring.
type UIState struct {
	Selected string   // the ID of the selected item; "" for none
	FormTab  string   // the form shown for the selected filter ("dense", "tf", …)
	Plots    []string // the plots shown, in order; the names are the UI's
	// Overlay is the ID of the item drawn under the selected one; "" for none.
	Overlay string
	// Extra holds other keys the UI stores, kept as they are.
	Extra map[string]json.RawMessage
}

func (u UIState) clone() UIState {
	u.Plots = slices.Clone(u.Plots)
	u.Extra = maps.Clone(u.Extra)
	return u
}

func (u UIState) equal(v UIState) bool {
	return u.Selected == v.Selected && u.FormTab == v.FormTab && u.Overlay == v.Overlay &&
		slices.Equal(u.Plots, v.Plots) && maps.EqualFunc(u.Extra, v.Extra, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })
}

// SetUI records the UI's state and reports whether it changed. It does not make the session
// dirty; the next save keeps it, and the next autosave of a dirty session writes it.
func (s *Session) SetUI(ui UIState) bool {
	if s.UI.equal(ui) {
		return false
	}
	s.UI = ui.clone()
	s.uiGen++
	return true
}

// Order returns the IDs of the filters and targets in the order they are listed: the order
// they were added in (a copy after its original), kept by saving and loading. Items added to
// the fields directly come last, filters before targets.
func (s *Session) Order() []string {
	kinds := make(map[string]bool, len(s.Filters)+len(s.Targets))
	for _, e := range s.Filters {
		kinds[e.ID] = true
	}
	for _, t := range s.Targets {
		kinds[t.ID] = true
	}
	out := make([]string, 0, len(kinds))
	for _, id := range s.order {
		if kinds[id] {
			out = append(out, id)
			delete(kinds, id)
		}
	}
	for _, e := range s.Filters {
		if kinds[e.ID] {
			out = append(out, e.ID)
			delete(kinds, e.ID)
		}
	}
	for _, t := range s.Targets {
		if kinds[t.ID] {
			out = append(out, t.ID)
			delete(kinds, t.ID)
		}
	}
	return out
}

// origins returns pointers to the origins of the filters and targets.
func (s *Session) origins() []*Origin {
	out := make([]*Origin, 0, len(s.Filters)+len(s.Targets))
	for i := range s.Filters {
		out = append(out, &s.Filters[i].Origin)
	}
	for i := range s.Targets {
		out = append(out, &s.Targets[i].Origin)
	}
	return out
}
