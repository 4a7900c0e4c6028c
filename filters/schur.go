package filters

import (
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// Hessenberg returns H upper Hessenberg and Q orthogonal with A = Q·H·Qᵀ (Householder
// reduction, LAPACK's dgehrd and dorghr): backward stable, O(n³) once, after which shifted
// systems (zI - H)x = b cost O(n²). A is not modified.
func Hessenberg(a *mat.Dense) (h, q *mat.Dense) {
	n, _ := a.Dims()
	h = mat.DenseCopyOf(a)
	if n <= 1 {
		q = mat.NewDense(max(n, 1), max(n, 1), nil)
		q.Set(0, 0, 1)
		return h, q
	}
	impl := gonum.Implementation{}
	raw := h.RawMatrix()
	tau := make([]float64, n-1)
	work := []float64{0}
	impl.Dgehrd(n, 0, n-1, raw.Data, raw.Stride, tau, work, -1)
	work = make([]float64, max(int(work[0]), n))
	impl.Dgehrd(n, 0, n-1, raw.Data, raw.Stride, tau, work, len(work))
	q = mat.DenseCopyOf(h)
	qraw := q.RawMatrix()
	impl.Dorghr(n, 0, n-1, qraw.Data, qraw.Stride, tau, work, -1)
	work = make([]float64, max(int(work[0]), n))
	impl.Dorghr(n, 0, n-1, qraw.Data, qraw.Stride, tau, work, len(work))
	// Dgehrd leaves its reflectors below the subdiagonal.
	for i := 2; i < n; i++ {
		for j := 0; j < i-1; j++ {
			raw.Data[i*raw.Stride+j] = 0
		}
	}
	return h, q
}

// RealSchur returns T quasi upper triangular (1×1 and standardised 2×2 diagonal blocks, as
// LAPACK's dhseqr leaves them) and Z orthogonal with A = Z·T·Zᵀ. ok is false when the QR
// iteration does not converge. A is not modified.
func RealSchur(a *mat.Dense) (t, z *mat.Dense, ok bool) {
	n, _ := a.Dims()
	t, z = Hessenberg(a)
	if n <= 1 {
		return t, z, true
	}
	impl := gonum.Implementation{}
	traw, zraw := t.RawMatrix(), z.RawMatrix()
	wr, wi := make([]float64, n), make([]float64, n)
	work := []float64{0}
	impl.Dhseqr(lapack.EigenvaluesAndSchur, lapack.SchurOrig, n, 0, n-1, traw.Data, traw.Stride, wr, wi, zraw.Data, zraw.Stride, work, -1)
	work = make([]float64, max(int(work[0]), n))
	if impl.Dhseqr(lapack.EigenvaluesAndSchur, lapack.SchurOrig, n, 0, n-1, traw.Data, traw.Stride, wr, wi, zraw.Data, zraw.Stride, work, len(work)) != 0 {
		return nil, nil, false
	}
	return t, z, true
}
