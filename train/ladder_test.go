package train

import (
	"math"
	"testing"
)

// TestRungTallyProgress: the progress of a variable-projection job, whose channels fit their
// orders in turn, gives the error and loss of the channels at the highest order any has
// fitted. It gave the worst of every channel's latest fit, which jumped from channel 0's
// order-16 error to channel 1's order-4 error (here 0.01 → 0.7) when channel 1 began: a
// regression to the eye. The errors are made up; a channel's never rises with the order.
func TestRungTallyProgress(t *testing.T) {
	orders := []int{4, 8, 16}
	rel := [][]float64{{0.5, 0.1, 0.01}, {0.7, 0.2, 0.02}, {0.3, 0.05, 0.005}}
	type want struct {
		order, fitted int
		err, loss     float64
	}
	var got []want
	tally := newRungTally(len(rel))
	for ch, errs := range rel { // one worker: channel after channel
		for _, e := range errs {
			tally.add(ch, e)
			p := tally.progress(orders)
			if p.TopOrder != 16 || p.Channels != 3 {
				t.Fatalf("top order %d, channels %d", p.TopOrder, p.Channels)
			}
			got = append(got, want{p.Order, p.Fitted, p.RelError, p.Loss})
		}
	}
	sq := func(v ...float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		return s / float64(len(v))
	}
	expect := []want{
		{4, 1, 0.5, sq(0.5)}, {8, 1, 0.1, sq(0.1)}, {16, 1, 0.01, sq(0.01)},
		// channel 1's orders 4 and 8 leave order 16's figures as they were
		{16, 1, 0.01, sq(0.01)}, {16, 1, 0.01, sq(0.01)}, {16, 2, 0.02, sq(0.01, 0.02)},
		{16, 2, 0.02, sq(0.01, 0.02)}, {16, 2, 0.02, sq(0.01, 0.02)}, {16, 3, 0.02, sq(0.01, 0.02, 0.005)},
	}
	for i, w := range expect {
		g := got[i]
		if g.order != w.order || g.fitted != w.fitted || g.err != w.err || math.Abs(g.loss-w.loss) > 1e-15*w.loss {
			t.Errorf("event %d: order %d, %d channels, error %g, loss %g; want %+v", i, g.order, g.fitted, g.err, g.loss, w)
		}
	}

	// Two workers: channels 0 and 1 interleave; the error falls when the order rises.
	tally = newRungTally(2)
	prev := math.Inf(1)
	prevOrder := 0
	for _, ev := range []struct {
		ch int
		e  float64
	}{{0, 0.5}, {1, 0.7}, {0, 0.1}, {1, 0.2}, {1, 0.02}, {0, 0.01}} {
		tally.add(ev.ch, ev.e)
		p := tally.progress(orders)
		if p.Order > prevOrder && p.RelError > prev || p.Order < prevOrder {
			t.Errorf("after channel %d's %g: order %d error %g, after order %d error %g", ev.ch, ev.e, p.Order, p.RelError, prevOrder, prev)
		}
		prev, prevOrder = p.RelError, p.Order
	}
	if p := tally.progress(orders); p.Order != 16 || p.Fitted != 2 || p.RelError != 0.02 {
		t.Errorf("at the end: %+v", p)
	}
}

// TestLadderProgress: a ladder's progress events count its channel-orders and end at the top
// order with every channel, at the worst channel's error there.
func TestLadderProgress(t *testing.T) {
	targets := targetFamilies(512, 2, 4)["s4-hippo"]
	orders := []int{4, 8}
	var last Progress
	events := 0
	l, err := FitLadder(t.Context(), Job{Spec: DefaultSpec(), Targets: targets}, orders, CPU{}, func(p Progress) {
		if p.Order < last.Order || p.Steps != 4 || p.Step < last.Step || p.Channels != 2 || p.TopOrder != 8 {
			t.Errorf("event %+v after %+v", p, last)
		}
		last = p
		events++
	})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, e := range l.Errors()[1] {
		worst = max(worst, e)
	}
	// The tally has the fits' errors; the report the deployed filters' (a tf holds the fit
	// to within tfHoldRatio, or the diagonal form is deployed).
	if events == 0 || last.Step != 4 || last.Order != 8 || last.Fitted != 2 || !(last.RelError <= worst*tfHoldRatio+tfHoldFloor && worst <= last.RelError*tfHoldRatio+tfHoldFloor) {
		t.Errorf("last event %+v; worst error at order 8 %g", last, worst)
	}
}
