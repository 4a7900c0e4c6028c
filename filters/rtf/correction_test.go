package rtf

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// TestSolveUntruncatedRefines solves for the numerators of a distilled order-8 RTF of Hyena
// kernels (`ssmlab distill` of the tutorial's hyena.json, --order 8) with trunc_len 1024 by
// the direct solve alone. Its poles crowd near z = 1, where the companion basis loses digits:
// one LU solve leaves relative errors of 1e-5 in the impulse response, and iterative
// refinement takes them to rounding level (measured: 1e-8 and below).
func TestSolveUntruncatedRefines(t *testing.T) {
	const m = 1024
	for c, ch := range []struct{ a, b []float64 }{
		{[]float64{-3.9882456676154554, 5.964949165637684, -3.9651600900702295, 0.988454892765635, 1.1580388430830818e-06, 1.1919769574858595e-06, 8.528584042381716e-07, -1.4985191529325392e-06},
			[]float64{0.5813306682908084, -1.7382649807774204, 1.7326429796883573, -0.5757082029944844, -0.0005493423306501891, 0.0016926221068117137, -0.0017425586353239698, 0.0005992540708245449}},
		{[]float64{-3.961865081217545, 5.8861692906784215, -3.8867370542828636, 0.962432871849141, 1.3063813590265848e-10, 3.192445022843723e-10, 4.903339496298579e-10, 6.419909067640672e-10},
			[]float64{-0.5420816140399408, 1.6096720375897882, -1.5932840693994712, 0.5256916509794399, 2.712070851098337e-06, -1.0918519308588185e-05, 1.3943399590237825e-05, -5.748290411272006e-06}},
		{[]float64{-3.9566881856285994, 5.870850836507962, -3.8716300662889305, 0.9574674415063007, 0, 0, 0, 0},
			[]float64{0.8135177044967291, -2.4151791546964874, 2.390130549575563, -0.7884674629715838, -1.8253241389155844e-06, 5.84371364376665e-06, -6.228935470155109e-06, 2.2166218444973232e-06}},
		{[]float64{-3.9486275952022405, 5.847004287139505, -3.84811312428148, 0.9497364933130494, 0, 0, 0, 0},
			[]float64{0.7473152029998551, -2.2153522301815616, 2.1891744035792997, -0.7211345220625064, 1.0283874271135213e-06, -3.310623807598636e-06, 3.5309373655254796e-06, -1.2571132886169954e-06}},
	} {
		bt, err := Truncate(ch.a, ch.b, m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := solveUntruncated(ch.a, bt, m)
		if err != nil {
			t.Fatalf("channel %d: %v", c, err)
		}
		want := must(filters.NewTransferFunction(ch.a, ch.b, 0)).Impulse(m)
		if e := filters.RelDiff(want, must(filters.NewTransferFunction(ch.a, got, 0)).Impulse(m)); !(e < 1e-7) {
			t.Errorf("channel %d: the impulse response differs by %.3g", c, e)
		}
	}
}

// TestUntruncateFallsBackToSeries takes three pole pairs at |p| = 0.99999 within 0.01 rad of
// each other with trunc_len 4096: the Neumann series needs about 800 terms, more than
// Untruncate starts with, and I − A^m in the companion basis is singular to working
// precision (condition number 1.6e16), so only the long series gets b back (measured:
// 3.6e-6 relative in the impulse response, what 800 terms of rounding leave).
func TestUntruncateFallsBackToSeries(t *testing.T) {
	const m = 4096
	var poles, residues []complex128
	for k := range 3 {
		p := cmplx.Rect(0.99999-1e-6*float64(k), 0.15+0.005*float64(k))
		poles = append(poles, p, cmplx.Conj(p))
		r := complex(1, float64(k))
		residues = append(residues, r, cmplx.Conj(r))
	}
	f, _ := must2(filters.ToTF(must(filters.NewDiagonal(poles, residues, 0))))
	bt, err := Truncate(f.Den, f.Num, m)
	if err != nil {
		t.Fatal(err)
	}
	var ce *filters.ConditionError
	if _, err := solveUntruncated(f.Den, bt, m); !errors.As(err, &ce) || !(ce.Condition > MaxUntruncateCond) || !errors.Is(err, filters.ErrIllConditioned) {
		t.Fatalf("the direct solve: %v, want it ill-conditioned", err)
	}
	got, err := Untruncate(f.Den, bt, m)
	if err != nil {
		t.Fatal(err)
	}
	want := f.Impulse(2 * m)
	if e := filters.RelDiff(want, must(filters.NewTransferFunction(f.Den, got, 0)).Impulse(2*m)); !(e < 1e-4) {
		t.Errorf("the impulse response differs by %.3g", e)
	}
}

func must2[T, U any](v T, u U, err error) (T, U) {
	if err != nil {
		panic(err)
	}
	return v, u
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// FuzzUntruncate undoes the truncation correction of random stable denominators (poles drawn
// from the input bytes, radius up to 0.99999) and checks the backward error: whatever path
// Untruncate takes, the numerator it returns must give b̃ back when the correction is
// applied again, to within rounding (of the recurrence, times the terms of a series).
func FuzzUntruncate(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint16(1024))
	f.Add([]byte{255, 10, 255, 11, 255, 12, 0, 0}, uint16(4096))
	f.Add([]byte{200, 40, 90, 3}, uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, trunc uint16) {
		m := int(trunc%4096) + 1
		var poles, residues []complex128
		for i := 0; i+1 < len(data) && len(poles) < 8; i += 2 {
			r := 1 - math.Pow(10, -5*float64(data[i])/255) // in [0, 0.99999]
			p := cmplx.Rect(r, math.Pi*float64(data[i+1])/255)
			poles = append(poles, p, cmplx.Conj(p))
			residues = append(residues, complex(1, float64(i)), complex(1, -float64(i)))
		}
		if len(poles) == 0 {
			return
		}
		d, err := filters.NewDiagonal(poles, residues, 0)
		if err != nil {
			return
		}
		tf, _, err := filters.ToTF(d)
		if err != nil {
			return
		}
		bt, err := Truncate(tf.Den, tf.Num, m)
		if err != nil {
			return
		}
		got, err := untruncate(tf.Den, bt, m, 1<<30)
		if err != nil {
			if !errors.Is(err, filters.ErrInvalid) && !errors.Is(err, filters.ErrIllConditioned) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error of an unknown kind: %v", err)
			}
			return
		}
		again, err := Truncate(tf.Den, got, m)
		if err != nil {
			t.Fatalf("the numerator found does not truncate: %v", err)
		}
		// Each of the m steps of the recurrence rounds v₀·a, and the later steps carry the
		// rounding on through A^j, so it grows with m, ‖a‖₁ and max‖A^j‖ (large in the
		// companion basis of clustered or repeated poles); a Neumann series of K terms adds
		// K such roundings, K ≈ 37/(m·ln(1/ρ)). A wrong numerator misses by far more.
		l1 := 0.0
		for _, x := range tf.Den {
			l1 += math.Abs(x)
		}
		rho := 0.0
		for _, p := range poles {
			rho = max(rho, cmplx.Abs(p))
		}
		terms := math.Min(1e6, 37/(float64(m)*-math.Log(rho)))
		scale := (maxAbs(bt) + maxAbs(got)) * (1 + l1) * maxPowerNorm(tf.Den, m) * float64(m) * (1 + terms)
		if e := numtest.MaxAbsDiff(again, bt); !(e <= 1e-12*scale) {
			t.Fatalf("backward error %.3g against a scale of %.3g (poles %v, m %d)", e, scale, poles, m)
		}
	})
}

// maxPowerNorm returns max ‖A^j‖∞ over 0 ≤ j ≤ m for the companion matrix of a, from the
// rows e_i·A^j.
func maxPowerNorm(a []float64, m int) float64 {
	n := len(a)
	rows, next := make([][]float64, n), make([]float64, n)
	for i := range rows {
		rows[i] = make([]float64, n)
		rows[i][i] = 1
	}
	peak := 1.0
	for range m {
		norm := 0.0
		for i := range rows {
			companionStep(next, rows[i], a)
			rows[i], next = next, rows[i]
			sum := 0.0
			for _, x := range rows[i] {
				sum += math.Abs(x)
			}
			norm = max(norm, sum)
		}
		peak = max(peak, norm)
	}
	return peak
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// TestUntruncateUnstable undoes the correction of an unstable filter (a pole pair at
// modulus 1.01, ρᴸ = 2.6e4 at L = 1024): the Neumann series diverges, but I − Aᴸ is as
// invertible as for a stable filter, so the direct solve gets b back (measured: 7e-15
// relative in the first 1024 samples of the impulse response; the series alone failed).
func TestUntruncateUnstable(t *testing.T) {
	p := cmplx.Rect(1.01, 0.3)
	d := must(filters.NewDiagonal([]complex128{p, cmplx.Conj(p), 0.5, -0.7}, []complex128{1 + 1i, 1 - 1i, 1, 2}, 0))
	f, _ := must2(filters.ToTF(d))
	for _, m := range []int{256, 1024} {
		bt := must(Truncate(f.Den, f.Num, m))
		got, err := Untruncate(f.Den, bt, m)
		if err != nil {
			t.Fatalf("m=%d: %v", m, err)
		}
		if e := filters.RelDiff(f.Impulse(m), must(filters.NewTransferFunction(f.Den, got, 0)).Impulse(m)); !(e < 1e-12) {
			t.Errorf("m=%d: the impulse response differs by %.3g", m, e)
		}
	}
}

// TestTruncateDirect checks b̃ = b(I − Aᴸ) against b·Aᴸ from the dense companion matrix, for
// lengths below the order too.
func TestTruncateDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{1, 3, 10} {
		a, b := Montel(rng, n)
		comp := (&filters.Companion{Den: a, Num: b}).Dense()
		for _, L := range []int{0, 1, 2, 7, 50, 333} {
			row := slices.Clone(b)
			for range L {
				next := make([]float64, n)
				for j := range n {
					for i := range n {
						next[j] += row[i] * comp.A.At(i, j)
					}
				}
				row = next
			}
			got := must(Truncate(a, b, L))
			for j := range got {
				if d := math.Abs(got[j] - (b[j] - row[j])); d > 1e-15 {
					t.Errorf("n=%d L=%d: b̃[%d] differs from b − b·Aᴸ by %.3g", n, L, j, d)
				}
			}
		}
	}
}

// TestUntruncateSingular: I − Aᴸ is singular when a pole lies on an L-th root of unity, and
// the error carries the condition number; next to such a length it is well-conditioned.
func TestUntruncateSingular(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, bt []float64
		m     int
	}{
		{"pole at 1", []float64{-1}, []float64{1}, 64},
		{"poles ±i, L = 8", []float64{0, 1}, []float64{1, 0}, 8},
	} {
		var ce *filters.ConditionError
		if _, err := Untruncate(tc.a, tc.bt, tc.m); !errors.As(err, &ce) || !errors.Is(err, filters.ErrIllConditioned) || !(ce.Condition > MaxUntruncateCond) || ce.Limit != MaxUntruncateCond {
			t.Errorf("%s: %v, want a ConditionError above the limit", tc.name, err)
		}
	}
	// Poles ±i with L = 6: A⁶ = −I, so b = b̃/2.
	if b, err := Untruncate([]float64{0, 1}, []float64{2, 0}, 6); err != nil || !slices.Equal(b, []float64{1, 0}) {
		t.Errorf("poles ±i, L = 6: b = %v, err %v; want [1 0]", b, err)
	}
	if b, err := Untruncate(nil, nil, 10); err != nil || len(b) != 0 {
		t.Errorf("order 0: %v %v", b, err)
	}
}

func TestCorrectionPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"truncate lengths":   func() { _, _ = Truncate([]float64{1}, nil, 4) },
		"truncate negative":  func() { _, _ = Truncate([]float64{1}, []float64{1}, -1) },
		"untruncate lengths": func() { _, _ = Untruncate([]float64{1}, nil, 4) },
		"untruncate zero":    func() { _, _ = Untruncate([]float64{1}, []float64{1}, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
