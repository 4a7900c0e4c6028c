package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// TestLayerChoiceSaysProblem: a layer listed with a problem (its channel-bearing tensor
// missing) is offered with import's error, not as "0 channels".
func TestLayerChoiceSaysProblem(t *testing.T) {
	const why = `the tensor "kernel.C" is missing`
	cs := layerChoices([]layouts.Layer{
		{Prefix: "a.", Layout: layouts.S4D, Order: 8, ComplexModes: 4, DType: "float32", Problem: why},
		{Prefix: "b.", Layout: layouts.S4D, Channels: 2, Order: 8, ComplexModes: 4, DType: "float32"},
	})
	if !strings.Contains(cs[0].Label, why) || strings.Contains(cs[0].Label, "0 channels") {
		t.Errorf("label %q, want the problem", cs[0].Label)
	}
	if !strings.Contains(cs[1].Label, "2 channels") {
		t.Errorf("label %q", cs[1].Label)
	}
}

// TestFreePathNumbersAsItemsAre: a file named ring-2.json that is taken is followed by
// ring-3.json, as Session.UniqueName numbers an item named ring-2 (sessions.FreeName, the one
// numbering); it suggested ring-2-2.json.
func TestFreePathNumbersAsItemsAre(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ring-2.json", "ring-4.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"ring-2.json": "ring-3.json",
		"ring-4.json": "ring-3.json",
		"ring-5.json": "ring-5.json",
		"ring.json":   "ring.json",
	} {
		if got := freePath(filepath.Join(dir, path)); got != filepath.Join(dir, want) {
			t.Errorf("freePath(%s) = %s, want %s", path, filepath.Base(got), want)
		}
	}
}
