package filters

import (
	"context"
	"errors"
	"math"
	"math/cmplx"
)

// The poles, zeros and spectral radius of a filter in any form.

// cheapRadius returns the spectral radius when the form holds its poles.
func cheapRadius(f Filter) (float64, error) {
	switch s := f.(type) {
	case *Diagonal:
		return maxAbs(s.Poles), nil
	case *ZPK:
		return maxAbs(s.Poles), nil
	case *Rotation:
		rho := 0.0
		for _, b := range s.Blocks {
			rho = math.Max(rho, b.Radius)
		}
		for _, r := range s.Real {
			rho = math.Max(rho, math.Abs(r))
		}
		return rho, nil
	}
	return 0, errors.New("no stored poles")
}

func maxAbs(v []complex128) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, cmplx.Abs(x))
	}
	return m
}

// Poles returns the poles of f in the package's order: those a PoleMover holds, the
// eigenvalues of a dense A, the roots of a denominator.
func Poles(f Filter) ([]complex128, error) { return PolesContext(context.Background(), f) }

// PolesContext is Poles, giving up with ctx's error when ctx is done while the roots of a
// polynomial are sought (a front end's way out of a long computation).
func PolesContext(ctx context.Context, f Filter) ([]complex128, error) {
	var p []complex128
	switch s := f.(type) {
	case PoleMover:
		p = s.HeldPoles()
	case *Dense:
		var err error
		if p, err = eigenvalues(s.A); err != nil {
			return nil, err
		}
	case *Companion:
		r, err := rootsMonicContext(ctx, s.Den)
		return SortRoots(r), err
	case *TransferFunction:
		r, err := rootsMonicContext(ctx, s.Den)
		return SortRoots(r), err
	default:
		return nil, invalidf("unsupported filter type %T", f)
	}
	return SortRoots(p), nil
}

// Zeros returns the zeros of H(z), computed from the system's zero dynamics.
func Zeros(f Filter) ([]complex128, error) {
	if s, ok := f.(*ZPK); ok && s.H0 != 0 {
		// Its stored zeros are those of Gain·Π(z-zᵢ)/Π(z-pᵢ); the offset moves them.
		d, _, err := toDense(s)
		if err != nil {
			return nil, err
		}
		f = d
	}
	z, _, err := toZPK(f)
	if err != nil {
		return nil, err
	}
	return z.Zeros, nil
}

// SpectralRadius returns max |pᵢ|; a filter is stable when it is below one.
func SpectralRadius(f Filter) (float64, error) {
	if rho, err := cheapRadius(f); err == nil {
		return rho, nil
	}
	p, err := Poles(f)
	if err != nil {
		return 0, err
	}
	return maxAbs(p), nil
}
