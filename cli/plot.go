package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

type plotOptions struct {
	impulse, spectrum, magnitude, phase, groupDelay, pz bool

	length, freq, dpi, columns int
	log                        bool
	channel                    string
	labels                     []string
	title, width, height       string
	out                        string

	target, result, report string
	ladder                 string
}

func newPlot(s *streams) *cobra.Command {
	var o plotOptions
	cmd := &cobra.Command{
		Use:   "plot FILE... (--impulse | --spectrum | --group-delay | --pz) -o OUT.(svg|pdf|png)",
		Short: "Draw responses, poles and zeros, or a distillation, as an SVG, PDF or PNG figure",
		Long: `Plot draws the filters in FILE... overlaid, one panel per flag, and writes the figure to OUT,
atomically; OUT's extension picks the format: .svg, .pdf or .png. FILE is anything ssmlab
import reads: a filter or bank file, kernels (a target file, .npy, .npz, .safetensors, CSV),
an RTF layer; "-" reads one of them from stdin.

  --impulse       the impulse response h[t] (with --log: |h[t]| on a log axis)
  --spectrum      the magnitude in dB and the unwrapped phase in units of π, against ω/π
  --magnitude     the magnitude alone; --phase the phase alone
  --group-delay   the group delay τ(ω) in samples
  --pz            poles (×) and zeros (○) with the unit circle, on equal scales

Several flags make a figure of several panels. --log also puts the frequency panels on a
logarithmic frequency axis. A bank contributes its --channel (default 0; "all", or a list
such as 0,2); kernels are drawn as FIR filters and have no poles or zeros. Each series is
named in the legend by its file's name (--label overrides it, once per FILE); one series
titles the figure. --length L sets the impulse samples (default: the longest kernel, or
enough for the slowest filter's response to fall to 1e-6, at most 4096); --freq N the
frequencies (default 512).

The ladder figure — each channel's error against the order, the mean error, and beside it
the mean lower bound on the error of any filter of each order — comes from

  ssmlab plot --ladder LADDER -o OUT

with LADDER the JSON that ssmlab distill --orders writes to stdout (or --report).

The distillation figure — the target against the fit for each channel (up to 12), every
channel's relative error, the poles of every fit — comes from

  ssmlab plot --target TARGET --result RESULT [--report REPORT] -o OUT

with TARGET and RESULT as given to and written by ssmlab distill (a filter TARGET gives
kernels of --length samples, default 1024, as for distill; a kernel TARGET is shown over
its first --length samples) and REPORT its --report file, whose errors and summary the
figure shows (without it, the errors are measured here).

Figures are deterministic: the same input gives the same file, byte for byte. The fonts are
the Liberation fonts (named in SVG, embedded in PDF); PDF text is ASCII (ω/π becomes
omega/pi). --width and --height take lengths such as 16cm, 6in or 300pt; --dpi sets the
resolution of PNG files (default 150); width × height × dpi² may not exceed ` +
			fmt.Sprint(figures.MaxPixels) + ` pixels
(20in × 20in at 350 DPI).`,
		Example: `  ssmlab plot butter.json --impulse -o butter-impulse.svg
  ssmlab plot b6.json b6-zpk.json --spectrum --label before --label after -o bode.pdf
  ssmlab plot hyena.json rtf4.json rtf8.json --impulse --log -o compare.png
  ssmlab plot s4.json --channel all --pz --impulse -o s4.svg
  ssmlab plot --target hyena.json --result rtf8.json --report r8.json -o distill.svg
  ssmlab distill hyena.json --orders 4,8,16,32 > ladder.json && ssmlab plot --ladder ladder.json -o ladder.svg`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPlot(s, cmd, args, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.impulse, "impulse", false, "draw the impulse response")
	f.BoolVar(&o.spectrum, "spectrum", false, "draw the magnitude (dB) and the phase")
	f.BoolVar(&o.magnitude, "magnitude", false, "draw the magnitude (dB)")
	f.BoolVar(&o.phase, "phase", false, "draw the unwrapped phase")
	f.BoolVar(&o.groupDelay, "group-delay", false, "draw the group delay")
	f.BoolVar(&o.pz, "pz", false, "draw the poles and zeros with the unit circle")
	f.IntVar(&o.length, "length", 0, "impulse-response samples `L` (default: automatic)")
	f.IntVar(&o.freq, "freq", figures.DefaultPoints, "frequencies `N` of the frequency panels")
	f.BoolVar(&o.log, "log", false, "log |h[t]| and a logarithmic frequency axis")
	f.StringVar(&o.channel, "channel", "0", "the channels of a bank: `I`, a list I,J,… or all")
	f.StringArrayVar(&o.labels, "label", nil, "the legend's `NAME` of each FILE, in order (repeat once per FILE)")
	f.StringVar(&o.title, "title", "", "the figure's `TITLE`")
	f.StringVar(&o.width, "width", "", "the figure's width (`LENGTH`: 16cm, 6in, 300pt; default from the panels)")
	f.StringVar(&o.height, "height", "", "the figure's height (`LENGTH`)")
	f.IntVar(&o.dpi, "dpi", figures.DefaultDPI, "the resolution of a PNG file")
	f.IntVar(&o.columns, "columns", 0, "panel columns (default: automatic)")
	f.StringVarP(&o.out, "output", "o", "", "write the figure to `OUT` (.svg, .pdf or .png; required)")
	f.StringVar(&o.target, "target", "", "distillation figure: the target `FILE` (kernels or a filter)")
	f.StringVar(&o.result, "result", "", "distillation figure: the fitted `FILE` written by distill")
	f.StringVar(&o.report, "report", "", "distillation figure: the `REPORT` written by distill --report")
	f.StringVar(&o.ladder, "ladder", "", "error against order: the `LADDER` written by distill --orders (its JSON)")
	return cmd
}

func runPlot(s *streams, cmd *cobra.Command, args []string, o plotOptions) error {
	fl := cmd.Flags()
	if o.out == "" {
		return fmt.Errorf("-o OUT is required (.svg, .pdf or .png)")
	}
	format, err := figures.FormatOf(o.out)
	if err != nil {
		return fmt.Errorf("-o %s: %v", o.out, err)
	}
	if err := checkOutputs(append([]string{o.target, o.result, o.report, o.ladder}, args...), output{"-o", "the figure", o.out}); err != nil {
		return err
	}
	fo, err := o.figureOptions(fl.Changed("length"))
	if err != nil {
		return err
	}
	kinds := o.kinds()
	var fig *figures.Figure
	var what string
	switch {
	case o.ladder != "":
		if len(args) > 0 || o.target != "" || o.result != "" || o.report != "" || len(kinds) > 0 {
			return fmt.Errorf("--ladder draws one file alone: no FILE arguments, --target, --result, --report or panel flags with it")
		}
		// It draws every channel on log axes in one panel: these would be ignored.
		for _, name := range []string{"channel", "label", "log", "length", "freq", "columns"} {
			if fl.Changed(name) {
				return fmt.Errorf("--%s does not apply to the ladder figure (--ladder), which draws every channel's error against the order in one panel, on log axes", name)
			}
		}
		fig, what, err = ladderFigure(o.ladder, fo)
	case o.target != "" || o.result != "" || o.report != "":
		switch {
		case len(args) > 0:
			return fmt.Errorf("FILE arguments and --target/--result exclude each other: the distillation figure reads its files from the flags")
		case o.target == "" || o.result == "":
			return fmt.Errorf("the distillation figure needs both --target FILE and --result FILE")
		case len(kinds) > 0:
			return fmt.Errorf("--impulse, --spectrum, --group-delay and --pz do not apply to the distillation figure (--target/--result)")
		case fl.Changed("channel") || len(o.labels) > 0:
			return fmt.Errorf("--channel and --label do not apply to the distillation figure (--target/--result)")
		case fl.Changed("freq"):
			return fmt.Errorf("--freq does not apply to the distillation figure (--target/--result), which draws no frequency response")
		}
		length := o.length
		if !fl.Changed("length") {
			length = 0
		}
		fig, what, err = s.distillFigure(o, length, fo)
	default:
		fig, what, err = s.panelsFigure(args, o, kinds, fo)
	}
	if pe := (*figures.PixelsError)(nil); errors.As(err, &pe) {
		// the size and resolution are the command line's: a usage error
		return fmt.Errorf("a %.3g × %.3g in figure at --dpi %d is %.0f pixels, above the limit %d: lower --width, --height or --dpi",
			pe.Width/vg.Inch, pe.Height/vg.Inch, pe.DPI, pe.Pixels, figures.MaxPixels)
	}
	if err != nil {
		return err
	}
	data, err := fig.Render(format)
	if err != nil {
		return fail(err)
	}
	if err := s.put(o.out, data); err != nil {
		return err
	}
	w, h := fig.Size()
	fmt.Fprintf(s.err, "wrote %s: %s figure, %s, %.3g × %.3g in\n", o.out, format, what, w/vg.Inch, h/vg.Inch)
	return nil
}

// figureOptions checks the figure's flags (lengthSet: --length was given) and returns them
// as figures.Options.
func (o plotOptions) figureOptions(lengthSet bool) (figures.Options, error) {
	fo := figures.Options{Log: o.log, Title: o.title, Columns: o.columns, DPI: o.dpi, Points: o.freq}
	if lengthSet && (o.length < 1 || o.length > figures.MaxLength) {
		return fo, fmt.Errorf("--length %d is outside [1, %d]", o.length, figures.MaxLength)
	}
	if o.freq < 2 || o.freq > figures.MaxPoints {
		return fo, fmt.Errorf("--freq %d is outside [2, %d]", o.freq, figures.MaxPoints)
	}
	if o.dpi < 36 || o.dpi > 1200 {
		return fo, fmt.Errorf("--dpi %d is outside [36, 1200]", o.dpi)
	}
	if o.columns < 0 || o.columns > 8 {
		return fo, fmt.Errorf("--columns %d is outside [0, 8]", o.columns)
	}
	for _, l := range []struct {
		flag, v string
		dst     *vg.Length
	}{{"--width", o.width, &fo.Width}, {"--height", o.height, &fo.Height}} {
		if l.v == "" {
			continue
		}
		v, err := vg.ParseLength(l.v)
		if err != nil || !(v >= figures.MinSide && v <= figures.MaxSide) { // NaN too: vg reads "NaNin"
			return fo, fmt.Errorf("%s %q: want a length between 1in and 20in, such as 16cm, 6in or 300pt", l.flag, l.v)
		}
		*l.dst = v
	}
	return fo, nil
}

// panelsFigure draws the panels kinds of every FILE's channels.
func (s *streams) panelsFigure(args []string, o plotOptions, kinds []figures.Kind, fo figures.Options) (*figures.Figure, string, error) {
	if len(args) == 0 {
		return nil, "", fmt.Errorf("want at least one FILE (or --target and --result for the distillation figure)")
	}
	if len(kinds) == 0 {
		return nil, "", fmt.Errorf("say what to draw: --impulse, --spectrum, --magnitude, --phase, --group-delay or --pz")
	}
	if len(o.labels) > 0 && len(o.labels) != len(args) {
		return nil, "", fmt.Errorf("--label given %s for %s: give it once per FILE, or not at all", plural.Count(len(o.labels), "time"), plural.Count(len(args), "FILE"))
	}
	chans, err := parseChannels(o.channel)
	if err != nil {
		return nil, "", err
	}
	if i := slices.Index(args, "-"); i >= 0 && slices.Contains(args[i+1:], "-") {
		return nil, "", fmt.Errorf(`"-" (stdin) may be given once`)
	}
	fo.Length = o.length
	var series []figures.Series
	var files []string // the file of each series
	for i, path := range args {
		it, name, err := s.importItem(path)
		if err != nil {
			return nil, "", err
		}
		label := ""
		if len(o.labels) > 0 {
			label = o.labels[i]
		}
		ss, err := seriesOf(it, name, label, chans)
		if err != nil {
			return nil, "", err
		}
		series = append(series, ss...)
		for range ss {
			files = append(files, name)
		}
	}
	if len(series) > figures.MaxSeries {
		return nil, "", failf("%d series to draw, above the limit %d: pick fewer channels with --channel", len(series), figures.MaxSeries)
	}
	if o.pz && !slices.ContainsFunc(series, func(s figures.Series) bool { return s.Filter != nil }) {
		return nil, "", failf("%s: kernels have no poles or zeros: --pz needs a filter", strings.Join(args, ", "))
	}
	fig, err := figures.New(kinds, series, fo)
	if err != nil {
		if se := (*figures.SeriesError)(nil); errors.As(err, &se) {
			if file := files[se.Index]; file != se.Name {
				return nil, "", failf("%s: %s: %w", file, se.Name, se.Err)
			}
			return nil, "", failf("%s: %w", se.Name, se.Err)
		}
		return nil, "", fail(err)
	}
	return fig, fmt.Sprintf("%d panel(s), %d series", fig.Panels(), len(series)), nil
}

// kinds lists the panels asked for, in the order figures lays them out.
func (o plotOptions) kinds() []figures.Kind {
	var k []figures.Kind
	if o.impulse {
		k = append(k, figures.Impulse)
	}
	if o.spectrum || o.magnitude {
		k = append(k, figures.Magnitude)
	}
	if o.spectrum || o.phase {
		k = append(k, figures.Phase)
	}
	if o.groupDelay {
		k = append(k, figures.GroupDelay)
	}
	if o.pz {
		k = append(k, figures.PoleZero)
	}
	return k
}

// parseChannels reads --channel: nil means every channel.
func parseChannels(v string) ([]int, error) {
	if strings.EqualFold(v, "all") {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 0 {
			return nil, fmt.Errorf("--channel %q: want all, a channel number or a list such as 0,2", v)
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("--channel %q names channel %d twice: each channel is drawn once", v, c)
		}
		out = append(out, c)
	}
	return out, nil
}

// importItem reads FILE ("-" for stdin) as ssmlab import does.
func (s *streams) importItem(path string) (sessions.Item, string, error) {
	if path != "-" {
		if err := sessionFileError(path); err != nil {
			return sessions.Item{}, path, err
		}
		it, err := sessions.Import(path, sessions.ImportOptions{})
		if err != nil {
			return it, path, fail(withHint(err))
		}
		return it, path, nil
	}
	data, err := s.readStdin()
	if err != nil {
		return sessions.Item{}, stdinName, err
	}
	it, err := sessions.ImportData(data, stdinName, sessions.ImportOptions{})
	if err != nil {
		return it, stdinName, fail(withHint(err))
	}
	return it, stdinName, nil
}

// channelsOf returns an item's channels: filters, or kernels (exactly one of the two).
func channelsOf(it sessions.Item, name string) (fs []filters.Filter, ks [][]float64, label string, err error) {
	if it.Entry != nil {
		doc := it.Entry.Document()
		if doc.Bank != nil {
			fs = doc.Bank.Channels
		} else {
			fs = []filters.Filter{doc.Filter}
		}
		return fs, nil, it.Entry.Name, nil
	}
	t := it.Target
	if t == nil || t.Kernels == nil {
		return nil, nil, "", failf("%s: holds no filter or kernels", name)
	}
	switch len(t.Kernels.Shape) {
	case 1:
		ks = [][]float64{t.Kernels.Data}
	case 2:
		ks = t.Kernels.Rows()
	default:
		return nil, nil, "", failf("%s: kernels of %d dimensions: want (channels, length) or (length)", name, len(t.Kernels.Shape))
	}
	if len(ks) == 0 || len(ks[0]) == 0 {
		return nil, nil, "", failf("%s: holds no kernels", name)
	}
	return nil, ks, t.Name, nil
}

// seriesOf turns an item into the series of the channels asked for (nil: all).
func seriesOf(it sessions.Item, name, label string, chans []int) ([]figures.Series, error) {
	fs, ks, itemName, err := channelsOf(it, name)
	if err != nil {
		return nil, err
	}
	if label == "" {
		label = itemName
	}
	if label == "" {
		label = name
	}
	n := max(len(fs), len(ks))
	if chans == nil {
		chans = make([]int, n)
		for i := range chans {
			chans[i] = i
		}
	}
	var out []figures.Series
	for _, c := range chans {
		if c >= n {
			if n == 1 {
				return nil, failf("%s: --channel %d: it holds one channel (0)", name, c)
			}
			return nil, failf("%s: --channel %d: it has %d channels (0 to %d)", name, c, n, n-1)
		}
		sr := figures.Series{Name: label}
		if n > 1 {
			sr.Name = fmt.Sprintf("%s, ch %d", label, c)
		}
		if fs != nil {
			sr.Filter = fs[c]
		} else {
			sr.Kernel = ks[c]
		}
		out = append(out, sr)
	}
	return out, nil
}

// distillFigure builds the distillation figure from --target, --result and --report.
func (s *streams) distillFigure(o plotOptions, length int, fo figures.Options) (*figures.Figure, string, error) {
	if o.target == "-" || o.result == "-" || o.report == "-" {
		return nil, "", fmt.Errorf("the distillation figure reads files, not stdin")
	}
	tIt, _, err := s.importItem(o.target)
	if err != nil {
		return nil, "", err
	}
	tf, kernels, tName, err := channelsOf(tIt, o.target)
	if err != nil {
		return nil, "", err
	}
	if tf != nil {
		l := length
		if l == 0 {
			l = train.DefaultKernelLength
		}
		kernels = make([][]float64, len(tf))
		for i, f := range tf {
			if kernels[i], err = analysis.Impulse(nil, f, l, analysis.Recurrence); err != nil {
				return nil, "", failf("%s: channel %d: %w", o.target, i, err)
			}
		}
	} else {
		fo.Length = length
	}
	rIt, _, err := s.importItem(o.result)
	if err != nil {
		return nil, "", err
	}
	fitted, _, rName, err := channelsOf(rIt, o.result)
	if err != nil {
		return nil, "", err
	}
	if fitted == nil {
		return nil, "", failf("%s: holds kernels, not the fitted filters (give the -o file of ssmlab distill)", o.result)
	}
	if len(fitted) != len(kernels) {
		return nil, "", failf("%s has %d channel(s) and %s has %d: they are not a target and its fit", o.target, len(kernels), o.result, len(fitted))
	}
	d := figures.Distillation{Targets: kernels, Fitted: fitted}
	title := fmt.Sprintf("%s fitted to %s", rName, tName)
	if o.report != "" {
		rep, err := readReport(o.report)
		if err != nil {
			return nil, "", err
		}
		if len(rep.Channels) != len(fitted) {
			return nil, "", failf("%s reports %d channel(s) and %s has %d: not the report of this result", o.report, len(rep.Channels), o.result, len(fitted))
		}
		d.RelErrors = make([]float64, len(rep.Channels))
		for i, c := range rep.Channels {
			d.RelErrors[i] = c.RelError
		}
		bound := "" // a report of an optimiser's fit written before it had bounds has none
		if rep.MeanLowerBound > 0 {
			bound = fmt.Sprintf("; lower bound mean %.2g", rep.MeanLowerBound)
		}
		title = fmt.Sprintf("%s order %d fitted to %s: relative error mean %.2g, worst %.2g%s (%d steps)",
			rep.Model, rep.Order, tName, rep.MeanRelError, rep.MaxRelError, bound, rep.Steps)
		if rep.Form != "" { // fitted by variable projection, which takes no optimiser steps
			title = fmt.Sprintf("%s order %d (%s) fitted to %s: relative error mean %.2g, worst %.2g; lower bound mean %.2g",
				rep.Model, rep.Order, rep.Form, tName, rep.MeanRelError, rep.MaxRelError, rep.MeanLowerBound)
		}
	}
	if fo.Title == "" {
		fo.Title = title
	}
	fig, err := figures.NewDistillation(d, fo)
	if err != nil {
		return nil, "", failf("%s: %w", o.result, err)
	}
	return fig, fmt.Sprintf("%d channel(s)", len(fitted)), nil
}

// readReport reads a distill --report file.
func readReport(path string) (*train.Report, error) {
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil, fail(err)
	}
	return parseReport(data, path)
}

// parseReport reads the JSON of a distill report.
func parseReport(data []byte, path string) (*train.Report, error) {
	var r train.Report
	if err := unmarshalAs(data, path, "a distill report", &r); err != nil {
		return nil, err
	}
	if len(r.Channels) == 0 {
		return nil, failf("%s: not a distill report: no channels", path)
	}
	return &r, nil
}

// ladderFigure draws the error-against-order figure of a distill --orders ladder.
func ladderFigure(path string, fo figures.Options) (*figures.Figure, string, error) {
	if err := flagNoStdin("ladder", path); err != nil {
		return nil, "", err
	}
	data, err := userfile.ReadFile(path)
	if err != nil {
		return nil, "", fail(err)
	}
	var rep ladderReport
	if err := unmarshalAs(data, path, "a distill --orders ladder", &rep); err != nil {
		return nil, "", err
	}
	if len(rep.Orders) == 0 || len(rep.Reports) != len(rep.Orders) {
		return nil, "", failf("%s: not a distill --orders ladder: %d orders, %d reports", path, len(rep.Orders), len(rep.Reports))
	}
	l := figures.Ladder{Orders: rep.Orders}
	for _, r := range rep.Reports {
		var errs, bounds []float64
		for _, c := range r.Channels {
			errs, bounds = append(errs, c.RelError), append(bounds, c.LowerBound)
		}
		l.Errors, l.Bounds = append(l.Errors, errs), append(l.Bounds, bounds)
	}
	if fo.Title == "" {
		last := rep.Reports[len(rep.Reports)-1]
		fo.Title = fmt.Sprintf("%s: relative error against order, %d channel(s)", last.Model, len(last.Channels))
	}
	fig, err := figures.NewLadder(l, fo)
	if err != nil {
		return nil, "", failf("%s: %w", path, err)
	}
	return fig, plural.Count(len(rep.Orders), "order"), nil
}
