//go:build !amd64 || noasm

package vec

const useAsm = false

func dotAVX2(x, y []float64) float64 { panic("vec: no AVX2 kernels in this build") }

func axpyAVX2(a float64, x, y []float64) { panic("vec: no AVX2 kernels in this build") }

func subOuterUpperAVX2(x, h []float64, stride int) {
	panic("vec: no AVX2 kernels in this build")
}

func subOuterAVX2(a, x, b []float64, stride int) { panic("vec: no AVX2 kernels in this build") }

func reflectAVX2(v, data []float64, stride, count int, uu float64) {
	panic("vec: no AVX2 kernels in this build")
}
