package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// TestBanks runs every bank function on a bank of 13 channels and compares each channel with
// the single-filter function (run with -race: the channels share nothing).
func TestBanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	chans := make([]filters.Filter, 13)
	for i := range chans {
		d, _, err := filters.ToDiagonal(randomStable(rng, 6, 0.9))
		if err != nil {
			t.Fatal(err)
		}
		chans[i] = d
	}
	b, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	w := LinearGrid(33)
	for _, m := range Methods {
		hs, err := ImpulseBank(b, 9000, m) // long enough for the scan to split time
		if err != nil {
			t.Fatal(err)
		}
		ss, err := StepBank(b, 100, m)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range chans {
			want, _ := Impulse(nil, f, 9000, m)
			if e := relErr(hs[i], want); e > 1e-15 {
				t.Errorf("%s channel %d: %.3g", m, i, e)
			}
			wantS, _ := Step(nil, f, 100, m)
			if e := relErr(ss[i], wantS); e > 1e-15 {
				t.Errorf("%s step channel %d: %.3g", m, i, e)
			}
		}
	}
	rs, err := FreqResponseBank(b, w)
	if err != nil {
		t.Fatal(err)
	}
	gds, err := GroupDelayBank(b, w)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := AnalyzeBank(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	h2s, err := H2Bank(b)
	if err != nil {
		t.Fatal(err)
	}
	hsvs, err := HankelSVBank(b)
	if err != nil {
		t.Fatal(err)
	}
	reds, err := BalancedTruncationBank(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	mins, reps, err := MinimalBank(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range chans {
		if e := relErrC(rs[i].H, FreqResponse(f, w).H); e != 0 {
			t.Errorf("channel %d: H %.3g", i, e)
		}
		g, _ := GroupDelayOf(f, w)
		if e := relErr(gds[i].Tau, g.Tau); e != 0 {
			t.Errorf("channel %d: τ %.3g", i, e)
		}
		p, _ := Analyze(f, 0)
		if ps[i].Memory != p.Memory || ps[i].SpectralRadius != p.SpectralRadius {
			t.Errorf("channel %d: properties differ", i)
		}
		h2, _ := H2(f)
		if h2s[i] != h2 {
			t.Errorf("channel %d: H2 %v vs %v", i, h2s[i], h2)
		}
		hs, _ := HankelSV(f)
		if relErr(hsvs[i].Values, hs.Values) > 1e-15 {
			t.Errorf("channel %d: HSV differ", i)
		}
		if reds[i].Order != 3 || mins[i].Order() != 6 || reps[i].Order != 6 {
			t.Errorf("channel %d: reduced order %d, minimal %d", i, reds[i].Order, mins[i].Order())
		}
	}
	// A failing channel is named; nothing else is returned.
	bad := append([]filters.Filter(nil), chans...)
	un, _ := filters.NewDiagonal([]complex128{1.5}, []complex128{1}, 0)
	bad[7] = un
	bb, err := filters.NewBank(bad)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := H2Bank(bb); v != nil || err == nil || !strings.HasPrefix(err.Error(), "channel 7: H2 norm") {
		t.Errorf("H2Bank with an unstable channel: %v, %v", v, err)
	}
	if _, err := ImpulseBank(bb, 2000, Recurrence); err == nil || !strings.HasPrefix(err.Error(), "channel 7: impulse[") {
		t.Errorf("ImpulseBank overflow: %v", err)
	}
	if v, err := MapBank(bb, func(f filters.Filter) (float64, error) { return math.Abs(real(f.FreqResponse([]float64{0})[0])), nil }); err != nil || len(v) != 13 {
		t.Errorf("MapBank: %v %v", v, err)
	}
}
