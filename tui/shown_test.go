package tui

import (
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// What the workbench shows must say what is so: the tests of the misleading and cosmetic
// findings of a QA pass on the workbench in a terminal, each named by its number there.

// pairAt is a zpk filter with one pole pair at r∠θ and a zero pair at 0.5∠±π/2.
func pairAt(t *testing.T, r, theta float64) *filters.ZPK {
	t.Helper()
	p := cmplx.Rect(r, theta)
	f, err := filters.NewZPK([]complex128{0.5i, -0.5i}, []complex128{p, cmplx.Conj(p)}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestModulusNearOne: a radius within 1e-5 of 1 is printed with the digits that tell it from
// 1 (filters.FormatModulus), and a pole within 1e-10 inside is said to be there
// (filters.CirclePlace), not "on or outside" (QA finding 3: "stable, ρ = 1", "|p| on or
// outside the unit circle" of a pole 5e-12 inside).
func TestModulusNearOne(t *testing.T) {
	m := newTestModel(t, 250, 60, nil)
	f := pairAt(t, 0.9999995, 0.237*math.Pi)
	addFilter(t, m, "near", f)
	// the polar round trip leaves |p| a few ulps off 0.9999995: the digits shown are its own
	rho := filters.FormatModulus(cmplx.Abs(f.Poles[0]))
	if !strings.HasPrefix(rho, "0.9999995") {
		t.Fatalf("FormatModulus(|p|) = %q", rho)
	}
	m.setFocus(panePlots)
	keys(t, m, "n")
	s := screen(m)
	for _, want := range []string{"stable, ρ = " + rho + " ", "⊗ " + rho + "∠0.237π"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(m.status.text, "= "+rho+"∠0.237π") {
		t.Errorf("the selected pole reads %q", m.status.text)
	}
	m.setFocus(paneRepr)
	if s := screen(m); !strings.Contains(s, " "+rho+" ") {
		t.Errorf("the |p| column does not show %s:\n%s", rho, s)
	}

	// 0.998999999995 + 0.001 lies 5e-12 inside the circle: within MarginalTol, so not
	// stable, but inside, not on or outside it, and marginal as analyze --properties says,
	// not unstable (analysis QA N1: the header read UNSTABLE where the CLI said marginal).
	addFilter(t, m, "edge", pairAt(t, 0.998999999995, 0.237*math.Pi))
	m.setFocus(panePlots)
	m.plots.step = 0
	keys(t, m, "n", "up")
	r := cmplx.Abs(m.selected().filter.(*filters.ZPK).Poles[0])
	if !(r < 1 && r > 1-filters.MarginalTol) {
		t.Fatalf("the pole moved to |p| = %v, want within 1e-10 inside", r)
	}
	want := "pole → " + filters.FormatModulus(r) + "∠0.237π (within 1e-10 of the unit circle: marginal)"
	if !strings.Contains(m.status.text, want) {
		t.Errorf("status %q, want %q", m.status.text, want)
	}
	if s := screen(m); !strings.Contains(s, "marginal, ρ = "+filters.FormatModulus(r)+" (within 1e-10 of the unit circle)") {
		t.Errorf("the header does not say where ρ = %v lies:\n%s", r, s)
	}
	if v := analysis.StabilityOf(r); v != analysis.Marginal {
		t.Errorf("analysis calls ρ = %v %v", r, v)
	}

	// Outside the circle by more than MarginalTol: unstable, in capitals.
	addFilter(t, m, "out", pairAt(t, 1.01, 0.237*math.Pi))
	m.setFocus(panePlots)
	if s := screen(m); !strings.Contains(s, "UNSTABLE, ρ = 1.01 (outside the unit circle)") {
		t.Errorf("the header of a pole at 1.01:\n%s", s)
	}
}

// TestOverflowAdvice: an overflowing impulse response tells the user to move the poles that
// lie outside the unit circle inside it, and how short an L stops before the overflow (QA
// finding 4: "move the pole outside the unit circle", where it lies already).
func TestOverflowAdvice(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addFilter(t, m, "far", pairAt(t, 20, 0.237*math.Pi))
	if _, err := m.runLine("length 1024"); err != nil {
		t.Fatal(err)
	}
	send(t, m, statusMsg{}) // a message after the command: the responses follow L
	e := m.selected()
	if e.resp == nil || e.resp.key.length != 1024 {
		t.Fatalf("no responses at L = 1024: %+v", e.resp)
	}
	h := e.filter.Impulse(1024)
	first := firstOverflow(h)
	want := fmt.Sprintf("overflows at sample %d (the filter is unstable): shorten L with < to at most %d, or move the poles outside the unit circle inside it", first, first)
	if s := screen(m); !strings.Contains(s, "circle inside it") || strings.Contains(s, "pole outside the unit circle") {
		t.Errorf("the impulse plot does not say to move the poles inside the circle:\n%s", s)
	}
	if err := checkFinite(h); err == nil || err.Error() != "the impulse response "+want {
		t.Errorf("checkFinite says %v, want %q", err, want)
	}
	// overflowing before the shortest L: only the poles can be fixed
	e = addFilter(t, m, "farther", pairAt(t, 1e100, 0.237*math.Pi))
	if err := checkFinite(e.filter.Impulse(minLength)); err == nil || !strings.Contains(err.Error(), "before the shortest L (8): the filter is unstable; move (or edit) the poles outside the unit circle inside it") {
		t.Errorf("checkFinite says %v", err)
	}
}

// TestOverflowHidesOnlyImpulse: an impulse response that overflows hides its own plot; the
// magnitude, phase and group delay, which do not depend on it, are drawn (QA finding 5: all
// four showed the impulse's overflow).
func TestOverflowHidesOnlyImpulse(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addFilter(t, m, "far", pairAt(t, 20, 0.237*math.Pi))
	if _, err := m.runLine("length 1024"); err != nil {
		t.Fatal(err)
	}
	send(t, m, statusMsg{})
	if kinds, _, _ := m.plots.visible(); len(kinds) != int(nPlotKinds) {
		t.Fatalf("%d plots fit, want all %d", len(kinds), nPlotKinds)
	}
	s := screen(m)
	if n := strings.Count(s, "the impulse response overflows at"); n != 1 {
		t.Errorf("the overflow is shown %d times, want once (the impulse plot):\n%s", n, s)
	}
	for _, unit := range []string{"dB vs ω/π", "∠H/π vs ω/π", "samples vs ω/π"} {
		if !strings.Contains(s, unit) {
			t.Errorf("the plot of %q is not drawn:\n%s", unit, s)
		}
	}
	// the same filter as the overlay: its frequency responses are drawn over another's
	far := m.selected()
	m.overlay, m.overlayOn = far.id, true
	addFilter(t, m, "near", pairAt(t, 0.9, 0.237*math.Pi))
	d := m.plots.data()
	if d.ovResp == nil || d.ovName != "far" {
		t.Fatalf("overlay %q: %+v", d.ovName, d.ovResp)
	}
	if s := screen(m); strings.Count(s, "━ far") != 3 {
		t.Errorf("the overlay far is not in the three frequency plots' legends:\n%s", s)
	}
}

// TestJobOverflowAdvice: a job whose target overflows says what applies to the job (its
// length, or the poles), as ssmlab distill does (train.OverflowError), not the plots' "shorten
// L with <", which does nothing for it (QA finding 6).
func TestJobOverflowAdvice(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addFilter(t, m, "far", pairAt(t, 20, 0.237*math.Pi))
	if _, err := m.runLine("length 1024"); err != nil { // the plots' L, which the job ignores
		t.Fatal(err)
	}
	first := firstOverflow(m.selected().filter.Impulse(4096))
	keys(t, m, ":")
	typeText(t, m, "distill order=2 length=4096")
	keys(t, m, "enter")
	want := fmt.Sprintf("job #1 failed: invalid job: the impulse response overflows at sample %d: the filter is unstable (spectral radius 20); distil it over a length of at most %d, or first move the poles outside the unit circle inside it", first, first)
	if m.status.text != want {
		t.Errorf("status %q, want %q", m.status.text, want)
	}
}

// firstOverflow is the first sample of h that is not finite (len(h) if none).
func firstOverflow(h []float64) int {
	for t, v := range h {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return t
		}
	}
	return len(h)
}

// startPending types a palette line that starts a job and returns the job's command without
// running it: the job runs when the test runs the command, after what it does meanwhile.
func startPending(t *testing.T, m *Model, line string) tea.Cmd {
	t.Helper()
	keys(t, m, ":")
	typeText(t, m, line)
	_, cmd := m.Update(keyMsg("enter"))
	if len(m.jobs) == 0 || m.jobs[len(m.jobs)-1].state() != sessions.JobRunning {
		t.Fatalf("%s started no job: %q", line, m.status.text)
	}
	return cmd
}

// TestJobOfDeletedSource: a job whose source is deleted while it runs no longer points at it
// from then on, and names its result, its heading and its note by the name the source had
// when it started, and so does the session saved and opened again (QA finding 14:
// "(removed)~rtf2", "#1 (removed)→rtf").
func TestJobOfDeletedSource(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "ring")
	src := m.sel
	addPreset(t, m, "pair")
	m.sel = src
	cmd := startPending(t, m, "distill order=2")
	m.remove(src)
	// unlinked at once, as the session's record is, not when the job ends
	if j := m.jobs[0]; j.sourceID != "" || m.sess.Jobs[0].Target != "" {
		t.Errorf("the running job still points at its deleted source: %q (record %q)", j.sourceID, m.sess.Jobs[0].Target)
	}
	if n := m.sourceName(m.jobs[0]); n != "ring" {
		t.Errorf("the running job's source is named %q", n)
	}
	runCmd(t, m, cmd, 0)
	j := m.jobs[0]
	res := m.entry(j.resultID)
	if j.state() != sessions.JobDone || res == nil || res.name != "ring~rtf2" || res.origin.Note != "job #1 from ring: worst error 0.125" || res.origin.Target != "" {
		t.Fatalf("job %s (%s), result %+v", j.state(), j.report.Error, res)
	}
	if s := screen(m); !strings.Contains(s, "#1 ring→rtf2") || strings.Contains(s, "removed") {
		t.Errorf("the jobs pane:\n%s", s)
	}
	path := filepath.Join(t.TempDir(), "s.ssmlab")
	save, err := m.runLine("save-session " + path)
	if err != nil {
		t.Fatal(err)
	}
	runCmd(t, m, save, 0)
	if s := loadSession(t, path); len(s.Jobs) != 1 || s.Jobs[0].Target != "" {
		t.Errorf("the job saved links its deleted source: %+v", s.Jobs)
	}
	m2 := openModel(t, path, "", 160, 48)
	if s := screen(m2); !strings.Contains(s, "#1 ring→rtf2") || strings.Contains(s, "removed") {
		t.Errorf("the jobs pane of the session opened again:\n%s", s)
	}
}

// TestOverlayIsWhatWasFitted: a distilled filter is drawn over its target as the job fitted
// it, named so, when the target was edited after the job started; once the edit is undone,
// over the target itself (QA finding 7: the edited target was drawn, and the plots disagreed
// with the job's error).
func TestOverlayIsWhatWasFitted(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "ring")
	src := m.selected()
	fitted := src.filter
	cmd := startPending(t, m, "distill order=2")
	m.setFocus(panePlots)
	keys(t, m, "n", "up") // the target changes while the job runs
	if m.selected().filter == fitted {
		t.Fatal("the pole did not move")
	}
	runCmd(t, m, cmd, 0)
	j := m.jobs[0]
	m.sel = j.resultID
	send(t, m, statusMsg{})
	d := m.plots.data()
	if d.ovName != "ring (as fitted)" || d.ovResp == nil || d.ovPZ == nil {
		t.Fatalf("the overlay is %q: responses %v, poles %v", d.ovName, d.ovResp != nil, d.ovPZ != nil)
	}
	want := fitted.Impulse(m.length)
	for i, v := range d.ovResp.r.Impulse {
		if v != want[i] {
			t.Fatalf("the overlay's h[%d] = %g, the fitted filter's %g", i, v, want[i])
		}
	}
	if held, _ := filters.HeldPoles(fitted); !slices.Equal(d.ovPZ.poles, held) {
		t.Errorf("the overlay's poles %v, the fitted filter's %v", d.ovPZ.poles, held)
	}
	keys(t, m, "o", "o")
	if want := "overlay on: ring, as job #1 fitted it (it has changed since), is drawn over ring~rtf2"; m.status.text != want {
		t.Errorf("status %q, want %q", m.status.text, want)
	}
	if s := screen(m); !strings.Contains(s, "━ ring (as fitted)") {
		t.Errorf("the legend does not name the fitted target:\n%s", s)
	}
	// undone, the target is what was fitted: drawn as itself
	m.sel = src.id
	keys(t, m, "u")
	m.sel = j.resultID
	send(t, m, statusMsg{})
	if d := m.plots.data(); d.ovName != "ring" || d.ovResp == nil {
		t.Errorf("after the undo the overlay is %q", d.ovName)
	}
}

// TestRadialMoveKeepsAxes: a move along the radius scales the pole, so one on an axis stays
// on it exactly, and keeps a rotation block's angle as stored (QA finding 13: 1j moved down
// read 3.06162e-18+0.05j, and a radial move changed a block's angle by an ulp).
func TestRadialMoveKeepsAxes(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	z, err := filters.NewZPK([]complex128{-1}, []complex128{1i, -1i}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "axis", z)
	m.setFocus(panePlots)
	keys(t, m, "n")
	for range 5 {
		keys(t, m, "down")
	}
	p := m.selected().filter.(*filters.ZPK).Poles[0]
	if real(p) != 0 || math.Abs(imag(p)-(1-5*stepLevels[m.plots.step].r)) > 1e-15 {
		t.Errorf("1j moved down 5 steps is %v", p)
	}
	keys(t, m, "n")
	if want := "pole pair 1 of 1: 0+" + num(imag(p)) + "j"; !strings.HasPrefix(m.status.text, want) {
		t.Errorf("status %q, want %q…", m.status.text, want)
	}

	// a rotation block at θ = 0.02561769643903908 (QA's): its angle is kept bit for bit
	const theta = 0.02561769643903908
	r, err := filters.NewRotation([][]float64{{1, 0}, {0, 1}}, []filters.RotationBlock{{Radius: 0.9, Angle: theta}}, nil, []float64{1, 0}, []float64{0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "rot", r)
	keys(t, m, "n", "up", "up", "down")
	b := m.selected().filter.(*filters.Rotation).Blocks[0]
	if b.Angle != theta || math.Abs(b.Radius-(0.9+stepLevels[m.plots.step].r)) > 1e-15 {
		t.Errorf("radial moves made the block %+v, want angle %v", b, theta)
	}
	keys(t, m, "right") // an angular move does change it
	if b := m.selected().filter.(*filters.Rotation).Blocks[0]; math.Abs(b.Angle-theta-stepLevels[m.plots.step].th) > 1e-15 {
		t.Errorf("an angular move made the block %+v", b)
	}
}

// TestPairStopsShortOfOrigin: ↓ on a pair stops it at radius minRadius and says why, in every
// form that holds poles, where at the origin it said "0 is real, but 3.06162e-18+0.05j is one
// of a conjugate pair: it must stay complex (type a complex value; its partner follows)", a
// message for a typed value, or "a rotation block's poles stay a conjugate pair" (QA finding 8).
func TestPairStopsShortOfOrigin(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	z, err := filters.NewZPK(nil, []complex128{1i, -1i}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := filters.NewRotation([][]float64{{1, 0}, {0, 1}}, []filters.RotationBlock{{Radius: 0.9, Angle: 0.3}}, nil, []float64{1, 0}, []float64{0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := filters.NewDiagonal([]complex128{0.5 + 0.5i, 0.5 - 0.5i}, []complex128{1, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []filters.Filter{z, r, d} {
		addFilter(t, m, string(f.Form()), f)
		m.setFocus(panePlots)
		m.plots.step = len(stepLevels) - 1
		keys(t, m, "n")
		for i := range 25 {
			keys(t, m, "down")
			if m.status.level == levelError {
				t.Fatalf("%s: ↓ %d: %s", f.Form(), i+1, m.status.text)
			}
		}
		held, _ := filters.HeldPoles(m.selected().current())
		if p := held[0]; math.Abs(cmplx.Abs(p)-minRadius) > 1e-15 || math.Abs(cmplx.Phase(p)-cmplx.Phase(f.(filters.PoleMover).HeldPoles()[0])) > 1e-12 {
			t.Errorf("%s: the pair stopped at %v", f.Form(), p)
		}
		if want := "the pair stops at radius 0.0001: at the origin its two poles would be real"; !strings.HasPrefix(m.status.text, want) {
			t.Errorf("%s: status %q, want %q…", f.Form(), m.status.text, want)
		}
		keys(t, m, "up")
		if p, _ := filters.HeldPoles(m.selected().current()); math.Abs(cmplx.Abs(p[0])-minRadius-stepLevels[m.plots.step].r) > 1e-15 {
			t.Errorf("%s: ↑ moved the pair to %v", f.Form(), p[0])
		}
	}
	// a real value for a rotation block's member says what is wrong
	if _, err := r.MovePole(0, 0); err == nil || !strings.Contains(err.Error(), "0 is real, but rotation block 1 holds a conjugate pair ρe^{±jθ}, whose poles stay complex (a block at the origin is one of radius ρ = 0)") {
		t.Errorf("a rotation block's pole moved to 0: %v", err)
	}
}

// TestCommandsRefuseExtraArguments: :w PATH saves as PATH, as :save-session PATH does, and
// every command refuses words it would drop, with its usage; export refuses a second FORM or
// option (QA finding 9: ":w other.ssmlab" saved over the session's own file, ":duplicate
// extra" duplicated, ":export e.json tf zpk" dropped tf).
func TestCommandsRefuseExtraArguments(t *testing.T) {
	dir := t.TempDir()
	s1 := writeSession(t, dir, "s1.ssmlab")
	m := openModel(t, s1, "", 120, 40)
	addPreset(t, m, "pair")
	other := filepath.Join(dir, "other.ssmlab")
	keys(t, m, ":")
	typeText(t, m, "w "+other)
	keys(t, m, "enter")
	if got := names(loadSession(t, other)); m.sess.Path != other || !slices.Equal(got, []string{"start", "pair"}) || len(loadSession(t, s1).Order()) != 1 {
		t.Fatalf(":w PATH: the session's file is %q, PATH holds %v, its old file %v (status %q)", m.sess.Path, got, names(loadSession(t, s1)), m.status.text)
	}
	order := m.sess.Order()
	for _, tc := range []struct{ line, want string }{
		{"w a b", `w takes at most 1 argument: w [PATH]; got "a b"`},
		{"save-session a b", `save-session takes at most 1 argument: save-session [PATH]; got "a b"`},
		{"duplicate extra", `duplicate takes no arguments, got "extra"`},
		{"dup extra", `duplicate takes no arguments, got "extra"`}, // a prefix names it
		{"delete extra", `delete takes no arguments, got "extra"`},
		{"log extra", `log takes no arguments, got "extra"`},
		{"undo extra", `undo takes no arguments, got "extra"`},
		{"messages extra", `messages takes no arguments, got "extra"`},
		{"recover extra", `recover takes no arguments, got "extra"`},
		{"help extra", `help takes no arguments, got "extra"`},
		{"quit extra", `quit takes no arguments, got "extra"`},
		{"save a.json b", `save takes at most 1 argument: save [PATH]; got "a.json b"`},
		{"cancel 1 2", `cancel takes at most 1 argument: cancel [JOB]; got "1 2"`},
		{"length 64 128", `length takes at most 1 argument: length N; got "64 128"`},
		{"export-plot a.svg impulse x", `export-plot takes at most 2 arguments: export-plot PATH [KIND]; got "a.svg impulse x"`},
		{"export " + filepath.Join(dir, "e.json") + " tf zpk", "export takes one FORM, got tf and zpk; export needs PATH"},
		{"export " + filepath.Join(dir, "e.npz") + " dtype=float32 dtype=float64", "export takes one dtype, got dtype=float32 and dtype=float64"},
		// the option by its name, however spelt (trunc-len is ssmlab export's)
		{"export " + filepath.Join(dir, "e.npz") + " trunc_len=4 trunc-len=8", "export takes one trunc-len, got trunc_len=4 and trunc-len=8"},
		{"export " + filepath.Join(dir, "e.json") + " diagonal force tf", "export takes one FORM, got diagonal and tf"},
	} {
		keys(t, m, ":")
		typeText(t, m, tc.line)
		keys(t, m, "enter")
		if m.status.level != levelError || !strings.HasPrefix(m.status.text, tc.want) || m.dialog != nil || m.quitting {
			t.Errorf(":%s: status %q, dialog %T, want the error %q", tc.line, m.status.text, m.dialog, tc.want)
		}
		keys(t, m, "esc")
	}
	if got := m.sess.Order(); !slices.Equal(got, order) || m.plots.logImpulse {
		t.Errorf("a refused command acted: order %v (was %v), log %v", got, order, m.plots.logImpulse)
	}
	if _, err := os.Stat(filepath.Join(dir, "e.json")); !os.IsNotExist(err) {
		t.Errorf("export with two FORMs wrote a file: %v", err)
	}
}

// TestDistillOrderWithOrders: :distill order=N beside orders= is refused as ssmlab distill
// refuses --order with --orders (train.CheckOrderOrOrders), ladder included; it ran the ladder
// and dropped the order (QA finding 10).
func TestDistillOrderWithOrders(t *testing.T) {
	m := newLadderModel(t) // a runner that fits ladders: the real one
	want := "orders= and order= both give the order: orders= fits a ladder of orders, order= one"
	for _, line := range []string{"distill order=4 orders=4,8", "distill orders=4,8 order=4", "ladder 4,8 order=4"} {
		keys(t, m, ":")
		typeText(t, m, line)
		keys(t, m, "enter")
		if m.status.level != levelError || m.status.text != want || len(m.jobs) != 0 {
			t.Errorf(":%s: status %q, %d jobs; want the error %q", line, m.status.text, len(m.jobs), want)
		}
	}
}

// TestNoConditionNoPhrase: a conversion without a step that can lose digits shows no
// condition number, not "condition 1 · condition of none (…)" (QA finding 16); one with such
// a step names its condition and what it is of.
func TestNoConditionNoPhrase(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "ring")
	f := m.selected().filter
	var none, some int
	for _, form := range filters.Forms {
		if form == f.Form() {
			continue
		}
		_, rep, err := filters.Convert(f, form)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.runLine("view " + string(form)); err != nil {
			t.Fatal(err)
		}
		send(t, m, statusMsg{})
		if s := screen(m); !strings.Contains(s, string(rep.From)+" → "+string(rep.To)+": rel error") || strings.Contains(s, "of none") {
			t.Errorf("%s: the representation pane:\n%s", form, s)
		}
		lines := plain(strings.Join(reportLines(m.st, rep, 300), "\n"))
		head := fmt.Sprintf("%s → %s: rel error %s (%d samples)", rep.From, rep.To, filters.RelErrorText(rep.RelError), rep.Length)
		if !rep.Conditioned {
			none++
			if !strings.HasPrefix(lines, head) || strings.Contains(lines, "condition") || strings.Contains(reportSummary(rep), "condition") {
				t.Errorf("%s (%s): the report reads %q, the status line %q: want %q and no condition", form, rep.ConditionOf, lines, reportSummary(rep), head)
			}
			continue
		}
		some++
		if want := head + ", condition " + sci(rep.Condition) + "\ncondition of " + rep.ConditionOf; !strings.HasPrefix(lines, want) {
			t.Errorf("%s: the report reads %q, want %q", form, lines, want)
		}
	}
	if none == 0 || some == 0 {
		t.Errorf("%d conversions without a condition number, %d with one: the test needs both", none, some)
	}
}

// TestChannelsCountFromZero: the workbench numbers a bank's channels from 0, as --channel,
// the CLI's messages, the reports, export-plot's legend and the tutorial do (QA finding 11:
// "channel 3 of 4" was channels[2]).
func TestChannelsCountFromZero(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "bank")
	if s := screen(m); !strings.Contains(s, "channel 0 of 0–1 ([ ])") || !strings.Contains(s, "ch 0 of 0–1 · preset bank") {
		t.Errorf("the first channel:\n%s", s)
	}
	keys(t, m, "]")
	e := m.selected()
	if e.ch != 1 || m.status.text != "bank: channel 1 of 0–1" || figureSeries(e).Name != "bank, ch 1" {
		t.Errorf("] shows channel %d: status %q, figure %q", e.ch, m.status.text, figureSeries(e).Name)
	}
	if s := screen(m); !strings.Contains(s, "channel 1 of 0–1 ([ ])") || !strings.Contains(s, "ch 1 of 0–1 · preset bank") {
		t.Errorf("the second channel:\n%s", s)
	}
	addPreset(t, m, "kernel") // one kernel
	m.setFocus(paneRepr)
	if s := screen(m); !strings.Contains(s, "64 samples · channel 0 · distil it with D") {
		t.Errorf("a single kernel:\n%s", s)
	}
}

// TestChannelKeysHintedWhereTheyWork: the representation's header hints "[ ]" for a bank's
// channels only while the list, where those keys change the channel, has the focus: in the
// representation pane they step the form tab, and the hint sent a user to the companion form
// (QA: "channel 0 of 0–2 ([ ])" over the form tabs that ] had just moved).
func TestChannelKeysHintedWhereTheyWork(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	addPreset(t, m, "bank")
	m.setFocus(paneRepr)
	if s := screen(m); !strings.Contains(s, "channel 0 of 0–1") || strings.Contains(s, "([ ])") {
		t.Errorf("the representation focused: want the channel without the list's keys:\n%s", s)
	}
	keys(t, m, "]")
	if e := m.selected(); e.ch != 0 || m.repr.tab == "" {
		t.Fatalf("] in the representation: channel %d, tab %q: want the next form's tab on channel 0", e.ch, m.repr.tab)
	}
	m.setFocus(paneList)
	if s := screen(m); !strings.Contains(s, "channel 0 of 0–1 ([ ])") {
		t.Errorf("the list focused: want the hint:\n%s", s)
	}
}

// TestOffPlotNamed: the pole-zero plot's title says what lies beyond it, poles or zeros (QA
// finding 18: "1 off-plot" of a zero).
func TestOffPlotNamed(t *testing.T) {
	m := newTestModel(t, 250, 60, nil)
	for _, tc := range []struct {
		zeros, poles []complex128
		want         string
	}{
		{[]complex128{5}, []complex128{0.5}, "1 zero off-plot"},
		{[]complex128{5, -6, 0.1}, []complex128{0.5, 4, 0.2}, "1 pole, 2 zeros off-plot"},
	} {
		f, err := filters.NewZPK(tc.zeros, tc.poles, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		addFilter(t, m, "far", f)
		if s := screen(m); !strings.Contains(s, tc.want) {
			t.Errorf("zeros %v, poles %v: the pole-zero title lacks %q:\n%s", tc.zeros, tc.poles, tc.want, s)
		}
	}
}

// TestSmallScreensKeepTheEssentials: a jobs pane too short for a running job's lines shows its
// heading and progress (at 60×14 it was blank while the job ran), and a question taller than
// the screen keeps its title and its end, where its keys are, with the keys that answer it on
// the status bar (at 20×6 the quit question was cut before its keys, and the bar read "answer
// with the key…") (QA finding 17).
func TestSmallScreensKeepTheEssentials(t *testing.T) {
	m := newTestModel(t, 60, 14, nil)
	addPreset(t, m, "ring")
	m.jobs = []*job{{num: 1, spec: train.Spec{Model: "rtf", Order: 4, Steps: 500}, sourceID: m.sel, status: sessions.JobRunning,
		last: JobProgress{Step: 200, Steps: 500, Loss: 0.01}, cancel: func() {}}}
	send(t, m, statusMsg{})
	if _, rows := m.jobsPane.width, m.jobsPane.height; rows >= jobLines(m.jobs[0]) {
		t.Fatalf("the jobs pane has %d rows at 60×14: room for the whole job", rows)
	}
	if s := screen(m); !strings.Contains(s, "#1 ring→rtf4 running") || !strings.Contains(s, " 40%") {
		t.Errorf("60×14: the jobs pane does not show the running job:\n%s", s)
	}
	m.jobsPane.setSize(24, 1) // one row: the heading with the progress
	if v := plain(m.jobsPane.view(false)); !strings.Contains(v, "#1 rtf 40%") {
		t.Errorf("one row: %q", v)
	}

	m.jobs = nil // the question's end is then its keys
	send(t, m, tea.WindowSizeMsg{Width: 20, Height: 6})
	keys(t, m, "q")
	c, ok := dialogOf[*confirm](m)
	if !ok {
		t.Fatalf("q opened %T", m.dialog)
	}
	lines := strings.Split(screen(m), "\n")
	if !strings.Contains(lines[1], "quit ssmlab?") || !strings.Contains(strings.Join(lines[:4], "\n"), "stays") {
		t.Errorf("20×6: the question lost its title or its end:\n%s", screen(m))
	}
	if want := "answer s, d, n · es"; !strings.HasPrefix(lines[5], want) || c.hint() != "answer s, d, n · esc cancels" {
		t.Errorf("20×6: the key line is %q, want %q…", lines[5], want)
	}
	checkSize(t, m.View(), 20, 6)
}

// TestListGivesNamesRoomFirst: at 120 columns the filters list shows a name whole, giving up
// the form column and then the order where that shows it whole; every result of
// hippo-legs64 read "hippo-le… diagonal 32", its name cut and the form whole.
func TestListGivesNamesRoomFirst(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	ring, err := ringDiagonal(32, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	pair := pairAt(t, 0.9, math.Pi/4)
	long := "a-name-longer-than-the-list-is-wide" // cut whatever goes: every column stays
	for _, name := range []string{"pair", "hippo-legs64", "hippo-legs64~rtf32", "hippo-legs64~modal32", long} {
		if name == "pair" {
			addFilter(t, m, name, pair)
		} else {
			addFilter(t, m, name, ring)
		}
	}
	m.setFocus(paneList)
	s := screen(m)
	row := func(prefix string) string {
		for _, line := range strings.Split(s, "\n") {
			if parts := strings.Split(strings.ReplaceAll(line, "┃", "│"), "│"); len(parts) > 2 && strings.Contains(parts[1], prefix) {
				return strings.TrimSpace(parts[1])
			}
		}
		return "" // none: the name is cut before prefix ends
	}
	for _, tc := range []struct{ name, prefix, right string }{
		{"pair", "pair", "pair zpk 2 ✓"},                                     // room for every column
		{"hippo-legs64", "hippo-legs64 ", "hippo-legs64 32 ✓"},               // the form goes
		{"hippo-legs64~rtf32", "hippo-legs64~", "hippo-legs64~rtf32 32 ✓"},   // the form goes
		{"hippo-legs64~modal32", "hippo-legs64~m", "hippo-legs64~modal32 ✓"}, // the order too
		{long, "a-name", "… diagonal 32 ✓"},                                  // too long
	} {
		r := row(tc.prefix)
		if !strings.HasSuffix(strings.Join(strings.Fields(r), " "), tc.right) {
			t.Errorf("%s: the row reads %q, want it to end %q:\n%s", tc.name, r, tc.right, s)
		}
	}
}

// TestMarginalHasItsOwnMark: the list tells a marginal filter (a pole pair on the unit
// circle, a pure oscillator) from an unstable one: it was ✗ like a filter that grows.
func TestMarginalHasItsOwnMark(t *testing.T) {
	m := newTestModel(t, 120, 30, nil)
	cases := []struct {
		name string
		r    float64
		want analysis.Stability
	}{{"decays", 0.8, analysis.Stable}, {"rings", 1, analysis.Marginal}, {"grows", 1.2, analysis.Unstable}}
	for _, c := range cases {
		e := addFilter(t, m, c.name, pairAt(t, c.r, math.Pi/4))
		if rho, ok := e.rhoOf(); !ok || analysis.StabilityOf(rho) != c.want {
			t.Fatalf("%s: ρ %g (known %v), want a %s filter", c.name, rho, ok, c.want)
		}
	}
	s := screen(m)
	marks := map[string]string{}
	for _, c := range cases {
		// the mark is the one character after "form order " on the item's line
		line := lineWith(s, c.name, "zpk 2 ")
		i := strings.Index(line, "zpk 2 ")
		if i < 0 {
			t.Fatalf("%s: no list line with its mark in\n%s", c.name, s)
		}
		marks[c.name] = string([]rune(line[i+len("zpk 2 "):])[0])
	}
	if marks["decays"] != "✓" || marks["grows"] != "✗" || strings.Contains("✓✗·≈", marks["rings"]) {
		t.Errorf("marks %v: want ✓ stable, ✗ unstable and a mark of its own for marginal\n%s", marks, s)
	}
}
