package vec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestKernelsMatchGo checks that the kernels this build runs give the Go loops' results bit
// for bit, at every length to 300 and offsets that misalign the vectors, on values of mixed
// sign and magnitude (where any other order of the sums would round differently).
func TestKernelsMatchGo(t *testing.T) {
	if !useAsm {
		t.Skip("the Go loops are the kernels in this build (no AVX2 and FMA, or the noasm tag)")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64() * math.Pow(10, 6*rng.Float64()-3)
		}
		return v
	}
	for n := 0; n <= 300; n++ {
		for off := 0; off < 3; off++ {
			x, y := buf(n + off)[off:], buf(n + 2)[2:]
			if got, want := dotAVX2(x, y), dotGo(x, y); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n = %d, offset %d: dot %v, Go loop %v", n, off, got, want)
			}
			a := rng.NormFloat64()
			y1, y2 := append([]float64(nil), y...), append([]float64(nil), y...)
			axpyAVX2(a, x, y1)
			axpyGo(a, x, y2)
			for i := range y1 {
				if math.Float64bits(y1[i]) != math.Float64bits(y2[i]) {
					t.Fatalf("n = %d, offset %d: axpy entry %d %v, Go loop %v", n, off, i, y1[i], y2[i])
				}
			}
		}
	}
}

// TestOuterKernelsMatchAxpy checks SubOuterUpper and SubOuter against the Axpy calls they
// stand for, bit for bit, at every n to 70 (some x entries ±0, which leave their rows
// alone) with strides beyond the rows, and the kernels this build runs against the Go loops.
func TestOuterKernelsMatchAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 70; n++ {
		for _, pad := range []int{0, 3} {
			stride := n + pad
			x := make([]float64, n)
			for i := range x {
				switch rng.IntN(8) {
				case 0:
					x[i] = 0
				case 1:
					x[i] = math.Copysign(0, -1)
				default:
					x[i] = rng.NormFloat64() * math.Pow(10, 6*rng.Float64()-3)
				}
			}
			h := make([]float64, (n-1)*stride+n)
			for i := range h {
				h[i] = rng.NormFloat64()
			}
			want := append([]float64(nil), h...)
			for k := range x {
				if x[k] != 0 {
					Axpy(-x[k], x[k:], want[k*stride+k:k*stride+n])
				}
			}
			got, goLoop := append([]float64(nil), h...), append([]float64(nil), h...)
			SubOuterUpper(x, got, stride)
			subOuterUpperGo(x, goLoop, stride)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) || math.Float64bits(goLoop[i]) != math.Float64bits(want[i]) {
					t.Fatalf("SubOuterUpper, n = %d, stride %d: entry %d is %v (Go loop %v), Axpy gives %v", n, stride, i, got[i], goLoop[i], want[i])
				}
			}
			rows := 1 + rng.IntN(9)
			a := x[:min(rows, n)]
			b := make([]float64, (len(a)-1)*stride+n)
			for i := range b {
				b[i] = rng.NormFloat64()
			}
			want = append([]float64(nil), b...)
			for r := range a {
				if a[r] != 0 {
					Axpy(-a[r], x, want[r*stride:r*stride+n])
				}
			}
			got, goLoop = append([]float64(nil), b...), append([]float64(nil), b...)
			SubOuter(a, x, got, stride)
			subOuterGo(a, x, goLoop, stride)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) || math.Float64bits(goLoop[i]) != math.Float64bits(want[i]) {
					t.Fatalf("SubOuter, n = %d, stride %d: entry %d is %v (Go loop %v), Axpy gives %v", n, stride, i, got[i], goLoop[i], want[i])
				}
			}
		}
	}
}

// TestReflectMatchesDotAxpy checks Reflect against the Dot and Axpy calls it stands for, bit
// for bit, at every length to 70 with strides beyond it and up to five vectors, and the
// kernel this build runs against the Go loop.
func TestReflectMatchesDotAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 0; n <= 70; n++ {
		for _, pad := range []int{0, 5} {
			stride, count := n+pad, 1+rng.IntN(5)
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.NormFloat64() * math.Pow(10, 6*rng.Float64()-3)
			}
			uu := 0.5 + rng.Float64()
			data := make([]float64, (count-1)*stride+n)
			for i := range data {
				data[i] = rng.NormFloat64() * math.Pow(10, 4*rng.Float64()-2)
			}
			want := append([]float64(nil), data...)
			for c := 0; c < count; c++ {
				u := want[c*stride : c*stride+n]
				Axpy(-2*Dot(v, u)/uu, v, u)
			}
			got, goLoop := append([]float64(nil), data...), append([]float64(nil), data...)
			Reflect(v, got, stride, count, uu)
			reflectGo(v, goLoop, stride, count, uu)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) || math.Float64bits(goLoop[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n = %d, stride %d, %d vectors: entry %d is %v (Go loop %v), Dot and Axpy give %v", n, stride, count, i, got[i], goLoop[i], want[i])
				}
			}
		}
	}
}

// TestAgainstExact checks Dot and Axpy against sums made exactly (float64 products summed
// with compensation), to the fused operations' rounding.
func TestAgainstExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 16, 17, 64, 341, 1023} {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		exact, abs := 0.0, 0.0
		comp := 0.0
		for i := range x {
			p := x[i] * y[i]
			e := math.FMA(x[i], y[i], -p) // the product's rounding error
			s := exact + p
			comp += (exact - s) + p + e
			exact = s
			abs += math.Abs(p)
		}
		exact += comp
		if d := math.Abs(Dot(x, y) - exact); d > float64(n+1)*0x1p-53*abs {
			t.Errorf("n = %d: Dot off by %.3g (bound %.3g)", n, d, float64(n+1)*0x1p-53*abs)
		}
		a := rng.NormFloat64()
		z := append([]float64(nil), y...)
		Axpy(a, x, z)
		for i := range z {
			if z[i] != math.FMA(a, x[i], y[i]) {
				t.Fatalf("n = %d: Axpy entry %d is not one fused multiply-add", n, i)
			}
		}
	}
}

func benchVectors(n int) ([]float64, []float64) {
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = float64(i%7)-3, float64(i%5)-2
	}
	return x, y
}

var sink float64

// BenchmarkDot times Dot against gonum's floats.Dot at the lengths of the fits' loops.
func BenchmarkDot(b *testing.B) {
	for _, n := range []int{32, 64, 341, 511} {
		x, y := benchVectors(n)
		b.Run("vec/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				sink += Dot(x, y)
			}
		})
		b.Run("gonum/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				sink += floats.Dot(x, y)
			}
		})
	}
}

// BenchmarkAxpy times Axpy against gonum's floats.AddScaled.
func BenchmarkAxpy(b *testing.B) {
	for _, n := range []int{32, 64, 341, 511} {
		x, y := benchVectors(n)
		b.Run("vec/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Axpy(1e-9, x, y)
			}
		})
		b.Run("gonum/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				floats.AddScaled(y, 1e-9, x)
			}
		})
	}
}

// BenchmarkSubOuterUpper times SubOuterUpper against the Axpy call a row it stands for, at
// the orders of the fits' Gauss–Newton and Cholesky updates.
func BenchmarkSubOuterUpper(b *testing.B) {
	for _, n := range []int{16, 32, 64} {
		x, _ := benchVectors(n)
		floats.Scale(1e-9, x)
		h := make([]float64, n*n)
		b.Run("kernel/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				SubOuterUpper(x, h, n)
			}
		})
		b.Run("axpy/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				for k := range x {
					if x[k] != 0 {
						Axpy(-x[k], x[k:], h[k*n+k:k*n+n])
					}
				}
			}
		})
	}
}

// TestNorm checks Norm against gonum's scaled floats.Norm to a few ulps, at magnitudes from
// where the squares underflow to where they overflow (the scaled branch), and on zeros,
// infinities and NaN.
func TestNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, scale := range []float64{1e-300, 1e-160, 1e-150, 1e-10, 1, 1e10, 1e150, 1e160, 1e300} {
		for _, n := range []int{1, 2, 17, 64, 146, 1023} {
			x := make([]float64, n)
			for i := range x {
				x[i] = scale * rng.NormFloat64()
			}
			got, want := Norm(x), floats.Norm(x, 2)
			if math.Abs(got-want) > 4*float64(n)*0x1p-53*want || math.IsInf(got, 0) || got == 0 {
				t.Errorf("scale %g, n = %d: Norm %v, floats.Norm %v", scale, n, got, want)
			}
		}
	}
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{nil, 0}, {[]float64{0, 0}, 0}, {[]float64{1, math.Inf(-1)}, math.Inf(1)}, {[]float64{3, -4}, 5},
	} {
		if got := Norm(c.x); got != c.want {
			t.Errorf("Norm(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := Norm([]float64{1, math.NaN(), math.Inf(1)}); !math.IsNaN(got) {
		t.Errorf("Norm with a NaN = %v", got)
	}
}

// BenchmarkNorm times Norm against gonum's floats.Norm at the lengths of the QR's columns.
func BenchmarkNorm(b *testing.B) {
	for _, n := range []int{64, 146, 511} {
		x, _ := benchVectors(n)
		b.Run("vec/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				sink += Norm(x)
			}
		})
		b.Run("gonum/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				sink += floats.Norm(x, 2)
			}
		})
	}
}
