package tui

import (
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// impulseTol bounds the difference of impulse responses across a conversion round trip of an
// order-2 filter (filters reports ~1e-16; the margin is for other platforms' FMA).
const impulseTol = 1e-12

func TestGoldenScreens(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"empty-80x24", 80, 24, nil},
		{"pair-80x24", 80, 24, []string{"preset:pair"}},
		{"pair-repr-80x24", 80, 24, []string{"preset:pair", "tab"}},
		{"pair-tf-80x24", 80, 24, []string{"preset:pair", "tab", "5"}},
		{"help-80x24", 80, 24, []string{"?"}},
		{"pair-160x48", 160, 48, []string{"preset:pair", "tab", "tab", "n"}},
		{"dense-160x48", 160, 48, []string{"preset:dense2", "tab"}},
		{"job-form-160x48", 160, 48, []string{"preset:pair", "D"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestModel(t, tc.w, tc.h, nil)
			for _, k := range tc.keys {
				if name, ok := strings.CutPrefix(k, "preset:"); ok {
					addPreset(t, m, name)
					continue
				}
				keys(t, m, k)
			}
			got := screen(m)
			checkSize(t, m.View(), tc.w, tc.h)
			golden(t, tc.name, got)
		})
	}
}

// checkSize asserts that a view fills exactly w×h cells.
func checkSize(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Errorf("line %d is %d cells wide, want at most %d: %q", i, lw, w, l)
		}
	}
}

func TestEverySize(t *testing.T) {
	// Every size from tiny to wide renders without panicking and within the window, in every
	// focus, with a filter, a job and the help open.
	m := newTestModel(t, 80, 24, nil)
	addPreset(t, m, "pair")
	addPreset(t, m, "ring")
	keys(t, m, "D", "enter")
	for _, w := range []int{1, 10, 30, 59, 60, 79, 80, 109, 110, 149, 150, 200} {
		for _, h := range []int{1, 5, 13, 14, 24, 48} {
			send(t, m, tea.WindowSizeMsg{Width: w, Height: h})
			for p := range nPanes {
				m.setFocus(p)
				send(t, m, statusMsg{text: "x"})
				v := m.View()
				if h > statusLines {
					checkSize(t, v, w, h)
				}
			}
		}
	}
	keys(t, m, "?")
	send(t, m, tea.WindowSizeMsg{Width: 40, Height: 10})
	_ = m.View()
}

func TestAddPresetShowsResponses(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "pair")
	e := m.selected()
	if e == nil || e.name != "pair" || e.form() != "zpk" {
		t.Fatalf("selected %+v, want the pair preset", e)
	}
	if e.resp == nil || len(e.resp.r.Impulse) != m.length {
		t.Fatalf("responses not computed: %+v", e.resp)
	}
	want := e.filter.Impulse(m.length)
	for i, v := range e.resp.r.Impulse {
		if v != want[i] {
			t.Fatalf("h[%d] = %g, want %g", i, v, want[i])
		}
	}
	s := screen(m)
	for _, part := range []string{"filters (1)", "pair", "zpk 2 ✓", "impulse", "magnitude", "pole-zero", "phase", "group delay", "×", "○"} {
		if !strings.Contains(s, part) {
			t.Errorf("screen lacks %q", part)
		}
	}
}

func TestConvertAndBack(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	orig := m.selected().filter.Impulse(256)
	keys(t, m, "tab", "5") // representation, tf tab: a view with its report
	s := screen(m)
	if !strings.Contains(s, "zpk → tf: rel error") || !strings.Contains(s, "c makes pair tf") {
		t.Fatalf("tf view without its report:\n%s", s)
	}
	if e := m.selected(); e.form() != "zpk" {
		t.Fatalf("viewing converted the filter to %s", e.form())
	}
	keys(t, m, "c")
	if e := m.selected(); e.form() != "tf" || e.lastReport() == nil || e.lastReport().To != filters.FormTF {
		t.Fatalf("after c: form %s, report %+v", e.form(), e.lastReport())
	}
	if !strings.Contains(m.status.text, "converted zpk → tf: rel error") {
		t.Errorf("status %q", m.status.text)
	}
	// back through the palette
	keys(t, m, ":")
	typeText(t, m, "convert zpk")
	keys(t, m, "enter")
	if e := m.selected(); e.form() != "zpk" {
		t.Fatalf("after :convert zpk the form is %s (status %q)", e.form(), m.status.text)
	}
	if !strings.Contains(screen(m), "tf → zpk: rel error") {
		t.Errorf("the report of the last conversion is not shown:\n%s", screen(m))
	}
	got := m.selected().filter.Impulse(256)
	for i := range got {
		if math.Abs(got[i]-orig[i]) > impulseTol {
			t.Fatalf("round trip moved h[%d] by %g", i, got[i]-orig[i])
		}
	}
	keys(t, m, "u", "u")
	if e := m.selected(); e.form() != "zpk" || len(e.undo) != 0 {
		t.Errorf("undo: form %s, %d left", e.form(), len(e.undo))
	}
}

func TestMovePole(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	m.setFocus(panePlots)
	p0 := m.selected().filter.(*filters.ZPK).Poles[0]
	rev := m.selected().rev
	keys(t, m, "n") // wraps to the only pair
	keys(t, m, "right", "up")
	e := m.selected()
	z := e.filter.(*filters.ZPK)
	p1 := z.Poles[0]
	s := stepLevels[m.plots.step]
	if d := cmplx.Phase(p1) - cmplx.Phase(p0); math.Abs(d-s.th) > 1e-12 {
		t.Errorf("angle moved by %g, want %g", d, s.th)
	}
	if d := cmplx.Abs(p1) - cmplx.Abs(p0); math.Abs(d-s.r) > 1e-12 {
		t.Errorf("radius moved by %g, want %g", d, s.r)
	}
	if z.Poles[1] != cmplx.Conj(p1) {
		t.Errorf("the conjugate did not follow: %v, %v", z.Poles[0], z.Poles[1])
	}
	if e.rev != rev+2 || e.resp.key.rev != e.rev || e.pz.key.rev != e.rev {
		t.Errorf("rev %d (was %d), responses for %d, poles for %d", e.rev, rev, e.resp.key.rev, e.pz.key.rev)
	}
	// the plots show the new responses
	want := z.Impulse(m.length)
	if e.resp.r.Impulse[5] != want[5] {
		t.Errorf("h[5] = %g, want %g", e.resp.r.Impulse[5], want[5])
	}
	// a coarser step, then moving out of the unit circle warns
	keys(t, m, "+", "+")
	for range 10 {
		keys(t, m, "up")
	}
	if !strings.Contains(m.status.text, "unstable") {
		t.Errorf("status %q does not warn of instability", m.status.text)
	}
	if !strings.Contains(screen(m), "✗") {
		t.Errorf("the list does not mark the filter unstable")
	}
}

// TestMoveRealPole: every arrow moves a real pole along the real axis by the radius step
// (issue 21 item 6: ←/→ moved it by the angle step in radians, 0.9 → 0.978 and on to
// "unstable"), and the pole stays real.
func TestMoveRealPole(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	z, err := filters.NewZPK(nil, []complex128{-0.9, 0.5 + 0.3i, 0.5 - 0.3i}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "real", z)
	m.setFocus(panePlots)
	s := stepLevels[m.plots.step]
	pole := func() complex128 { return m.selected().filter.(*filters.ZPK).Poles[0] }
	for range 3 { // n selects the next pole once the poles are known
		if keys(t, m, "n"); strings.Contains(m.status.text, "pole 1 of 2: -0.9") {
			break
		}
	}
	if !strings.Contains(m.status.text, "pole 1 of 2: -0.9") {
		t.Fatalf("selected: %q", m.status.text)
	}
	for _, tc := range []struct {
		key  string
		want float64
	}{
		{"right", -0.9 + s.r}, // towards +∞ along the axis
		{"right", -0.9 + 2*s.r},
		{"left", -0.9 + s.r},
		{"up", -0.9},         // away from the origin
		{"down", -0.9 + s.r}, // towards it
		{"left", -0.9},
	} {
		keys(t, m, tc.key)
		if p := pole(); imag(p) != 0 || math.Abs(real(p)-tc.want) > 1e-12 {
			t.Fatalf("after %s the pole is %v, want %v (status %q)", tc.key, p, tc.want, m.status.text)
		}
	}
	if p := m.selected().filter.(*filters.ZPK).Poles; p[1] != 0.5+0.3i || p[2] != 0.5-0.3i {
		t.Errorf("the pair moved too: %v", p)
	}
}

func TestMovePoleDiagonalAndDense(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "ring")
	m.setFocus(panePlots)
	keys(t, m, "n", "left")
	e := m.selected()
	d := e.filter.(*filters.Diagonal)
	if d.Residues[2] != complex(0.5, 0.1) {
		t.Errorf("residues changed: %v", d.Residues[2])
	}
	if e.pz == nil || !e.pz.haveZeros {
		t.Errorf("zeros of the moved filter not computed: %+v", e.pz)
	}
	// dense: the first move converts to zpk, the next moves the pole
	addPreset(t, m, "dense2")
	keys(t, m, "right")
	if e := m.selected(); e.form() != "zpk" {
		t.Fatalf("moving a pole of a dense filter left it %s (status %q)", e.form(), m.status.text)
	}
	before := m.selected().filter.(*filters.ZPK).Poles[0]
	keys(t, m, "right")
	if m.selected().filter.(*filters.ZPK).Poles[0] == before {
		t.Error("the second key did not move the pole")
	}
}

// TestPoleKeysWaitForPoles: pole keys sent at once, before the results they need come back
// (a script's n →), do what they do one at a time. On a tf filter of a pole pair and a real
// pole, n waits for the poles the tf computes in a command, and → for its conversion to zpk,
// which it starts: both apply once they are there, the pair n selected moves and nothing
// else does. A second → sent with them moves it again, and a bank of such channels waits for
// its conversion as one filter does. The arrow was dropped without a word: the conversion
// came, and the key that started it and those behind it had done nothing.
func TestPoleKeysWaitForPoles(t *testing.T) {
	pair := cmplx.Rect(0.9, math.Pi/3)
	// (z − p)(z − p̄)(z − 0.5): a = [1, −(2 Re p + 0.5), |p|² + Re p, −0.5|p|²]
	den := []float64{-(2*real(pair) + 0.5), 0.81 + real(pair), -0.5 * 0.81}
	tf, err := filters.NewTransferFunction(den, []float64{1, 0.5, 0.25}, 0)
	if err != nil {
		t.Fatal(err)
	}
	bank, err := filters.NewBank([]filters.Filter{tf, tf})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		item  Item
		keys  []string
		moves int // keys that move the selected pole
	}{
		{"n →", Item{Name: "f", Filter: tf}, []string{"n", "right"}, 1},
		{"n → →", Item{Name: "f", Filter: tf}, []string{"n", "right", "right"}, 2},
		{"bank n →", Item{Name: "b", Bank: bank}, []string{"n", "right"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestModel(t, 120, 40, nil)
			// every message's commands are held back, so that the keys come before any
			// result, and run afterwards
			var held []tea.Cmd
			update := func(msg tea.Msg) {
				_, cmd := m.Update(msg)
				held = append(held, cmd)
			}
			update(openMsg{path: "f.json", opened: Opened{Items: []Item{tc.item}}})
			m.setFocus(panePlots)
			for _, k := range tc.keys {
				update(keyMsg(k))
			}
			if e := m.selected(); e.form() != "tf" {
				t.Fatalf("the filter is %s before any result came", e.form())
			}
			if s := m.status.text; !strings.Contains(s, "the pole moves once it is done") {
				t.Errorf("while converting, the status says %q", s)
			}
			for _, c := range held {
				runCmd(t, m, c, 0)
			}
			e := m.selected()
			got, ok := e.current().(*filters.ZPK)
			if !ok {
				t.Fatalf("the shown filter is %s, want zpk (status %q)", e.form(), m.status.text)
			}
			conv, _, err := filters.Convert(tf, filters.FormZPK) // what the workbench converts
			if err != nil {
				t.Fatal(err)
			}
			want := conv.(*filters.ZPK).Poles
			reps := poleReps(want)
			if len(reps) != 2 || m.plots.poleSel != 1 {
				t.Fatalf("%d poles to select, selected %d: want n to have selected the second of 2", len(reps), m.plots.poleSel)
			}
			sel := reps[1]
			moved := want[sel]
			for range tc.moves {
				moved = nudge(moved, stepLevels[m.plots.step], 0, 1)
			}
			for i, p := range got.Poles {
				w := want[i]
				switch {
				case i == sel:
					w = moved
				case imag(want[sel]) != 0 && i == filters.Partner(want, sel):
					w = cmplx.Conj(moved)
				}
				if cmplx.Abs(p-w) > 1e-12 {
					t.Errorf("pole %d is %v, want %v (converted %v, the selected one %d moved %d times)", i, p, w, want[i], sel, tc.moves)
				}
			}
			if s := m.status.text; !strings.Contains(s, "converted tf → zpk") && !strings.Contains(s, "converted 2 channels to zpk") || !strings.Contains(s, "pole →") {
				t.Errorf("status %q: want the conversion's report, then the move", s)
			}
		})
	}
	// A conversion that asks first (outside the documented accuracy) and is declined drops
	// the keys waiting on it: the filter's zpk form, taken later by c, has its poles unmoved.
	t.Run("declined", func(t *testing.T) {
		m := newTestModel(t, 140, 44, nil)
		cluster := clusterTF(t)
		e := addFilter(t, m, "cluster", cluster)
		m.setFocus(panePlots)
		keys(t, m, "right", "right")
		if _, ok := dialogOf[*confirm](m); !ok {
			t.Fatalf("no question (dialog %T, status %q)", m.dialog, m.status.text)
		}
		keys(t, m, "esc")
		if len(m.plots.queued) != 0 {
			t.Errorf("%d pole keys still queued after the conversion was declined", len(m.plots.queued))
		}
		m.setFocus(paneRepr)
		keys(t, m, "6", "c", "y")
		got, ok := m.entry(e.id).current().(*filters.ZPK)
		conv, _, err := filters.Convert(cluster, filters.FormZPK)
		if !ok || err != nil {
			t.Fatalf("c y: the filter is %s (%v)", m.entry(e.id).form(), err)
		}
		for i, p := range got.Poles {
			if w := conv.(*filters.ZPK).Poles[i]; p != w {
				t.Errorf("pole %d is %v, the conversion's %v: a declined move applied", i, p, w)
			}
		}
	})
}

func TestStaleResultsAreDropped(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	m.setFocus(panePlots)
	// take the responses command of one edit without running it
	_, cmd := m.Update(keyMsg("right"))
	old := lastResp(cmd)
	if e := m.selected(); old.key.rev != e.rev {
		t.Fatalf("no responses command for rev %d", e.rev)
	}
	// A newer generation while the old one is in flight: one computation per entry runs at a
	// time, so the new one starts when the old result comes back.
	keys(t, m, "right")
	if e := m.selected(); e.resp.key.rev == e.rev {
		t.Fatal("computed while another computation was in flight")
	}
	send(t, m, old) // the old result arrives late: dropped, and the current one computed
	if e := m.selected(); e.resp.key.rev != e.rev || old.key.rev == e.rev {
		t.Errorf("shown rev %d, current %d, stale %d", e.resp.key.rev, e.rev, old.key.rev)
	}
}

func TestEditCell(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	keys(t, m, "tab")
	// rows: pole 1, pole 2, zero 1, zero 2, gain, h0; column 1 is the value
	keys(t, m, "down", "down", "down", "down", "enter")
	if !m.repr.editing || m.repr.editRef.field != "gain" {
		t.Fatalf("editing %v %+v", m.repr.editing, m.repr.editRef)
	}
	keys(t, m, "ctrl+u")
	typeText(t, m, "2")
	keys(t, m, "enter")
	if g := m.selected().filter.(*filters.ZPK).Gain; g != 2 {
		t.Fatalf("gain = %g, want 2 (status %q)", g, m.status.text)
	}
	// a pole by its modulus: the partner follows
	keys(t, m, "up", "up", "up", "up", "right", "enter", "ctrl+u")
	typeText(t, m, "0.5")
	keys(t, m, "enter")
	z := m.selected().filter.(*filters.ZPK)
	if math.Abs(cmplx.Abs(z.Poles[0])-0.5) > 1e-15 || z.Poles[1] != cmplx.Conj(z.Poles[0]) {
		t.Fatalf("poles %v (status %q)", z.Poles, m.status.text)
	}
	// a bad value is an error in the status bar and changes nothing
	keys(t, m, "enter", "ctrl+u")
	typeText(t, m, "abc")
	keys(t, m, "enter")
	if f := m.selected().filter; m.status.level != levelError || f.(*filters.ZPK) != z {
		t.Errorf("bad input: status %q, filter changed %v", m.status.text, f != z)
	}
	// a real value for a member of a pair: the error names what was typed (it named only
	// the pole it would have replaced)
	keys(t, m, "left", "enter", "ctrl+u")
	typeText(t, m, "5")
	keys(t, m, "enter")
	if want := "5 is real, but " + cnum(z.Poles[0]) + " is one of a conjugate pair: it must stay complex"; m.status.level != levelError || !strings.Contains(m.status.text, want) {
		t.Errorf("a real value for a pair: status %q, want %q", m.status.text, want)
	}
	// esc cancels
	keys(t, m, "enter", "esc")
	if m.repr.editing {
		t.Error("esc did not cancel the edit")
	}
}

func TestListActions(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	keys(t, m, "y")
	if len(m.entries()) != 2 || m.selected().name != "pair-copy" {
		t.Fatalf("duplicate: %d entries, selected %q", len(m.entries()), m.selected().name)
	}
	keys(t, m, "r", "ctrl+u")
	typeText(t, m, "mine")
	keys(t, m, "enter")
	if m.selected().name != "mine" {
		t.Fatalf("rename: %q", m.selected().name)
	}
	keys(t, m, "x")
	if _, ok := dialogOf[*confirm](m); !ok {
		t.Fatal("delete did not ask")
	}
	keys(t, m, "n")
	if len(m.entries()) != 2 || m.dialog != nil {
		t.Fatal("n deleted, or did not close the question")
	}
	keys(t, m, "x", "y")
	if len(m.entries()) != 1 || m.selected().name != "pair" {
		t.Fatalf("after delete: %d entries", len(m.entries()))
	}
	keys(t, m, "up", "g", "G")
	// pin as overlay: another filter is drawn under the selected one
	addPreset(t, m, "ring")
	keys(t, m, "up", "v", "down")
	d := m.plots.data()
	if d.ovName != "pair" || d.ovResp == nil {
		t.Errorf("overlay %q %v", d.ovName, d.ovResp != nil)
	}
}

// TestDeleteSaysWhatHappens: x's question warns that there is no undo (the status said so
// only after y), n and esc say what was kept (an old status stayed up), and a deletion counts
// among the unsaved work as other changes do (the status line showed a bare "unsaved").
func TestDeleteSaysWhatHappens(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	addPreset(t, m, "ring")
	runPalette(t, m, "save-session "+filepath.Join(t.TempDir(), "s.ssmlab"))
	if m.sess.Dirty() {
		t.Fatalf("not saved: %q", m.status.text)
	}
	keys(t, m, "x")
	c, ok := dialogOf[*confirm](m)
	if !ok || !strings.Contains(c.body, "delete ring? There is no undo for this.") {
		t.Fatalf("x: dialog %T %+v", m.dialog, c)
	}
	for _, k := range []string{"n", "esc"} {
		m.setStatus(levelOK, "an older result")
		keys(t, m, "x", k)
		if m.dialog != nil || len(m.entries()) != 2 || m.status.text != "kept ring" {
			t.Errorf("x, %s: dialog %T, %d items, status %q", k, m.dialog, len(m.entries()), m.status.text)
		}
	}
	keys(t, m, "x", "y")
	line := strings.Split(screen(m), "\n")[38]
	if m.status.text != "deleted ring" || !strings.HasSuffix(line, "1 unsaved") {
		t.Errorf("x, y: status %q, status line %q", m.status.text, line)
	}
	keys(t, m, "q")
	if c, ok := dialogOf[*confirm](m); !ok || !strings.Contains(c.body, "1 unsaved: ring (deleted)") {
		t.Errorf("q: dialog %T %+v", m.dialog, c)
	}
	keys(t, m, "esc", "ctrl+s")
	if line := strings.Split(screen(m), "\n")[38]; m.sess.Dirty() || len(m.unsavedNames()) != 0 || strings.Contains(line, "unsaved") {
		t.Errorf("saved: %v, unsaved %v, status line %q", m.sess.Dirty(), m.unsavedNames(), line)
	}
}

func TestBankAndKernel(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "bank")
	e := m.selected()
	if e.kind != kindBank || e.channels() != 2 {
		t.Fatalf("bank entry %+v", e)
	}
	if _, ok := e.rhoOf(); !ok {
		t.Error("bank stability not computed")
	}
	r0 := radius(e.pz.poles)
	keys(t, m, "]")
	if e.ch != 1 || radius(e.pz.poles) == r0 {
		t.Errorf("channel %d, radius %g (was %g)", e.ch, radius(e.pz.poles), r0)
	}
	keys(t, m, ":")
	typeText(t, m, "convert diagonal")
	keys(t, m, "enter")
	if e := m.selected(); e.form() != "diagonal" {
		t.Errorf("bank form %s, status %q", e.form(), m.status.text)
	}
	addPreset(t, m, "kernel")
	k := m.selected()
	if k.kind != kindKernel || k.resp == nil {
		t.Fatalf("kernel entry %+v", k)
	}
	if !strings.Contains(screen(m), "kernel") {
		t.Error("kernel not shown")
	}
}

func TestDistillFinishes(t *testing.T) {
	r := &fakeRunner{}
	m := newTestModel(t, 160, 48, r)
	addPreset(t, m, "ring")
	src := m.selected()
	keys(t, m, "D")
	if _, ok := dialogOf[*jobForm](m); !ok {
		t.Fatal("D did not open the form")
	}
	// the form: model, order, init, steps, length, backend; steps are the optimiser's, which
	// init zeros trains with
	keys(t, m, "down", "ctrl+u")
	typeText(t, m, "2")
	keys(t, m, "down", "right", "down", "ctrl+u")
	typeText(t, m, "7")
	keys(t, m, "enter")
	if len(m.jobs) != 1 {
		t.Fatalf("%d jobs", len(m.jobs))
	}
	j := m.jobs[0]
	if j.state() != sessions.JobDone || j.spec.Order != 2 || j.spec.Steps != 7 || j.spec.Init != train.InitZeros || j.spec.Backend != "gpu" {
		t.Fatalf("job %+v: %s", j.spec, j.report.Error)
	}
	if len(j.losses) == 0 {
		t.Error("no progress recorded")
	}
	res := m.entry(j.resultID)
	if res == nil || res.origin.Target != src.id || res.origin.Job != j.id || res.name != "ring~rtf2" {
		t.Fatalf("result entry %+v", res)
	}
	if m.sel != src.id {
		t.Error("a finished job moved the selection")
	}
	// Its origin names its error as the job's row does, the worst channel's: "rel error"
	// alone read as the mean the status line gives beside the worst (QA).
	if want := "job #1 from ring: worst error " + sci(j.report.MaxRelError); res.origin.Note != want {
		t.Errorf("the result's origin note %q, want %q", res.origin.Note, want)
	}
	// A backend other than the CPU is named.
	if want := "job #1 done on gpu: added ring~rtf2"; !strings.HasPrefix(m.status.text, want) {
		t.Errorf("status %q, want %q…", m.status.text, want)
	}
	m.setFocus(paneJobs)
	keys(t, m, "enter")
	if m.sel != res.id || m.focus != panePlots {
		t.Fatal("enter did not show the result")
	}
	d := m.plots.data()
	if d.ovName != "ring" || d.ovResp == nil {
		t.Errorf("the result is not overlaid on its target: %q", d.ovName)
	}
	s := screen(m)
	// The jobs pane's error is the worst channel's and says so: "rel error 0.239" beside
	// the status line's "rel error mean 0.161 …, worst 0.239" read as a second mean (QA).
	for _, part := range []string{"━ ring~rtf2", "━ ring", "done", "worst error 0.125"} {
		if !strings.Contains(s, part) {
			t.Errorf("screen lacks %q", part)
		}
	}
	// through the palette, with arguments
	keys(t, m, ":")
	typeText(t, m, "distill model=modal init=xavier order=1 steps=3 backend=cpu")
	keys(t, m, "enter")
	if len(m.jobs) != 2 || m.jobs[1].spec.Model != "modal" {
		t.Fatalf("palette distill: %d jobs, status %q", len(m.jobs), m.status.text)
	}
	if want := "job #2 done: added"; !strings.HasPrefix(m.status.text, want) {
		t.Errorf("status %q, want %q…", m.status.text, want)
	}
}

// TestJobFormSuggestsOrder checks that the form shows the runner's suggested order for the
// targets it would fit (the fake runner's answer depends on their count and length), and that
// an answer for another entry's form is dropped.
func TestJobFormSuggestsOrder(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "pair")
	keys(t, m, "D")
	form, _ := dialogOf[*jobForm](m)
	spec, _, err := form.spec()
	if err != nil {
		t.Fatal(err)
	}
	suggested := 1 + spec.Target.Length%10
	want := fmt.Sprintf("suggested order: %d (relative error 0.001 at length %d)", suggested, spec.Target.Length)
	wantBound := fmt.Sprintf("from the lower bound: 0.00025 at order %d, under 1/3 of it", suggested)
	if s := screen(m); !strings.Contains(s, want) || !strings.Contains(s, wantBound) || !strings.Contains(s, fmt.Sprintf("order    %d", suggested)) || !strings.Contains(s, "(suggested)") {
		t.Errorf("the form lacks %q or the filled-in order:\n%s", want, s)
	}
	if spec.Order != suggested || spec.Order == m.defaultSpecFor(m.selected()).Order {
		t.Errorf("order field %d, want the suggestion %d in place of the default", spec.Order, suggested)
	}
	send(t, m, suggestMsg{source: form.sourceID + "x", length: 99, order: 42, ok: true})
	if s := screen(m); strings.Contains(s, "42") || !strings.Contains(s, want) {
		t.Errorf("another entry's suggestion replaced this form's:\n%s", s)
	}
	send(t, m, suggestMsg{source: form.sourceID, length: spec.Target.Length, order: 127, bound: 0.0052})
	if s := screen(m); !strings.Contains(s, "suggested order: none up to 127 (relative error 0.001") || !strings.Contains(s, "from the lower bound: 0.0052 at order 127, above 1/3 of it") {
		t.Errorf("no 'none' line:\n%s", s)
	}
	// A growing kernel is named, the note wrapped to the form (it is longer than a line).
	note := train.Suggestion{Growing: []int{0}}.GrowingNote()
	send(t, m, suggestMsg{source: form.sourceID, length: spec.Target.Length, order: 2, ok: true, growing: note})
	if s := screen(m); !strings.Contains(s, "the kernel of channel 0 grows from start to end") || !strings.Contains(s, "does not assume stability") {
		t.Errorf("the form lacks the growing kernel's note %q:\n%s", note, s)
	}
	send(t, m, suggestMsg{source: form.sourceID, length: spec.Target.Length, order: 127, bound: 0.0052})
	if s := screen(m); strings.Contains(s, "grows from start to end") {
		t.Errorf("the note stayed after a suggestion without it:\n%s", s)
	}

	// An order the user typed stays; so does the default when the suggestion needs more
	// samples than the form's length.
	keys(t, m, "down", "ctrl+u")
	typeText(t, m, "3")
	send(t, m, suggestMsg{source: form.sourceID, length: spec.Target.Length, order: 5, ok: true})
	if got, _, _ := form.spec(); got.Order != 3 || strings.Contains(screen(m), "(suggested)") {
		t.Errorf("a suggestion replaced the typed order 3 with %d", got.Order)
	}
	keys(t, m, "esc", "D")
	form, _ = dialogOf[*jobForm](m)
	send(t, m, suggestMsg{source: form.sourceID, length: spec.Target.Length, order: spec.Target.Length / 2, ok: true})
	if got, _, _ := form.spec(); got.Order == spec.Target.Length/2 {
		t.Errorf("filled in order %d, which length %d cannot fit", got.Order, got.Target.Length)
	}
}

func TestJobFormRejectsBadNumbers(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	keys(t, m, "D", "down", "ctrl+u")
	typeText(t, m, "x")
	keys(t, m, "enter")
	if _, ok := dialogOf[*jobForm](m); !ok || m.status.level != levelError {
		t.Errorf("bad order accepted: dialog %T, status %q", m.dialog, m.status.text)
	}
	// a bad value in another field than the focused one takes the cursor there (it stayed on
	// order, whose help line then described the wrong field)
	form, _ := dialogOf[*jobForm](m)
	for _, name := range []string{"steps", "orders"} {
		for k := range form.fields {
			switch form.fields[k].name {
			case "order": // empty beside a ladder's orders, which it would give the order with
				form.fields[k].input.SetValue(map[string]string{"steps": "2", "orders": ""}[name])
			case name:
				form.fields[k].input.SetValue("1e92")
			}
		}
		form.setFocus(0)
		keys(t, m, "enter")
		if got := form.fields[form.focus].name; got != name || m.status.level != levelError {
			t.Errorf("%s=1e92: the cursor is on %s, status %q", name, got, m.status.text)
		}
		form.fields[form.focus].input.SetValue(map[string]string{"steps": "100", "orders": ""}[name])
		form.fields[form.field("order")].input.SetValue("2")
	}
	keys(t, m, "esc")
	if m.dialog != nil || len(m.jobs) != 0 {
		t.Error("esc did not close the form")
	}
	// The form's last refusal does not stay on the status line as if it still applied.
	if m.status.level == levelError || !strings.Contains(m.status.text, "no distillation started") {
		t.Errorf("after esc the status line says %q (level %v)", m.status.text, m.status.level)
	}
}

// TestDistillOrderZeroAsTheCLI: order 0 on the distill form, or in :distill order=0, is
// refused with train's words, those of ssmlab distill --order 0; the form said "want a
// positive integer" and, at order 5000, "outside [0, 4096]", as if 0 were allowed.
func TestDistillOrderZeroAsTheCLI(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	const want = "order 0 outside [1, 4096]: a distillation's order starts at 1"
	keys(t, m, "D", "down", "ctrl+u")
	typeText(t, m, "0")
	keys(t, m, "enter")
	if _, ok := dialogOf[*jobForm](m); !ok || m.status.level != levelError || !strings.Contains(m.status.text, want) {
		t.Errorf("the form's order 0: dialog %T, status %q, want %q", m.dialog, m.status.text, want)
	}
	keys(t, m, "ctrl+u")
	typeText(t, m, "5000")
	keys(t, m, "down", "enter") // the cursor goes back to order, the field to correct
	form, _ := dialogOf[*jobForm](m)
	if !strings.Contains(m.status.text, "order 5000 outside [1, 4096]") || form.fields[form.focus].name != "order" {
		t.Errorf("the form's order 5000: status %q, cursor on %s", m.status.text, form.fields[form.focus].name)
	}
	keys(t, m, "esc", ":")
	typeText(t, m, "distill order=0")
	keys(t, m, "enter")
	if m.status.level != levelError || !strings.Contains(m.status.text, want) || len(m.jobs) != 0 {
		t.Errorf(":distill order=0: status %q, %d jobs, want %q", m.status.text, len(m.jobs), want)
	}
}

// TestSaveOpenAndQuit: w writes the selected filter to a filter file, o adds one to the
// session, and q with unsaved work asks, then saves the session (asking where, for an
// untitled one) and quits.
func TestSaveOpenAndQuit(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 120, 40, nil)
	m.dir = dir
	addPreset(t, m, "pair")
	path := filepath.Join(dir, "p.json")
	keys(t, m, "w", "ctrl+u")
	typeText(t, m, path)
	keys(t, m, "enter")
	if e := m.selected(); e.origin.File != path || !strings.Contains(m.status.text, "saved "+path) {
		t.Fatalf("after save: file %q status %q", e.origin.File, m.status.text)
	}
	if doc, err := readDoc(path); err != nil || doc.Filter.Form() != filters.FormZPK {
		t.Fatalf("p.json: %v", err)
	}
	keys(t, m, "o")
	typeText(t, m, path)
	keys(t, m, "enter")
	// the file just saved is the item itself: selected, not added again (TestOpenSameFileTwice)
	if len(m.entries()) != 1 || m.selected().name != "pair" || !strings.Contains(m.status.text, "already open as pair") {
		t.Fatalf("open: %d entries, status %q", len(m.entries()), m.status.text)
	}
	// an unreadable file is an error in the status bar
	send(t, m, openFile(fileStore{}, filepath.Join(dir, "missing.json"))())
	if m.status.level != levelError || !strings.Contains(m.status.text, "missing.json") {
		t.Errorf("status %q", m.status.text)
	}
	// an empty path opens nothing, and says so instead of leaving the last error up
	keys(t, m, "o", "enter")
	if m.dialog != nil || m.status.level != levelWarn || !strings.Contains(m.status.text, "nothing opened") {
		t.Errorf("an empty path to open: dialog %T, status %q", m.dialog, m.status.text)
	}
	// quitting with unsaved work asks; esc stays; s saves the session, asking where, and quits
	addPreset(t, m, "ring")
	keys(t, m, "q")
	if c, ok := dialogOf[*confirm](m); !ok || !strings.Contains(c.body, "ring") {
		t.Fatalf("q did not ask: %T", m.dialog)
	}
	keys(t, m, "esc")
	if m.quitting || m.dialog != nil {
		t.Fatal("esc quit")
	}
	// an empty path saves nothing and does not quit, and says so (it said nothing)
	keys(t, m, "q", "s", "ctrl+u", "enter")
	if m.quitting || m.dialog != nil || m.status.level != levelWarn || !strings.Contains(m.status.text, "nothing saved") {
		t.Fatalf("an empty path: quitting %v, dialog %T, status %q", m.quitting, m.dialog, m.status.text)
	}
	keys(t, m, "q", "s")
	if p, ok := dialogOf[*prompt](m); !ok || p.input.Value() != filepath.Join(dir, "session.ssmlab") {
		t.Fatalf("s on an untitled session did not ask where: %T", m.dialog)
	}
	sessPath := filepath.Join(dir, "work.ssmlab")
	keys(t, m, "ctrl+u")
	typeText(t, m, sessPath)
	keys(t, m, "enter")
	if !m.quitting {
		t.Fatalf("s did not quit (status %q)", m.status.text)
	}
	s, err := sessions.Load(sessPath)
	if err != nil || len(s.Order()) != 2 { // pair and ring
		t.Fatalf("the session saved on quit: %v", err)
	}
	if len(m.ExitNotes()) != 1 || !strings.Contains(m.ExitNotes()[0], "work.ssmlab") {
		t.Errorf("exit notes %q", m.ExitNotes())
	}
}

func TestQuitWithoutUnsavedWork(t *testing.T) {
	m := newTestModel(t, 80, 24, nil)
	_, cmd := m.Update(keyMsg("q"))
	if cmd == nil {
		t.Fatal("q returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok || !m.quitting {
		t.Error("q did not quit an empty session")
	}
	m = newTestModel(t, 80, 24, nil)
	addPreset(t, m, "pair")
	keys(t, m, "ctrl+c")
	if _, ok := dialogOf[*confirm](m); !ok {
		t.Fatal("ctrl+c did not ask")
	}
	keys(t, m, "ctrl+c")
	if !m.quitting {
		t.Error("a second ctrl+c did not quit")
	}
}

func TestPaletteErrorsAndCommands(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	keys(t, m, ":")
	typeText(t, m, "frobnicate")
	keys(t, m, "enter")
	if m.status.level != levelError {
		t.Errorf("unknown command: %q", m.status.text)
	}
	keys(t, m, ":")
	typeText(t, m, "preset pair r=0.5")
	keys(t, m, "enter")
	e := m.selected()
	if e == nil || math.Abs(cmplx.Abs(e.filter.(*filters.ZPK).Poles[0])-0.5) > 1e-15 {
		t.Fatalf("preset with parameters: status %q", m.status.text)
	}
	// each after an error: a command that says nothing must not leave it standing (":view tf"
	// after ":convert foo" showed "✗ invalid filter: unknown form "foo"")
	for _, line := range []string{"length 128", "plot phase", "log", "view tf", "overlay off", "theme dark"} {
		for _, l := range []string{"convert foo", line} {
			keys(t, m, ":")
			typeText(t, m, l)
			keys(t, m, "enter")
		}
		if m.status.level == levelError {
			t.Errorf("%s: %s", line, m.status.text)
		}
	}
	if m.length != 128 || m.plots.enabled[plotPhase] || !m.plots.logImpulse || m.repr.tab != filters.FormTF || m.overlayOn {
		t.Errorf("palette state: L=%d phase=%v log=%v tab=%q overlay=%v", m.length, m.plots.enabled[plotPhase], m.plots.logImpulse, m.repr.tab, m.overlayOn)
	}
	// tab completes, arrows choose
	keys(t, m, ":")
	typeText(t, m, "exp")
	keys(t, m, "tab")
	if p, _ := dialogOf[*palette](m); p.input.Value() != "export " {
		got := p.input.Value()
		t.Errorf("completion %q", got)
	}
	path := filepath.Join(t.TempDir(), "x.json")
	typeText(t, m, path+" tf")
	keys(t, m, "enter")
	doc, err := readDoc(path)
	if err != nil || doc.Filter.Form() != filters.FormTF {
		t.Errorf("export: %v (status %q)", err, m.status.text)
	}
}

func TestInitOpensFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "res.json")
	f, _ := pairZPK(0.7)
	if err := writeDoc(path, filters.Document{Name: "res", Filter: f}); err != nil {
		t.Fatal(err)
	}
	m := New(Options{File: path, Deps: testDeps(nil), ProgressInterval: -1, AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	runCmd(t, m, m.Init(), 0)
	if e := m.selected(); e == nil || e.name != "res" || e.origin.File != path {
		t.Fatalf("opened %+v, status %q", e, m.status.text)
	}
}

func TestJobsPaneGolden(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "ring")
	ring := m.sel
	running := &job{num: 1, spec: train.Spec{Model: "rtf", Order: 4, Steps: 500}, sourceID: ring, status: sessions.JobRunning,
		last: JobProgress{Step: 200, Steps: 500, Loss: 3.2e-4, ETA: 3 * 1e9}, cancel: func() {}}
	for i := range 40 {
		running.addLoss(math.Pow(10, -1-3*float64(i)/40) * (1 + 0.2*math.Sin(float64(i))))
	}
	failed := &job{num: 2, spec: train.Spec{Model: "modal", Order: 2, Steps: 10}, sourceID: ring, status: sessions.JobFailed,
		report: jobReport{Error: os.ErrInvalid.Error()}}
	m.jobs = []*job{running, failed}
	m.jobsPane.seen = len(m.jobs) // as if read from the session: the selection stays
	m.setFocus(paneJobs)
	send(t, m, statusMsg{text: "two jobs"})
	golden(t, "jobs-120x40", screen(m))
	// The loss curve's x axis has no labels (the steps are in the job's line): a lone "0"
	// under it read as a scale.
	if labels := ladderXLabels(screen(m)); len(labels) != 0 {
		t.Errorf("the loss curve's x axis is labelled %q", labels)
	}
	if !strings.Contains(screen(m), "job #1 40%") {
		t.Error("the status bar does not summarise the running job")
	}
}

func TestPresetPickerAlignsDescriptions(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	keys(t, m, "a")
	p, _ := dialogOf[*picker](m)
	p.presets = []PresetInfo{
		{Name: "ab", Description: "first description"},
		{Name: "a-much-longer-preset-name", Description: "second description"},
		{Name: "mid-length", Description: "third description"},
	}
	cols := map[int]bool{}
	for _, l := range strings.Split(screen(m), "\n") {
		if i := strings.Index(l, " description"); i >= 0 {
			start := strings.LastIndex(l[:i], " ") + 1
			cols[lipgloss.Width(l[:start])] = true
		}
	}
	if len(cols) != 1 {
		t.Errorf("the descriptions start at columns %v, want one column:\n%s", cols, screen(m))
	}
}

func TestPresetPickerFilters(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	keys(t, m, "a")
	typeText(t, m, "DENSE")
	s := screen(m)
	if !strings.Contains(s, "/ DENSE") || !strings.Contains(s, "dense2") || strings.Contains(s, "ring") || strings.Contains(s, "kernel ") {
		t.Errorf("filter DENSE shows:\n%s", s)
	}
	keys(t, m, "backspace", "backspace", "backspace", "backspace", "backspace")
	typeText(t, m, "order-n") // a description
	keys(t, m, "enter")
	if p, ok := dialogOf[*prompt](m); !ok || p.preset != "ring" {
		t.Fatalf("enter on the filtered list opened %T", m.dialog)
	}
	keys(t, m, "esc", "a")
	typeText(t, m, "zzz")
	if s := screen(m); !strings.Contains(s, `no preset matches "zzz"`) {
		t.Errorf("no message for an empty list:\n%s", s)
	}
	keys(t, m, "enter") // nothing to pick: stays
	keys(t, m, "esc")   // clears the filter
	if p, ok := dialogOf[*picker](m); !ok || p.filter != "" {
		t.Fatalf("esc with a filter: dialog %T", m.dialog)
	}
	keys(t, m, "end", "enter")
	if p, _ := dialogOf[*prompt](m); p == nil || p.preset != "kernel" {
		t.Errorf("end picked %v, want the last preset", m.dialog)
	}
	keys(t, m, "esc", "a", "esc")
	if m.dialog != nil {
		t.Error("esc without a filter did not close the picker")
	}
}

// TestHelpFitsSmallScreens: on every page of the help the status bar's hint (how to close
// it) stays on screen, and every key the panes and the workbench bind is on some page. At
// 60×20 the help was taller than the screen and pushed the hint off; a pane's keys were
// one column however tall.
func TestHelpFitsSmallScreens(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {80, 24}, {60, 20}, {40, 12}} {
		m := newTestModel(t, size[0], size[1], nil)
		addPreset(t, m, "pair")
		keys(t, m, "?")
		d, ok := dialogOf[*helpDialog](m)
		if !ok {
			t.Fatalf("? opened %T", m.dialog)
		}
		var all string
		for page := range 20 {
			d.page = page
			s := screen(m)
			checkSize(t, m.View(), size[0], size[1])
			if !strings.Contains(s, "esc or ? closes the help") {
				t.Fatalf("%v page %d: no hint on screen:\n%s", size, page, s)
			}
			all += s
		}
		bs := m.globalBindings()
		for p := range nPanes {
			bs = append(bs, m.panes[p].bindings()...)
		}
		_, full := helpOf(bs)
		for _, k := range full {
			if !strings.Contains(all, k.Help().Desc) {
				t.Errorf("%v: %q (%s) is on no page of the help", size, k.Help().Desc, k.Help().Key)
			}
		}
	}
}

// TestPresetMistakeAsksAgain: parameters a preset refuses, or text that is not key=value,
// bring its prompt back with what was typed and the reason on the status line; the prompt
// closed and the text was lost, so the keys typed next went to the panes.
func TestPresetMistakeAsksAgain(t *testing.T) {
	m := newTestModel(t, 100, 30, nil)
	keys(t, m, "a")
	p, _ := dialogOf[*picker](m)
	for i, x := range p.presets {
		if x.Name == "pair" {
			p.sel = i
		}
	}
	keys(t, m, "enter")
	for _, typed := range []string{"r=abc", "junk"} {
		d, ok := dialogOf[*prompt](m)
		if !ok {
			t.Fatalf("no prompt before %q: %T", typed, m.dialog)
		}
		d.input.SetValue("")
		typeText(t, m, typed)
		keys(t, m, "enter")
		d, ok = dialogOf[*prompt](m)
		if !ok || d.preset != "pair" || d.input.Value() != typed {
			t.Fatalf("%q: dialog %T, want the pair prompt holding what was typed", typed, m.dialog)
		}
		if s := screen(m); !strings.Contains(s, "✗") {
			t.Errorf("%q: no error on the status line:\n%s", typed, s)
		}
	}
	d, _ := dialogOf[*prompt](m)
	d.input.SetValue("r=0.5")
	keys(t, m, "enter")
	if m.dialog != nil || len(m.entries()) != 1 {
		t.Fatalf("r=0.5: dialog %T, %d entries", m.dialog, len(m.entries()))
	}
	// esc after a refusal: the error does not stay on the status line.
	keys(t, m, "a", "enter")
	d, _ = dialogOf[*prompt](m)
	d.input.SetValue("junk")
	keys(t, m, "enter", "esc")
	if m.dialog != nil || len(m.entries()) != 1 || m.status.level == levelError || !strings.Contains(m.status.text, "no preset added") {
		t.Errorf("esc after a refused preset: dialog %T, %d entries, status %q", m.dialog, len(m.entries()), m.status.text)
	}
}

// TestPresetHelpWhole: the preset parameter dialog shows each parameter's help whole,
// wrapped as the distill form's (TestDistillFormHelpWhole), where it cut each to a line: the
// cut-off's lost the refusal it warns of ("… one too close to 0 or π for float64 is …").
func TestPresetHelpWhole(t *testing.T) {
	for _, width := range []int{120, 60} {
		m := newTestModel(t, width, 40, nil)
		p := PresetInfo{Name: "butter", Params: []PresetParam{
			{Name: "n", Default: "4", Help: "filter order N (band-pass and band-stop filters have 2N poles)"},
			{Name: "wc", Help: "cut-off ωc in rad/sample, lowpass and highpass only (default pi/4); SciPy's Wn = ωc/π; one too close to 0 or π for float64 is refused, naming the nearest workable value"},
		}}
		m.askPresetParams(p, "")
		var box []string
		for _, line := range strings.Split(screen(m), "\n") {
			if _, inside, ok := strings.Cut(line, "║"); ok {
				box = append(box, strings.TrimSuffix(strings.TrimSpace(inside), "║"))
			}
		}
		text := strings.Join(strings.Fields(strings.Join(box, " ")), " ")
		for _, q := range p.Params {
			if help := q.Name + ": " + q.Help; !strings.Contains(text, help) {
				t.Errorf("%d columns: the dialog does not show %q whole:\n%s", width, help, screen(m))
			}
		}
		if strings.Contains(text, "…") {
			t.Errorf("%d columns: the dialog cuts a line:\n%s", width, screen(m))
		}
	}
}

// TestSmallScreensShowPlots: at 80×24 and 100×30 the plots are drawn beside (under) the
// representation whichever of them is focused, so that an edited cell's effect shows; they
// were drawn only when focused, and focusing them hid the representation. A shorter window
// shows one of them and says how to see the other.
func TestSmallScreensShowPlots(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}} {
		m := newTestModel(t, size[0], size[1], nil)
		addPreset(t, m, "pair")
		for _, k := range []string{"tab", "tab"} { // the representation, then the plots
			keys(t, m, k)
			if s := screen(m); !strings.Contains(s, "representation · pair") || !strings.Contains(s, "plots · L=64") || !strings.Contains(s, "impulse") {
				t.Fatalf("%v, %s focused:\n%s", size, paneNames[m.focus], s)
			}
		}
		// a cell edited with the representation focused: the plots follow
		keys(t, m, "shift+tab")
		before := strings.Join(strings.Split(screen(m), "\n")[size[1]-12:size[1]-3], "\n")
		keys(t, m, "right", "enter", "ctrl+u")
		typeText(t, m, "0.5")
		keys(t, m, "enter")
		if after := strings.Join(strings.Split(screen(m), "\n")[size[1]-12:size[1]-3], "\n"); after == before {
			t.Errorf("%v: the plots did not follow the edit:\n%s", size, after)
		}
	}
	m := newTestModel(t, 80, 20, nil)
	addPreset(t, m, "pair")
	keys(t, m, "tab")
	if s := screen(m); !strings.Contains(s, "representation · pair · tab: plots, or 24 rows") || strings.Contains(s, "plots · L=") {
		t.Errorf("80×20, the representation focused:\n%s", s)
	}
}

// TestShortScreensKeepTheRepresentation: under 24 rows, with the plots focused, the
// representation is a strip over them, saying the form, the order, the stability and the
// conversion's accuracy; it was hidden at 60×20, leaving the form only in the list and the
// accuracy nowhere.
func TestShortScreensKeepTheRepresentation(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 20}, {60, 14}} {
		m := newTestModel(t, size[0], size[1], nil)
		addPreset(t, m, "pair")
		keys(t, m, ":")
		typeText(t, m, "convert tf")
		keys(t, m, "enter")
		rep := m.selected().lastReport()
		if rep == nil {
			t.Fatalf("%v: no conversion report (status %q)", size, m.status.text)
		}
		m.setFocus(panePlots)
		send(t, m, statusMsg{}) // a message: relayout
		s := screen(m)
		want := []string{"representation · pair", "plots · L=64", "impulse", "tf · order 2 · stable",
			fmt.Sprintf("zpk → tf: rel error %s", filters.RelErrorText(rep.RelError))}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%v, the plots focused: no %q in\n%s", size, w, s)
			}
		}
		checkSize(t, m.View(), size[0], size[1])
	}
}

// TestSmallThingsSaySo: a key of another pane says where it works (a in the representation
// did nothing and said nothing); a response that overflows before the shortest L does not
// advise shortening L; the "too small" line fits a tiny window (it was cut to "ssmlab: wind").
func TestSmallThingsSaySo(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	m.setFocus(paneRepr)
	keys(t, m, "a")
	if m.dialog != nil || m.status.text != "a: add preset in the filters pane (tab moves the focus)" {
		t.Errorf("a in the representation: dialog %T, status %q", m.dialog, m.status.text)
	}
	keys(t, m, "n")
	if want := "n: next pole in the plots pane, new job in the jobs pane (tab moves the focus)"; m.status.text != want {
		t.Errorf("n in the representation: status %q, want %q", m.status.text, want)
	}

	// h[1] = 1e100, h[2] = 1e400: past any L
	f, err := filters.NewDiagonal([]complex128{1e300}, []complex128{1e100}, 0)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "huge", f)
	d := m.plots.data()
	if err := d.errOf(plotImpulse); err == nil || !strings.Contains(err.Error(), "at sample 2, before the shortest L (8): the filter is unstable") || strings.Contains(err.Error(), "shorten L") {
		t.Errorf("an overflow at sample 2: %v", err)
	}

	small := newTestModel(t, 12, 4, nil)
	if s := screen(small); !strings.Contains(s, "too small") {
		t.Errorf("12×4:\n%s", s)
	}
}

// TestReprSaysRowsCut: where the tables are taller than the representation pane, its title
// says which rows it shows, following the cursor; where they fit it says nothing. The pane
// cut a filter's last rows without a word (butter4 at 120×40 with a job listed showed one
// of its 4 zeros, as if it had one).
func TestReprSaysRowsCut(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair") // 6 rows: 2 poles, 2 zeros, gain, h0
	if s := screen(m); strings.Contains(s, "rows ") {
		t.Fatalf("tables that fit: the title counts rows:\n%s", s)
	}
	keys(t, m, ":")
	typeText(t, m, "preset ring n=40")
	keys(t, m, "enter", "tab")
	for _, step := range []struct{ key, want string }{
		{"", "representation · ring · rows 1–"},
		{"G", "–41 of 41 "},
		{"g", "representation · ring · rows 1–"},
	} {
		if step.key != "" {
			keys(t, m, step.key)
		}
		if s := screen(m); !strings.Contains(s, step.want) {
			t.Fatalf("after %q: no %q in the title:\n%s", step.key, step.want, s)
		}
	}
	keys(t, m, "G")
	screen(m) // the title follows the rows a render shows
	if sh := m.repr.shown; sh.last != sh.total-1 || sh.first == 0 || !strings.Contains(screen(m), fmt.Sprintf("rows %d–41 of 41", sh.first+1)) {
		t.Errorf("at the bottom the pane shows rows %d–%d of %d", sh.first+1, sh.last+1, sh.total)
	}
}
