package filters

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// ringSystem has all poles on |z| = rho at random angles behind a random orthogonal basis, as
// a trained S4D or LRU layer does: the hard case for the transfer-function form.
func ringSystem(rng *rand.Rand, n int, rho float64) *Dense {
	var us [][]float64
	for k := n; k >= 2; k-- {
		us = append(us, randVec(rng, k))
	}
	blocks := make([]RotationBlock, n/2)
	for i := range blocks {
		blocks[i] = RotationBlock{Radius: rho, Angle: rng.Float64() * math.Pi}
	}
	r, err := NewRotationFromHouseholder(us, blocks, nil, randVec(rng, n), randVec(rng, n), rng.NormFloat64())
	if err != nil {
		panic(err)
	}
	return r.Dense()
}

// TestConversionAccuracyTable measures the worst impulse error (512 samples) of every route
// from the dense form, over random stable systems (A = G/√n scaled to ρ = 0.9) and ring
// systems of growing order, prints the tables quoted in the README
// (go test ./filters -run AccuracyTable -v), and checks that each result is within 1e-6 or
// carries a warning.
func TestConversionAccuracyTable(t *testing.T) {
	accuracyTable(t, "random", randomStable)
	accuracyTable(t, "ring", ringSystem)
}

func accuracyTable(t *testing.T, family string, gen func(*rand.Rand, int, float64) *Dense) {
	orders := []int{16, 64, 128, 256}
	if testing.Short() {
		orders = orders[:2]
	}
	worst := map[Form]map[int]float64{}
	for _, to := range Forms {
		worst[to] = map[int]float64{}
	}
	for _, n := range orders {
		for seed := uint64(1); seed <= 2; seed++ {
			rng := rand.New(rand.NewPCG(seed, 1000+uint64(n)))
			orig := gen(rng, n, 0.9)
			want := orig.Impulse(512)
			for _, to := range Forms {
				out, rep, err := Convert(orig, to)
				if err != nil {
					t.Errorf("%s n=%d dense → %s: %v", family, n, to, err)
					continue
				}
				e := relErr(out.Impulse(512), want)
				worst[to][n] = math.Max(worst[to][n], e)
				if e > 1e-6 && len(rep.Warnings) == 0 {
					t.Errorf("%s n=%d dense → %s: error %.3g without a warning", family, n, to, e)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s systems, worst of 2 seeds:\n| dense → | %s |\n|---|%s\n", family, joinInts(orders, " | n = "), strings.Repeat("---|", len(orders)))
	for _, to := range Forms {
		fmt.Fprintf(&b, "| %s |", to)
		for _, n := range orders {
			fmt.Fprintf(&b, " %.1e |", worst[to][n])
		}
		b.WriteString("\n")
	}
	t.Log("\n" + b.String())
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return "n = " + strings.Join(s, sep)
}

// TestConditioned: the conversions without a step that can lose digits (a copy, the modal
// forms' realisations, the eigenvalues of a block-diagonal form) say so, with a condition of
// 1; the others have a condition number and say what it is of.
func TestConditioned(t *testing.T) {
	d, err := NewDiagonal([]complex128{0.5 + 0.5i, 0.5 - 0.5i, 0.3}, []complex128{1, 1, 2}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	tf, _, err := Convert(d, FormTF)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    Filter
		to   Form
		want bool
	}{
		{d, FormDense, false}, {d, FormRotation, false}, {d, FormZPK, false}, {d, FormDiagonal, false},
		{d, FormTF, true}, {tf, FormZPK, true}, {tf, FormDiagonal, true},
	} {
		_, rep, err := Convert(tc.f, tc.to)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Conditioned != tc.want || !tc.want && (rep.Condition != 1 || !strings.HasPrefix(rep.ConditionOf, "none (")) || rep.ConditionOf == "" {
			t.Errorf("%s → %s: Conditioned %v, condition %g of %q; want %v", rep.From, rep.To, rep.Conditioned, rep.Condition, rep.ConditionOf, tc.want)
		}
	}
}

// TestReportJSONWithoutConditioned reads reports written before "conditioned" was a field
// (ssmlab convert --report at 3052f58^, the encoding the workbench saved in sessions): the
// flag comes from condition_of, as it did then, so the conditioned one keeps its condition.
func TestReportJSONWithoutConditioned(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{`{
  "from": "zpk",
  "to": "diagonal",
  "condition": 3.997839651410337,
  "condition_of": "the modal sum (Σ|rᵢ|·‖λᵢᵗ‖ / ‖h‖: repeated or close poles cancel)",
  "rel_error": 5.908945408127971e-16,
  "length": 268
}`, true},
		{`{
  "from": "diagonal",
  "to": "rotation",
  "condition": 1,
  "condition_of": "none (orthogonal P = I)",
  "rel_error": 2.220446049250313e-16,
  "length": 268
}`, false},
	} {
		var rep Report
		if err := json.Unmarshal([]byte(tc.data), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Conditioned != tc.want || rep.From == "" || rep.Length != 268 || rep.Condition == 0 {
			t.Errorf("%s → %s (%q): Conditioned %v, want %v; read %+v", rep.From, rep.To, rep.ConditionOf, rep.Conditioned, tc.want, rep)
		}
		// inside another value, as a session's UI state holds reports
		var m map[string]Report
		if err := json.Unmarshal([]byte(`{"item": `+tc.data+`}`), &m); err != nil || !reflect.DeepEqual(m["item"], rep) {
			t.Errorf("in a map: %+v (%v), want %+v", m["item"], err, rep)
		}
	}
}

// TestReportJSONRoundTrip: a report with the field reads back as written, the field taking
// precedence over condition_of, and null leaves a report as it was.
func TestReportJSONRoundTrip(t *testing.T) {
	d, err := NewDiagonal([]complex128{0.5 + 0.5i, 0.5 - 0.5i, 0.3}, []complex128{1, 1, 2}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	var reps []Report
	for _, to := range []Form{FormRotation, FormTF, FormDense} {
		_, rep, err := Convert(d, to)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	// the field against what condition_of alone would say, both ways
	reps = append(reps,
		Report{From: FormTF, To: FormZPK, Condition: 2, ConditionOf: "none (a message that reads unconditioned)", Conditioned: true, Warnings: []string{"w"}},
		Report{From: FormTF, To: FormZPK, Condition: 1, ConditionOf: "something", Conditioned: false, BecameUnstable: true})
	for _, rep := range reps {
		data, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"conditioned":`) {
			t.Errorf("%s has no conditioned field", data)
		}
		var got Report
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, rep) {
			t.Errorf("%s read back as %+v, want %+v", data, got, rep)
		}
		if err := json.Unmarshal([]byte("null"), &got); err != nil || !reflect.DeepEqual(got, rep) {
			t.Errorf("null changed the report to %+v (%v)", got, err)
		}
	}
}
