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

// sync starts the pole selection over for another item.
func (p *plotsPane) sync() {
	if p.m.sel != p.seen {
		p.poleSel, p.seen = 0, p.m.sel
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
	if p.m.lay.mode == layoutNarrow && p.m.lay.repr.h == 0 {
		t += " · tab: repr"
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

// selectPole selects the next (d = 1) or previous (d = -1) pole of the shown filter.
func (p *plotsPane) selectPole(d int) {
	p.showPZ()
	e := p.m.selected()
	if e == nil || e.pz == nil || !e.pz.havePoles {
		return
	}
	n := len(poleReps(e.pz.poles))
	if n == 0 {
		p.m.setStatus(levelInfo, "this filter has no poles")
		return
	}
	p.poleSel = (p.poleSel + d + n) % n
	p.describePole(e)
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

func (p *plotsPane) describePole(e *entry) {
	i, ok := p.selectedPole(e.pz)
	if !ok {
		return
	}
	pole := e.pz.poles[i]
	what := "pole"
	if imag(pole) != 0 {
		what = "pole pair"
	}
	p.m.setStatus(levelInfo, fmt.Sprintf("%s %d of %d: %s = %s∠%sπ · arrows move it", what, p.poleSel+1, len(poleReps(e.pz.poles)), cnum(pole), filters.FormatModulus(absC(pole)), num(argC(pole)/math.Pi)))
}

// movePole nudges the selected pole (and its conjugate) of the shown filter by radial and
// angular steps of s. The edit itself is O(n); the responses follow in a command.
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
	pm, held := f.(filters.PoleMover)
	if !held && f.Order() > 0 {
		// convert once to a form that holds its poles, then edit there
		m.setStatus(levelInfo, fmt.Sprintf("moving poles needs a form that holds them: converting %s → zpk (press again once done)", f.Form()))
		cmd, err := m.convertTo(filters.FormZPK)
		m.setError(err)
		return cmd
	}
	if e.pz == nil || !e.pz.havePoles || e.pz.key.rev != e.rev {
		return nil
	}
	i, ok := p.selectedPole(e.pz)
	if !ok {
		m.setStatus(levelInfo, "this filter has no poles")
		return nil
	}
	old := e.pz.poles[i]
	np := nudge(old, s, radial, angular)
	// nudge stops a pair short of the origin: say so, not nothing or a typed value's error
	stop := ""
	if imag(old) != 0 && radial < 0 && absC(old)-s.r < minRadius {
		stop = fmt.Sprintf(" · the pair stops at radius %s: at the origin its two poles would be real (a rotation block's ρ can be set to 0 in the representation)", num(absC(np)))
	}
	if np == old {
		m.setStatus(levelInfo, strings.TrimPrefix(stop, " · "))
		return nil
	}
	g, err := pm.MovePole(i, np)
	if err != nil {
		m.setError(err)
		return nil
	}
	if err := m.setCurrent(e, g); err != nil {
		m.setError(err)
		return nil
	}
	r := absC(np)
	where := filters.CirclePlace(r)
	if v := analysis.StabilityOf(r); v != analysis.Stable {
		where += ": " + v.String()
	}
	m.setStatus(levelInfo, fmt.Sprintf("pole → %s∠%sπ (%s)%s · u undoes", filters.FormatModulus(r), num(argC(np)/math.Pi), where, stop))
	return nil
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
