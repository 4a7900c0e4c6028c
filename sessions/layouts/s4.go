package layouts

import (
	"fmt"
	"math/cmplx"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The S4 (DPLR, "NPLR") layout: SSMKernelDPLR inside FFTConv (state-spaces/s4
// src/models/sequence/kernels/ssm.py). Each SSM keeps N/2 of its N eigenvalues Λ, the
// low-rank term P (rank, N/2), B and C, the others their conjugates, so that its state
// matrix is A = diag(Λ, Λ̄) − Σᵣ pᵣ·pᵣᴴ with pᵣ = (Pᵣ, P̄ᵣ). The layer discretises with the
// bilinear transform and keeps C̃ = C·(I − Āᴸ) for L = l_kernel (_setup_C), so that its
// frequency-domain kernel is the length-L kernel; _setup_step undoes it for recurrence,
// and so does import. The state is updated before the output, y = Re(C x) + D u.
//
// ssmlab holds the SSM as a real dense filter of order N in the coordinates (Re x, Im x) of
// the first half of the conjugate-symmetric state: with x = (x₁, x̄₁), A has the blocks
// [[Re(A₁₁+A₁₂), −Im(A₁₁−A₁₂)], [Im(A₁₁+A₁₂), Re(A₁₁−A₁₂)]], B = (Re B, Im B) and
// C = (2·Re C, −2·Im C).

func init() { impls[S4] = s4Layout{} }

type s4Layout struct{}

func (s4Layout) params() []string {
	return []string{"kernel.P", "kernel.A_real", "kernel.A_imag", "kernel.B", "kernel.C", "kernel.inv_dt", "kernel.l_kernel"}
}

func (s4Layout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	ps := shapeOf(in, p+"kernel.P", 4)
	if ps == nil || shapeOf(in, p+"kernel.A_real", 2) == nil {
		return Layer{}, false
	}
	l := Layer{Order: 2 * ps[2], ComplexModes: ps[2], DType: in[p+"kernel.A_real"].DType,
		Options: map[string]string{"disc": "bilinear", "dt-transform": "exp", "real-transform": "exp", "imag-transform": "none", "rank": fmt.Sprint(ps[0])}}
	if c := shapeOf(in, p+"kernel.C", 4); c != nil {
		l.Channels = c[0] * c[1]
		if a := shapeOf(in, p+"kernel.A_real", 2); a[0] < c[1] {
			l.Options["n_ssm"] = fmt.Sprint(a[0]) // SharesModes
		}
	}
	return l, true
}

// intReader reads an integer scalar (arrays.File does, for torch.save, safetensors and .npz files).
type intReader interface {
	ReadInt(name string) (int64, error)
}

// S4KernelLength reads S4 layer l's kernel.l_kernel buffer from src: the kernel length L its
// C̃ = C·(I − Āᴸ) was made for (_setup_C), which import undoes, import --list shows as the
// option length and distill CKPT distils the layer at. ok is false where the layer has no
// such buffer. 0 is a module that has not run _setup_C yet: C stored as it is. Any other
// value is a length in [2, 2^22]: two samples at least, as a distillation fits, and at most
// what the option length takes. A value outside, or a buffer that is not one integer, is an
// error naming the layer, which import, import --list and distill CKPT all give.
func S4KernelLength(src Source, l Layer) (n int, ok bool, err error) {
	if n, ok, err = newTensors(src, l).kernelLength(); err != nil {
		err = layerError(l, err)
	}
	return n, ok, err
}

// kernelLength is S4KernelLength for the layer t reads, with errors that do not name it.
func (t *tensors) kernelLength() (int, bool, error) {
	const buf = "kernel.l_kernel"
	if !t.has(buf) {
		return 0, false, nil
	}
	ir, ok := t.src.(intReader)
	if !ok {
		return 0, true, invalidf("cannot read the buffer %q from this file", t.prefix+buf)
	}
	v, err := ir.ReadInt(t.prefix + buf)
	if err != nil {
		return 0, true, err
	}
	if !s4KernelLengthOK(v) {
		return 0, true, invalidf("l_kernel %d is neither 0 (C stored as it is) nor a kernel length in [%d, %d]", v, minS4KernelLength, maxIntOption)
	}
	return int(v), true, nil
}

// minS4KernelLength is the least kernel length an S4 layer's C̃ is undone for: two samples,
// as a distillation fits.
const minS4KernelLength = 2

// s4KernelLengthOK is the one rule of an S4 layer's kernel length, its l_kernel buffer's
// and the option length's: 0 (none) or a length in [2, 2^22], the option length's range.
func s4KernelLengthOK(v int64) bool {
	return v == 0 || v >= minS4KernelLength && v <= maxIntOption
}

// S4Length is the option length given for S4 layer l, the l_kernel its C̃ is undone for in
// place of its buffer's: 0 where none is given (or 0 is), else a length in [2, 2^22], the
// rule of S4KernelLength, which import and distill CKPT share; another value is an error of
// kind ErrOptionValue naming the layer and the option.
func S4Length(o Options, l Layer) (int, error) {
	n, err := o.s4Length()
	if err != nil {
		err = layerError(l, err)
	}
	return n, err
}

// s4Length is S4Length with errors that do not name the layer.
func (o Options) s4Length() (int, error) {
	v, ok := o.Values["length"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || !s4KernelLengthOK(n) {
		return 0, optionf("--length %s: an S4 layer's C̃ is undone for a kernel length (its l_kernel) in [%d, %d], or 0: its kernel.l_kernel buffer's, C as stored without one", v, minS4KernelLength, maxIntOption)
	}
	return int(n), nil
}

func (s4Layout) read(t *tensors, l Layer, o Options) (Result, error) {
	dtT, reT, imT := o.get(S4, "dt-transform"), o.get(S4, "real-transform"), o.get(S4, "imag-transform")
	aShape := []int{-1, -1}
	aRe, err := t.get("kernel.A_real", "(n_ssm, N/2)", aShape)
	if err != nil {
		return Result{}, err
	}
	s, n2 := aShape[0], aShape[1]
	aIm, err := t.get("kernel.A_imag", "(n_ssm, N/2)", []int{s, n2})
	if err != nil {
		return Result{}, err
	}
	pShape := []int{-1, s, n2, 2}
	pp, err := t.get("kernel.P", "(rank, n_ssm, N/2, 2)", pShape)
	if err != nil {
		return Result{}, err
	}
	rank := pShape[0]
	b, err := t.get("kernel.B", "(1, n_ssm, N/2, 2)", []int{s, n2, 2})
	if err != nil {
		return Result{}, err
	}
	cShape := []int{-1, -1, n2, 2}
	c, err := t.get("kernel.C", "(channels, H, N/2, 2)", cShape)
	if err != nil {
		return Result{}, err
	}
	chans, h := cShape[0], cShape[1]
	if h%s != 0 {
		return Result{}, invalidf("%d SSMs (A_real's rows) do not divide H = %d (C's second dimension)", s, h)
	}
	inv, err := t.get("kernel.inv_dt", "(H, 1)", []int{h, 1})
	if err != nil {
		return Result{}, err
	}
	var d *arrays.Array
	if t.has("D") {
		if d, err = t.get("D", "(channels, H)", []int{chans, h}); err != nil {
			return Result{}, err
		}
	}
	lk, err := o.s4Length()
	if err != nil {
		return Result{}, err
	}
	lkNote := "--length"
	// Why C is taken as stored, where it is: the buffer says 0, or there is none to say.
	stored := "l_kernel is 0"
	if t.has("kernel.l_kernel") {
		t.names = append(t.names, t.prefix+"kernel.l_kernel") // the kernel's buffer, read or not
	}
	if lk == 0 {
		v, ok, err := t.kernelLength()
		if err != nil {
			return Result{}, fmt.Errorf("%w (give --length L, the kernel length C̃ was made for, instead)", err)
		}
		switch _, given := o.Values["length"]; {
		case ok:
			lk, lkNote = v, "l_kernel"
		case given:
			stored = "no l_kernel buffer, and --length 0"
		default:
			stored = "no l_kernel buffer and no --length"
		}
	}
	n := 2 * n2
	out := make([]filters.Filter, 0, chans*h)
	for ch := range chans {
		for hh := range h {
			ssm := hh % s
			dt := paramTransform(inv.Data[hh], dtT)
			a11 := make([]complex128, n2*n2)
			a12 := make([]complex128, n2*n2)
			for i := range n2 {
				a11[i*n2+i] = complex(-paramTransform(aRe.Data[ssm*n2+i], reT), -paramTransform(aIm.Data[ssm*n2+i], imT))
			}
			for r := range rank {
				for i := range n2 {
					pi := complexAt(pp, (r*s+ssm)*n2+i)
					for j := range n2 {
						pj := complexAt(pp, (r*s+ssm)*n2+j)
						a11[i*n2+j] -= pi * cmplx.Conj(pj)
						a12[i*n2+j] -= pi * pj
					}
				}
			}
			am := make([][]float64, n)
			for i := range am {
				am[i] = make([]float64, n)
			}
			bv, cv := make([]float64, n), make([]float64, n)
			for i := range n2 {
				for j := range n2 {
					sum, diff := a11[i*n2+j]+a12[i*n2+j], a11[i*n2+j]-a12[i*n2+j]
					am[i][j], am[i][n2+j] = real(sum), -imag(diff)
					am[n2+i][j], am[n2+i][n2+j] = imag(sum), real(diff)
				}
				bi := complexAt(b, ssm*n2+i)
				bv[i], bv[n2+i] = real(bi), imag(bi)
				ci := complexAt(c, (ch*h+hh)*n2+i)
				cv[i], cv[n2+i] = 2*real(ci), -2*imag(ci)
			}
			sys, err := filters.NewDense(am, bv, cv, 0)
			if err != nil {
				return Result{}, fmt.Errorf("channel %d: %w", ch*h+hh, err)
			}
			f, err := (&filters.Continuous{System: sys, Dt: dt, Method: filters.Bilinear}).Discretize()
			if err != nil {
				return Result{}, fmt.Errorf("channel %d: %w", ch*h+hh, err)
			}
			dd := f.(*filters.Dense)
			if lk > 0 {
				if dd.C, err = untruncate(dd, lk); err != nil {
					return Result{}, fmt.Errorf("channel %d: %w", ch*h+hh, err)
				}
			}
			if d != nil {
				dd.D = d.Data[ch*h+hh]
			}
			g, err := filters.FromS4(dd)
			if err != nil {
				return Result{}, fmt.Errorf("channel %d: %w", ch*h+hh, err)
			}
			out = append(out, g)
		}
	}
	bank, err := filters.NewBank(out)
	if err != nil {
		return Result{}, err
	}
	what := fmt.Sprintf("bank of %s of order %d (rank %d, bilinear, dt_transform %s, S4 convention", plural.Count(len(out), "dense channel"), n, rank, dtT)
	if lk > 0 {
		what += fmt.Sprintf(", C̃ = C(I − Āᴸ) undone for L = %d from %s)", lk, lkNote)
	} else {
		what += ", C taken as stored: " + stored + ")"
	}
	r := Result{Bank: bank, Note: t.note(what)}
	if w := dtTransformWarning(o, inv.Data); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if s < h && chans == 1 {
		// Its SSMs' diagonal parts Λ (the S4D paper's diagonal approximation of the same
		// SSM) and its steps: where a fit written as s4d with the SSMs still shared starts.
		r.Shared = readSharedModes(aRe, aIm, inv, s, h, reT, imT, dtT)
	}
	if d == nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no %q: the direct term D is taken as 0", t.prefix+"D"))
	}
	return r, nil
}

// maxUntruncateCond bounds the condition number of I − Āᴸ that untruncate accepts.
const maxUntruncateCond = 1e12

// untruncate solves C·(I − Āᴸ) = C̃ for C, with Āᴸ by repeated squaring.
func untruncate(f *filters.Dense, l int) ([]float64, error) {
	n := f.Order()
	pow := mat.NewDense(n, n, nil)
	for i := range n {
		pow.Set(i, i, 1)
	}
	sq := mat.DenseCopyOf(f.A)
	for e := l; e > 0; e >>= 1 {
		if e&1 == 1 {
			pow.Mul(pow, sq)
		}
		if e > 1 {
			sq.Mul(sq, sq)
		}
	}
	m := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			v := -pow.At(i, j)
			if i == j {
				v++
			}
			m.Set(i, j, v)
		}
	}
	var lu mat.LU
	lu.Factorize(m)
	if cond := lu.Cond(); !(cond <= maxUntruncateCond) {
		return nil, invalidf("undoing C̃ = C(I − Āᴸ) is ill-conditioned (condition number %.2g of I − Āᴸ for L = %d): a pole lies on or near the unit circle", cond, l)
	}
	var x mat.VecDense
	if err := lu.SolveVecTo(&x, true, mat.NewVecDense(n, append([]float64(nil), f.C...))); err != nil {
		return nil, invalidf("undoing C̃: %v", err)
	}
	return x.RawVector().Data, nil
}
