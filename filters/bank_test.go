package filters

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestConvertBank(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	var ch []Filter
	for i := 0; i < 9; i++ {
		ch = append(ch, randomStable(rng, 1+i%5, 0.8))
	}
	bank, err := NewBank(ch)
	if err != nil {
		t.Fatal(err)
	}
	out, reps, err := ConvertBank(bank, FormTF)
	if err != nil {
		t.Fatal(err)
	}
	if out.Form() != FormTF || len(out.Channels) != len(ch) || len(reps) != len(ch) {
		t.Fatalf("got %d channels of %s", len(out.Channels), out.Form())
	}
	for i, c := range out.Channels {
		if e := relErr(c.Impulse(256), ch[i].Impulse(256)); e > 1e-12 || reps[i].From != FormDense {
			t.Errorf("channel %d: error %.3g, report %+v", i, e, reps[i])
		}
	}
	// One defective channel fails the whole bank, naming the channel.
	ch[4] = mustDense(t, [][]float64{{0.5, 1}, {0, 0.5}}, []float64{0, 1}, []float64{1, 0}, 0)
	bank, _ = NewBank(ch)
	if _, _, err := ConvertBank(bank, FormDiagonal); !errors.Is(err, ErrDefective) || err.Error()[:9] != "channel 4" {
		t.Errorf("got %v, want channel 4's ErrDefective", err)
	}
}
