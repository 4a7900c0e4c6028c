package train

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ssmlab/ssmlab/internal/cputime"
)

// scratch: never commit
func TestZZChan(t *testing.T) {
	set := os.Getenv("ZZ_SET")
	if set == "" {
		t.Skip()
	}
	_, fams := qualityTargets(t, 16)
	orders := chainOrders(64)
	tot := 0.0
	for ch, y := range fams[set] {
		t0 := cputime.Process()
		b := LowerBounds(y, orders)
		tb := (cputime.Process() - t0).Seconds()
		o := projectOptions{rmax: hankelRadius, iters: DefaultSpec().Refine, rng: channelRNG(DefaultSpec().Seed, ch)}
		var stamps []string
		last := cputime.Process()
		t1 := last
		fits, err := fitLadder(context.Background(), y, orders, b, o, true, func(k int, f *modalFit) {
			now := cputime.Process()
			stamps = append(stamps, fmt.Sprintf("%d:%.3f/%.2g", orders[k], (now-last).Seconds(), f.rel))
			last = now
		})
		if err != nil {
			t.Fatal(err)
		}
		tf := (cputime.Process() - t1).Seconds()
		tot += tb + tf
		t.Logf("ch %2d bound %.3f fit %.3f rel %.3g %v", ch, tb, tf, fits[len(fits)-1].fit.rel, stamps)
	}
	t.Logf("total %.2f", tot)
}
