// Package vec holds the dot product, the multiply-add, the outer-product updates and the
// Householder reflection of float64 vectors that the inner loops of train's fits run on
// (Householder QR, Lanczos, Cholesky, the Gauss–Newton system): fused multiply-adds in a
// fixed order, by AVX2 kernels on amd64 and by Go elsewhere, with the same result bit for bit
// on every machine and build (TestKernelsMatchGo, TestOuterKernelsMatchAxpy,
// TestReflectMatchesDotAxpy). gonum's floats.Dot and floats.AddScaled round every product and
// run in SSE2 on amd64: on the vectors of these fits (32 to 511 entries) 1.3–1.9× slower
// (BenchmarkDot, BenchmarkAxpy).
package vec

import "math"

// Dot returns Σ x[i]·y[i] over len(x) entries (y at least as long): sixteen lanes of fused
// multiply-adds over the whole blocks of sixteen, lane j taking the entries i ≡ j (mod 16);
// the lanes summed as ((l₀ + l₄) + (l₈ + l₁₂)) per j < 4, those four as (u₀ + u₂) + (u₁ + u₃);
// then the fused sum of the remaining entries added.
func Dot(x, y []float64) float64 {
	y = y[:len(x)]
	if useAsm {
		return dotAVX2(x, y)
	}
	return dotGo(x, y)
}

// Norm returns the Euclidean norm of x: √Dot(x, x) where the sum of squares lies well
// within float64's range, else by the entries scaled by the largest magnitude (as gonum's
// floats.Norm scales every entry, which makes it 2–4× slower on the vectors of these fits).
func Norm(x []float64) float64 {
	if s := Dot(x, x); s >= 0x1p-1000 && s <= 0x1p1000 {
		return math.Sqrt(s)
	}
	scale := 0.0
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 || math.IsInf(scale, 1) {
		return scale
	}
	sum := 0.0
	for _, v := range x {
		sum += (v / scale) * (v / scale)
	}
	return scale * math.Sqrt(sum)
}

// Axpy adds a·x to y (y at least as long as x), each entry by one fused multiply-add.
func Axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	if useAsm {
		axpyAVX2(a, x, y)
		return
	}
	axpyGo(a, x, y)
}

// SubOuterUpper subtracts the upper triangle of x·xᵀ from the n×n row-major h (n =
// len(x), rows stride apart): row k from column k on loses x[k]·x[k:], each entry by one
// fused multiply-add, as Axpy(−x[k], x[k:], h[k·stride+k:]) would for every k (rows whose
// x[k] is zero are left alone). It is the symmetric rank-one update of a Cholesky
// factorisation's trailing matrix and of the Gauss–Newton matrix: one call where Axpy took
// n, whose calls cost as much as their sums at the n of these fits (8 to 64).
func SubOuterUpper(x, h []float64, stride int) {
	n := len(x)
	if n == 0 {
		return
	}
	if stride < n || len(h) < (n-1)*stride+n {
		panic("vec: SubOuterUpper: h is shorter than len(x) rows of stride")
	}
	if useAsm {
		subOuterUpperAVX2(x, h, stride)
		return
	}
	subOuterUpperGo(x, h, stride)
}

// SubOuter subtracts a·xᵀ from the len(a)×len(x) row-major b (rows stride apart): row r
// loses a[r]·x, each entry by one fused multiply-add, as Axpy(−a[r], x, b[r·stride:]) would
// (rows whose a[r] is zero are left alone).
func SubOuter(a, x, b []float64, stride int) {
	rows, n := len(a), len(x)
	if rows == 0 || n == 0 {
		return
	}
	if stride < n || len(b) < (rows-1)*stride+n {
		panic("vec: SubOuter: b is shorter than len(a) rows of stride")
	}
	if useAsm {
		subOuterAVX2(a, x, b, stride)
		return
	}
	subOuterGo(a, x, b, stride)
}

// Reflect applies the Householder reflection I − 2vvᵀ/uu to count vectors of len(v) entries,
// the c-th at data[c·stride:]: each loses (−2·Dot(v, u)/uu)·v by Axpy, as those two calls
// would make it for each vector in turn, bit for bit. It is the trailing update of a
// Householder QR with the columns stride apart in one buffer: one call per reflection where
// Dot and Axpy took two per column (a 146×64 QR made 4,000 calls; train's residue QR is 9%
// faster with one).
func Reflect(v, data []float64, stride, count int, uu float64) {
	if count <= 0 {
		return
	}
	if stride < len(v) || len(data) < (count-1)*stride+len(v) {
		panic("vec: Reflect: data is shorter than count vectors of stride")
	}
	if useAsm {
		reflectAVX2(v, data, stride, count, uu)
		return
	}
	reflectGo(v, data, stride, count, uu)
}

func reflectGo(v, data []float64, stride, count int, uu float64) {
	for c := 0; c < count; c++ {
		u := data[c*stride : c*stride+len(v)]
		axpyGo(-2*dotGo(v, u)/uu, v, u)
	}
}

func subOuterUpperGo(x, h []float64, stride int) {
	for k, a := range x {
		if a == 0 {
			continue
		}
		row := h[k*stride+k : k*stride+len(x)]
		for c, v := range x[k:] {
			row[c] = math.FMA(-a, v, row[c])
		}
	}
}

func subOuterGo(a, x, b []float64, stride int) {
	for r, ar := range a {
		if ar == 0 {
			continue
		}
		row := b[r*stride : r*stride+len(x)]
		for c, v := range x {
			row[c] = math.FMA(-ar, v, row[c])
		}
	}
}

func dotGo(x, y []float64) float64 {
	var acc [16]float64
	n := len(x) &^ 15
	for i := 0; i < n; i += 16 {
		xs, ys := x[i:i+16], y[i:i+16]
		for l := range acc {
			acc[l] = math.FMA(xs[l], ys[l], acc[l])
		}
	}
	var u [4]float64
	for j := range u {
		u[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
	}
	r := (u[0] + u[2]) + (u[1] + u[3])
	s := 0.0
	for i := n; i < len(x); i++ {
		s = math.FMA(x[i], y[i], s)
	}
	return r + s
}

func axpyGo(a float64, x, y []float64) {
	for i, v := range x {
		y[i] = math.FMA(a, v, y[i])
	}
}
