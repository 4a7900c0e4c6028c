package layouts

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The RotRNN layout (RotRNN paper, §3 and Appendix C's JAX listing): per head h of size k,
// A_h = γ_h·P_h·R(θ_h)·P_hᵀ with P_h = expm(M_h − M_hᵀ), γ_h = exp(−exp(gamma_log_h)); B is
// normalised per head by ξ_h = sqrt((1 − γ_h²) / tr(B_hᵀB_h)) (eq. 11); the state is updated
// before the output, y = C x + D ⊙ u.

func init() { impls[RotRNN] = rotrnnLayout{} }

type rotrnnLayout struct{}

func (rotrnnLayout) params() []string {
	return []string{"gamma_log", "thetas", "theta", "M", "B", "C", "D"}
}

func thetaName(in map[string]arrays.Info, p string) string {
	if _, ok := in[p+"thetas"]; ok {
		return "thetas"
	}
	return "theta"
}

func (rotrnnLayout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	m := shapeOf(in, p+"M", 3)
	th := shapeOf(in, p+thetaName(in, p), 2)
	if m == nil || th == nil || shapeOf(in, p+"gamma_log", 2) == nil {
		return Layer{}, false
	}
	l := Layer{Order: m[0] * m[1], DType: in[p+"M"].DType, Options: map[string]string{"heads": fmt.Sprint(m[0])}}
	if b := shapeOf(in, p+"B", 3); b != nil {
		l.Channels = b[2]
		l.Options["inputs"] = fmt.Sprint(b[2])
	}
	return l, true
}

func (rotrnnLayout) read(t *tensors, l Layer, o Options) (Result, error) {
	mShape := []int{-1, -1, -1}
	mm, err := t.get("M", "(heads, k, k)", mShape)
	if err != nil {
		return Result{}, err
	}
	heads, k := mShape[0], mShape[1]
	if mShape[2] != k || k%2 != 0 {
		return Result{}, invalidf("the tensor %q has shape (%d, %d, %d), want (heads, k, k) with k even", t.prefix+"M", heads, k, mShape[2])
	}
	name := "thetas"
	if !t.has(name) {
		name = "theta"
	}
	th, err := t.get(name, "(heads, k/2)", []int{heads, k / 2})
	if err != nil {
		return Result{}, err
	}
	gl, err := t.get("gamma_log", "(heads, 1)", []int{heads, 1})
	if err != nil {
		return Result{}, err
	}
	bShape := []int{heads, k, -1}
	b, err := t.get("B", "(heads, k, d_u)", bShape)
	if err != nil {
		return Result{}, err
	}
	ins := bShape[2]
	cShape := []int{-1, heads * k}
	c, err := t.get("C", "(d_u, heads·k)", cShape)
	if err != nil {
		return Result{}, err
	}
	outs := cShape[0]
	d, err := t.get("D", "(d_u)", []int{ins})
	if err != nil {
		return Result{}, err
	}
	hs := make([]filters.RotRNNHead, heads)
	xi := make([]float64, heads)
	for h := range heads {
		g := math.Exp(-math.Exp(gl.Data[h]))
		rows := make([][]float64, k)
		for i := range rows {
			rows[i] = mm.Data[(h*k+i)*k : (h*k+i+1)*k]
		}
		hs[h] = filters.RotRNNHead{M: rows, Gamma: g, Theta: th.Data[h*k/2 : (h+1)*k/2]}
		tr := 0.0
		for i := range k * ins {
			tr += b.Data[h*k*ins+i] * b.Data[h*k*ins+i]
		}
		if tr == 0 {
			return Result{}, invalidf("head %d: B is zero, so its normalisation sqrt((1 − γ²)/tr(BᵀB)) is undefined", h)
		}
		xi[h] = math.Sqrt((1 - g*g) / tr)
	}
	bank, warn, err := pairBank(RotRNN, o, outs, ins, func(po, pi int) (filters.Filter, error) {
		dv := 0.0 // D ⊙ u acts on each channel's own input alone
		if po == pi {
			dv = d.Data[po]
		}
		bv := make([]float64, heads*k)
		for h := range heads {
			for j := range k {
				bv[h*k+j] = xi[h] * b.Data[(h*k+j)*ins+pi]
			}
		}
		f, err := filters.NewRotationFromRotRNN(hs, bv, c.Data[po*heads*k:(po+1)*heads*k], dv)
		if err != nil {
			return nil, err
		}
		return filters.FromS4(f)
	})
	if err != nil {
		return Result{}, err
	}
	m, err := rotrnnMIMO(hs, xi, b.Data, c.Data, d.Data, ins, outs)
	if err != nil {
		return Result{}, err
	}
	return Result{Bank: bank, MIMO: m, Note: t.note(fmt.Sprintf("bank of %s of order %d (%d heads, S4 convention)", plural.Count(len(bank.Channels), "rotation channel"), heads*k, heads)),
		Warnings: []string{warn}, Pairs: []string{warn}}, nil
}

// rotrnnMIMO is the layer as modes: with x̂ = Pᵀx each pair of states (a, b) of a head turns
// by γR(θ), so z = a + i·b is a mode of pole γe^{iθ}, its B row (PᵀB̃)_a + i(PᵀB̃)_b with
// B̃ = ξ·B, and its C column (CP)_a − i(CP)_b, since (CP)_a·a + (CP)_b·b = Re(((CP)_a −
// i(CP)_b)·z).
func rotrnnMIMO(hs []filters.RotRNNHead, xi, b, c, d []float64, ins, outs int) (*filters.MIMO, error) {
	k := len(hs[0].M)
	n := len(hs) * k
	rot, err := filters.NewRotationFromRotRNN(hs, make([]float64, n), make([]float64, n), 0)
	if err != nil {
		return nil, err
	}
	modes := n / 2
	poles := make([]complex128, modes)
	mb := make([]complex128, modes*ins)
	mc := make([]complex128, outs*modes)
	for q, blk := range rot.Blocks {
		poles[q] = cmplx.Rect(blk.Radius, blk.Angle)
		h := 2 * q / k
		for i := range ins {
			var ra, rb float64 // (PᵀB̃)_a, (PᵀB̃)_b over the head's states
			for j := h * k; j < (h+1)*k; j++ {
				bj := xi[h] * b[j*ins+i]
				ra += rot.P.At(j, 2*q) * bj
				rb += rot.P.At(j, 2*q+1) * bj
			}
			mb[q*ins+i] = complex(ra, rb)
		}
		for o := range outs {
			var ca, cb float64 // (CP)_a, (CP)_b
			for j := h * k; j < (h+1)*k; j++ {
				ca += c[o*n+j] * rot.P.At(j, 2*q)
				cb += c[o*n+j] * rot.P.At(j, 2*q+1)
			}
			mc[o*modes+q] = complex(ca, -cb)
		}
	}
	dm := make([]float64, outs*ins)
	for o := range min(outs, ins) {
		dm[o*ins+o] = d[o]
	}
	return filters.NewMIMO(poles, mb, mc, dm, ins, outs)
}
