//go:build !noasm && !amd64.v3

package train

import "golang.org/x/sys/cpu"

// sumsAsm says whether the pairs' sums run in the AVX2 kernels of varpro_sums_amd64.s:
// on amd64 with AVX2, unless built with the noasm tag or for GOAMD64=v3, where the compiler
// fuses the Go code's multiply-adds (FMA) and the kernels, which round every product as the
// default build does, would no longer give its results bit for bit.
var sumsAsm = cpu.X86.HasAVX2

// The kernels take the pairs in fours (len(mu) a multiple of 4) and do, lane by lane,
// what cpuSums' Go loops do for each pair.

//go:noescape
func projectAVX2(mu []complex128, x []float64, v0, v1 []complex128)

//go:noescape
func project0AVX2(mu []complex128, x []float64, v0 []complex128)

//go:noescape
func residualAVX2(mu []complex128, c, e []float64)

// asmPairs is how many of b's pairs the kernels take: the largest multiple of 4.
func asmPairs(b poleBasis) int {
	if !sumsAsm {
		return 0
	}
	return b.pairs &^ 3
}

// projectPairs runs project's (v1 != nil) or project0's pairs in fours and returns how many.
func projectPairs(b poleBasis, x []float64, v0, v1 []complex128) int {
	k := asmPairs(b)
	if k == 0 {
		return 0
	}
	if v1 == nil {
		project0AVX2(b.mu[:k], x, v0[:k])
	} else {
		projectAVX2(b.mu[:k], x, v0[:k], v1[:k])
	}
	return k
}

// residualPairs adds the pairs' terms to e in fours and returns how many pairs it took.
func residualPairs(b poleBasis, c, e []float64) int {
	k := asmPairs(b)
	if k == 0 {
		return 0
	}
	residualAVX2(b.mu[:k], c[:2*k], e)
	return k
}
