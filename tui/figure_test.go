package tui

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// fakeFigures records what export-plot asks for.
type fakeFigures struct {
	path string
	req  FigureRequest
	err  error
}

func (f *fakeFigures) WriteFigure(path string, r FigureRequest) error {
	f.path, f.req = path, r
	return f.err
}

func runPalette(t *testing.T, m *Model, line string) {
	t.Helper()
	keys(t, m, ":")
	typeText(t, m, line)
	keys(t, m, "enter")
}

func TestExportPlotRequest(t *testing.T) {
	ff := &fakeFigures{}
	deps := testDeps(nil)
	deps.Figures = ff
	m := New(Options{Deps: deps, ProgressInterval: -1, Length: 64, Dir: t.TempDir()})
	send(t, m, tea.WindowSizeMsg{Width: 160, Height: 48})
	addPreset(t, m, "kernel")
	runPalette(t, m, "overlay")
	addPreset(t, m, "bank")
	runPalette(t, m, "log")
	runPalette(t, m, "export-plot fig.svg")
	if m.status.level != levelOK || !strings.Contains(m.status.text, "exported the plots to fig.svg") {
		t.Fatalf("status %q", m.status.text)
	}
	kinds, _, _ := m.plots.visible()
	var want []string
	for _, k := range kinds {
		want = append(want, figureKinds[k])
	}
	if ff.path != "fig.svg" || !slices.Equal(ff.req.Kinds, want) || ff.req.Length != 64 || !ff.req.Log {
		t.Errorf("request %+v to %q, want kinds %v, L = 64, log", ff.req, ff.path, want)
	}
	if len(ff.req.Series) != 2 || ff.req.Series[0].Name != "bank, ch 0" || ff.req.Series[0].Filter == nil ||
		ff.req.Series[1].Kernel == nil || ff.req.Series[1].Filter != nil {
		t.Errorf("series %+v: want the bank's channel 0, then the pinned kernel", ff.req.Series)
	}

	// One kind; a kernel's pole-zero plot is refused before any work starts.
	runPalette(t, m, "export-plot x.png delay")
	if !slices.Equal(ff.req.Kinds, []string{"group-delay"}) {
		t.Errorf("kinds %v, want group-delay", ff.req.Kinds)
	}
	runPalette(t, m, "overlay off")
	m.selectIndex(0) // the kernel
	ff.path = ""
	runPalette(t, m, "export-plot x.svg pz")
	if m.status.level != levelError || !strings.Contains(m.status.text, "no plot to export") || ff.path != "" {
		t.Errorf("pole-zero plot of a kernel: status %q, wrote %q", m.status.text, ff.path)
	}
	runPalette(t, m, "export-plot x.svg bode")
	if m.status.level != levelError || !strings.Contains(m.status.text, `no plot "bode"`) {
		t.Errorf("unknown kind: status %q", m.status.text)
	}

	// Failures of the writer reach the status bar.
	ff.err = errors.New("disk full")
	runPalette(t, m, "export-plot y.svg")
	if m.status.level != levelError || !strings.Contains(m.status.text, "disk full") {
		t.Errorf("failed export: status %q", m.status.text)
	}
}

func TestExportPlotFiles(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "pair")
	dir := t.TempDir()
	svg := filepath.Join(dir, "pair.svg")
	runPalette(t, m, "export-plot "+svg)
	data, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(data, []byte("<?xml")) || m.status.level != levelOK {
		t.Fatalf("SVG: %v, status %q", err, m.status.text)
	}
	pngPath := filepath.Join(dir, "pair.png")
	runPalette(t, m, "export-plot "+pngPath+" polezero")
	data, err = os.ReadFile(pngPath)
	if err != nil {
		t.Fatalf("PNG: %v, status %q", err, m.status.text)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	runPalette(t, m, "export-plot "+filepath.Join(dir, "pair.gif"))
	if m.status.level != levelError || !strings.Contains(m.status.text, "unsupported image format") {
		t.Errorf("GIF: status %q", m.status.text)
	}
}
