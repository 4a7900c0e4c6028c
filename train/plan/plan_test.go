package plan

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/train"
)

func TestUnitsEvenChunks(t *testing.T) {
	us, err := Units([]Layer{{Prefix: "a.", Channels: 100, Length: 64}, {Prefix: "b.", Channels: 64, Length: 32}, {Prefix: "c.", Channels: 3, Length: 16},
		{Prefix: "d.", Channels: 200, Length: 16, Shared: true}, {Prefix: "e.", Channels: 300, Length: 16, MIMO: true}}, 8, 64)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, u := range us {
		ids = append(ids, u.ID())
	}
	// A layer of shared modes is one unit, whatever the chunk, and so is a MIMO layer.
	want := []string{"a.[0:50]", "a.[50:100]", "b.[0:64]", "c.[0:3]", "d.[0:200]", "e.[0:300]"}
	if !slices.Equal(ids, want) {
		t.Fatalf("units %v, want %v", ids, want)
	}
	if !us[4].Shared || us[0].Shared {
		t.Errorf("shared: %v and %v, want true for d. only", us[4].Shared, us[0].Shared)
	}
	if !us[5].MIMO || us[4].MIMO || us[5].Shared {
		t.Errorf("MIMO: %v and %v, want true for e. only", us[5].MIMO, us[4].MIMO)
	}
	if c := us[0].Cost(); c != 50*64*8 {
		t.Errorf("cost %v, want %v", c, 50*64*8)
	}
	if _, err := Units([]Layer{{Prefix: "a.", Channels: 4, Length: 8}, {Prefix: "a.", Channels: 4, Length: 8}}, 4, 2); !errors.Is(err, ErrInvalid) {
		t.Errorf("a layer twice: %v", err)
	}
	if _, err := Units([]Layer{{Prefix: "a.", Channels: 4, Length: 8}}, 4, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("chunk 0: %v", err)
	}
}

func randomUnits(seed uint64) []Unit {
	rng := rand.New(rand.NewPCG(seed, 1))
	var layers []Layer
	for i := range 1 + rng.IntN(12) {
		layers = append(layers, Layer{Prefix: "layers." + string(rune('a'+i)) + ".", Channels: 1 + rng.IntN(300), Length: 1 << (4 + rng.IntN(8))})
	}
	us, err := Units(layers, 1+rng.IntN(64), 1+rng.IntN(64))
	if err != nil {
		panic(err)
	}
	return us
}

// Every unit goes to exactly one shard, and no shard holds more than the fair share plus
// the costliest unit (the bound of greedy list scheduling).
func TestAssignCoversAndBalances(t *testing.T) {
	for seed := range uint64(200) {
		us := randomUnits(seed)
		n := 1 + int(seed%9)
		shards := Assign(us, n)
		var total, most float64
		for _, u := range us {
			total += u.Cost()
			most = max(most, u.Cost())
		}
		parts := make([][]string, n)
		for s, idx := range shards {
			if !slices.IsSorted(idx) {
				t.Fatalf("seed %d: shard %d's units out of order: %v", seed, s, idx)
			}
			var load float64
			for _, i := range idx {
				load += us[i].Cost()
				parts[s] = append(parts[s], us[i].ID())
			}
			if load > total/float64(n)+most {
				t.Fatalf("seed %d: shard %d of %d holds %v, above the fair share %v plus %v", seed, s, n, load, total/float64(n), most)
			}
		}
		if err := Coverage(us, parts); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if again := Assign(us, n); !reflect.DeepEqual(again, shards) {
			t.Fatalf("seed %d: Assign is not deterministic", seed)
		}
	}
}

func TestCoverageNamesUnits(t *testing.T) {
	us, _ := Units([]Layer{{Prefix: "l0.", Channels: 8, Length: 16}, {Prefix: "l1.", Channels: 8, Length: 16}}, 4, 4)
	err := Coverage(us, [][]string{{"l0.[0:4]", "l0.[4:8]"}, {"l0.[4:8]", "l1.[0:4]", "x.[0:1]"}})
	var ce *CoverageError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v", err)
	}
	if !slices.Equal(ce.Missing, []string{"l1.[4:8]"}) || !slices.Equal(ce.Doubled, []string{"l0.[4:8]"}) || !slices.Equal(ce.Unknown, []string{"x.[0:1]"}) {
		t.Fatalf("got %+v", ce)
	}
	for _, s := range []string{"1 unit missing: l1.[4:8]", "in more than one part: l0.[4:8]", "not in the plan: x.[0:1]"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/1": {0, 1}, "2/3": {2, 3}, " 1 / 4 ": {1, 4}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"3/3", "-1/2", "1", "a/b", "0/0", "1/2/3"} {
		// The message says what is wrong with the shard alone, not "invalid plan: …".
		if _, err := ParseShard(in); !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "invalid plan") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name  string
		env   func(string) string
		count int
		want  Shard
		ok    bool
		err   string
	}{
		{"none", env(), 0, Shard{}, false, ""},
		{"slurm 0-based", env(EnvSlurmTaskID, "2", EnvSlurmTaskCount, "4", EnvSlurmTaskMin, "0"), 0, Shard{2, 4}, true, ""},
		{"slurm 1-based", env(EnvSlurmTaskID, "4", EnvSlurmTaskCount, "4", EnvSlurmTaskMin, "1"), 0, Shard{3, 4}, true, ""},
		{"slurm step", env(EnvSlurmTaskID, "14", EnvSlurmTaskCount, "3", EnvSlurmTaskMin, "10", EnvSlurmTaskStep, "2"), 3, Shard{2, 3}, true, ""},
		{"slurm count disagrees", env(EnvSlurmTaskID, "0", EnvSlurmTaskCount, "4"), 3, Shard{}, false, "3 shards asked for"},
		{"slurm gaps", env(EnvSlurmTaskID, "5", EnvSlurmTaskCount, "3", EnvSlurmTaskMin, "0"), 0, Shard{}, false, "gaps"},
		{"slurm no count", env(EnvSlurmTaskID, "1"), 0, Shard{}, false, "not SLURM_ARRAY_TASK_COUNT"},
		// sbatch --array=2 running task 2 of 3 again: it was taken as shard 0/1, the whole job
		// (QA F2); task 0 again is no different from a job of one shard.
		{"slurm one task again", env(EnvSlurmTaskID, "2", EnvSlurmTaskCount, "1", EnvSlurmTaskMin, "2", "SLURM_ARRAY_TASK_MAX", "2"), 0, Shard{}, false, "give --shard 2/N"},
		{"slurm task 0 again", env(EnvSlurmTaskID, "0", EnvSlurmTaskCount, "1", EnvSlurmTaskMin, "0"), 0, Shard{}, false, "--shard 0/1 for the whole job"},
		{"slurm one task, count given", env(EnvSlurmTaskID, "2", EnvSlurmTaskCount, "1", EnvSlurmTaskMin, "2"), 3, Shard{}, false, "give --shard 2/N"},
		// Task 2 of --array=1-3 is shard 1: its place from the array's first, which a one-task
		// array's environment does not hold; the advice gave 2/N alone.
		{"slurm one task, numbered from 1", env(EnvSlurmTaskID, "2", EnvSlurmTaskCount, "1", EnvSlurmTaskMin, "2"), 0, Shard{}, false, "1/N for one from 1"},
		{"k8s", env(EnvK8sIndex, "1"), 3, Shard{1, 3}, true, ""},
		{"k8s no count", env(EnvK8sIndex, "1"), 0, Shard{}, false, "number of shards"},
		{"k8s beyond", env(EnvK8sIndex, "3"), 3, Shard{}, false, "counts from 0 to 2"},
		{"k8s junk", env(EnvK8sIndex, "x"), 3, Shard{}, false, "not a whole number"},
	}
	for _, c := range cases {
		got, _, ok, err := FromEnv(c.env, c.count)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNoShardCount) {
				t.Errorf("%s: %v is not ErrInvalid", c.name, err)
			}
			continue
		}
		if err != nil || ok != c.ok || got != c.want {
			t.Errorf("%s: %v %v %v, want %v %v", c.name, got, ok, err, c.want, c.ok)
		}
	}
}

func TestPattern(t *testing.T) {
	p, err := ParsePattern("backbone.layers.[01].mixer.filter_fn, blocks.*.filter.")
	if err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string]bool{
		"backbone.layers.0.mixer.filter_fn.": true, "backbone.layers.2.mixer.filter_fn.": false,
		"blocks.7.filter.": true, "blocks.7.filter.x.": false,
	} {
		if p.Match(prefix) != want {
			t.Errorf("%q: %v, want %v", prefix, !want, want)
		}
	}
	if got := p.Unmatched([]string{"backbone.layers.1.mixer.filter_fn.", "blocks.2.filter."}); len(got) != 0 {
		t.Errorf("Unmatched: %q, want none", got)
	}
	if got := p.Unmatched([]string{"blocks.2.filter."}); !slices.Equal(got, []string{"backbone.layers.[01].mixer.filter_fn"}) {
		t.Errorf("Unmatched: %q, want the first item", got)
	}
	if _, err := ParsePattern("a,,b"); err == nil {
		t.Error("an empty item was accepted")
	}
	if _, err := ParsePattern("[a"); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

// kernels is a Source of decaying resonances, counting the kernels it was asked for.
type kernels struct{ asked map[string]int }

func (k *kernels) Kernels(u Unit) ([][]float64, error) {
	if k.asked == nil {
		k.asked = map[string]int{}
	}
	k.asked[u.ID()]++
	out := make([][]float64, u.Channels())
	for c := range out {
		ch := u.Lo + c + len(u.Prefix)
		out[c] = make([]float64, u.Length)
		for t := range out[c] {
			out[c][t] = math.Pow(0.8+0.01*float64(ch%10), float64(t)) * math.Cos(0.3*float64(t*(1+ch%3)))
		}
	}
	return out, nil
}

type memStore map[string]*UnitResult

func (m memStore) Load(u Unit) (*UnitResult, error) { return m[u.ID()], nil }
func (m memStore) Save(r *UnitResult) error         { m[r.Unit.ID()] = r; return nil }

func smallFit() Fit {
	s := train.DefaultSpec()
	s.Steps, s.Refine = 20, 2
	return Fit{Spec: s, Backend: train.CPU{}}
}

// Units fitted by three shards equal the units fitted by one run; units the store holds are
// not fitted again.
func TestExecuteShardsAndResume(t *testing.T) {
	us, err := Units([]Layer{{Prefix: "l0.", Channels: 5, Length: 64}, {Prefix: "l1.", Channels: 3, Length: 64}}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	whole := memStore{}
	var layersDone []string
	res, err := Execute(ctx, smallFit(), us, &kernels{}, whole, func(e Event) {
		if e.LayerDone {
			layersDone = append(layersDone, e.Unit.Prefix)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(layersDone, []string{"l0.", "l1."}) {
		t.Errorf("layers done %v", layersDone)
	}
	for i, r := range res {
		if r.Unit != us[i] || len(r.Filters) != us[i].Channels() || r.Channels[0].Channel != us[i].Lo {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	split := memStore{}
	for s := range 3 {
		if _, err := Execute(ctx, smallFit(), Of(us, Shard{s, 3}), &kernels{}, split, nil); err != nil {
			t.Fatal(err)
		}
	}
	for id, r := range whole {
		if !reflect.DeepEqual(r.Filters, split[id].Filters) {
			t.Errorf("%s: the shards' fit differs from the single run's", id)
		}
	}
	src := &kernels{}
	partial := memStore{us[0].ID(): whole[us[0].ID()]}
	var resumed []string
	if _, err := Execute(ctx, smallFit(), us, src, partial, func(e Event) {
		if e.Resumed {
			resumed = append(resumed, e.Unit.ID())
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resumed, []string{us[0].ID()}) || src.asked[us[0].ID()] != 0 || src.asked[us[1].ID()] != 1 {
		t.Errorf("resumed %v, kernels asked %v", resumed, src.asked)
	}
}

func TestExecuteCancelled(t *testing.T) {
	us, _ := Units([]Layer{{Prefix: "l0.", Channels: 2, Length: 64}}, 2, 1)
	ctx, cancel := context.WithCancel(context.Background())
	store := memStore{}
	_, err := Execute(ctx, smallFit(), us, &kernels{}, store, func(e Event) {
		if e.Result != nil {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || len(store) != 1 {
		t.Fatalf("err %v, %d units saved", err, len(store))
	}
}

func TestExecuteAutoOrder(t *testing.T) {
	us, _ := Units([]Layer{{Prefix: "l0.", Channels: 4, Length: 128}}, 16, 4)
	f := smallFit()
	f.Tol, f.MaxOrder = 1e-3, 16
	f.Auto = true
	res, err := Execute(context.Background(), f, us, &kernels{}, memStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res[0].Channels {
		// Each kernel is a damped cosine: order 2 holds it exactly.
		if c.Order != 2 || !(c.RelError < 1e-3) {
			t.Errorf("channel %d: order %d, rel error %g", c.Channel, c.Order, c.RelError)
		}
	}
}

// FuzzParseShard: a shard parsed is a share of a job and reads back from its String.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "2/3", " 1 / 4 ", "3/3", "-1/2", "x", "1/2/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: an error that is not ErrInvalid: %v", s, err)
			}
			return
		}
		if sh.Check() != nil {
			t.Fatalf("%q parsed to %v, not a share", s, sh)
		}
		if again, err := ParseShard(sh.String()); err != nil || again != sh {
			t.Fatalf("%q → %v → %v, %v", s, sh, again, err)
		}
	})
}

// TestExecuteLayerPoles: a layer's poles (an S4D layer with is_real: positive) are those of
// its units' fits where the recipe fits by variable projection, whatever the others'; the
// damped cosines here fit with complex poles otherwise. Another recipe fits as ever (its
// fit then goes to a layout that holds it).
func TestExecuteLayerPoles(t *testing.T) {
	us, err := Units([]Layer{{Prefix: "l0.", Channels: 2, Length: 64, Poles: train.PolesPositive}, {Prefix: "l1.", Channels: 2, Length: 64}}, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), smallFit(), us, &kernels{}, memStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		complexPoles := 0
		for c, f := range r.Filters {
			d, ok := f.(*filters.Diagonal)
			if !ok {
				t.Fatalf("%s, channel %d: a %s filter, want diagonal", r.Unit.ID(), c, f.Form())
			}
			for _, p := range d.Poles {
				if imag(p) != 0 {
					complexPoles++
				} else if i == 0 && !(real(p) > 0 && real(p) < 1) {
					t.Errorf("%s, channel %d: pole %v outside (0, 1)", r.Unit.ID(), c, p)
				}
			}
		}
		if (complexPoles == 0) != (us[i].Poles == train.PolesPositive) {
			t.Errorf("%s (poles %q): %d complex poles", r.Unit.ID(), us[i].Poles, complexPoles)
		}
	}
	f := smallFit()
	f.Spec.Init = train.InitZeros
	if _, err := Execute(context.Background(), f, us[:1], &kernels{}, memStore{}, nil); err != nil {
		t.Errorf("zeros init: %v", err)
	}
}

// TestWrittenErrorBounds: for a target t, a fit f and a filter written w, measured as distill
// measures them (RelError ‖f − t‖/‖t‖, ReadBackError ‖w − f‖/‖f‖), WrittenError bounds
// ‖w − t‖/‖t‖, and is reached where the two errors point the same way.
func TestWrittenErrorBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rel := func(a, b []float64) float64 { return floats.Distance(a, b, 2) / floats.Norm(b, 2) }
	const n = 16
	for trial := range 200 {
		tg, e1, e2 := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			tg[i], e1[i], e2[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		if trial%2 == 0 {
			copy(e1, tg) // both errors along t: the bound is reached
			copy(e2, tg)
		}
		f := floats.AddScaledTo(make([]float64, n), tg, math.Pow(10, -4*rng.Float64()), e1)
		w := floats.AddScaledTo(make([]float64, n), f, math.Pow(10, -4*rng.Float64()), e2)
		rb := rel(w, f)
		c := ChannelRecord{ChannelReport: train.ChannelReport{RelError: rel(f, tg)}, ReadBackError: &rb}
		bound, ok := c.WrittenError()
		got := rel(w, tg)
		if !ok || !(got <= bound*(1+1e-12)) || (trial%2 == 0 && !(got >= bound*(1-1e-12))) {
			t.Errorf("trial %d: written %.6g from the target, bound %.6g (%v)", trial, got, bound, ok)
		}
	}
	if _, ok := (ChannelRecord{}).WrittenError(); ok {
		t.Error("a channel without a read-back error has a bound")
	}
}

// TestSharedChannelReportMSE: a shared fit's channel report gives the MSE of the deployed
// filter's response against the kernel, train.MSE, for a zero kernel too: rel²·‖y‖²/L gave 0
// there whatever the response, where the relative error (RelDiff of a zero target) is the
// response's norm. For a nonzero kernel both agree to rounding.
func TestSharedChannelReportMSE(t *testing.T) {
	const length = 32
	d, err := filters.NewDiagonalRealPart([]complex128{complex(0.5, 0.3), 0.8}, []complex128{complex(0.2, -0.1), 0.4}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	k := d.Impulse(length)
	for _, tc := range []struct {
		name string
		y    []float64
	}{
		{"zero kernel", make([]float64, length)},
		{"nonzero kernel", floats.ScaleTo(make([]float64, length), 0.9, k)},
	} {
		rel := filters.RelDiff(tc.y, k)
		var want float64
		for i := range k {
			want += (k[i] - tc.y[i]) * (k[i] - tc.y[i])
		}
		want /= length
		rep := sharedChannelReport(tc.y, d, rel, 4)
		if !(want > 0) || math.Abs(rep.MSE-want) > 1e-14*want || rep.RelError != rel {
			t.Errorf("%s: MSE %g, relative error %g; want %g, %g", tc.name, rep.MSE, rep.RelError, want, rel)
		}
	}
}
