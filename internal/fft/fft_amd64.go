//go:build !noasm && !amd64.v3

package fft

import "golang.org/x/sys/cpu"

// useAsm says whether the stages and the real transforms' twiddling run in the AVX2 kernels
// of fft_amd64.s: on amd64 with AVX2, unless built with the noasm tag or for GOAMD64=v3,
// where the compiler fuses the Go code's complex products (FMA) and the kernels, which round
// every product as the default build does, would no longer give its results bit for bit.
var useAsm = cpu.X86.HasAVX2

// The kernels do, lane by lane, what the Go loops they stand for do, in the same order; each
// YMM register holds two complex values.

//go:noescape
func radix4AVX2(dst, src, w []complex128, m, s, step int, inverse bool)

//go:noescape
func radix4FirstAVX2(dst, src, w []complex128, m, step int, inverse bool)

//go:noescape
func radix2AVX2(dst, src []complex128, s int)

//go:noescape
func radix8LastAVX2(dst, src, w []complex128, s, step int, inverse bool)

//go:noescape
func realForwardPostsAVX2(dst, z, w []complex128)

//go:noescape
func realInversePresAVX2(y, c, w []complex128)

// radix4 is one radix-4 stage (radix4Forward or radix4Inverse): the kernel for s ≥ 2 runs
// two sub-transforms' butterflies at once, the one for s = 1 two butterflies of the one
// sub-transform.
func (tw *Table) radix4(src, dst []complex128, l, s int, inverse bool) {
	switch {
	case useAsm && s >= 2:
		radix4AVX2(dst, src[:l*s], tw.w, l/4, s, tw.n/l, inverse)
	case useAsm && l >= 8:
		radix4FirstAVX2(dst[:l], src[:l], tw.w, l/4, tw.n/l, inverse)
	default:
		tw.radix4Go(src, dst, l, s, inverse)
	}
}

// fuse8 says whether radix8Last runs the stages of s sub-transforms of length 8 (s ≥ 2).
func fuse8(s int) bool { return useAsm && s >= 2 }

// radix8Last is the radix-4 stage of s sub-transforms of length 8 and the radix-2 stage after
// it in one pass: the two stages' operations without the pass through memory between them.
func (tw *Table) radix8Last(src, dst []complex128, s int, inverse bool) {
	radix8LastAVX2(dst[:8*s], src[:8*s], tw.w, s, tw.n/8, inverse)
}

// radix2 is the final radix-2 stage (radix2Go).
func radix2(src, dst []complex128, s int) {
	if useAsm && s >= 2 {
		radix2AVX2(dst[:2*s], src[:2*s], s)
		return
	}
	radix2Go(src, dst, s)
}

// realForwardPosts is realForwardPostsGo.
func realForwardPosts(dst, z, w []complex128) {
	if useAsm {
		realForwardPostsAVX2(dst, z, w)
		return
	}
	realForwardPostsGo(dst, z, w)
}

// realInversePres is realInversePresGo.
func realInversePres(y, c, w []complex128) {
	if useAsm {
		realInversePresAVX2(y, c, w)
		return
	}
	realInversePresGo(y, c, w)
}
