package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/train"
	"github.com/ssmlab/ssmlab/train/plan"
)

// modelCkpt is a three-layer Hyena language model in the safari layout, 16 channels of 256
// samples per layer (testdata/scale/gen_model.py).
var modelCkpt, _ = filepath.Abs("../testdata/scale/hyena_lm.safetensors")

// copyModel copies modelCkpt to path, for a test that may write over it, and returns its bytes.
func copyModel(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(modelCkpt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// modelRecipe is a quick recipe for it: 6 units of 8 channels, written in the checkpoint's
// float32.
var modelRecipe = []string{"--order", "6", "--model", "modal", "--refine", "5", "--chunk", "8"}

func distillModelArgs(out string, extra ...string) []string {
	return append(append(append([]string{"distill", modelCkpt}, modelRecipe...), "-o", out), extra...)
}

func readManifest(t *testing.T, path string) plan.Manifest {
	t.Helper()
	data, err := os.ReadFile(path + ".manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m plan.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sameDistilled checks that two distilled checkpoints are the same bytes and their manifests
// the same but for the times.
func sameDistilled(t *testing.T, a, b string) {
	t.Helper()
	da, err1 := os.ReadFile(a)
	db, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !bytes.Equal(da, db) {
		t.Errorf("%s and %s differ (%d and %d bytes)", a, b, len(da), len(db))
	}
	if ma, mb := readManifest(t, a).Stable(), readManifest(t, b).Stable(); !reflect.DeepEqual(ma, mb) {
		t.Errorf("the manifests of %s and %s differ beyond their times", a, b)
	}
}

// TestDistillModel distils every Hyena layer of a checkpoint in one command, then in three
// shards run as separate processes and merged, which gives the same bytes; merge refuses
// parts with a gap, an overlap, other options or another input, naming what is wrong.
func TestDistillModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	dir := t.TempDir()
	single := filepath.Join(dir, "single.safetensors")
	r := run(t, "", distillModelArgs(single)...)
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, want := range []string{"3 long-filter layers to distil (hyena ×3), 48 channels in 6 units", "layer backbone.layers.2.mixer.filter_fn.: 16 channels, order 6", "backend: cpu (", "wrote " + single} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// The layers that went to stripedhyena for want of rtf are one note, with the first
	// one's reason; each had a note of its own, the same reason each time (QA C2).
	const note = `note: 3 layers (backbone.layers.0.mixer.filter_fn., backbone.layers.1.mixer.filter_fn., backbone.layers.2.mixer.filter_fn.) written in the stripedhyena layout: the rtf layout does not hold their fits (layer backbone.layers.0.mixer.filter_fn.: rtf: `
	if strings.Count(r.stderr, "note: ") != 1 || !strings.Contains(r.stderr, note) || !strings.Contains(r.stderr, `; the manifest's "why" gives each layer's reason)`) {
		t.Errorf("want one note, %q…:\n%s", note, r.stderr)
	}
	m := readManifest(t, single)
	if len(m.Layers) != 3 || m.Input.Name != "hyena_lm.safetensors" || m.Options.Spec.Backend != "auto" {
		t.Fatalf("manifest: %+v", m)
	}
	for _, l := range m.Layers {
		if l.Layout != "hyena" || len(l.Channels) != 16 || l.Length != 256 || l.DType != "F32" {
			t.Errorf("layer %s: %s → %s, %d channels, length %d, %s", l.Prefix, l.Layout, l.ToLayout, len(l.Channels), l.Length, l.DType)
		}
		for i, c := range l.Channels {
			if c.Channel != i || c.Order != 6 || c.Model != "modal" || c.Backend != "cpu" || !c.Stable || !(c.RelError < 0.2) || !(c.Seconds > 0) || c.MaxPoleRadius >= 1 {
				t.Errorf("layer %s, channel %d: %+v", l.Prefix, i, c)
			}
		}
	}
	// The safetensors metadata holds the same manifest without the times.
	af, err := arrays.Open(single)
	if err != nil {
		t.Fatal(err)
	}
	var meta plan.Manifest
	if err := json.Unmarshal([]byte(af.Metadata()[sessions.ManifestKey]), &meta); err != nil {
		t.Fatal(err)
	}
	af.Close()
	if !reflect.DeepEqual(meta, m.Stable()) {
		t.Error("the metadata's manifest is not the manifest without its times")
	}

	// Three shards as three processes, then merge.
	sharded := filepath.Join(dir, "sharded.safetensors")
	var cmds []*exec.Cmd
	var errs []*bytes.Buffer
	for i := range 3 {
		cmd, _, stderr := process(dir, distillModelArgs(sharded, "--shard", fmt.Sprintf("%d/3", i))...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, errs = append(cmds, cmd), append(errs, stderr)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, errs[i])
		}
		if want := fmt.Sprintf("shard %d/3 (--shard): 2 of 6 units", i); !strings.Contains(errs[i].String(), want) {
			t.Errorf("shard %d says:\n%s", i, errs[i])
		}
	}
	parts := []string{sharded + ".shard-0-of-3.json", sharded + ".shard-1-of-3.json", sharded + ".shard-2-of-3.json"}
	if _, err := os.Stat(sharded); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a shard wrote the checkpoint: %v", err)
	}
	r = run(t, "", append(append([]string{"merge"}, parts...), "-o", sharded)...)
	if r.code != 0 {
		t.Fatal(r)
	}
	sameDistilled(t, single, sharded)

	t.Run("refused", func(t *testing.T) { checkMergeRefusals(t, dir, parts) })

	t.Run("torch", func(t *testing.T) { checkInTorch(t, modelCkpt, single) })
}

// checkMergeRefusals: merge refuses parts with a gap, an overlap, other options or another
// input, naming what is wrong, and writes nothing.
func checkMergeRefusals(t *testing.T, dir string, parts []string) {
	units := func(part string) []string {
		p, err := sessions.ReadPart(part)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, u := range p.Units {
			ids = append(ids, u.Unit.ID())
		}
		return ids
	}
	out := filepath.Join(dir, "refused.safetensors")
	twice := filepath.Join(dir, "copy-of-1.json")
	data, _ := os.ReadFile(parts[1])
	if err := os.WriteFile(twice, data, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.safetensors")
	// the recipe at order 5, not 6 (a flag given twice is refused: --order replaced, not added)
	recipe := slices.Clone(modelRecipe)
	recipe[slices.Index(recipe, "--order")+1] = "5"
	if r := run(t, "", append(append([]string{"distill", modelCkpt}, recipe...), "-o", other, "--shard", "0/3")...); r.code != 0 {
		t.Fatal(r)
	}
	// The parts of an input moved since: their input_path names no file.
	var moved []string
	for i, part := range parts {
		data, err := os.ReadFile(part)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`"input_path":"[^"]*"`)
		edited := re.ReplaceAll(data, []byte(`"input_path":"`+filepath.Join(dir, "moved-away.safetensors")+`"`))
		moved = append(moved, filepath.Join(dir, fmt.Sprintf("moved-%d.json", i)))
		if bytes.Equal(edited, data) || os.WriteFile(moved[i], edited, 0o644) != nil {
			t.Fatalf("%s: no input_path to edit", part)
		}
	}
	for _, c := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"moved input", moved, []string{"moved-away.safetensors", "the parts were distilled from it there; --input names a copy of it elsewhere"}},
		{"gap", parts[:2], append([]string{"the parts do not cover the work once", "2 units missing"}, units(parts[2])...)},
		{"overlap", append(slices.Clone(parts), twice), append([]string{"2 units in more than one part"}, units(parts[1])...)},
		{"options", []string{parts[0], other + ".shard-0-of-3.json"}, []string{"different options", `order 6 and 5`}},
		{"input", append(slices.Clone(parts), "--input", filepath.Join(dir, "single.safetensors")), []string{"is not the file the parts were distilled from"}},
	} {
		r := run(t, "", append(append([]string{"merge"}, c.args...), "-o", out)...)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 { // the error alone, no plan line before it
			t.Errorf("%s: %v", c.name, r)
		}
		for _, w := range c.wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q: %s", c.name, w, r.stderr)
			}
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: merge wrote %s", c.name, out)
		}
	}
	// -o naming the input checkpoint (here a copy, given by --input) would replace the
	// trained filters with the distilled ones.
	input := filepath.Join(dir, "input-copy.safetensors")
	orig := copyModel(t, input)
	r := run(t, "", append(append([]string{"merge"}, parts...), "--input", input, "-o", input)...)
	if now, _ := os.ReadFile(input); r.code != 2 || !strings.Contains(r.stderr, "is also an input") || !bytes.Equal(now, orig) {
		t.Errorf("merge -o its input: %v (the input changed: %v)", r, !bytes.Equal(now, orig))
	}
}

// distilledCheck is what testdata/scale/check_distilled.py says of a distilled checkpoint.
type distilledCheck struct {
	Layers map[string]struct {
		Layout        string    `json:"layout"`
		ToLayout      string    `json:"to_layout"`
		Module        string    `json:"module"`
		NamesOK       bool      `json:"names_ok"`
		Names         []string  `json:"names"`
		Neighbours    []string  `json:"neighbours"`
		DTypes        []string  `json:"dtypes"`
		RelErrors     []float64 `json:"rel_errors"`
		Manifest      []float64 `json:"manifest"`
		ReadBackError float64   `json:"read_back_error"`
	} `json:"layers"`
	Copied struct {
		Count int      `json:"count"`
		Bad   []string `json:"bad"`
		Extra []string `json:"extra"`
	} `json:"copied"`
	Tied      [][]string `json:"tied"`       // the names torch.load gives one tensor, in groups
	TiedInput [][]string `json:"tied_input"` // the input's
}

// checkDistilled runs the reference code's check (testdata/scale/check_distilled.py) with
// args (INPUT OUTPUT..., or --pairs INPUT OUTPUT...) and returns a result per OUTPUT; it
// skips the test where /usr/bin/python3 lacks torch or scipy.
func checkDistilled(t *testing.T, outs int, args ...string) []distilledCheck {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch, scipy").Run(); err != nil {
		t.Skipf("needs %s with torch and scipy (Debian's python3-torch, python3-scipy): %v", py, err)
	}
	cmd := exec.Command(py, append([]string{"../testdata/scale/check_distilled.py"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var results []distilledCheck
	if err := json.Unmarshal(data, &results); err != nil || len(results) != outs {
		t.Fatalf("%v: %d results for %d files", err, len(results), outs)
	}
	return results
}

// checkModules checks that the target module loads each distilled layer of res (its names
// and ranks) and that its kernels are as far from the input's as the manifest says.
func checkModules(t *testing.T, out string, res distilledCheck) {
	t.Helper()
	for p, l := range res.Layers {
		if !l.NamesOK {
			t.Errorf("%s: %s: the %s module does not load %v", out, p, l.Module, l.Names)
			continue
		}
		for c, e := range l.RelErrors {
			// The manifest measures the fitted filter, the reference the tensors as
			// stored: they differ by at most the read-back error (relative to a kernel of
			// the same norm), plus the rounding of the reference's own sums.
			if d := math.Abs(e - l.Manifest[c]); d > 1.01*l.ReadBackError+1e-10 {
				t.Errorf("%s: %s, channel %d: the module's kernel is %.6g from the input's, the manifest says %.6g (read-back error %.3g)", out, p, c, e, l.Manifest[c], l.ReadBackError)
			}
		}
	}
}

// checkInTorch loads distilled checkpoints of modelCkpt's three Hyena layers with the
// reference code: their layers under the target layout's names and shapes, their kernels as
// the manifest says (within the read-back error the manifest records), every other tensor as
// in the input; and in a torch.save file, the input's tied tensors outside the distilled
// layers still tied, as torch.load gives them: gen_model.py ties the LM head to the
// embedding (and each Hyena filter's three Sin freq, which the layer's new tensors replace);
// safetensors and .npz files share no tensors.
func checkInTorch(t *testing.T, in string, outs ...string) {
	const head = "[backbone.embeddings.word_embeddings.weight lm_head.weight]"
	for i, res := range checkDistilled(t, len(outs), append([]string{in}, outs...)...) {
		if len(res.Layers) != 3 || res.Copied.Count != 46 || len(res.Copied.Bad) > 0 || len(res.Copied.Extra) > 0 {
			t.Fatalf("%s: %d layers; copied %+v", outs[i], len(res.Layers), res.Copied)
		}
		checkModules(t, outs[i], res)
		kept := [][]string{} // the input's ties that distill copies
		for _, g := range res.TiedInput {
			if !slices.ContainsFunc(g, func(name string) bool {
				return slices.ContainsFunc(slices.Collect(maps.Keys(res.Layers)), func(p string) bool { return strings.HasPrefix(name, p) })
			}) {
				kept = append(kept, g)
			}
		}
		if torchIn := filepath.Ext(in) == ".pt"; torchIn != (fmt.Sprint(kept) == "["+head+"]") {
			t.Fatalf("the input %s: torch.load ties %v outside the distilled layers; want %s in a torch.save file, none in another", in, kept, head)
		}
		want := [][]string{}
		if filepath.Ext(outs[i]) == ".pt" {
			want = kept
		}
		if fmt.Sprint(res.Tied) != fmt.Sprint(want) {
			t.Errorf("%s: torch.load ties %v, want %v (the input's, which torch.save keeps)", outs[i], res.Tied, want)
		}
	}
}

// TestDistillModelFormatsAndLayouts writes a torch.save file from a float64 checkpoint, whose
// layers hold in the rtf layout, and each modal layout on request, which the reference code
// loads with the kernels the manifest gives.
func TestDistillModelFormatsAndLayouts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference code")
	}
	dir := t.TempDir()
	in, _ := filepath.Abs("../testdata/scale/hyena_lm_f64.pt")
	var outs []string
	for _, c := range []struct{ out, layout, want string }{
		{"rtf.pt", "", "rtf"}, {"s4d.npz", "s4d", "s4d"}, {"sh.safetensors", "stripedhyena", "stripedhyena"},
	} {
		out := filepath.Join(dir, c.out)
		args := []string{"distill", in, "--order", "4", "--model", "modal", "-o", out}
		if c.layout != "" {
			args = append(args, "--to-layout", c.layout)
		}
		r := run(t, "", args...)
		if r.code != 0 {
			t.Fatal(r)
		}
		for _, l := range readManifest(t, out).Layers {
			if l.ToLayout != c.want || l.DType != "F64" {
				t.Errorf("%s: layer %s written as %s %s", c.out, l.Prefix, l.ToLayout, l.DType)
			}
		}
		outs = append(outs, out)
	}
	checkInTorch(t, in, outs...)
	// A float32 checkpoint with the defaults (the rtf model): each layer in the first layout
	// whose float32 tensors read back within float32's limit and within the worst channel's
	// own error, so that the model's kernels are at most twice as far from the input's as the
	// fit (the rtf layout holds none of these fits: stripedhyena). The rtf layout asked for
	// is refused, and written with --force, whose manifest records what it loses.
	f32 := filepath.Join(dir, "f32.safetensors")
	r := run(t, "", "distill", modelCkpt, "--order", "8", "-o", f32)
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, l := range readManifest(t, f32).Layers {
		worst := 0.0
		for _, c := range l.Channels {
			worst = math.Max(worst, c.RelError)
		}
		if l.DType != "F32" || l.ToLayout != "stripedhyena" || !(readBackOf(l) <= 1e-4) || !(readBackOf(l) <= worst) || !strings.Contains(l.Why, "rtf: ") {
			t.Errorf("layer %s: %s %s, read back to %.3g (worst channel %.3g; %s)", l.Prefix, l.ToLayout, l.DType, readBackOf(l), worst, l.Why)
		}
	}
	rtf := filepath.Join(dir, "rtf.safetensors")
	args := []string{"distill", modelCkpt, "--order", "8", "--to-layout", "rtf", "-o", rtf}
	if r = run(t, "", args...); r.code != 1 || !strings.Contains(r.stderr, "no layout tried holds the fit: rtf: ") || !strings.Contains(r.stderr, "--dtype another element type") {
		t.Fatal(r)
	}
	if r = run(t, "", append(args, "--force")...); r.code != 0 || !strings.Contains(r.stderr, "warning: written anyway (--force)") {
		t.Fatal(r)
	}
	for _, l := range readManifest(t, rtf).Layers {
		if l.DType != "F32" || l.ToLayout != "rtf" || !(readBackOf(l) > 1e-4) {
			t.Errorf("layer %s: %s %s, read back to %.3g", l.Prefix, l.ToLayout, l.DType, readBackOf(l))
		}
	}
	checkInTorch(t, modelCkpt, f32)
}

// TestDistillModelForcedSaysSo: a model whose layers read back above their limit (bfloat16
// rounds poles near 0.999 to 1, so the stripedhyena tensors read back unstable) is refused
// naming every layer; with --force each is written with a warning (it was a note, among the
// notes on layouts), the manifest gives each channel's read-back error beside its fit's,
// and the last line says that its worst error is the fits' and how far the channels as
// written may be from their targets (it gave the fits' 0.0225 alone, the tensors reading
// back 0.98 from them).
func TestDistillModelForcedSaysSo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bf16.safetensors")
	args := []string{"distill", modelCkpt, "--order", "8", "--to-layout", "stripedhyena", "--dtype", "bfloat16", "-o", out}
	if r := run(t, "", args...); r.code != 1 || !strings.Contains(r.stderr, "3 layers cannot be written: ") {
		t.Fatal(r)
	}
	r := run(t, "", append(args, "--force")...)
	if r.code != 0 || strings.Count(r.stderr, "warning: written anyway (--force): layer ") != 3 || strings.Contains(r.stderr, "note: written anyway") {
		t.Fatal(r)
	}
	written := 0.0
	for _, l := range readManifest(t, out).Layers {
		worst := 0.0
		for _, c := range l.Channels {
			w, ok := c.WrittenError()
			if !ok {
				t.Fatalf("layer %s channel %d: no read-back error", l.Prefix, c.Channel)
			}
			worst, written = max(worst, *c.ReadBackError), max(written, w)
		}
		if !(readBackOf(l) == worst) || !(worst > 1e-2) {
			t.Errorf("layer %s: read back to %.3g, its channels at worst %.3g", l.Prefix, readBackOf(l), worst)
		}
	}
	if want := fmt.Sprintf("; those are the fits': as written, with the layers written anyway, up to %.3g from the targets; the units fitted stay in %s.work ", written, out); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
}

// TestDistillModelResumes kills a distillation once its first layer is done and runs the same
// command again: the second run takes the first layer's units from the work directory
// untouched, fits the rest, and writes what an uninterrupted run writes. Ctrl-C (SIGINT) ends
// a run with 130 and says what it keeps.
func TestDistillModelResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "resumed.safetensors")
			// The signal must land between the first layer and the last unit. The fit after
			// the first layer takes about 0.2 s, writing the checkpoint some seconds: a signal
			// this test is slow to send on a loaded machine lands after the last unit (all 6
			// kept, or the run done), and the run is made again. (The recipe's variable
			// projection does not take --steps: more steps did not make the fit longer.)
			const attempts = 5
			var stderr string
			for attempt := 1; ; attempt++ {
				cmd := exec.Command(self(), distillModelArgs(out)...)
				cmd.Env = append(os.Environ(), asCLIEnv+"=1")
				pipe, err := cmd.StderrPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				lines := bufio.NewScanner(pipe)
				var said strings.Builder
				for lines.Scan() {
					said.WriteString(lines.Text() + "\n")
					if strings.HasPrefix(lines.Text(), "layer backbone.layers.0.") {
						cmd.Process.Signal(sig)
						break
					}
				}
				for lines.Scan() {
					said.WriteString(lines.Text() + "\n")
				}
				err = cmd.Wait()
				stderr = said.String()
				var ee *exec.ExitError
				kept, _ := filepath.Glob(filepath.Join(out+".work", "unit-*.json"))
				if !errors.As(err, &ee) || len(kept) == 6 {
					if attempt == attempts {
						t.Fatalf("in %d runs the signal never landed before the last unit was fitted (last: %v, %d units kept):\n%s", attempts, err, len(kept), stderr)
					}
					t.Logf("the signal landed after the last unit (%v, %d units kept); again", err, len(kept))
					os.RemoveAll(out + ".work")
					os.Remove(out)
					os.Remove(out + ".manifest.json")
					continue
				}
				if sig == syscall.SIGINT {
					if ee.ExitCode() != 130 || !regexp.MustCompile(`ssmlab: cancelled; [2-5] of 6 units fitted are kept in \S+resumed.safetensors.work: run the same command again`).MatchString(stderr) {
						t.Fatalf("exit %d:\n%s", ee.ExitCode(), stderr)
					}
				}
				break
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the interrupted run wrote %s", out)
			}
			// Ctrl-C ends the run, which takes its lock's file with it, as a run that ends
			// does (QA: it left .OUT.lock); only a kill -9 leaves it.
			if _, err := os.Stat(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".lock")); sig == syscall.SIGINT && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the interrupted run left its lock file: %v", err)
			}
			units, err := filepath.Glob(filepath.Join(out+".work", "unit-*.json"))
			if err != nil || len(units) < 2 || len(units) > 5 {
				t.Fatalf("%d units kept: %v\n%s", len(units), err, stderr)
			}
			// What Ctrl-C says is kept is what the work directory holds: units are saved
			// through the output gate, and none after the signal.
			if m := regexp.MustCompile(`cancelled; (\d) of 6 units`).FindStringSubmatch(stderr); sig == syscall.SIGINT && (m == nil || m[1] != strconv.Itoa(len(units))) {
				t.Errorf("%d units in the work directory, the message says %v:\n%s", len(units), m, stderr)
			}
			before := map[string]os.FileInfo{}
			for _, u := range units {
				before[u], _ = os.Stat(u)
			}
			r := run(t, "", distillModelArgs(out)...)
			if r.code != 0 {
				t.Fatal(r)
			}
			for _, id := range []string{"[0:8]", "[8:16]"} {
				if !strings.Contains(r.stderr, "backbone.layers.0.mixer.filter_fn."+id+": done before (work directory)") {
					t.Errorf("the first layer's unit %s was not taken from the work directory:\n%s", id, r.stderr)
				}
			}
			if got := strings.Count(r.stderr, ": fitted;"); got != 6-len(units) {
				t.Errorf("%d units fitted again, want %d", got, 6-len(units))
			}
			for u, fi := range before {
				now, err := os.Stat(u)
				if err != nil || !os.SameFile(fi, now) || !now.ModTime().Equal(fi.ModTime()) {
					t.Errorf("%s was written again", u)
				}
			}
			whole := filepath.Join(dir, "whole.safetensors")
			if r := run(t, "", distillModelArgs(whole)...); r.code != 0 {
				t.Fatal(r)
			}
			sameDistilled(t, whole, out)
		})
	}
}

// TestDistillModelRefusesASecondRun: a whole-model run to the OUT another run is writing is
// refused at once (exit 1), naming that run's process, and fits nothing; once that run is
// killed, the lock it left behind (.OUT.lock, whose flock the kernel dropped) stops nothing,
// and the next run goes on from the work directory and removes it. Before, the second run
// fitted every unit again beside the first.
func TestDistillModelRefusesASecondRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "twice.safetensors")
	first := exec.Command(self(), distillModelArgs(out)...)
	first.Env = append(os.Environ(), asCLIEnv+"=1")
	pipe, err := first.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	lines := bufio.NewScanner(pipe)
	for lines.Scan() && !strings.Contains(lines.Text(), " to distil (") {
	}
	// The plan is said once the run holds the lock; stopped, it holds it for as long as the
	// test needs, with its units not yet all fitted (the whole run takes seconds).
	if err := first.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	go func() {
		for lines.Scan() {
		}
	}()

	r := run(t, "", distillModelArgs(out)...)
	want := fmt.Sprintf("ssmlab: %s: another ssmlab distill (pid %d) is distilling to it now, and this run would fit its units again: wait for it to end (the same command run then takes the units it fitted from %s.work), or give another -o\n", out, first.Process.Pid, out)
	if r.code != ExitFailure || r.stderr != want {
		t.Errorf("a second run: %v\nwant stderr %q", r, want)
	}

	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if _, err := os.Stat(filepath.Join(dir, ".twice.safetensors.lock")); err != nil {
		t.Fatalf("the killed run left no lock file to test with: %v", err)
	}
	if r := run(t, "", distillModelArgs(out)...); r.code != 0 {
		t.Fatalf("after the first run was killed: %v", r)
	}
	whole := filepath.Join(dir, "whole.safetensors")
	if r := run(t, "", distillModelArgs(whole)...); r.code != 0 {
		t.Fatal(r)
	}
	sameDistilled(t, whole, out)
	for _, name := range numtest.DirNames(t, dir) {
		if strings.HasSuffix(name, ".lock") {
			t.Errorf("%s left beside the output", name)
		}
	}
}

// TestDistillModelBadUse: the flags of a checkpoint's distillation are refused elsewhere, and
// a checkpoint's bad input is said.
func TestDistillModelBadUse(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"distill", modelCkpt, "--tensor", "backbone.layers.0.mixer.filter_fn.", "--shard", "0/2", "-o", "x.json"}, 2, "--shard applies to a checkpoint's distillation"},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--shard", "2/2"), 2, "counts from 0 to 1"},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--to-layout", "hyena"), 2, `--to-layout "hyena": want rtf, s4d, stripedhyena`},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--to-layout", "sos"), 2, "sos is a filter's layout, which no model's module loads: export the distilled filters with ssmlab export --layout sos"},
		// A pattern, or an item of one, that picks no layer is named; the first said "no
		// long-filter layer to distil (hyena, s4d, …); the file holds hyena …", the second
		// left its layer out unremarked, and --layout s4d said the first. Each is a
		// command-line mistake, exit 2, as the planner's other option mistakes are (it was 1).
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--layers", "nothing.*"), 2, `no layer to distil: --layers "nothing.*" picks none of the file's (hyena, s4d, s4, stripedhyena, rtf, lru, s5, rotrnn layers): hyena "backbone.layers.0.mixer.filter_fn."`},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--layers", "backbone.layers.0.*,backbone.layer.2.*"), 2, `"backbone.layer.2.*" picks none of the file's layers to distil`},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--layout", "s4d"), 2, `no layer to distil: --layout s4d picks none; the file holds hyena "backbone.layers.0.mixer.filter_fn."`},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--layout", "lru"), 2, `no layer to distil: --layout lru picks none`},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--layout", "sos"), 2, "not sos layers (a filter's second-order sections (sos), not a model's layer)"},
		{append(distillModelArgs(filepath.Join(dir, "x.pt")), "--tensor", "x"), 2, "--tensor reads one layer"},
		// A checkpoint of several layers to a filter file: the choice of a layer said only
		// "choose one with --tensor PREFIX", not how to distil them all. A choice the command
		// line must make, exit 2 as --layers picking none is (it was 1).
		{[]string{"distill", modelCkpt, "--order", "4", "-o", filepath.Join(dir, "x.json")}, 2, `hyena "backbone.layers.2.mixer.filter_fn."; or, for every layer, -o a checkpoint (OUT.safetensors, .pt or .npz)`},
		{[]string{"train", "--task", "delay", "--order", "auto"}, 2, "--order auto picks"},
		{[]string{"merge", "-o", filepath.Join(dir, "m.pt"), modelCkpt}, 1, "not a part file"},
		{[]string{"merge", "-o", filepath.Join(dir, "m.pt")}, 2, "want the PART files"},                    // was cobra's "requires at least 1 arg(s), only received 0"
		{[]string{"merge", "-", "-o", filepath.Join(dir, "m.pt")}, 2, "merge reads part files, not stdin"}, // was exit 1, "-: no such file or directory"
		// An is_real layer to be written as s4d under a recipe that cannot place real
		// positive poles: it was fitted and then refused when written, leaving a work
		// directory behind.
		{[]string{"distill", "../testdata/layouts/s4d_real_64.pt", "--order", "4", "--length", "64", "--init", "zeros", "--to-layout", "s4d", "-o", filepath.Join(dir, "real.pt")}, 1,
			`layer "layers.1.layer." is built with is_real: written as s4d its poles must be real and positive, which only the fits by variable projection place`},
	} {
		r := run(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %v, want exit %d and %q", c.args, r, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "real.pt.work")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused is_real distillation left its work directory: %v", err)
	}
	// A --work-dir that is a file is refused before the plan and backend lines, alone.
	file := filepath.Join(dir, "file.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", append(distillModelArgs(filepath.Join(dir, "wd.safetensors")), "--work-dir", file)...)
	if r.code != 1 || r.stderr != "ssmlab: work directory "+file+": not a directory\n" {
		t.Errorf("--work-dir a file: %v", r)
	}
}

// A shard is a command-line matter however it is missing: --shards without an index, or a
// Kubernetes index without --shards (that exited 1), both exit 2 saying what to give.
func TestDistillModelShardMissing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.safetensors")
	if r := run(t, "", append(distillModelArgs(out), "--shards", "4")...); r.code != ExitUsage || !strings.Contains(r.stderr, "--shards 4 without a shard: give --shard I/4") {
		t.Errorf("--shards without an index: %v", r)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	if r := run(t, "", distillModelArgs(out)...); r.code != ExitUsage || !strings.Contains(r.stderr, "JOB_COMPLETION_INDEX=1 without --shards: give --shards N") {
		t.Errorf("an index without --shards: %v", r)
	}
}

// TestDistillModelShardsDisagreeWithArray: --shards 4 in a Slurm array of 3 tasks is a command
// line that contradicts the array it runs in, a mistake of the submission (exit 2, naming the
// flag); it exited 1, as a failure of the run.
func TestDistillModelShardsDisagreeWithArray(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "3"} {
		t.Setenv(k, v)
	}
	r := run(t, "", append(distillModelArgs(filepath.Join(dir, "x.safetensors")), "--shards", "4")...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--shards 4: 4 shards asked for, but the Slurm array has SLURM_ARRAY_TASK_COUNT=3 tasks") {
		t.Errorf("--shards 4 in an array of 3: %v", r)
	}
	if names := numtest.DirNames(t, dir); len(names) != 0 {
		t.Errorf("a refused task wrote %q", names)
	}
}

// TestDistillModelOneTaskArray: the task of `sbatch --array=2` (running task 2 of a larger
// array again) sees an array of one task, which it took for the whole job: it wrote OUT itself
// (QA F2). It is refused, exit 1, asking for --shard; with --shard it runs that shard.
func TestDistillModelOneTaskArray(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.safetensors")
	for k, v := range map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_MAX": "2", "SLURM_ARRAY_TASK_COUNT": "1"} {
		t.Setenv(k, v)
	}
	if r := run(t, "", distillModelArgs(out)...); r.code != 1 || !strings.Contains(r.stderr, "give --shard 2/N") {
		t.Errorf("a one-task array: %v", r)
	}
	if names := numtest.DirNames(t, dir); len(names) != 0 {
		t.Errorf("a refused task wrote %q", names)
	}
	if r := run(t, "", append(distillModelArgs(out), "--shard", "2/3")...); r.code != 0 || !strings.Contains(r.stderr, "shard 2/3 (--shard)") {
		t.Errorf("--shard 2/3 in a one-task array: %v", r)
	}
	if _, err := os.Stat(out + ".shard-2-of-3.json"); err != nil {
		t.Error(err)
	}
}

// TestDistillModelSubsetAndAutoOrder distils the layers a pattern picks, each channel at the
// order the suggestion gives for the tolerance, and copies the others unchanged.
func TestDistillModelSubsetAndAutoOrder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "auto.safetensors")
	r := run(t, "", "distill", modelCkpt, "--order", "auto", "--tol", "1e-2", "--max-order", "12", "--model", "modal",
		"--layers", "backbone.layers.[02].*", "-o", out)
	if r.code != 0 {
		t.Fatal(r)
	}
	if !strings.Contains(r.stderr, `left as it is: hyena layer "backbone.layers.1.mixer.filter_fn.": not picked by the layer pattern`) {
		t.Errorf("stderr: %s", r.stderr)
	}
	m := readManifest(t, out)
	if len(m.Layers) != 2 || len(m.Skipped) != 1 || !m.Options.OrderAuto || m.Options.Tol != 1e-2 {
		t.Fatalf("manifest: %+v", m)
	}
	orders := map[int]bool{}
	for _, l := range m.Layers {
		for _, c := range l.Channels {
			orders[c.Order] = true
			if c.Order < 1 || c.Order > 12 {
				t.Errorf("%s, channel %d: order %d", l.Prefix, c.Channel, c.Order)
			}
		}
	}
	if len(orders) < 2 {
		t.Errorf("every channel got order %v: the orders are not per channel", orders)
	}
	af, err := arrays.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	in, err := arrays.Open(modelCkpt)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for _, name := range []string{"backbone.layers.1.mixer.filter_fn.implicit_filter.0.weight", "lm_head.weight"} {
		a, err1 := af.ReadRaw(name)
		b, err2 := in.ReadRaw(name)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s not copied: %v %v", name, err1, err2)
		}
	}
}

// TestDistillModelWarnsAboveTol: under --order auto, the channels whose fit ends above --tol
// are named on stderr, by a single run, a resumed one and a merge alike (the warnings were
// kept in the units' files but never printed).
func TestDistillModelWarnsAboveTol(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "auto.safetensors")
	args := []string{"distill", modelCkpt, "--order", "auto", "--tol", "1e-3", "--max-order", "4", "--model", "modal", "--refine", "5",
		"--chunk", "8", "--layers", "backbone.layers.0.*"}
	const unit = "warning: backbone.layers.0.mixer.filter_fn.[0:8]: "
	wantWarned := func(what string, r result) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: %v", what, r)
		}
		for _, want := range []string{unit, "end above relative error 0.001 at their order", "at every order up to 4 and were fitted at 4"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, want, r.stderr)
			}
		}
	}
	wantWarned("a single run", run(t, "", append(args, "-o", out)...))
	wantWarned("a resumed run", run(t, "", append(args, "-o", out)...))
	sharded := filepath.Join(dir, "sharded.safetensors")
	for i := range 2 {
		if r := run(t, "", append(args, "--shard", fmt.Sprintf("%d/2", i), "-o", sharded)...); r.code != 0 {
			t.Fatal(r)
		}
	}
	wantWarned("a merge", run(t, "", "merge", sharded+".shard-0-of-2.json", sharded+".shard-1-of-2.json", "-o", sharded))
}

// TestKeptNote: a signal before any unit was fitted says nothing was written; it said "0 of 3
// units fitted are kept in OUT.work: run the same command again to go on from there", a
// directory that did not exist.
func TestKeptNote(t *testing.T) {
	if got := keptNote(0, 3, "d.pt.work"); got != "nothing was written: no unit of 3 was fitted yet" {
		t.Errorf("0 units: %q", got)
	}
	if got := keptNote(2, 3, "d.pt.work"); got != "2 of 3 units fitted are kept in d.pt.work: run the same command again to go on from there" {
		t.Errorf("2 units: %q", got)
	}
}

// TestDistillHelpForCheckpoints: distill --help says what its job flags do for a
// checkpoint: --backend showed only (default "cpu") where a checkpoint runs on auto, --tol
// only "0: run all steps" where --order auto aims at 1e-3, --length only "from a filter
// TARGET" where S4D and StripedHyena layers are distilled at it, --tensor only "the array".
func TestDistillHelpForCheckpoints(t *testing.T) {
	r := run(t, "", "distill", "--help")
	for _, want := range []string{
		"(default: cpu; auto for a checkpoint, -o OUT.safetensors, .pt, .npz)",
		"--order auto: the relative error each channel's order is suggested for (default 1e-3)",
		"and of a checkpoint's layers that record none (S4D, StripedHyena, RTF without trunc_len, S4 without l_kernel), whose kernels are made for it (S4D dss, S4)",
		"the array, or the prefix of the layer,",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("distill --help lacks %q", want)
		}
	}
	if strings.Contains(r.stdout, `(default "cpu")`) {
		t.Error(`distill --help says --backend's default is "cpu" alone`)
	}
	if r := run(t, "", "train", "--help"); strings.Contains(r.stdout, "--order auto: the relative error") || !strings.Contains(r.stdout, `(default "cpu")`) {
		t.Error("train --help speaks of distill's --order auto, or not of --backend's default cpu")
	}
}

// TestUnitWarningsBounded: a run prints the first maxUnitWarnings of its units' warnings and
// counts the rest, pointing to the records; a model of thousands of units printed one line
// each.
func TestUnitWarningsBounded(t *testing.T) {
	var results []*plan.UnitResult
	for i := range maxUnitWarnings + 5 {
		results = append(results, &plan.UnitResult{Warnings: []string{fmt.Sprintf("unit %d: above --tol", i)}})
	}
	var errb bytes.Buffer
	s := &streams{err: &errb}
	s.unitWarnings(results, "d.pt.manifest.json")
	got := errb.String()
	if n := strings.Count(got, "\n"); n != maxUnitWarnings+1 || !strings.Contains(got, "warning: unit 0: above --tol\n") ||
		!strings.HasSuffix(got, "warning: 5 more warnings of other units (d.pt.manifest.json has every channel's error and its ratio to the lower bound)\n") {
		t.Errorf("%d lines:\n%s", n, got)
	}
}

// TestDistillModelOneStateSize: the layers written in one modal layout share one state size,
// the largest, the others padded with modes of no residue, so that one module (one d_state)
// loads every layer; at order 5 a fit's real pole takes a mode of its own, and the layers
// came back with 4, 3 and 4 modes, which a model built with one d_state refuses.
func TestDistillModelOneStateSize(t *testing.T) {
	if testing.Short() {
		t.Skip("distils a checkpoint twice")
	}
	dir := t.TempDir()
	in, _ := filepath.Abs("../testdata/scale/hyena_lm_f64.pt")
	var outs []string
	for _, c := range []struct{ layout, tensor string }{{"s4d", "kernel.A_imag"}, {"stripedhyena", "poles"}} {
		out := filepath.Join(dir, c.layout+".npz")
		if r := run(t, "", "distill", in, "--order", "5", "--model", "modal", "--to-layout", c.layout, "-o", out); r.code != 0 {
			t.Fatal(r)
		}
		r := run(t, "", "import", out, "--list")
		var list struct {
			Arrays []struct {
				Name  string `json:"name"`
				Shape []int  `json:"shape"`
			} `json:"arrays"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		widths := map[int]bool{}
		for _, a := range list.Arrays {
			if strings.HasSuffix(a.Name, "filter_fn."+c.tensor) {
				widths[a.Shape[1]] = true
			}
		}
		if len(widths) != 1 {
			t.Errorf("%s: the layers' %s have %d state sizes %v, want one", c.layout, c.tensor, len(widths), widths)
		}
		for _, l := range readManifest(t, out).Layers {
			if l.ToLayout != c.layout || !(readBackOf(l) <= 1e-9) {
				t.Errorf("%s: layer %s written as %s, read back to %.3g", c.layout, l.Prefix, l.ToLayout, readBackOf(l))
			}
		}
		outs = append(outs, out)
	}
	checkInTorch(t, in, outs...)
}

// TestDistillS4DRecordsDtTransform: a checkpoint distilled to safetensors records the dt
// transform its s4d layers' inv_dt were written for, as export's files do, so that import
// reads them with it and does not warn that the file does not say (QA: it warned); the
// minimal variant, which stores log_dt, records none.
func TestDistillS4DRecordsDtTransform(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		in, dtT string // dtT: the one recorded, "" for none
		args    []string
	}{
		{"s4d_64.npz", "exp", nil},
		{"s4d_64.npz", "softplus", []string{"--dt-transform", "softplus"}},
		{"s4d_minimal_32.safetensors", "", nil},
	} {
		out := filepath.Join(dir, c.dtT+c.in+".safetensors")
		args := append([]string{"distill", filepath.Join("..", "testdata", "layouts", c.in), "--order", "2", "--length", "128", "--to-layout", "s4d", "-o", out}, c.args...)
		if r := run(t, "", args...); r.code != 0 {
			t.Fatal(r)
		}
		af, err := arrays.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := af.Metadata()[sessions.DtTransformKey]
		af.Close()
		if got != c.dtT || ok != (c.dtT != "") {
			t.Errorf("%s %v: metadata dt_transform %q (%v), want %q", c.in, c.args, got, ok, c.dtT)
		}
		r := run(t, "", "import", out)
		if r.code != 0 || strings.Contains(r.stderr, "does not record") {
			t.Errorf("%s %v: import: %v", c.in, c.args, r)
		}
		if c.dtT != "" && !strings.Contains(r.stderr, "dt_transform "+c.dtT+" from the file's metadata") {
			t.Errorf("%s %v: import says %q", c.in, c.args, r.stderr)
		}
	}
}

// TestDistillModelKeepsModuleSettings distils layers written back in their own layout, which
// keep their module's settings: a minimal S4D layer (models/s4/s4d.py) comes back under that
// module's names; a layer whose module discretises by the bilinear transform, and an RTF
// layer under a Hyena operator read with --h0 once, as tensors their modules read as the fit.
// They were written for SSMKernelDiag with zoh and with h_0 halved: the first did not load,
// the second read 0.58–0.72 from the input's kernels (the fit: 0.09–0.13), the third
// with h_0 halved (0.371 where the fit is 0.363).
func TestDistillModelKeepsModuleSettings(t *testing.T) {
	dir := t.TempDir()
	minimal := filepath.Join(dir, "minimal.pt")
	if r := run(t, "", "distill", "../testdata/layouts/s4d_minimal_64.pt", "--order", "4", "--to-layout", "s4d", "-o", minimal); r.code != 0 {
		t.Fatal(r)
	}
	if r := run(t, "", "import", minimal, "--list"); !strings.Contains(r.stdout, `"model.s4.kernel.log_A_real"`) || strings.Contains(r.stdout, "kernel.inv_dt") {
		t.Errorf("a minimal S4D layer written back under other names: %v", r)
	}
	// The kernels the layer's module computes, at the length distilled.
	kernels := func(path string, length string, opts ...string) [][]float64 {
		r := run(t, "", append([]string{"import", path}, opts...)...)
		if r.code != 0 {
			t.Fatal(r)
		}
		a := run(t, r.stdout, "analyze", "-", "--impulse", length)
		var bank struct {
			Channels []struct {
				Impulse []float64 `json:"impulse"`
			} `json:"channels"`
		}
		if err := json.Unmarshal([]byte(a.stdout), &bank); err != nil {
			t.Fatalf("%v: %v", a, err)
		}
		var out [][]float64
		for _, c := range bank.Channels {
			out = append(out, c.Impulse)
		}
		return out
	}
	rtfIn := filepath.Join(dir, "rtf.pt")
	if r := run(t, "", "export", "../testdata/layouts/rtf_64.pt", "--prefix", "m.mixer.filter_fn.", "-o", rtfIn); r.code != 0 {
		t.Fatal(r)
	}
	for _, c := range []struct {
		in, layout, length string
		opts               []string
	}{
		{"../testdata/layouts/s4d_bilinear_64.pt", "s4d", "1024", []string{"--disc", "bilinear"}},
		{rtfIn, "rtf", "64", []string{"--h0", "once", "--trunc-len", "64"}},
	} {
		out := filepath.Join(dir, "out-"+filepath.Base(c.in))
		args := append([]string{"distill", c.in, "--order", "2", "-o", out}, c.opts...)
		if r := run(t, "", append(args, "--to-layout", c.layout)...); r.code != 0 {
			t.Fatal(r)
		}
		want, got := kernels(c.in, c.length, c.opts...), kernels(out, c.length, c.opts...)
		for i, ch := range readManifest(t, out).Layers[0].Channels {
			if e := filters.RelDiff(want[i], got[i]); !(math.Abs(e-ch.RelError) <= 1e-6*ch.RelError+1e-12) {
				t.Errorf("%s, channel %d: the module reads the distilled layer %.3g from the input's kernel, the fit is %.3g from it", c.in, i, e, ch.RelError)
			}
		}
	}
}

// TestDistillModelGoldenFamilies distils the golden checkpoint of every family of long-filter
// layer in testdata/layouts (safari's Hyena; S4's NPLR kernel; S4D's SSMKernelDiag with zoh
// or bilinear, complex or is_real, and models/s4/s4d.py's minimal S4D; StripedHyena, whose short_filter_weight
// shares the layer's prefix; RTF with a trunc_len, with h_0 counted once or twice) into each
// target layout and container, one in bfloat16, and loads them with the reference formulas of
// testdata/layouts/gen_layouts.py (check_distilled.py): every layer under the names and ranks
// its module loads, its kernels as far from the input's as the manifest says, and every
// other tensor (short_filter_weight) copied bit for bit. The script stopped at S4 and RTF
// inputs ("reads hyena, stripedhyena and s4d layers"), raised KeyError 'kernel.A_real' on a
// minimal S4D input, said a StripedHyena layer's module did not load it, counting the copied
// short_filter_weight among its names (and not checking that it was copied), and read an S4D
// layer written back for disc bilinear as zoh (0.243 from the input, the manifest: 0.251).
// An is_real S4D layer was not written back as s4d (no real-poles fit, no real export).
func TestDistillModelGoldenFamilies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference code")
	}
	dir := t.TempDir()
	rtfHyena := filepath.Join(dir, "rtf_hyena_in.pt") // an RTF layer under a Hyena operator: h_0 twice
	if r := run(t, "", "export", "../testdata/layouts/rtf_64.pt", "--prefix", "m.mixer.filter_fn.", "-o", rtfHyena); r.code != 0 {
		t.Fatal(r)
	}
	golden := func(name string) string { return filepath.Join("..", "testdata", "layouts", name) }
	cases := []struct {
		in, out string
		args    []string
		layout  string // the layout written
		module  string // the module that loads it
		copied  int    // the input's tensors under no layer
		family  string // its family in testdata/layouts
	}{
		{golden("hyena_64.pt"), "hyena.pt", nil, "rtf", "rtf", 0, "hyena"},
		{golden("hyena_32.safetensors"), "hyena_bf16.safetensors", []string{"--to-layout", "stripedhyena", "--dtype", "BF16"}, "stripedhyena", "stripedhyena", 0, "hyena"},
		{golden("s4_64.pt"), "s4.pt", nil, "rtf", "rtf", 0, "s4"},
		{golden("s4_32.pt"), "s4_s4d.npz", []string{"--to-layout", "s4d"}, "s4d", "s4d", 0, "s4"},
		{golden("s4d_64.npz"), "s4d.safetensors", []string{"--to-layout", "stripedhyena"}, "stripedhyena", "stripedhyena", 0, "s4d"},
		{golden("s4d_bilinear_64.pt"), "s4d_bilinear.pt", []string{"--disc", "bilinear", "--to-layout", "s4d"}, "s4d", "s4d", 0, "s4d_bilinear"},
		{golden("s4d_real_64.pt"), "s4d_real.pt", []string{"--to-layout", "s4d"}, "s4d", "s4d real", 0, "s4d_real"},
		{golden("s4d_real_32.pt"), "s4d_real_bilinear.safetensors", []string{"--disc", "bilinear", "--to-layout", "s4d"}, "s4d", "s4d real", 0, "s4d_real"},
		{golden("s4d_dss_64.pt"), "s4d_dss.pt", []string{"--disc", "dss"}, "rtf", "rtf", 0, "s4d_dss"},
		{golden("s4d_minimal_32.safetensors"), "s4d_minimal.safetensors", []string{"--to-layout", "s4d"}, "s4d", "s4d minimal", 0, "s4d_minimal"},
		{golden("s4d_minimal_64.pt"), "s4d_minimal.pt", nil, "rtf", "rtf", 0, "s4d_minimal"},
		{golden("stripedhyena_64.pt"), "stripedhyena.pt", nil, "rtf", "rtf", 1, "stripedhyena"},
		{golden("stripedhyena_32.safetensors"), "stripedhyena.safetensors", []string{"--to-layout", "stripedhyena"}, "stripedhyena", "stripedhyena", 1, "stripedhyena"},
		{golden("rtf_64.pt"), "rtf.pt", []string{"--trunc-len", "32"}, "rtf", "rtf", 0, "rtf"},
		{golden("rtf_32.safetensors"), "rtf_s4d.safetensors", []string{"--trunc-len", "32", "--to-layout", "s4d"}, "s4d", "s4d", 0, "rtf"},
		{rtfHyena, "rtf_hyena.pt", []string{"--trunc-len", "32", "--to-layout", "rtf"}, "rtf", "rtf", 0, "rtf"},
		{rtfHyena, "rtf_hyena_once.npz", []string{"--trunc-len", "32", "--h0", "once", "--to-layout", "rtf"}, "rtf", "rtf", 0, "rtf"},
	}
	// Every family of long-filter layer the golden files hold, but the short FIR filters of a
	// StripedHyena layer (3 taps, not a long filter), which distill does not take.
	var expected struct {
		Cases map[string]struct {
			Layout string `json:"layout"`
		} `json:"cases"`
	}
	data, err := os.ReadFile(golden("expected.json"))
	if err != nil || json.Unmarshal(data, &expected) != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{"stripedhyena_fir": true}
	for _, c := range cases {
		covered[c.family] = true
	}
	for name, c := range expected.Cases {
		family := regexp.MustCompile(`_(32|64)\.[a-z]+$`).ReplaceAllString(name, "")
		if slices.Contains([]string{"hyena", "s4", "s4d", "stripedhyena", "rtf"}, c.Layout) && !covered[family] {
			t.Errorf("the %s layer of %s (family %s) is not distilled here", c.Layout, name, family)
		}
	}
	var pairs []string
	for _, c := range cases {
		out := filepath.Join(dir, c.out)
		args := append([]string{"distill", c.in, "--order", "2", "-o", out}, c.args...)
		if !slices.Contains([]string{"hyena", "s4", "rtf"}, c.family) {
			// the layers that record no kernel length; the others are distilled at theirs,
			// and --length is refused for them
			args = append(args, "--length", "128")
		}
		if r := run(t, "", args...); r.code != 0 {
			t.Fatal(r)
		}
		pairs = append(pairs, c.in, out)
	}
	for i, res := range checkDistilled(t, len(cases), append([]string{"--pairs"}, pairs...)...) {
		c := cases[i]
		if len(res.Layers) != 1 || res.Copied.Count != c.copied || len(res.Copied.Bad) > 0 || len(res.Copied.Extra) > 0 {
			t.Errorf("%s: %d layers; copied %+v, want %d", c.out, len(res.Layers), res.Copied, c.copied)
		}
		for p, l := range res.Layers {
			if l.ToLayout != c.layout || l.Module != c.module {
				t.Errorf("%s: %s written as %s for the %s module, want %s for %s", c.out, p, l.ToLayout, l.Module, c.layout, c.module)
			}
			if strings.Contains(c.out, "bf16") && !slices.Equal(l.DTypes, []string{"torch.bfloat16"}) {
				t.Errorf("%s: %s written in %v", c.out, p, l.DTypes)
			}
		}
		checkModules(t, c.out, res)
	}
}

// TestDistillModelRealLayerPoles: an S4D layer built with is_real (16 real modes a channel,
// as S4D-Real's A_n = −(n+1)) is fitted with real positive poles where it may be written back
// in its own layout (no --to-layout, or s4d), and with any poles for --to-layout rtf or
// stripedhyena, which hold them: there the fit places complex poles and its worst channel
// ends below the positive fit's (2.3e-6 against 8.6e-6). It was fitted positive whatever
// --to-layout said. A work directory keeps the two apart: a rerun under the other constraint
// fits anew, one under the same takes the units fitted.
func TestDistillModelRealLayerPoles(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 1))
	var chans []filters.Filter
	for _, dt := range []float64{0.05, 0.1, 0.2} {
		var p, r []complex128
		for n := range 16 {
			p = append(p, complex(math.Exp(-dt*float64(n+1)), 0))
			r = append(r, complex(rng.NormFloat64(), 0))
		}
		f, err := filters.NewDiagonal(p, r, rng.NormFloat64())
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, f)
	}
	bank, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "real.pt")
	if r := run(t, "", "export", writeDoc(t, dir, "bank.json", filters.Document{Bank: bank}), "--layout", "s4d", "--is-real", "true", "--prefix", "m.layer.", "-o", in); r.code != 0 {
		t.Fatal(r)
	}
	work := filepath.Join(dir, "work")
	worst := map[string]float64{}
	for _, c := range []struct {
		to               string
		positive, fitted bool
	}{
		{"rtf", false, true},
		{"s4d", true, true},            // positive: fitted anew
		{"", true, false},              // positive, as for s4d
		{"stripedhyena", false, false}, // any, as for rtf
	} {
		out := filepath.Join(dir, "out-"+c.to+".safetensors")
		args := []string{"distill", in, "--order", "6", "--length", "128", "--work-dir", work, "-o", out}
		if c.to != "" {
			args = append(args, "--to-layout", c.to)
		}
		r := run(t, "", args...)
		if r.code != 0 {
			t.Fatal(r)
		}
		if fitted := strings.Contains(r.stderr, "m.layer.[0:3]: fitted;"); fitted != c.fitted {
			t.Errorf("--to-layout %q: fitted %v after the runs before, want %v:\n%s", c.to, fitted, c.fitted, r.stderr)
		}
		imp := run(t, "", "import", out)
		doc, err := filterfile.Unmarshal([]byte(imp.stdout))
		if err != nil || doc.Bank == nil {
			t.Fatalf("--to-layout %q: %v: %v", c.to, imp, err)
		}
		positive := true
		for _, f := range doc.Bank.Channels {
			ps, err := filters.Poles(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				// Real to 1e-6: the rtf layout's polynomial may split a double real pole
				// of the positive fit by about √ε; the other fit's pair is 5e-2 apart.
				positive = positive && math.Abs(imag(p)) <= 1e-6 && real(p) > 0 && real(p) < 1
			}
		}
		if positive != c.positive {
			t.Errorf("--to-layout %q: the fit's poles are real and positive: %v, want %v", c.to, positive, c.positive)
		}
		for _, ch := range readManifest(t, out).Layers[0].Channels {
			worst[c.to] = max(worst[c.to], ch.RelError)
		}
	}
	if !(worst["rtf"] < worst["s4d"]) || worst["rtf"] != worst["stripedhyena"] || worst["s4d"] != worst[""] {
		t.Errorf("worst channels %v: want rtf's (any poles) below s4d's (positive)", worst)
	}
	// With --poles positive every layout gets the same fit: a run for another layout reuses
	// the work directory's units rather than fit them again.
	work = filepath.Join(dir, "work-positive")
	for i, to := range []string{"rtf", "s4d", "stripedhyena"} {
		out := filepath.Join(dir, "positive-"+to+".safetensors")
		r := run(t, "", "distill", in, "--order", "6", "--length", "128", "--poles", "positive", "--work-dir", work, "--to-layout", to, "-o", out)
		if r.code != 0 {
			t.Fatal(r)
		}
		if fitted := strings.Contains(r.stderr, "m.layer.[0:3]: fitted;"); fitted != (i == 0) {
			t.Errorf("--poles positive --to-layout %s: fitted %v after the runs before, want %v:\n%s", to, fitted, i == 0, r.stderr)
		}
	}
}

// TestDistillModelLengthIgnored: --length where every layer picked records the kernel length
// it is distilled at (an RTF layer's trunc_len, from --trunc-len or the file's metadata; an
// S4 layer's l_kernel, in a torch.save, safetensors or .npz file; a Hyena layer's positions)
// would change nothing, and is refused naming both, before any work; an RTF layer with a
// trunc_len was distilled at it, --length silently dropped, and an S4 layer's l_kernel was
// read from torch.save files only: from a safetensors file its C̃ was undone for --length
// (a layer of l_kernel 2048 distilled at 1024 and order 16 reported 1e-13, 0.025 from the
// module's kernel). Where a layer records none, --length is its length.
func TestDistillModelLengthIgnored(t *testing.T) {
	dir := t.TempDir()
	golden := func(name string) string { return filepath.Join("..", "testdata", "layouts", name) }
	meta := filepath.Join(dir, "rtf_tl.safetensors") // trunc_len 32 in its metadata
	if r := run(t, "", "export", golden("rtf_64.pt"), "--trunc-len", "32", "-o", meta); r.code != 0 {
		t.Fatal(r)
	}
	out := filepath.Join(dir, "out.pt")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{golden("rtf_64.pt"), "--trunc-len", "32"}, []string{`--length 4096 would change nothing`, `rtf layer "layers.0.filter." at trunc_len 32, from --trunc-len`}},
		{[]string{meta}, []string{`--length 4096`, `trunc_len 32, from the file's metadata`}},
		{[]string{golden("s4_64.pt")}, []string{`--length 4096`, `at l_kernel 64, its kernel.l_kernel buffer`}},
		{[]string{golden("s4_lkernel_32.safetensors")}, []string{`--length 4096`, `at l_kernel 64, its kernel.l_kernel buffer`}},
		{[]string{golden("s4_lkernel_64.npz")}, []string{`--length 4096`, `at l_kernel 64, its kernel.l_kernel buffer`}},
		{[]string{golden("hyena_64.pt")}, []string{`--length 4096`, `positions it stores`}},
	} {
		r := run(t, "", append([]string{"distill", "--order", "2", "--length", "4096", "-o", out}, c.args...)...)
		if r.code != ExitUsage || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: want exit 2 and one line; got %v", c.args, r)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, r.stderr, w)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v wrote %s", c.args, out)
		}
	}
	// An RTF layer without a trunc_len is distilled at --length.
	if r := run(t, "", "distill", golden("rtf_64.pt"), "--order", "2", "--length", "64", "-o", out); r.code != 0 {
		t.Fatal(r)
	}
	if l := readManifest(t, out).Layers[0]; l.Length != 64 {
		t.Errorf("distilled at %d samples, want 64", l.Length)
	}
}

// TestDistillModelChecksEveryOutput refuses, before any work, a run whose manifest or part
// cannot be written, and a merge whose manifest cannot: the checkpoint was written first,
// then the manifest failed (exit 1 with OUT on disk), since only OUT was checked.
func TestDistillModelChecksEveryOutput(t *testing.T) {
	dir := t.TempDir()
	in := "../testdata/layouts/hyena_64.pt"
	args := func(out string, extra ...string) []string {
		return append([]string{"distill", in, "--order", "2", "--chunk", "1", "-o", out}, extra...)
	}
	out := filepath.Join(dir, "d.pt")
	for _, blocked := range []string{out + ".manifest.json", out + ".shard-1-of-2.json"} {
		if err := os.Mkdir(blocked, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range [][]string{args(out), args(out, "--shard", "1/2")} {
		r := run(t, "", c...)
		if r.code != 1 || !strings.Contains(r.stderr, ": is a directory") || strings.Contains(r.stderr, "fitted") {
			t.Errorf("%v: %v", c, r)
		}
	}
	part := filepath.Join(dir, "p.pt")
	for _, sh := range []string{"0/2", "1/2"} {
		if r := run(t, "", args(part, "--shard", sh)...); r.code != 0 {
			t.Fatal(r)
		}
	}
	merged := filepath.Join(dir, "m.pt")
	if err := os.Mkdir(merged+".manifest.json", 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "merge", part+".shard-0-of-2.json", part+".shard-1-of-2.json", "-o", merged)
	if r.code != 1 || !strings.Contains(r.stderr, "m.pt.manifest.json: is a directory") {
		t.Errorf("merge: %v", r)
	}
	for _, p := range []string{out, merged} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written by a run that failed (%v)", p, err)
		}
	}
}

// TestDistillModelRankLimited distils an S4 layer of state size 6 at order 7 into each modal
// layout: each channel's fit has an idle pole at 0, which the layouts leave out (they refused
// the layer, "no layout tried holds the fit"), and the written layer reads back to rounding.
func TestDistillModelRankLimited(t *testing.T) {
	dir := t.TempDir()
	for _, layout := range []string{"s4d", "stripedhyena"} {
		out := filepath.Join(dir, layout+".pt")
		if r := run(t, "", "distill", "../testdata/layouts/s4_64.pt", "--order", "7", "--to-layout", layout, "-o", out); r.code != 0 {
			t.Fatalf("%s: %v", layout, r)
		}
		for _, l := range readManifest(t, out).Layers {
			if l.ToLayout != layout || !(readBackOf(l) <= 1e-12) {
				t.Errorf("%s: layer %s written as %s, read back to %.3g", layout, l.Prefix, l.ToLayout, readBackOf(l))
			}
		}
	}
}

// readBackOf is a layer's read-back error, +Inf where its tensors cannot be read back (null
// in the manifest).
func readBackOf(l plan.LayerRecord) float64 {
	if l.ReadBackError == nil {
		return math.Inf(1)
	}
	return *l.ReadBackError
}

// TestDistillMessagesReadWell: a layer of no prefix is named "layer (no prefix)", not
// "layer : …"; counts of one are singular ("1 mode", "1 head", "at 1 order"); a filter file
// distilled to a checkpoint output is named as such, not "unsupported array".
func TestDistillMessagesReadWell(t *testing.T) {
	dir := t.TempDir()
	in := writeDoc(t, dir, "in.json", filters.Document{Filter: testFilter(t)})
	for _, tc := range []struct {
		args     []string
		want     []string
		wantNot  string
		exitCode int
	}{
		{[]string{"distill", "../testdata/layouts/lru_pairs_64.pt", "--order", "2", "-o", filepath.Join(dir, "lru.pt")},
			[]string{"layer (no prefix): 3 outputs", "note: layer (no prefix): reduced", "(1 mode;", "in 1 mode (order 2 asked: the truncations to order 2 have real poles, each a mode for one state, and need more than the 1 mode of order 2)"}, "layer :", 0},
		{[]string{"distill", "../testdata/layouts/s4d_dss_64.pt", "--order", "2", "--length", "64", "-o", filepath.Join(dir, "dss.pt")},
			[]string{"layer (no prefix): 2 channels"}, "layer :", 0},
		{[]string{"distill", "../testdata/layouts/rotrnn_64.pt", "--order", "2", "-o", filepath.Join(dir, "rot.pt")},
			[]string{"built with 1 head of 2 states"}, "1 heads", 0},
		{[]string{"distill", in, "--orders", "2", "--length", "64"}, []string{"rtf at 1 order,"}, "1 orders", 0},
		{[]string{"distill", in, "-o", filepath.Join(dir, "x.pt")},
			[]string{in + " is a filter file (dense filter of order 3), not a model checkpoint: an output of .pt, .safetensors or .npz"}, "unsupported array", 1},
	} {
		r := run(t, "", tc.args...)
		if r.code != tc.exitCode || strings.Contains(r.stderr, tc.wantNot) {
			t.Errorf("%s: want exit %d, no %q: %v", strings.Join(tc.args, " "), tc.exitCode, tc.wantNot, r)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", strings.Join(tc.args, " "), w, r.stderr)
			}
		}
	}
}

// TestDistillSaysWorkDirKept: distill CKPT -o OUT's summary, its last line, ends by saying
// that the work directory stays (OUT.work, or --work-dir's), what for and that it can go:
// it was left without a word.
func TestDistillSaysWorkDirKept(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "lru.pt")
	for _, c := range []struct {
		args []string
		work string
	}{
		{nil, out + ".work"},
		{[]string{"--work-dir", filepath.Join(dir, "w")}, filepath.Join(dir, "w")},
	} {
		r := run(t, "", append([]string{"distill", "../testdata/layouts/lru_64.pt", "--order", "4", "-o", out}, c.args...)...)
		want := "; the units fitted stay in " + c.work + " (the same command run again takes them from there), which can be removed\n"
		lines := strings.SplitAfter(r.stderr, "\n")
		if last := lines[len(lines)-2]; r.code != 0 || !strings.HasPrefix(last, "wrote "+out+" ") || !strings.HasSuffix(last, want) {
			t.Errorf("%v: want the last line to end %q; got %v", c.args, want, r)
		}
		if units, _ := filepath.Glob(filepath.Join(c.work, "unit-*.json")); len(units) != 1 {
			t.Errorf("%v: %s holds %v, want the unit", c.args, c.work, units)
		}
	}
}

// TestDistillEditedUnitFittedAgain: a unit file of the work directory edited so that it still
// reads (a pole moved outside the unit circle) is not taken as fitted: its content no longer
// matches its SHA-256, so the unit is fitted again, said on stderr, and OUT is a fresh run's.
// It was taken, and OUT held the unstable pole under a manifest saying every channel stable.
func TestDistillEditedUnitFittedAgain(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "lru.pt")
	args := []string{"distill", "../testdata/layouts/lru_64.pt", "--order", "4", "-o", out}
	if r := run(t, "", args...); r.code != 0 {
		t.Fatal(r)
	}
	units, err := filepath.Glob(filepath.Join(out+".work", "unit-*.json"))
	if err != nil || len(units) != 1 {
		t.Fatalf("units %v, %v", units, err)
	}
	data, err := os.ReadFile(units[0])
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`"poles":\[\[[-0-9.e]+,`).ReplaceAll(data, []byte(`"poles":[[1.1,`))
	if bytes.Equal(edited, data) {
		t.Fatalf("no pole to edit in %s", data)
	}
	if err := os.WriteFile(units[0], edited, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", args...)
	if r.code != 0 || !strings.Contains(r.stderr, "does not match its SHA-256 (edited or damaged)") || !strings.Contains(r.stderr, ": fitted;") {
		t.Fatal(r)
	}
	fresh := filepath.Join(dir, "fresh.pt")
	if r := run(t, "", "distill", "../testdata/layouts/lru_64.pt", "--order", "4", "-o", fresh); r.code != 0 {
		t.Fatal(r)
	}
	sameDistilled(t, fresh, out)
}

// TestDistillKeepsTensorTypes: a layer whose tensors come in several element types (a
// StripedHyena filter after the model's to_bfloat16_except_poles_residues: poles and
// residues float32, D bfloat16; testdata/layouts/gen_ckpt.py) is written back in its layout
// with each tensor in its input's type, the manifest says which (tensor_dtypes), and the
// read-back rounds each to its own type: its error counts D's bfloat16 rounding, which its
// module makes on loading. D was written as float32 and checked so: read back within
// 8.9e-6 on a QA model where the module, D rounded to bfloat16, was 3.0e-3 from the fit.
func TestDistillKeepsTensorTypes(t *testing.T) {
	const prefix = "blocks.1.filter."
	out := filepath.Join(t.TempDir(), "out.pt")
	r := run(t, "", "distill", filepath.Join("..", "testdata", "layouts", "stripedhyena_mixed_32.pt"), "--order", "4", "--length", "64", "--to-layout", "stripedhyena", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "layer blocks.1.filter.: written in the input's types where they differ from F32 (D as BF16)") {
		t.Fatalf("%v", r)
	}
	f, err := arrays.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{"poles": "float32", "residues": "float32", "D": "bfloat16", "short_filter_weight": "bfloat16"}
	for _, in := range f.Arrays() {
		if w := want[strings.TrimPrefix(in.Name, prefix)]; in.DType != w {
			t.Errorf("%s written as %s, want %s", in.Name, in.DType, w)
		}
	}
	l := readManifest(t, out).Layers[0]
	if !maps.Equal(l.TensorDTypes, map[string]string{prefix + "D": "BF16"}) || l.DType != "F32" {
		t.Errorf("manifest: dtype %s, tensor_dtypes %v", l.DType, l.TensorDTypes)
	}
	// D's rounding to bfloat16 (2⁻⁹ relative) is counted: far above float32's rounding of
	// the poles and residues, within bfloat16's limit.
	if rb := l.ReadBackError; rb == nil || !(*rb > 1e-5 && *rb < 3e-2) {
		t.Errorf("read_back_error %v, want D's bfloat16 rounding counted", rb)
	}
}

// TestDistillSaysWhatIsFlattened: a checkpoint whose model sits under a key no convention
// names, beside values that are not tensors ({"model_state": …, "epoch": 3, "args": …,
// "best_acc": …}: testdata/layouts/gen_ckpt.py), is written as one flat state_dict of its
// tensors' paths, and distill says so and names what it leaves out; it said nothing, and
// torch.load(OUT)["model_state"] failed. A flat state_dict gets no such note.
func TestDistillSaysWhatIsFlattened(t *testing.T) {
	dir := t.TempDir()
	const note = "note: the input's tensors sit in nested containers: the output holds them as one flat state_dict, each named by its path in the input (a module's load_state_dict wants the path's leading keys taken off); the input's 3 values that are not tensors (epoch, args, best_acc) are not copied\n"
	for in, want := range map[string]bool{"s4d_args_64.pt": true, "s4d_64.pt": false} {
		out := filepath.Join(dir, in)
		r := run(t, "", "distill", filepath.Join("..", "testdata", "layouts", in), "--order", "2", "--length", "64", "--dt-transform", "exp", "-o", out)
		if r.code != 0 || strings.Contains(r.stderr, note) != want || !want && strings.Contains(r.stderr, "nested containers") {
			t.Errorf("%s: want the note %v; got %v", in, want, r)
		}
	}
}

// TestDistillFallbackCountsStableChannels: where the rtf layout does not hold a distilled
// layer because its float32 tensors read back with a stable channel unstable, the note and
// the manifest's why say how many of how many stable channels read back unstable, in a
// sentence: hyena_32 at order 8 said "(1 stable channel in all reads back unstable; …)".
func TestDistillFallbackCountsStableChannels(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.safetensors")
	r := run(t, "", "distill", filepath.Join("..", "testdata", "layouts", "hyena_32.safetensors"), "--order", "8", "-o", out)
	if r.code != 0 {
		t.Fatal(r)
	}
	l := readManifest(t, out).Layers[0]
	stable := 0
	for _, c := range l.Channels {
		if c.Stable {
			stable++
		}
	}
	m := regexp.MustCompile(`\((\d+) of (\d+) stable channels? (reads|read) back unstable; `).FindStringSubmatch(l.Why)
	if l.ToLayout == "rtf" || !strings.HasPrefix(l.Why, "rtf: ") || m == nil {
		t.Fatalf("the premise: a layer the rtf layout does not hold for channels read back unstable, and a count of them; written %s: %q", l.ToLayout, l.Why)
	}
	n, _ := strconv.Atoi(m[1])
	if verb := map[bool]string{true: "reads", false: "read"}[n == 1]; m[2] != strconv.Itoa(stable) || m[3] != verb || !(n >= 1 && n <= stable) {
		t.Errorf("why %q: want n of the %d stable channels, \"%s\"", l.Why, stable, verb)
	}
	if !strings.Contains(r.stderr, l.Why) {
		t.Errorf("the note does not say what the manifest does (%q):\n%s", l.Why, r.stderr)
	}
}

// TestDistillManifestRecordsWhatApplied: a distilled checkpoint's manifest records the
// options as the fits applied them: the default recipe, fitted by variable projection, with
// no optimiser and 0 steps, and --length only where some layer was distilled at it (an S4D
// layer, which records no length), not beside a Hyena layer's own 48. It recorded Adam, 100
// steps and length 1024 for the Hyena layer. A recipe the optimiser trains keeps its settings.
// The spec has no target (it wrote "target": {}, which no fit of a job uses).
func TestDistillManifestRecordsWhatApplied(t *testing.T) {
	dir := t.TempDir()
	lay := func(name string) string { return filepath.Join("..", "testdata", "layouts", name) }
	for _, tc := range []struct {
		in     string
		args   []string
		length int // the options' length the manifest records; 0: none
		steps  int
	}{
		{"hyena_32.safetensors", []string{"--order", "8"}, 0, 0},
		{"s4d_32.safetensors", []string{"--order", "4", "--length", "64"}, 64, 0},
		{"hyena_32.safetensors", []string{"--order", "4", "--init", "zeros", "--steps", "5"}, 0, 5},
	} {
		out := filepath.Join(dir, "out.safetensors")
		if r := run(t, "", append(append([]string{"distill", lay(tc.in)}, tc.args...), "-o", out)...); r.code != 0 {
			t.Fatal(r)
		}
		data, err := os.ReadFile(out + ".manifest.json")
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Options struct {
				Length *int `json:"length"`
				Spec   struct {
					Optimizer *json.RawMessage `json:"optimizer"`
					Steps     *int             `json:"steps"`
					Target    *json.RawMessage `json:"target"`
				} `json:"spec"`
			} `json:"options"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		m := readManifest(t, out)
		o := raw.Options
		for _, l := range m.Layers {
			if tc.length > 0 && l.Length != tc.length || tc.length == 0 && l.Length == 1024 {
				t.Errorf("%s %v: layer %s distilled at length %d", tc.in, tc.args, l.Prefix, l.Length)
			}
		}
		if (o.Length != nil) != (tc.length > 0) || o.Length != nil && *o.Length != tc.length {
			t.Errorf("%s %v: options' length %s, want %d (0: none)", tc.in, tc.args, jsonOrNil(o.Length), tc.length)
		}
		if (o.Spec.Optimizer != nil) != (tc.steps > 0) || o.Spec.Steps == nil || *o.Spec.Steps != tc.steps {
			t.Errorf("%s %v: the spec's optimizer %s, steps %s; want steps %d and an optimizer only with steps", tc.in, tc.args, jsonOrNil(o.Spec.Optimizer), jsonOrNil(o.Spec.Steps), tc.steps)
		}
		if o.Spec.Target != nil {
			t.Errorf("%s %v: the spec's target %s, which no fit uses, want none", tc.in, tc.args, jsonOrNil(o.Spec.Target))
		}
		os.RemoveAll(out + ".work")
	}
}

// jsonOrNil says what a JSON value decoded into v holds, "absent" where it was not there.
func jsonOrNil[T any](v *T) string {
	if v == nil {
		return "absent"
	}
	b, _ := json.Marshal(*v)
	return string(b)
}

// TestDistillManifestSaysHowLayersWereReduced: each layer's record says how it was reduced
// (method), as the options' spec, recorded once for the job, applies whole to the layers
// fitted channel by channel alone: an S5 layer (MIMO) is reduced by balanced truncation, an
// S4D layer of one SSM shared by its channels written back as s4d is fitted on shared modes,
// the same layer written as rtf channel by channel. An S5 layer's record said nothing of
// balanced truncation, beside a spec of the rtf model, the hankel init and 50 refine steps.
func TestDistillManifestSaysHowLayersWereReduced(t *testing.T) {
	dir := t.TempDir()
	lay := func(name string) string { return filepath.Join("..", "testdata", "layouts", name) }
	for i, tc := range []struct {
		in   string
		args []string
		want string
	}{
		{"s5_32.pt", []string{"--order", "4"}, plan.MethodBalancedTruncation},
		{"s4d_64.npz", []string{"--order", "4", "--length", "256", "--to-layout", "s4d"}, plan.MethodSharedModes},
		{"s4d_64.npz", []string{"--order", "4", "--length", "256"}, plan.MethodFit},
	} {
		out := filepath.Join(dir, fmt.Sprintf("out%d.npz", i))
		if r := run(t, "", append(append([]string{"distill", lay(tc.in)}, tc.args...), "-o", out)...); r.code != 0 {
			t.Fatal(r)
		}
		m := readManifest(t, out)
		if len(m.Layers) == 0 {
			t.Fatalf("%s %v: no layer written", tc.in, tc.args)
		}
		for _, l := range m.Layers {
			if l.Method != tc.want {
				t.Errorf("%s %v: layer %s's method %q, want %q", tc.in, tc.args, l.Prefix, l.Method, tc.want)
			}
		}
	}
}

// TestDistillManifestRecordsAutoRadius: a layer fitted under the radius constraint with the
// bound left automatic records the bound its fits chose (train.Report.AutoMaxRadius: that of
// its kernels' length, train.AutoRadius), which the layer's line leaves unsaid at
// train.MinAutoRadius; a layer not fitted by the spec (balanced truncation), or fitted under
// an explicit --max-radius, records none; one fitted without the radius constraint, by
// variable projection, records the bound its poles were kept within all the same. The
// manifest did not say which bound a layer's fit used.
func TestDistillManifestRecordsAutoRadius(t *testing.T) {
	dir := t.TempDir()
	lay := func(name string) string { return filepath.Join("..", "testdata", "layouts", name) }
	for i, tc := range []struct {
		in   string
		args []string
		auto bool
	}{
		{"hyena_32.safetensors", []string{"--order", "4"}, true},
		{"s4d_64.npz", []string{"--order", "4", "--length", "256"}, true},
		{"s4d_64.npz", []string{"--order", "4", "--length", "256", "--max-radius", "0.999"}, false},
		{"s4d_64.npz", []string{"--order", "4", "--length", "256", "--constraint", "none"}, true},
		{"s5_32.pt", []string{"--order", "4"}, false},
	} {
		out := filepath.Join(dir, fmt.Sprintf("out%d.npz", i))
		r := run(t, "", append(append([]string{"distill", lay(tc.in)}, tc.args...), "-o", out)...)
		if r.code != 0 {
			t.Fatal(r)
		}
		m := readManifest(t, out)
		if len(m.Layers) == 0 {
			t.Fatalf("%s %v: no layer written", tc.in, tc.args)
		}
		for _, l := range m.Layers {
			want := 0.0
			if tc.auto {
				want = train.AutoRadius(l.Length)
			}
			if l.AutoMaxRadius != want {
				t.Errorf("%s %v: layer %s (%s, length %d) records auto_max_radius %v, want %v", tc.in, tc.args, l.Prefix, l.Method, l.Length, l.AutoMaxRadius, want)
			}
		}
		data, err := os.ReadFile(out + ".manifest.json")
		if err != nil {
			t.Fatal(err)
		}
		if has := bytes.Contains(data, []byte(`"auto_max_radius"`)); has != tc.auto {
			t.Errorf("%s %v: the manifest has auto_max_radius: %v, want %v", tc.in, tc.args, has, tc.auto)
		}
		if strings.Contains(r.stderr, "radius bound") {
			t.Errorf("%s %v: a layer of short kernels says its radius bound:\n%s", tc.in, tc.args, r.stderr)
		}
	}
}

// TestLayerLineSaysLongKernelsRadius: a layer's line says the radius bound its fits chose
// where it is not train.MinAutoRadius (kernels beyond 10000 samples), and nothing of it for
// short kernels or a bound the spec gave.
func TestLayerLineSaysLongKernelsRadius(t *testing.T) {
	ch := []plan.ChannelRecord{{Channel: 0, Order: 4, Backend: "cpu", ChannelReport: train.ChannelReport{Stable: true}}}
	for _, tc := range []struct {
		length int
		bound  float64
		want   string
	}{
		{32768, train.AutoRadius(32768), "; radius bound " + train.RadiusText(train.AutoRadius(32768)) + " (auto)"},
		{256, train.AutoRadius(256), ""},
		{32768, 0, ""},
	} {
		u := plan.Unit{Prefix: "layers.0.", Length: tc.length}
		line := layerLine(plan.Event{Unit: u, LayerDone: true, Layer: []*plan.UnitResult{{Unit: u, Channels: ch, AutoMaxRadius: tc.bound}}}, len(ch))
		if got := strings.Contains(line, "radius bound"); got != (tc.want != "") || !strings.Contains(line, tc.want) {
			t.Errorf("length %d, bound %v: %q, want it to say %q", tc.length, tc.bound, line, tc.want)
		}
	}
}

// TestMergePartGivenTwice: a part named twice — the same path, spelled otherwise, or through
// a link — is a command-line mistake (exit 2) naming it, refused before any part is read; it
// exited 1 (for real parts, "units in more than one part").
func TestMergePartGivenTwice(t *testing.T) {
	dir := t.TempDir()
	part := writeText(t, dir, "out.safetensors.shard-0-of-2.json", "{}") // never read
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(part, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "out.safetensors.shard-1-of-2.json")
	for _, again := range []string{part, filepath.Join(dir, ".", "sub", "..", filepath.Base(part)), link} {
		r := run(t, "", "merge", part, other, again, "-o", filepath.Join(dir, "out.safetensors"))
		if r.code != ExitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "the part "+again+" is given twice (as "+part+" and "+again+")") {
			t.Errorf("merge %s %s: %v", part, again, r)
		}
	}
	// The help and the scale guide say so (QA: neither did).
	if r := run(t, "", "merge", "--help"); !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "refuses a part given twice") {
		t.Errorf("merge --help does not say that a part given twice is refused:\n%s", r.stdout)
	}
	if b, err := os.ReadFile("../docs/scale.md"); err != nil || !strings.Contains(strings.Join(strings.Fields(string(b)), " "), "A part given twice") {
		t.Errorf("docs/scale.md does not say that a part given twice is refused (%v)", err)
	}
}

// TestDistillRefusesUnheldTensorFirst: a checkpoint holding a tensor that OUT's format cannot
// hold (a complex tensor, which safetensors has no type for) was fitted whole, every unit kept
// in the work directory, and refused only as OUT was written; it is refused before the fits,
// its one line naming the tensor and a format that holds it, nothing left behind.
func TestDistillRefusesUnheldTensorFirst(t *testing.T) {
	infos, data := rawTensorsOf(t, "../testdata/layouts/stripedhyena_32.safetensors")
	infos = append(infos, arrays.RawInfo{Name: "rotary.freqs", DType: "C64", Shape: []int{2}})
	data = append(data, make([]byte, 16))
	dir := t.TempDir()
	ckpt, out := filepath.Join(dir, "model.pt"), filepath.Join(dir, "out.safetensors")
	writeTorchFile(t, ckpt, infos, data)
	r := run(t, "", "distill", ckpt, "--order", "2", "-o", out)
	oneErrorLine(t, r, ExitFailure, out+`: arrays: tensor "rotary.freqs" is complex64, which safetensors cannot hold (the input's tensor, copied as it is); a .pt OUT holds it`)
	for _, p := range []string{out, out + ".work", out + ".manifest.json"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is there: %v", p, err)
		}
	}
	if r := run(t, "", "distill", ckpt, "--order", "2", "-o", filepath.Join(dir, "out.pt")); r.code != 0 {
		t.Errorf("to a .pt OUT: %v", r)
	}
}

// TestDistillFloat16NoteNamesTypes: a float16 layer is written back as float32, and the note
// names both as every listing does; it said "written as F32: ssmlab writes float64, float32
// or bfloat16, not F16", safetensors' spellings in a torch.save file's note.
func TestDistillFloat16NoteNamesTypes(t *testing.T) {
	// float16 bits: 0.5, 0.25, 0.75, 0, 1, -0.25.
	half := func(bits ...uint16) []byte {
		b := make([]byte, 0, 2*len(bits))
		for _, v := range bits {
			b = append(b, byte(v), byte(v>>8))
		}
		return b
	}
	infos := []arrays.RawInfo{
		{Name: "f.poles", DType: "F16", Shape: []int{2, 1, 1, 2}},
		{Name: "f.residues", DType: "F16", Shape: []int{2, 1, 1, 2}},
		{Name: "f.D", DType: "F16", Shape: []int{2}},
	}
	data := [][]byte{half(0x3800, 0x3400, 0x3A00, 0), half(0x3C00, 0xB400, 0x3800, 0x3400), half(0x3400, 0)}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "half.pt")
	writeTorchFile(t, ckpt, infos, data)
	r := run(t, "", "distill", ckpt, "--order", "2", "--length", "64", "-o", filepath.Join(dir, "out.pt"))
	const want = "note: layer f.: written as float32: ssmlab writes float64, float32 or bfloat16, not float16\n"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("want exit 0 and %q; got %v", want, r)
	}
}

// TestDistillComplexInputSaid: an S4D layer whose B and C the input holds as complex tensors
// (a module with complex parameters; import reads them as the real pairs of the layout) is
// written back as real pairs, the reference module's: the note says so, and how such a module
// loads them; nothing said it, and a strict load_state_dict refused the file unexplained.
func TestDistillComplexInputSaid(t *testing.T) {
	infos, data := rawTensorsOf(t, "../testdata/layouts/s4d_32.pt")
	for i, in := range infos {
		// (…, 2) float32 pairs are complex64 elements, byte for byte.
		if (strings.HasSuffix(in.Name, "kernel.B") || strings.HasSuffix(in.Name, "kernel.C")) && in.DType == "F32" {
			infos[i].DType, infos[i].Shape = "C64", in.Shape[:len(in.Shape)-1]
		}
	}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "complex.pt")
	writeTorchFile(t, ckpt, infos, data)
	r := run(t, "", "distill", ckpt, "--order", "2", "--length", "64", "--dt-transform", "exp", "--to-layout", "s4d", "-o", filepath.Join(dir, "out.pt"))
	const want = "the input held kernel.B as complex64, kernel.C as complex64; written as real pairs (…, 2), as torch.view_as_real gives them and the reference module holds them (a module with complex parameters loads them through torch.view_as_complex)"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("want exit 0 and %q; got %v", want, r)
	}
}

// TestDistillSaysRecipeChanged: run again with the recipe changed (by mistake, meant to go on
// where the first stopped), distill fitted every unit anew without a word; it says that the
// work directory's units are of another recipe or input. Run again as it was, or with
// another --chunk (the same recipe: the units of this run are its own), it does not.
func TestDistillSaysRecipeChanged(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.safetensors")
	const note = "none of this run's: fitted from another input or with another recipe (--order, --model, --refine, …), which this run does not take; it fits every unit anew"
	if r := run(t, "", distillModelArgs(out)...); r.code != 0 || strings.Contains(r.stderr, note) {
		t.Fatalf("the first run: %v", r)
	}
	refine := slices.Clone(modelRecipe)
	refine[slices.Index(refine, "--refine")+1] = "6"
	chunk := slices.Clone(modelRecipe)
	chunk[slices.Index(chunk, "--chunk")+1] = "16"
	for _, c := range []struct {
		name   string
		recipe []string
		says   bool
	}{
		{"the same", modelRecipe, false},
		{"--chunk", chunk, false},
		{"--refine", refine, true},
		{"a shard of no units", append(slices.Clone(refine), "--shard", "6/7"), false},
	} {
		args := append(append([]string{"distill", modelCkpt}, c.recipe...), "-o", out)
		kept, _ := filepath.Glob(filepath.Join(out+".work", "unit-*.json"))
		r := run(t, "", args...)
		if r.code != 0 || strings.Contains(r.stderr, note) != c.says {
			t.Errorf("%s: says %q: %v, want %v: %v", c.name, note, !c.says, c.says, r)
		}
		// Every unit there is of the recipe before: the count is the directory's.
		if want := fmt.Sprintf("note: %s.work holds %d units, %s\n", out, len(kept), note); c.name == "--refine" && !strings.Contains(r.stderr, want) {
			t.Errorf("%s: want %q: %v", c.name, want, r)
		}
	}
}

// TestListKeysDocumented: every key import --list prints (of a Lightning checkpoint, whose
// tensors sit under a root, and of others of each container) is named, as `key`, in
// docs/formats.md's paragraph on it; the arrays' keys and the root were named nowhere.
func TestListKeysDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/formats.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "`ssmlab import FILE --list` prints")
	if start < 0 {
		t.Fatal("docs/formats.md does not describe import --list")
	}
	doc = doc[start:]
	doc = doc[:strings.Index(doc, "\n\n")]
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, w := range v {
				seen[k] = true
				if k != "options" { // a layer's options are its flags' names
					walk(w)
				}
			}
		case []any:
			for _, w := range v {
				walk(w)
			}
		}
	}
	for _, f := range []string{"hyena_lightning_32.ckpt", "s4_64.npz", "lru_32.safetensors", "rtf_64.pt"} {
		r := run(t, "", "import", "../testdata/layouts/"+f, "--list")
		var v any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil {
			t.Fatalf("%s: %v", f, r)
		}
		walk(v)
	}
	if !seen["root"] || !seen["supported"] {
		t.Fatalf("the listings lack a root or an array: %v", seen)
	}
	for k := range seen {
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("import --list prints %q, which docs/formats.md's paragraph on it does not name", k)
		}
	}
}

// TestManifestKeysDocumented: every key of the manifests distill writes (a Hyena model
// fitted channel by channel; an LRU layer reduced whole) is named, as `key`, in
// docs/scale.md or docs/formats.md, which a script reading the manifest goes by.
func TestManifestKeysDocumented(t *testing.T) {
	var docs strings.Builder
	for _, f := range []string{"../docs/scale.md", "../docs/formats.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	dir := t.TempDir()
	keys := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, w := range v {
				if _, ok := keys[k]; !ok {
					keys[k] = path + "." + k
				}
				if k != "layout_options" && k != "tensors" && k != "tensor_dtypes" { // their keys are the file's names
					walk(path+"."+k, w)
				}
			}
		case []any:
			for _, w := range v {
				walk(path+"[]", w)
			}
		}
	}
	for _, args := range [][]string{
		distillModelArgs(filepath.Join(dir, "hyena.safetensors")),
		{"distill", "../testdata/layouts/lru_64.pt", "--order", "4", "-o", filepath.Join(dir, "lru.pt")},
	} {
		if r := run(t, "", args...); r.code != 0 {
			t.Fatal(r)
		}
		b, err := os.ReadFile(args[len(args)-1] + ".manifest.json")
		if err != nil {
			t.Fatal(err)
		}
		var m any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		walk("", m)
	}
	for k, where := range keys {
		if !strings.Contains(docs.String(), "`"+k+"`") && !strings.Contains(docs.String(), "`\""+k+"\"") {
			t.Errorf("the manifest's %s is not named in docs/scale.md or docs/formats.md", where)
		}
	}
}

// TestShardLayerLineSaysItsShare: a shard that fits part of a layer says how much of it,
// where "8 channels" read as the size of a layer of 16; a whole run's line is as it was.
func TestShardLayerLineSaysItsShare(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.safetensors")
	r := run(t, "", distillModelArgs(out, "--shard", "0/6")...)
	if r.code != 0 || !regexp.MustCompile(`(?m)^layer \S+: 8 of its 16 channels \(this shard's\), order 6: `).MatchString(r.stderr) {
		t.Errorf("want a layer line of 8 of its 16 channels: %v", r)
	}
	r = run(t, "", distillModelArgs(out)...)
	if r.code != 0 || strings.Contains(r.stderr, "of its") || !strings.Contains(r.stderr, ": 16 channels, order 6: ") {
		t.Errorf("a whole run: %v", r)
	}
}

// TestDistillPtRecordsInManifest: a .pt or .npz file holds no metadata, so a checkpoint
// distilled to one was read back with its rtf layers' trunc_len 0 without a word (and its
// s4d layers warned that the file does not say their dt transform), although the manifest
// beside it records both. The manifest names the file (its SHA-256), and import reads them
// from it, saying so; for a file replaced since, it does not.
func TestDistillPtRecordsInManifest(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join("..", "testdata", "layouts", "s4d_64.npz")
	for _, c := range []struct{ out, to, want string }{
		{"rtf.pt", "rtf", "trunc_len 128 from rtf.pt.manifest.json beside it"},
		{"s4d.npz", "s4d", "dt_transform exp from s4d.npz.manifest.json beside it"},
	} {
		out := filepath.Join(dir, c.out)
		if r := run(t, "", "distill", in, "--order", "2", "--length", "128", "--to-layout", c.to, "-o", out); r.code != 0 {
			t.Fatal(r)
		}
		r := run(t, "", "import", out, "--tensor", "layers.0.layer.")
		if r.code != 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "does not record") {
			t.Errorf("%s: import: %v, want %q", c.out, r, c.want)
		}
		if c.to == "rtf" {
			if r := run(t, "", "import", out, "--list"); r.code != 0 || !strings.Contains(r.stdout, `"trunc-len":"128"`) {
				t.Errorf("%s: import --list: %v, want trunc-len 128", c.out, r)
			}
		}
		// The same name, other bytes: the manifest is not this file's.
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, append(data[:len(data):len(data)], 0), 0o644); err != nil {
			t.Fatal(err)
		}
		r = run(t, "", "import", out, "--tensor", "layers.0.layer.")
		if strings.Contains(r.stderr, "manifest.json beside it") || c.to == "rtf" && !strings.Contains(r.stderr, "trunc_len 0: a torch file records none, and no manifest of distill's beside it") {
			t.Errorf("%s changed: import: %v", c.out, r)
		}
	}
	// export to .npz or .pt writes no manifest: it says what the file does not record.
	item := filepath.Join(dir, "item.json")
	if r := run(t, "", "import", filepath.Join(dir, "rtf.pt"), "-o", item); r.code != 0 {
		t.Fatal(r)
	}
	if r := run(t, "", "export", item, "--layout", "rtf", "--trunc-len", "64", "-o", filepath.Join(dir, "e.npz")); r.code != 0 || !strings.Contains(r.stderr, "note: a .npz file records no trunc_len: import it with --trunc-len 64") {
		t.Errorf("export: %v", r)
	}
	if r := run(t, "", "export", item, "--layout", "s4d", "--dt-transform", "softplus", "-o", filepath.Join(dir, "e.pt")); r.code != 0 || !strings.Contains(r.stderr, "note: a .pt file records no dt transform: import it with --dt-transform softplus") {
		t.Errorf("export: %v", r)
	}
}

// TestMergeSaysWorkDirKept: merge's summary, as distill's, ends by saying that the shards'
// work directory stays (OUT.work beside their parts, where it exists), what for and that it
// can go; merge said nothing of it. A work directory removed, or elsewhere (--work-dir, which
// the parts do not record), is not named.
func TestMergeSaysWorkDirKept(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "lru.pt")
	var parts []string
	for i := range 2 {
		sh := strconv.Itoa(i) + "/2"
		if r := run(t, "", "distill", "../testdata/layouts/lru_64.pt", "--order", "4", "--shard", sh, "-o", out); r.code != 0 {
			t.Fatal(r)
		}
		parts = append(parts, out+".shard-"+strconv.Itoa(i)+"-of-2.json")
	}
	lastLine := func(r result) string {
		lines := strings.SplitAfter(r.stderr, "\n")
		return lines[len(lines)-2]
	}
	for _, o := range []string{out, filepath.Join(dir, "elsewhere.pt")} {
		r := run(t, "", append(append([]string{"merge"}, parts...), "-o", o)...)
		want := "; the units the shards fitted stay in " + out + ".work (the shards run again take them from there), which can be removed\n"
		if last := lastLine(r); r.code != 0 || !strings.HasPrefix(last, "wrote "+o+" ") || !strings.HasSuffix(last, want) {
			t.Errorf("merge -o %s: want the last line to end %q; got %v", o, want, r)
		}
	}
	if err := os.RemoveAll(out + ".work"); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", append(append([]string{"merge"}, parts...), "-o", out)...)
	if last := lastLine(r); r.code != 0 || strings.Contains(last, "stay in") {
		t.Errorf("merge with the work directory removed: %v", r)
	}
}

// rawTensorsOf returns the tensors of a model file as stored, what arrays.WriteRaw writes back.
func rawTensorsOf(t *testing.T, path string) ([]arrays.RawInfo, [][]byte) {
	t.Helper()
	src, err := arrays.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	infos, err := src.RawInfos()
	if err != nil {
		t.Fatal(err)
	}
	data := make([][]byte, len(infos))
	for i, in := range infos {
		if data[i], err = src.ReadRaw(in.Name); err != nil {
			t.Fatal(err)
		}
	}
	return infos, data
}

// writeTorchFile writes tensors as stored into a torch.save file at path.
func writeTorchFile(t *testing.T, path string, infos []arrays.RawInfo, data [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := arrays.WriteRaw(&buf, arrays.FormatTorch, infos, arrays.RawOptions{}, func(i int) ([]byte, error) { return data[i], nil }); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
