//go:build !amd64 || noasm || amd64.v3

package train

// sumsAsm is false: the Go loops of varpro_sums.go do all the sums (see varpro_sums_amd64.go).
var sumsAsm = false

func projectPairs(poleBasis, []float64, []complex128, []complex128) int { return 0 }

func residualPairs(poleBasis, []float64, []float64) int { return 0 }
