package tui

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/filters"
)

// ringZPK is an order-n zpk filter with every pole on |z| = r at random angles and n-1
// zeros inside the unit circle: a trained S4D/LRU-like layer channel in zpk form.
func ringZPK(n int, r float64, seed uint64) *filters.ZPK {
	rng := rand.New(rand.NewPCG(seed, 7))
	var poles, zeros []complex128
	for range n / 2 {
		p := cmplx.Rect(r*(0.9+0.1*rng.Float64()), math.Pi*(0.01+0.98*rng.Float64()))
		poles = append(poles, p, cmplx.Conj(p))
	}
	for range (n - 1) / 2 {
		z := cmplx.Rect(0.8*rng.Float64(), math.Pi*rng.Float64())
		zeros = append(zeros, z, cmplx.Conj(z))
	}
	f, err := filters.NewZPK(zeros, poles, 1e-3, 0)
	if err != nil {
		panic(err)
	}
	return f
}

// BenchmarkPoleMove measures keypress to redraw for a pole nudge: Update for the key (the O(n)
// edit), the command it returns (impulse response of L samples, frequency response and group
// delay at 512 frequencies), Update for the result, and View of the whole 160×48 screen with
// every plot on. This is the path the interactive budget (50 ms for n ≤ 256, L ≤ 8192) is
// about. Run it with
//
//	go test ./tui -run '^$' -bench PoleMove -benchtime 20x
func BenchmarkPoleMove(b *testing.B) {
	for _, tc := range []struct {
		name string
		f    filters.Filter
	}{
		{"zpk-n256", ringZPK(256, 0.999, 1)},
		{"diagonal-n256", mustDiagonal(ringZPK(256, 0.999, 1))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := New(Options{Deps: testDeps(nil), ProgressInterval: -1, Length: 8192, Dir: b.TempDir(), AutosaveInterval: -1})
			send(b, m, tea.WindowSizeMsg{Width: 160, Height: 48})
			addFilter(b, m, "ring", tc.f)
			send(b, m, statusMsg{text: "ready"})
			m.setFocus(panePlots)
			_ = m.View()
			var tUpdate, tCompute, tView, tZeros time.Duration
			b.ResetTimer()
			for i := range b.N {
				k := "l"
				if i%2 == 1 {
					k = "h"
				}
				t0 := time.Now()
				_, cmd := m.Update(keyMsg(k))
				t1 := time.Now()
				// The batch holds the responses command and, for forms that do not hold their
				// zeros, the pole/zero command; the event loop runs them concurrently and
				// redraws as each arrives. Time the responses path (what the plots wait for)
				// and the zeros separately.
				var rest []tea.Msg
				for _, r := range runTimed(cmd) {
					if _, ok := r.msg.(respMsg); ok {
						tCompute += r.took
						t2 := time.Now()
						_, _ = m.Update(r.msg)
						_ = m.View()
						tView += time.Since(t2)
					} else if r.msg != nil {
						tZeros += r.took
						rest = append(rest, r.msg)
					}
				}
				for _, msg := range rest {
					_, _ = m.Update(msg)
				}
				tUpdate += t1.Sub(t0)
				if e := m.selected(); e.resp == nil || e.resp.key != m.respKeyFor(e) {
					b.Fatal("the responses did not follow the edit")
				}
			}
			b.ReportMetric(float64((tUpdate+tCompute+tView).Microseconds())/float64(b.N)/1000, "redraw-ms")
			n := float64(b.N)
			b.ReportMetric(float64(tUpdate.Microseconds())/n/1000, "update-ms")
			b.ReportMetric(float64(tCompute.Microseconds())/n/1000, "compute-ms")
			b.ReportMetric(float64(tView.Microseconds())/n/1000, "view-ms")
			b.ReportMetric(float64(tZeros.Microseconds())/n/1000, "zeros-ms")
		})
	}
}

func mustDiagonal(f filters.Filter) *filters.Diagonal {
	d, _, err := filters.ToDiagonal(f)
	if err != nil {
		panic(err)
	}
	return d
}

type timedMsg struct {
	msg  tea.Msg
	took time.Duration
}

// runTimed runs cmd, expanding batches, and times each command that is not a batch.
func runTimed(cmd tea.Cmd) []timedMsg {
	if cmd == nil {
		return nil
	}
	t0 := time.Now()
	msg := cmd()
	took := time.Since(t0)
	if batch, ok := msg.(tea.BatchMsg); ok {
		var out []timedMsg
		for _, c := range batch {
			out = append(out, runTimed(c)...)
		}
		return out
	}
	return []timedMsg{{msg, took}}
}

// lastResp runs cmd and returns the last responses message it made, without delivering it.
func lastResp(cmd tea.Cmd) respMsg {
	var last respMsg
	for _, r := range runTimed(cmd) {
		if msg, ok := r.msg.(respMsg); ok {
			last = msg
		}
	}
	return last
}
