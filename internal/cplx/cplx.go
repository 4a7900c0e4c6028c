// Package cplx holds complex numbers as JSON does: each an [re, im] pair of float64s, the
// convention of ssmlab's outputs, work files and golden files (the filter file format's own
// codec streams the same pairs: filters/filterfile).
package cplx

// Pairs returns z as [re, im] pairs (an empty, non-nil slice for none).
func Pairs(z []complex128) [][2]float64 {
	out := make([][2]float64, len(z))
	for i, v := range z {
		out[i] = [2]float64{real(v), imag(v)}
	}
	return out
}

// FromPairs returns the complex numbers of [re, im] pairs.
func FromPairs(p [][2]float64) []complex128 {
	out := make([]complex128, len(p))
	for i, v := range p {
		out[i] = complex(v[0], v[1])
	}
	return out
}
