package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// twoLayerCheckpoint writes a safetensors checkpoint holding two stripedhyena layers, "f1."
// (a ring) and "f2." (a crowded modal bank), as ssmlab export writes several items.
func twoLayerCheckpoint(t *testing.T, dir string) (path string, second *filters.Bank) {
	t.Helper()
	ring, err := ringDiagonal(8, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	a, err := filters.NewBank([]filters.Filter{ring, ring})
	if err != nil {
		t.Fatal(err)
	}
	b, err := filters.NewBank([]filters.Filter{crowdedDiagonal(t)})
	if err != nil {
		t.Fatal(err)
	}
	s := sessions.New()
	var items []sessions.Item
	for _, bk := range []*filters.Bank{a, b} {
		id, err := s.AddFilter(filters.Document{Name: "x", Bank: bk})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := s.Filter(id)
		items = append(items, sessions.Item{Entry: &e})
	}
	path = filepath.Join(dir, "model.safetensors")
	if _, err := sessions.ExportFile(path, items, sessions.ExportOptions{Format: sessions.ExportSafetensors, Layout: layouts.StripedHyena}); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestOpenCheckpointLayers: o (or :open) on a checkpoint of several layers offers the layers
// ssmlab import --list detects; enter imports the one picked, as ssmlab import --layout
// --tensor does; esc imports nothing; a checkpoint of one layer is imported at once (issue 22
// item 6).
func TestOpenCheckpointLayers(t *testing.T) {
	dir := t.TempDir()
	path, second := twoLayerCheckpoint(t, dir)
	m := newTestModel(t, 140, 44, nil)
	m.setFocus(paneList)
	keys(t, m, "o")
	typeText(t, m, path)
	keys(t, m, "enter")
	p, ok := dialogOf[*layerPicker](m)
	if !ok || len(p.layers) != 2 {
		t.Fatalf("no layer picker: %T (status %q)", m.dialog, m.status.text)
	}
	s := screen(m)
	for _, want := range []string{"open a layer of " + path, "f1.", "f2.", "stripedhyena", "2 channels, order 8 (4 complex poles), float64", "1 channel, order 32 (16 complex poles)"} {
		if !strings.Contains(s, want) {
			t.Errorf("the picker lacks %q:\n%s", want, s)
		}
	}
	keys(t, m, "esc")
	if m.dialog != nil || len(m.sess.Order()) != 0 {
		t.Fatalf("esc: dialog %T, %d items", m.dialog, len(m.sess.Order()))
	}

	keys(t, m, ":")
	typeText(t, m, "open "+path)
	keys(t, m, "enter", "down", "enter")
	e := m.selected()
	if e == nil || e.kind != kindBank {
		t.Fatalf("enter imported %+v (status %q)", e, m.status.text)
	}
	if !strings.Contains(m.status.text, "imported "+path+": stripedhyena layer f2") {
		t.Errorf("status %q", m.status.text)
	}
	if e.origin.File != "" || !strings.Contains(e.origin.Note, "stripedhyena layer f2") {
		t.Errorf("origin %+v: w must not write over the checkpoint", e.origin)
	}
	// the CLI's import of the same layer
	cli, err := sessions.Import(path, sessions.ImportOptions{Layout: "stripedhyena", Tensor: "f2."})
	if err != nil {
		t.Fatal(err)
	}
	for ch := range second.Channels {
		got, want := e.bank.Channels[ch].Impulse(256), cli.Entry.Bank.Channels[ch].Impulse(256)
		if d := filters.RelDiff(want, got); d != 0 {
			t.Errorf("channel %d differs from ssmlab import's by %.3g", ch, d)
		}
		if d := filters.RelDiff(second.Channels[ch].Impulse(256), got); !(d < 1e-12) {
			t.Errorf("channel %d differs from the layer written by %.3g", ch, d)
		}
	}

	// one layer: imported at once
	one := filepath.Join("..", "testdata", "layouts", "stripedhyena_32.pt")
	keys(t, m, ":")
	typeText(t, m, "open "+one)
	keys(t, m, "enter")
	if m.dialog != nil || !strings.Contains(m.status.text, "imported "+one+": stripedhyena layer") {
		t.Errorf("a one-layer checkpoint: dialog %T, status %q", m.dialog, m.status.text)
	}
	// An S4D layer is imported at once too, and the status warns, as ssmlab import does, that
	// its inv_dt went through exp, which the checkpoint does not record.
	n := len(m.sess.Order())
	s4d := filepath.Join("..", "testdata", "layouts", "s4d_32.pt")
	keys(t, m, ":")
	typeText(t, m, "open "+s4d)
	keys(t, m, "enter")
	if m.dialog != nil || len(m.sess.Order()) != n+1 || !strings.Contains(m.status.text, "warning: inv_dt read with dt_transform exp") {
		t.Errorf("an S4D checkpoint: dialog %T, %d items, status %q", m.dialog, len(m.sess.Order()), m.status.text)
	}
}

// TestLayerPickerCountsModes: an LRU layer's order is its real state count, each of its
// complex modes counting 2 once imported, so the picker says "order 128 (64 complex modes)"
// for what imports as a diagonal bank of order 128, not "order 64".
func TestLayerPickerCountsModes(t *testing.T) {
	path := filepath.Join("..", "testdata", "trained", "copy-drawn-lru.safetensors")
	m := newTestModel(t, 140, 44, nil)
	runPalette(t, m, "open "+path)
	if _, ok := dialogOf[*layerPicker](m); !ok {
		t.Fatalf("no layer picker: %T (status %q)", m.dialog, m.status.text)
	}
	if s := screen(m); !strings.Contains(s, "64 channels, order 128 (64 complex modes),") || strings.Contains(s, "order 64") {
		t.Errorf("the picker:\n%s", s)
	}
	keys(t, m, "enter")
	if e := m.selected(); e == nil || e.order() != 128 {
		t.Fatalf("imported %+v (status %q)", e, m.status.text)
	}
}
