//go:build !noasm

package vec

import "golang.org/x/sys/cpu"

// useAsm says whether the AVX2 kernels of vec_amd64.s run (they need FMA too); built with
// the noasm tag, the Go loops run everywhere.
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(x, y []float64) float64

//go:noescape
func axpyAVX2(a float64, x, y []float64)

//go:noescape
func subOuterUpperAVX2(x, h []float64, stride int)

//go:noescape
func subOuterAVX2(a, x, b []float64, stride int)

//go:noescape
func reflectAVX2(v, data []float64, stride, count int, uu float64)
