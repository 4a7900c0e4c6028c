package tui

import (
	"fmt"
	"math"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
)

type plotKind int

const (
	plotImpulse plotKind = iota
	plotMagnitude
	plotPhase
	plotDelay
	plotPZ
	nPlotKinds
)

var plotNames = [nPlotKinds]string{"impulse", "magnitude", "phase", "group delay", "pole-zero"}

// figureKinds are the export-plot names of the plots, and their names in the session's UI
// state.
var figureKinds = [nPlotKinds]string{plotImpulse: "impulse", plotMagnitude: "magnitude", plotPhase: "phase",
	plotDelay: "group-delay", plotPZ: "pole-zero"}

// plotOrder is the order plots are laid out in when several fit.
var plotOrder = []plotKind{plotImpulse, plotMagnitude, plotPZ, plotPhase, plotDelay}

// stepLevels are the pole-move steps: radius and angle (radians) per key press.
var stepLevels = []stepLevel{
	{0.001, math.Pi / 2000}, {0.005, math.Pi / 400}, {0.02, math.Pi / 100}, {0.05, math.Pi / 40},
}

// plotsPane is the plots pane: which plots are on, their scales, the selected pole, and the
// last rendered view (plots are redrawn only when their data, size or options change). The
// impulse length L and the overlay are the workbench's: the computations follow them.
type plotsPane struct {
	m             *Model
	width, height int // inner size
	enabled       [nPlotKinds]bool
	offset        int // first plot shown when not all fit
	logImpulse    bool
	poleSel       int    // index into poleReps of the shown filter's poles
	step          int    // index into stepLevels
	seen          string // the item the pole selection is for
	// queued are pole keys that came before the poles they act on, which a form that does
	// not hold them has computed in a command, and which an arrow on such a form converts it
	// to zpk for first: applyQueued applies them in order once the poles are there, so that
	// keys sent at once (n → from a script) do what they do one at a time. conv is the
	// conversion an arrow started, which the arrows queued behind it wait for.
	queued []poleKey
	conv   poleConversion

	cacheKey  plotCacheKey
	cacheView string
}

// plotData is what the plots show, gathered from the session.
type plotData struct {
	name    string
	resp    *respData
	pz      *pzData
	err     error // of the responses
	ovfl    error // of the impulse response alone (respData.overflow)
	stale   bool  // the responses shown are for an older generation (recomputing)
	ovName  string
	ovResp  *respData
	ovPZ    *pzData
	length  int
	message string // shown instead of plots (no filter selected)
	kernel  bool   // the entry is a kernel: no poles or zeros
}

type plotCacheKey struct {
	w, h                 int
	resp, ovResp         *respData
	pz, ovPZ             *pzData
	enabled              [nPlotKinds]bool
	offset, poleSel      int
	log, overlay, stale  bool
	focused              bool
	name, ovName, errTxt string
	message              string
	length               int
	kernel               bool
}

func newPlots(m *Model) *plotsPane {
	p := &plotsPane{m: m, step: 1}
	for k := range p.enabled {
		p.enabled[k] = true
	}
	return p
}

func (p *plotsPane) setSize(w, h int) { p.width, p.height = w, h }

// sync starts the pole selection over for another item, dropping the pole keys queued for
// the one before, and applies those queued for this one that can be (applyQueued).
func (p *plotsPane) sync() {
	if p.m.sel != p.seen {
		p.poleSel, p.seen, p.queued = 0, p.m.sel, nil
	}
	p.applyQueued()
}

// poleKey is a pole key kept until the poles it acts on are there (plotsPane.queued): n or
// N (sel 1 or −1), or an arrow (sel 0), which moves the selected pole by radial and angular
// steps of step.
type poleKey struct {
	sel             int
	radial, angular int
	step            stepLevel
}

// poleConversion is the conversion to zpk an arrow started, of item id at generation rev:
// a single filter's is under way while it is the workbench's conversion to commit, a bank's
// until its result comes (pending, cleared by conversionDone).
type poleConversion struct {
	id      string
	rev     uint64
	bank    bool
	pending bool
}

// converting reports whether the conversion an arrow started for e is under way.
func (p *plotsPane) converting(e *entry) bool {
	c := p.conv
	if c.id == "" || c.id != e.id || c.rev != e.rev {
		return false
	}
	if c.bank {
		return c.pending
	}
	return p.m.commit.id == e.id
}

// conversionDone notes that the bank conversion of item id has come back (applied, refused,
// or waiting on the question of its accuracy).
func (p *plotsPane) conversionDone(id string) {
	if p.conv.id == id {
		p.conv.pending = false
	}
}

// shownPoles returns the poles of e's shown filter the pole keys act on: those its form
// holds, at once, else those computed for its current generation and channel; ok is false
// until they are there, err where they could not be computed.
func shownPoles(e *entry) (poles []complex128, ok bool, err error) {
	if f := e.current(); f != nil {
		if held, ok := filters.HeldPoles(f); ok {
			return held, true, nil
		}
	}
	if pz := e.pz; pz != nil && pz.key == (pzKey{rev: e.rev, ch: e.ch}) {
		return pz.poles, pz.havePoles, pz.err
	}
	return nil, false, nil
}

// applyQueued applies the queued pole keys, in order, while the poles each needs are there:
// a selection once the poles are computed, a move once the filter is in a form that holds
// them. A move whose conversion failed, or waits on the question of its accuracy, is dropped
// with the keys behind it (the status says why; keys typed ahead answer no question). The
// status of a conversion that came in this update stays in front of the move's.
func (p *plotsPane) applyQueued() {
	if len(p.queued) == 0 {
		return
	}
	m := p.m
	before, converted := m.status, false
	for len(p.queued) > 0 {
		e := m.selected() // anew: an edit makes the item's entry anew
		if e == nil || e.current() == nil {
			p.queued = nil
			return
		}
		k := p.queued[0]
		if k.sel != 0 {
			poles, ok, err := shownPoles(e)
			if err != nil {
				p.queued = nil
				m.setStatus(levelWarn, "the poles could not be computed: "+oneLine(err))
				return
			}
			if !ok {
				return
			}
			p.selectIn(e, poles, k.sel)
		} else {
			pm, held := e.current().(filters.PoleMover)
			if !held {
				if !p.converting(e) {
					p.queued, p.conv = nil, poleConversion{}
				}
				return
			}
			if p.conv.id == e.id && p.conv.rev != e.rev {
				converted, p.conv = true, poleConversion{}
			}
			p.nudgeSelected(e, pm, k)
		}
		p.queued = p.queued[1:]
	}
	if converted && before.level != levelInfo && m.status != before {
		m.status = statusMsg{text: before.text + " · " + m.status.text, level: before.level}
	}
}

func (p *plotsPane) title() string {
	t := fmt.Sprintf("plots · L=%d", p.m.length)
	if p.logImpulse {
		t += " · log"
	}
	kinds, _, _ := p.visible()
	on := 0
	for _, e := range p.enabled {
		if e {
			on++
		}
	}
	if len(kinds) < on {
		t += fmt.Sprintf(" · %d of %d (p: more)", len(kinds), on)
	}
	return t
}

func (p *plotsPane) capture(tea.KeyMsg) (tea.Cmd, bool) { return nil, false }
func (p *plotsPane) hint() string                       { return "" }

func (p *plotsPane) bindings() []binding {
	k, a := p.m.keys, p.m.app
	do := func(f func()) func(tea.KeyMsg) tea.Cmd { return func(tea.KeyMsg) tea.Cmd { f(); return nil } }
	setL := func(n int) {
		a.length = n
		a.setStatus(levelInfo, fmt.Sprintf("L = %d samples", n))
	}
	return []binding{
		{key: k.NextPole, run: do(func() { p.selectPole(1) }), short: true},
		{key: k.PrevPole, run: do(func() { p.selectPole(-1) })},
		{key: k.PoleMove, run: p.movePoleKey, short: true},
		{key: k.Finer, run: do(func() { p.step = max(0, p.step-1); p.describeStep() })},
		{key: k.Coarser, run: do(func() { p.step = min(len(stepLevels)-1, p.step+1); p.describeStep() })},
		{key: k.TogglePlot, run: func(msg tea.KeyMsg) tea.Cmd {
			kinds := []plotKind{plotImpulse, plotMagnitude, plotPhase, plotDelay, plotPZ}
			p.toggle(kinds[msg.String()[0]-'1'])
			return nil
		}, short: true},
		{key: k.More, run: do(func() { p.offset++ })},
		{key: k.Scale, run: do(func() { p.logImpulse = !p.logImpulse }), short: true},
		{key: k.Overlay, run: do(func() {
			a.overlayOn = !a.overlayOn
			a.sayOverlay()
		})},
		{key: k.Shorter, run: do(func() { setL(max(minLength, a.length/2)) })},
		{key: k.Longer, run: do(func() { setL(min(maxLength, a.length*2)) })},
	}
}

// toggle turns a plot on or off.
func (p *plotsPane) toggle(k plotKind) {
	p.enabled[k] = !p.enabled[k]
	state := "off"
	if p.enabled[k] {
		state = "on"
	}
	p.m.setStatus(levelInfo, plotNames[k]+" plot "+state)
}

// selectPole selects the next (d = 1) or previous (d = -1) pole of the shown filter; while
// its poles are being computed, or keys before it wait, the key waits too (applyQueued).
func (p *plotsPane) selectPole(d int) {
	p.showPZ()
	e := p.m.selected()
	if e == nil || e.current() == nil {
		return
	}
	poles, ok, err := shownPoles(e)
	switch {
	case len(p.queued) > 0 || !ok && err == nil:
		p.queued = append(p.queued, poleKey{sel: d})
		if !ok {
			p.m.setStatus(levelInfo, fmt.Sprintf("computing the poles of %s: the pole is selected once they are there", e.name))
		}
	case err != nil:
		p.m.setStatus(levelWarn, "the poles could not be computed: "+oneLine(err))
	default:
		p.selectIn(e, poles, d)
	}
}

// selectIn moves the selection d poles on among poles, e's shown filter's.
func (p *plotsPane) selectIn(e *entry, poles []complex128, d int) {
	n := len(poleReps(poles))
	if n == 0 {
		p.m.setStatus(levelInfo, "this filter has no poles")
		return
	}
	p.poleSel = (p.poleSel + d + n) % n
	p.describePole(poles)
}

func (p *plotsPane) movePoleKey(msg tea.KeyMsg) tea.Cmd {
	var radial, angular int
	switch msg.String() {
	case "up", "k":
		radial = 1
	case "down", "j":
		radial = -1
	case "right", "l":
		angular = 1
	case "left", "h":
		angular = -1
	}
	p.showPZ()
	return p.movePole(stepLevels[p.step], radial, angular)
}

func (p *plotsPane) describeStep() {
	s := stepLevels[p.step]
	p.m.setStatus(levelInfo, fmt.Sprintf("pole step: radius %s, angle %sπ per key", num(s.r), num(s.th/math.Pi)))
}

func (p *plotsPane) describePole(poles []complex128) {
	i, ok := p.selectedIn(poles)
	if !ok {
		return
	}
	pole := poles[i]
	what := "pole"
	if imag(pole) != 0 {
		what = "pole pair"
	}
	p.m.setStatus(levelInfo, fmt.Sprintf("%s %d of %d: %s = %s∠%sπ · arrows move it", what, p.poleSel+1, len(poleReps(poles)), cnum(pole), filters.FormatModulus(absC(pole)), num(argC(pole)/math.Pi)))
}

// movePole nudges the selected pole (and its conjugate) of the shown filter by radial and
// angular steps of s. A filter in a form that does not hold its poles is converted to zpk
// first, and the pole moved once it is (applyQueued), as are the keys that come meanwhile.
// The edit itself is O(n); the responses follow in a command.
func (p *plotsPane) movePole(s stepLevel, radial, angular int) tea.Cmd {
	m := p.m
	e := m.selected()
	if e == nil {
		return nil
	}
	f := e.current()
	if f == nil {
		m.setStatus(levelWarn, "kernels have no poles to move")
		return nil
	}
	k := poleKey{radial: radial, angular: angular, step: s}
	pm, held := f.(filters.PoleMover)
	switch {
	case held && len(p.queued) == 0:
		p.nudgeSelected(e, pm, k)
		return nil
	case held || p.converting(e):
		p.queued = append(p.queued, k) // behind keys still waiting
		return nil
	case f.Order() == 0:
		m.setStatus(levelInfo, "this filter has no poles")
		return nil
	}
	// convert once to a form that holds its poles, then edit there (behind any keys still
	// waiting: the conversion needs no selection)
	from := f.Form()
	conv := poleConversion{id: e.id, rev: e.rev, bank: e.kind == kindBank, pending: true}
	cmd, err := m.convertTo(filters.FormZPK)
	if err != nil {
		m.setError(err)
		return cmd
	}
	p.conv = conv
	p.queued = append(p.queued, k)
	if p.converting(e) {
		m.setStatus(levelInfo, fmt.Sprintf("converting %s → zpk, a form that holds its poles: the pole moves once it is done", from))
	}
	return cmd
}

// nudgeSelected moves the selected pole of e's shown filter, pm, as k says.
func (p *plotsPane) nudgeSelected(e *entry, pm filters.PoleMover, k poleKey) {
	m := p.m
	s, radial, angular := k.step, k.radial, k.angular
	poles := pm.HeldPoles()
	i, ok := p.selectedIn(poles)
	if !ok {
		m.setStatus(levelInfo, "this filter has no poles")
		return
	}
	old := poles[i]
	np := nudge(old, s, radial, angular)
	// nudge stops a pair short of the origin: say so, not nothing or a typed value's error
	stop := ""
	if imag(old) != 0 && radial < 0 && absC(old)-s.r < minRadius {
		stop = fmt.Sprintf(" · the pair stops at radius %s: at the origin its two poles would be real (a rotation block's ρ can be set to 0 in the representation)", num(absC(np)))
	}
	if np == old {
		m.setStatus(levelInfo, strings.TrimPrefix(stop, " · "))
		return
	}
	g, err := pm.MovePole(i, np)
	if err != nil {
		m.setError(err)
		return
	}
	if err := m.setCurrent(e, g); err != nil {
		m.setError(err)
		return
	}
	r := absC(np)
	where := filters.CirclePlace(r)
	if v := analysis.StabilityOf(r); v != analysis.Stable {
		where += ": " + v.String()
	}
	m.setStatus(levelInfo, fmt.Sprintf("pole → %s∠%sπ (%s)%s · u undoes", filters.FormatModulus(r), num(argC(np)/math.Pi), where, stop))
}

// visible returns the plots shown at the current size, and the grid they are laid out in.
func (p *plotsPane) visible() (kinds []plotKind, cols, rows int) {
	var on []plotKind
	for _, k := range plotOrder {
		if p.enabled[k] {
			on = append(on, k)
		}
	}
	if len(on) == 0 || p.width < 10 || p.height < 4 {
		return nil, 0, 0
	}
	cols = max(1, min(3, p.width/34))
	rows = max(1, p.height/10)
	capacity := cols * rows
	if len(on) <= capacity {
		kinds = on
	} else {
		off := p.offset % len(on)
		for i := range capacity {
			kinds = append(kinds, on[(off+i)%len(on)])
		}
	}
	if len(kinds) < cols {
		cols = len(kinds)
	}
	rows = (len(kinds) + cols - 1) / cols
	return kinds, cols, rows
}

// showPZ makes the pole-zero plot visible (turning it on and paging to it).
func (p *plotsPane) showPZ() {
	p.enabled[plotPZ] = true
	kinds, _, _ := p.visible()
	for _, k := range kinds {
		if k == plotPZ {
			return
		}
	}
	var on []plotKind
	for _, k := range plotOrder {
		if p.enabled[k] {
			on = append(on, k)
		}
	}
	for i, k := range on {
		if k == plotPZ {
			p.offset = i
		}
	}
}

func (p *plotsPane) view(focused bool) string { return p.render(p.data(), focused) }

// data gathers what the plots show: the selected item and the overlay.
func (p *plotsPane) data() plotData {
	a := p.m.app
	e := a.selected()
	if e == nil {
		return plotData{message: "no filter: press a to add a preset"}
	}
	if err := e.problem(); err != nil {
		return plotData{message: e.name + ": " + oneLine(err)}
	}
	d := plotData{name: e.name, resp: e.resp, length: a.length, kernel: e.kind == kindKernel}
	if e.resp != nil {
		d.err, d.ovfl = e.resp.err, e.resp.overflow
		d.stale = e.resp.key != a.respKeyFor(e)
	}
	if e.pz != nil && e.pz.key.rev == e.rev {
		d.pz = e.pz
	}
	if ov := a.overlayEntry(); ov != nil && a.overlayOn {
		d.ovName = ov.name
		if ov.resp != nil && ov.resp.err == nil && ov.resp.key.length == a.length {
			d.ovResp = ov.resp
		}
		d.ovPZ = ov.pz
	}
	return d
}

// errOf is why plot k has no data: the responses' error, or the impulse response's overflow.
func (d plotData) errOf(k plotKind) error {
	if d.err == nil && k == plotImpulse {
		return d.ovfl
	}
	return d.err
}

func absC(c complex128) float64 { return math.Hypot(real(c), imag(c)) }
func argC(c complex128) float64 { return math.Atan2(imag(c), real(c)) }
