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
func radix16AVX2(dst, src, w []complex128, l, s, step int, inverse bool)

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

// fuse16 says whether radix16 runs the two stages of s sub-transforms of length l at once:
// for s ≥ 2, and only for transforms of 2048 points or more, whose buffers and twiddles
// outgrow a 48 KiB L1 cache and where a pass saved is a trip through L2 saved (complex
// n = 2048 and 4096 10% and 15% faster); on smaller ones the kernel's trip through its frame
// and its twiddles' loads cost as much as the pass (complex n = 1024 4% slower).
func fuse16(l, s int) bool { return useAsm && s >= 2 && l*s >= 2048 }

// radix16 is the radix-4 stages of s sub-transforms of length l ≥ 16 and of the 4s of
// length l/4 after it in one pass: the two stages' operations without the pass through
// memory between them.
func (tw *Table) radix16(src, dst []complex128, l, s int, inverse bool) {
	radix16AVX2(dst[:l*s], src[:l*s], tw.w, l, s, tw.n/l, inverse)
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
