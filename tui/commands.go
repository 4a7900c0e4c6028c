package tui

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/layouts"
	"github.com/ssmlab/ssmlab/train"
)

// command is one action of the palette: its name, its arguments' usage, how many words they
// are at most (most; anyArgs: any number) and what it does. run executes on the event loop,
// inside Update; the work it starts goes into the returned command.
type command struct {
	name, args string
	most       int
	help       string
	run        func(m *Model, args []string) (tea.Cmd, error)
}

// anyArgs is the most of a command that takes any number of words: k=v options, or a name
// (rename, overlay), which may hold spaces.
const anyArgs = -1

// commands lists the workbench's actions by name; most key bindings are shortcuts for one (moving
// a pole, the cell cursor or a bank's channel, editing a cell and paging are keys only).
func commands() []command {
	return []command{
		{"preset", "NAME [k=v …]", anyArgs, "add a preset filter (no name: open the picker)", cmdPreset},
		{"open", "PATH", 1, "open a session, or add a filter file, kernels or a checkpoint's layer (picked from a list) to this one", cmdOpen},
		{"load", "PATH", 1, "the same as open", cmdOpen},
		{"save", "[PATH]", 1, "save the selected filter as a filter file (to its file, or PATH)", cmdSave},
		{"save-session", "[PATH]", 1, "save the session (ctrl+s): to its file, or as PATH (.ssmlab)", cmdSaveSession},
		{"w", "[PATH]", 1, "the same as save-session: to its file, or as PATH", cmdSaveSession},
		{"export", "PATH [FORM] [layout=L dtype=D k=v …] [force]", anyArgs, "write the selection as ssmlab export does: .json, a layout's tensors (.npz/.safetensors/.pt; layout=rtf|s4d|stripedhyena|sos), .csv/.npy; refused when it reads back inaccurately, unless force", cmdExport},
		{"export-plot", "PATH [KIND]", 2, "write the plots shown (or one KIND; ladder: the selected job's) as .svg, .pdf or .png", cmdExportPlot},
		{"convert", "FORM", 1, "convert the selected filter: " + filters.FormNames(), cmdConvert},
		{"view", "FORM", 1, "show the selected filter in FORM without converting it", cmdView},
		{"distill", "[model=rtf order=N orders=N,N… steps=N init=I length=L backend=B poles=P radius=R]", anyArgs, "distil the selected filter (no arguments: the form); orders fits a ladder", cmdDistill},
		{"ladder", "ORDERS [k=v …]", anyArgs, "distil at each of ORDERS (4,8,16): the jobs pane draws error against order with the lower bound beside it", cmdLadder},
		{"cancel", "[JOB]", 1, "cancel a running job (default: the selected one)", cmdCancel},
		{"duplicate", "", 0, "copy the selected filter", func(m *Model, _ []string) (tea.Cmd, error) { return nil, m.duplicate() }},
		{"rename", "NAME", anyArgs, "rename the selected filter", cmdRename},
		{"delete", "", 0, "delete the selected filter (asks first)", func(m *Model, _ []string) (tea.Cmd, error) { return nil, m.askDelete() }},
		{"overlay", "[NAME|on|off]", anyArgs, "overlay another filter on the plots (no argument: the selected one); says what is overlaid", cmdOverlay},
		{"length", "N", 1, "impulse response length L of the plots", cmdLength},
		{"plot", "impulse|magnitude|phase|delay|polezero", 1, "toggle a plot", cmdPlot},
		{"log", "", 0, "toggle a log scale on the impulse response", func(m *Model, _ []string) (tea.Cmd, error) {
			m.plots.logImpulse = !m.plots.logImpulse
			return nil, nil
		}},
		{"undo", "", 0, "undo the last change of the selected filter", func(m *Model, _ []string) (tea.Cmd, error) { return nil, m.undoEdit() }},
		{"theme", "light|dark", 1, "colours for a light or dark background", cmdTheme},
		{"messages", "", 0, "the results, warnings and errors so far, whole", func(m *Model, _ []string) (tea.Cmd, error) {
			m.openDialog(&messagesDialog{})
			return nil, nil
		}},
		{"recover", "", 0, "offer the unsaved work of earlier runs again", func(m *Model, _ []string) (tea.Cmd, error) { return m.listAutosaves(true), nil }},
		{"help", "", 0, "show every key", func(m *Model, _ []string) (tea.Cmd, error) { m.openDialog(&helpDialog{}); return nil, nil }},
		{"quit", "", 0, "quit (asks to save unsaved work)", func(m *Model, _ []string) (tea.Cmd, error) { return m.askQuit(), nil }},
	}
}

// kv parses "k=v" arguments; a key given twice is refused, as ssmlab preset refuses it
// (the last one was taken silently).
func kv(args []string) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("want key=value, got %q", a)
		}
		if old, dup := out[k]; dup {
			return nil, fmt.Errorf("parameter %s is given twice (%s=%s, %s=%s)", k, k, old, k, v)
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
	return m.open(args[0]), nil
}

func cmdSave(m *Model, args []string) (tea.Cmd, error) {
	e := m.selected()
	if e == nil {
		return nil, errNoSelection
	}
	path := e.origin.File
	if len(args) > 0 {
		path = args[0]
	}
	if path == "" {
		return nil, m.askSave()
	}
	return m.saveFilter(e, path)
}

// exportUsage is export's argument list, for its errors.
const exportUsage = "export needs PATH [FORM] [layout=rtf|s4d|stripedhyena|sos] [dtype=float32|bfloat16] [prefix=P] [trunc_len=L] [length=L] [OPTION=V] [force]"

func cmdExport(m *Model, args []string) (tea.Cmd, error) {
	e := m.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if len(args) < 1 {
		return nil, errors.New(exportUsage)
	}
	path := expandHome(args[0])
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		ext = string(sessions.ExportJSON)
	}
	format, err := sessions.ParseExportFormat(ext)
	if err != nil {
		return nil, fmt.Errorf("%s: the extension chooses the format: .json, .npz, .safetensors, .pt, .csv or .npy", path)
	}
	req := exportReq{path: path, opts: sessions.ExportOptions{Format: format, Length: sessions.DefaultLength}}
	typed := map[string]string{} // the export options given, by sessions' names: their key=value as typed
	for _, a := range args[1:] {
		if err := req.option(a, typed); err != nil {
			return nil, err
		}
	}
	if err := req.check(typed); err != nil {
		return nil, err
	}
	if e.kind != kindKernel && req.opts.Layout == "" && slices.Contains(sessions.ExportOptionFormats("layout"), format) {
		// With no layout named, an option of some layouts asks for one the filter's form may
		// be written in: refused here where none takes it, as the export would refuse it.
		if _, err := req.opts.DefaultLayouts(filters.Form(e.form())); err != nil {
			return nil, optionMistake(err, typed)
		}
	}
	if e.kind == kindKernel && format == sessions.ExportJSON && req.to != "" {
		return nil, fmt.Errorf("kernels have no form to convert to")
	}
	if err := e.problem(); err != nil {
		return nil, fmt.Errorf("%s: %w", e.name, err)
	}
	m.setStatus(levelInfo, "exporting to "+path+"…")
	return exportItem(m.deps.Store, e.stored(), req), nil
}

// option reads one of export's arguments: a FORM, force, or KEY=VALUE — the options of
// ssmlab export (layout, dtype, prefix, trunc_len, length) and the layouts' own
// (layouts.OptionList) — into req, and a KEY=VALUE into typed by the option's name in
// package sessions. It parses, and refuses a FORM or an option given before (req.to, typed:
// the last one was taken without a word); sessions.ExportOptions.CheckGiven (check) judges.
func (req *exportReq) option(a string, typed map[string]string) error {
	key, val, ok := strings.Cut(a, "=")
	switch {
	case a == "force":
		req.force = true
		return nil
	case !ok:
		if req.to != "" {
			return fmt.Errorf("export takes one FORM, got %s and %s; %s", req.to, a, exportUsage)
		}
		f, err := filters.ParseForm(a)
		if err != nil {
			return fmt.Errorf("%v; %s", err, exportUsage)
		}
		req.to = f
		return nil
	case key == "force":
		req.force = val == "true" || val == "1"
		return nil
	}
	name := key
	if key == "trunc_len" {
		name = "trunc-len" // ssmlab export's --trunc-len
	}
	if prev, dup := typed[name]; dup {
		return fmt.Errorf("export takes one %s, got %s and %s; %s", key, prev, a, exportUsage)
	}
	typed[name] = a
	switch name {
	case "layout":
		req.opts.Layout = layouts.Layout(val)
	case "dtype":
		dt, err := sessions.ParseExportDType(val)
		if err != nil {
			return optionMistake(err, typed)
		}
		req.opts.DType = dt
	case "trunc-len", "length":
		v, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("%s: want a whole number", a)
		}
		if name == "length" {
			req.opts.SetLength(v) // for a layout's tensors, the model's length too
		} else {
			req.opts.TruncLen = v
		}
	case "prefix":
		req.opts.Prefix = val
	default:
		if !slices.ContainsFunc(layouts.OptionList, func(o layouts.Option) bool { return o.Name == key }) {
			return fmt.Errorf("no export option %q; %s", key, exportUsage)
		}
		if req.opts.Options == nil {
			req.opts.Options = map[string]string{}
		}
		req.opts.Options[key] = val
	}
	return nil
}

// check refuses what the export cannot take, as ssmlab export does (CheckGiven), before it
// runs: FORM, the workbench's own, converts a .json export only.
func (req *exportReq) check(typed map[string]string) error {
	if f := req.opts.Format; req.to != "" && f != sessions.ExportJSON {
		return fmt.Errorf("FORM applies to .json exports; %s writes a layout's tensors (.npz, .safetensors, .pt) or impulse responses (.csv, .npy)", f)
	}
	return optionMistake(req.opts.CheckGiven(slices.Collect(maps.Keys(typed))), typed)
}

// optionMistake spells a *sessions.OptionError, err itself, with the key=value the user
// typed ("trunc_len=32 applies to the rtf layout, not to the s4d layout", where ssmlab
// export says "--trunc-len 32 …"); other errors are as they are.
func optionMistake(err error, typed map[string]string) error {
	if oe := (*sessions.OptionError)(nil); errors.As(err, &oe) {
		if kv, ok := typed[oe.Option]; ok {
			return errors.New(kv + oe.Why)
		}
	}
	return err
}

func cmdExportPlot(m *Model, args []string) (tea.Cmd, error) {
	e := m.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if len(args) < 1 || len(args) > 2 {
		return nil, fmt.Errorf("export-plot needs PATH [KIND] (KIND: impulse, magnitude, phase, delay, polezero, ladder)")
	}
	if len(args) == 2 && args[1] == "ladder" {
		return exportLadder(m, args[0])
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
	if ov := m.overlayEntry(); ov != nil && m.overlayOn {
		series = append(series, figureSeries(ov))
	}
	m.setStatus(levelInfo, "exporting the plots to "+args[0]+"…")
	return exportPlot(m.deps.Figures, args[0], FigureRequest{Kinds: names, Series: series, Length: m.length, Log: m.plots.logImpulse}), nil
}

// formArg reads the one FORM argument of the command named cmd.
func formArg(cmd string, args []string) (filters.Form, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("%s needs a FORM: %s", cmd, filters.FormNames())
	}
	return filters.ParseForm(args[0])
}

func cmdConvert(m *Model, args []string) (tea.Cmd, error) {
	f, err := formArg("convert", args)
	if err != nil {
		return nil, err
	}
	return m.convertTo(f)
}

func cmdView(m *Model, args []string) (tea.Cmd, error) {
	f, err := formArg("view", args)
	if err != nil {
		return nil, err
	}
	m.repr.showTab(f)
	return nil, nil
}

func cmdDistill(m *Model, args []string) (tea.Cmd, error) {
	if len(args) == 0 {
		return m.openJobForm()
	}
	e := m.selected()
	if e == nil {
		return nil, errNoSelection
	}
	vals, err := kv(args)
	if err != nil {
		return nil, err
	}
	_, order := vals["order"]
	_, ladder := vals["orders"]
	if err := train.CheckOrderOrOrders(order, ladder, "order=", "orders="); err != nil {
		return nil, err
	}
	spec := m.defaultSpecFor(e)
	var orders []int
	for k, v := range vals {
		switch k {
		case "orders":
			orders, err = parseOrders(v)
		case "model":
			spec.Model, err = train.ParseModel(v)
		case "init":
			spec.Init, err = train.ParseInit(v)
		case "backend":
			spec.Backend, err = train.ParseBackend(v)
		case "poles":
			if spec.Poles, err = train.ParsePoles(v); spec.Poles == train.PolesAny {
				spec.Poles = "" // the default, as the form leaves it
			}
		case "radius":
			spec.MaxRadius, err = parseRadius(v)
		case "order", "steps", "length":
			// The order's, the steps' and the length's ranges are the distillation's
			// (Spec.ValidateDistillation, below).
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("%s=%s: want a whole number", k, v)
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
			return nil, fmt.Errorf("distill has no parameter %q (model, order, orders, init, steps, length, backend, poles, radius)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(orders) > 0 {
		spec.Order = slices.Max(orders)
	}
	if err := spec.ValidateDistillation(1, spec.Target.Length); err != nil {
		return nil, err
	}
	if v, ok := vals["steps"]; ok {
		// as ssmlab distill refuses --steps: it would be ignored
		if err := spec.CheckOptimiserSetting("steps=" + v); err != nil {
			return nil, err
		}
	}
	return m.startJob(e, spec, orders)
}

// cmdLadder is distill at several orders: ladder ORDERS [k=v …].
func cmdLadder(m *Model, args []string) (tea.Cmd, error) {
	if len(args) == 0 || strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "orders=") {
		return nil, errors.New("ladder needs ORDERS, such as 4,8,16 (then distill's k=v)")
	}
	return cmdDistill(m, append([]string{"orders=" + strings.TrimPrefix(args[0], "orders=")}, args[1:]...))
}

func cmdCancel(m *Model, args []string) (tea.Cmd, error) {
	j := m.jobsPane.selected()
	if len(args) == 1 {
		n, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
		if err != nil {
			return nil, fmt.Errorf("cancel takes a job number, got %q", args[0])
		}
		if n < 1 || n > len(m.jobs) {
			return nil, fmt.Errorf("no job #%d", n)
		}
		j = m.jobs[n-1]
	}
	return nil, m.cancelJob(j)
}

func cmdRename(m *Model, args []string) (tea.Cmd, error) {
	e := m.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if len(args) == 0 {
		m.askRename()
		return nil, nil
	}
	m.rename(e.id, strings.Join(args, " "))
	return nil, nil
}

func cmdOverlay(m *Model, args []string) (tea.Cmd, error) {
	if len(args) == 0 {
		if e := m.selected(); e != nil {
			m.overlay, m.overlayOn = e.id, true
			m.setStatus(levelInfo, e.name+" is the overlay: select another filter to compare")
		}
		return nil, nil
	}
	name := strings.Join(args, " ")
	switch name {
	case "off", "on":
		m.overlayOn = name == "on"
		m.sayOverlay()
		return nil, nil
	}
	for _, e := range m.entries() {
		if e.name == name {
			m.overlay, m.overlayOn = e.id, true
			m.sayOverlay()
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
	if len(args) == 0 {
		return m.saveSession("", false, afterSave{}), nil
	}
	return m.saveSession(expandHome(args[0]), false, afterSave{}), nil
}

// check refuses more arguments than c takes, with its usage: they were dropped without a
// word (:w PATH saved to the session's own file).
func (c command) check(args []string) error {
	if c.most == anyArgs || len(args) <= c.most {
		return nil
	}
	got := strconv.Quote(strings.Join(args, " "))
	if c.most == 0 {
		return fmt.Errorf("%s takes no arguments, got %s", c.name, got)
	}
	return fmt.Errorf("%s takes at most %s: %s %s; got %s", c.name, plural.Count(c.most, "argument"), c.name, c.args, got)
}
