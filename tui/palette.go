package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/train"
)

// command is one action of the palette. run executes on the event loop, inside Update; the
// work it starts goes into the returned command.
type command struct {
	name, args, help string
	run              func(m *Model, args []string) (tea.Cmd, error)
}

// commands lists every action the workbench has; each key binding is a shortcut for one.
func commands() []command {
	return []command{
		{"preset", "NAME [k=v …]", "add a preset filter (no name: open the picker)", cmdPreset},
		{"open", "PATH", "open a filter file", cmdOpen},
		{"load", "PATH", "open a filter file (the same as open)", cmdOpen},
		{"save", "[PATH]", "save the selected filter (to its file, or PATH)", cmdSave},
		{"save-session", "PATH", "save every filter and kernel as a session file (.ssmlab)", cmdSaveSession},
		{"export", "PATH [FORM] [k=v …]", "write the selection as .json, .npz/.safetensors (RTF) or .csv/.npy", cmdExport},
		{"export-plot", "PATH [KIND]", "write the plots shown (or one KIND) as a figure: .svg, .pdf or .png", cmdExportPlot},
		{"convert", "FORM", "convert the selected filter: " + formNames(), cmdConvert},
		{"view", "FORM", "show the selected filter in FORM without converting it", cmdView},
		{"distill", "[model=rtf order=N steps=N init=I length=L backend=B]", "distil the selected filter (no arguments: the form)", cmdDistill},
		{"cancel", "[JOB]", "cancel a running job (default: the selected one)", cmdCancel},
		{"duplicate", "", "copy the selected filter", func(m *Model, _ []string) (tea.Cmd, error) { return m.duplicate() }},
		{"rename", "NAME", "rename the selected filter", cmdRename},
		{"delete", "", "delete the selected filter (asks first)", func(m *Model, _ []string) (tea.Cmd, error) { return m.askDelete() }},
		{"overlay", "[NAME|off]", "overlay another filter on the plots (no argument: the selected one)", cmdOverlay},
		{"length", "N", "impulse response length L of the plots", cmdLength},
		{"plot", "impulse|magnitude|phase|delay|polezero", "toggle a plot", cmdPlot},
		{"log", "", "toggle a log scale on the impulse response", func(m *Model, _ []string) (tea.Cmd, error) {
			m.plots.logImpulse = !m.plots.logImpulse
			return nil, nil
		}},
		{"undo", "", "undo the last change of the selected filter", func(m *Model, _ []string) (tea.Cmd, error) { return m.undo() }},
		{"theme", "light|dark", "colours for a light or dark background", cmdTheme},
		{"messages", "", "the results, warnings and errors so far, whole", func(m *Model, _ []string) (tea.Cmd, error) {
			m.modal = modalState{kind: modalMessages}
			return nil, nil
		}},
		{"help", "", "show every key", func(m *Model, _ []string) (tea.Cmd, error) { m.modal = modalState{kind: modalHelp}; return nil, nil }},
		{"quit", "", "quit (asks to save unsaved work)", func(m *Model, _ []string) (tea.Cmd, error) { return m.askQuit(), nil }},
	}
}

func formNames() string {
	names := make([]string, len(filters.Forms))
	for i, f := range filters.Forms {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// palette is the command palette's state.
type palette struct {
	sel int
}

// matches returns the commands whose name starts with (or else contains) the first word typed.
func matches(text string) []command {
	word := strings.ToLower(strings.TrimSpace(text))
	if i := strings.IndexByte(word, ' '); i >= 0 {
		word = word[:i]
	}
	var pre, sub []command
	for _, c := range commands() {
		switch {
		case strings.HasPrefix(c.name, word):
			pre = append(pre, c)
		case strings.Contains(c.name, word):
			sub = append(sub, c)
		}
	}
	return append(pre, sub...)
}

// runLine parses and runs one palette line.
func (m *Model) runLine(line string) (tea.Cmd, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, nil
	}
	name := strings.ToLower(fields[0])
	for _, c := range commands() {
		if c.name == name {
			return c.run(m, fields[1:])
		}
	}
	if ms := matches(name); len(ms) == 1 {
		return ms[0].run(m, fields[1:])
	}
	return nil, fmt.Errorf("unknown command %q (: lists them)", name)
}

func (m *Model) paletteKey(msg tea.KeyMsg) tea.Cmd {
	md := &m.modal
	ms := matches(md.input.Value())
	switch msg.String() {
	case "esc":
		m.modal = modalState{}
		return nil
	case "up", "ctrl+p":
		if md.pal.sel > 0 {
			md.pal.sel--
		}
		return nil
	case "down", "ctrl+n":
		if md.pal.sel < len(ms)-1 {
			md.pal.sel++
		}
		return nil
	case "tab":
		if md.pal.sel < len(ms) {
			md.input.SetValue(ms[md.pal.sel].name + " ")
			md.input.CursorEnd()
		}
		return nil
	case "enter":
		text := strings.TrimSpace(md.input.Value())
		fields := strings.Fields(text)
		exact := false
		if len(fields) > 0 {
			for _, c := range commands() {
				if c.name == strings.ToLower(fields[0]) {
					exact = true
				}
			}
		}
		if !exact && md.pal.sel < len(ms) {
			c := ms[md.pal.sel]
			if strings.HasPrefix(c.args, "[") || c.args == "" {
				text = c.name
			} else {
				md.input.SetValue(c.name + " ")
				md.input.CursorEnd()
				m.setStatus(levelInfo, fmt.Sprintf("%s needs %s", c.name, c.args))
				return nil
			}
		}
		m.modal = modalState{}
		cmd, err := m.runLine(text)
		if err != nil {
			m.setStatus(levelError, err.Error())
		}
		return cmd
	}
	var cmd tea.Cmd
	md.input, cmd = md.input.Update(msg)
	if n := len(matches(md.input.Value())); md.pal.sel >= n {
		md.pal.sel = max(0, n-1)
	}
	return cmd
}

func (m *Model) paletteView(w, h int) string {
	st := m.c.st
	md := &m.modal
	inner := max(20, w-4)
	ms := matches(md.input.Value())
	lines := []string{st.accent.Render(": ") + md.input.View(), ""}
	rows := max(1, h-8)
	first := max(0, md.pal.sel-rows+1)
	for i := first; i < len(ms) && i < first+rows; i++ {
		c := ms[i]
		mark := "  "
		name := c.name
		if i == md.pal.sel {
			mark = st.accent.Render("▸ ")
			name = st.bold.Render(name)
		}
		line := mark + name + " " + st.dim.Render(c.args) + "  " + st.dim.Render("— "+c.help)
		lines = append(lines, ansi.Truncate(line, inner, "…"))
	}
	if len(ms) == 0 {
		lines = append(lines, st.dim.Render("no command matches"))
	}
	lines = append(lines, "", st.dim.Render("enter run · tab complete · ↑↓ choose · esc close"))
	return st.modal.Width(inner).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}

// kv parses "k=v" arguments.
func kv(args []string) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("want key=value, got %q", a)
		}
		out[k] = v
	}
	return out, nil
}

func cmdPreset(m *Model, args []string) (tea.Cmd, error) {
	if len(args) == 0 {
		m.openPresets()
		return nil, nil
	}
	vals, err := kv(args[1:])
	if err != nil {
		return nil, err
	}
	return m.addPreset(args[0], vals), nil
}

func cmdOpen(m *Model, args []string) (tea.Cmd, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("open needs one PATH")
	}
	m.setStatus(levelInfo, "opening "+args[0]+"…")
	return openFile(m.deps.Store, args[0]), nil
}

func cmdSave(m *Model, args []string) (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	path := e.path
	if len(args) > 0 {
		path = args[0]
	}
	if path == "" {
		m.askSave()
		return nil, nil
	}
	return m.save(e, path), nil
}

// exportUsage is export's argument list, for its errors.
const exportUsage = "export needs PATH [FORM] [dtype=float32] [trunc_len=L] [prefix=P] [length=L]"

func cmdExport(m *Model, args []string) (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if len(args) < 1 {
		return nil, errors.New(exportUsage)
	}
	path := args[0]
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		ext = string(sessions.ExportJSON)
	}
	format, err := sessions.ParseExportFormat(ext)
	if err != nil {
		return nil, fmt.Errorf("%s: the extension chooses the format: .json, .npz, .safetensors, .csv or .npy", path)
	}
	req := exportReq{path: path, opts: sessions.ExportOptions{Format: format}}
	for _, a := range args[1:] {
		key, val, ok := strings.Cut(a, "=")
		if !ok {
			f, err := filters.ParseForm(a)
			if err != nil {
				return nil, err
			}
			if format != sessions.ExportJSON {
				return nil, fmt.Errorf("FORM applies to .json exports; %s writes the RTF layout (.npz, .safetensors) or impulse responses (.csv, .npy)", format)
			}
			req.to = f
			continue
		}
		switch key {
		case "dtype":
			dt, err := arrays.ParseDType(val)
			if err != nil || (dt != arrays.Float32 && dt != arrays.Float64) {
				return nil, fmt.Errorf("dtype %q: want float64 or float32", val)
			}
			req.opts.DType = dt
		case "trunc_len", "length":
			v, err := strconv.Atoi(val)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%s %q: want a whole number ≥ 0", key, val)
			}
			if key == "length" {
				req.opts.Length = v
			} else {
				req.opts.TruncLen = v
			}
		case "prefix":
			req.opts.Prefix = val
		default:
			return nil, fmt.Errorf("no export option %q; %s", key, exportUsage)
		}
	}
	if e.kind == kindKernel && format == sessions.ExportJSON && req.to != "" {
		return nil, fmt.Errorf("kernels have no form to convert to")
	}
	m.setStatus(levelInfo, "exporting to "+path+"…")
	return exportItem(m.deps.Store, e.item(), req), nil
}

// figureKinds are the export-plot names of the plots.
var figureKinds = [nPlotKinds]string{plotImpulse: "impulse", plotMagnitude: "magnitude", plotPhase: "phase",
	plotDelay: "group-delay", plotPZ: "pole-zero"}

func cmdExportPlot(m *Model, args []string) (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if len(args) < 1 || len(args) > 2 {
		return nil, fmt.Errorf("export-plot needs PATH [KIND] (KIND: impulse, magnitude, phase, delay, polezero)")
	}
	var kinds []plotKind
	if len(args) == 2 {
		k, ok := plotNamed(args[1])
		if !ok {
			return nil, fmt.Errorf("no plot %q (impulse, magnitude, phase, delay, polezero)", args[1])
		}
		kinds = []plotKind{k}
	} else {
		kinds, _, _ = m.plots.visible()
	}
	var names []string
	for _, k := range kinds {
		if k == plotPZ && e.kind == kindKernel {
			continue // kernels have no poles or zeros
		}
		names = append(names, figureKinds[k])
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no plot to export: turn one on (plot KIND) or name a KIND")
	}
	series := []FigureSeries{figureSeries(e)}
	if ov := m.overlayEntry(); ov != nil && m.plots.overlayOn {
		series = append(series, figureSeries(ov))
	}
	m.setStatus(levelInfo, "exporting the plots to "+args[0]+"…")
	return exportPlot(m.deps.Figures, args[0], FigureRequest{Kinds: names, Series: series, Length: m.length, Log: m.plots.logImpulse}), nil
}

// figureSeries is the channel an entry shows, for a figure.
func figureSeries(e *entry) FigureSeries {
	s := FigureSeries{Name: e.name, Filter: e.current(), Kernel: e.kernel()}
	if e.channels() > 1 {
		s.Name = fmt.Sprintf("%s, ch %d", e.name, e.ch)
	}
	return s
}

func cmdConvert(m *Model, args []string) (tea.Cmd, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("convert needs a FORM: %s", formNames())
	}
	f, err := filters.ParseForm(args[0])
	if err != nil {
		return nil, err
	}
	return m.convert(f)
}

func cmdView(m *Model, args []string) (tea.Cmd, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("view needs a FORM: %s", formNames())
	}
	f, err := filters.ParseForm(args[0])
	if err != nil {
		return nil, err
	}
	m.showTab(f)
	return nil, nil
}

func cmdDistill(m *Model, args []string) (tea.Cmd, error) {
	if len(args) == 0 {
		return m.openJobForm()
	}
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	vals, err := kv(args)
	if err != nil {
		return nil, err
	}
	spec := m.defaultSpecFor(e)
	for k, v := range vals {
		switch k {
		case "model":
			spec.Model, err = train.ParseModel(v)
		case "init":
			spec.Init, err = train.ParseInit(v)
		case "backend":
			spec.Backend, err = train.ParseBackend(v)
		case "order", "steps", "length":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%s=%s: want a positive integer", k, v)
			}
			switch k {
			case "order":
				spec.Order = n
			case "steps":
				spec.Steps = n
			default:
				spec.Target.Length = n
			}
		default:
			return nil, fmt.Errorf("distill has no parameter %q (model, order, init, steps, length, backend)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := spec.Validate(1, spec.Target.Length); err != nil {
		return nil, err
	}
	return m.startJob(e, spec)
}

func cmdCancel(m *Model, args []string) (tea.Cmd, error) {
	j := m.jobs.selected()
	if len(args) == 1 {
		id, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
		if err != nil {
			return nil, fmt.Errorf("cancel takes a job number, got %q", args[0])
		}
		if j = m.jobs.byID(id); j == nil {
			return nil, fmt.Errorf("no job #%d", id)
		}
	}
	return nil, m.cancelJob(j)
}

func cmdRename(m *Model, args []string) (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if len(args) == 0 {
		m.askRename()
		return nil, nil
	}
	m.rename(e, strings.Join(args, " "))
	return nil, nil
}

func cmdOverlay(m *Model, args []string) (tea.Cmd, error) {
	if len(args) == 0 {
		if e := m.sess.selected(); e != nil {
			m.overlayID = e.id
			m.plots.overlayOn = true
			m.setStatus(levelInfo, e.name+" is the overlay: select another filter to compare")
		}
		return nil, nil
	}
	name := strings.Join(args, " ")
	switch name {
	case "off":
		m.plots.overlayOn = false
		return nil, nil
	case "on":
		m.plots.overlayOn = true
		return nil, nil
	}
	for _, e := range m.sess.entries {
		if e.name == name {
			m.overlayID = e.id
			m.plots.overlayOn = true
			return nil, nil
		}
	}
	return nil, fmt.Errorf("no filter named %q", name)
}

func cmdLength(m *Model, args []string) (tea.Cmd, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("length needs N")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < minLength || n > maxLength {
		return nil, fmt.Errorf("length: want an integer in [%d, %d], got %q", minLength, maxLength, args[0])
	}
	m.length = n
	return nil, nil
}

func cmdPlot(m *Model, args []string) (tea.Cmd, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("plot needs one of impulse, magnitude, phase, delay, polezero")
	}
	k, ok := plotNamed(args[0])
	if !ok {
		return nil, fmt.Errorf("no plot %q (impulse, magnitude, phase, delay, polezero)", args[0])
	}
	m.plots.enabled[k] = !m.plots.enabled[k]
	return nil, nil
}

// plotNamed returns the plot a command names.
func plotNamed(name string) (plotKind, bool) {
	names := map[string]plotKind{"impulse": plotImpulse, "magnitude": plotMagnitude, "phase": plotPhase,
		"delay": plotDelay, "groupdelay": plotDelay, "group-delay": plotDelay, "polezero": plotPZ, "pole-zero": plotPZ,
		"pz": plotPZ, "poles": plotPZ}
	k, ok := names[strings.ToLower(name)]
	return k, ok
}

func cmdTheme(m *Model, args []string) (tea.Cmd, error) {
	if len(args) != 1 || (args[0] != "light" && args[0] != "dark") {
		return nil, fmt.Errorf("theme needs light or dark")
	}
	lipgloss.SetHasDarkBackground(args[0] == "dark")
	m.plots.cacheView = ""
	return nil, nil
}

func cmdSaveSession(m *Model, args []string) (tea.Cmd, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("save-session needs PATH")
	}
	var items []Item
	var ids []int
	var revs []uint64
	for _, e := range m.sess.entries {
		items = append(items, e.item())
		ids, revs = append(ids, e.id), append(revs, e.rev)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("nothing to save: the session is empty")
	}
	m.setStatus(levelInfo, "saving the session to "+args[0]+"…")
	return saveSession(m.deps.Store, args[0], items, ids, revs), nil
}
