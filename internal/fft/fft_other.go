//go:build !amd64 || noasm || amd64.v3

package fft

// useAsm is false: the Go loops do everything (see fft_amd64.go).
const useAsm = false

func (tw *Table) radix4(src, dst []complex128, l, s int, inverse bool) {
	tw.radix4Go(src, dst, l, s, inverse)
}

func fuse16(l, s int) bool { return false }

func (tw *Table) radix16(src, dst []complex128, l, s int, inverse bool) {
	panic("fft: no fused stages in this build")
}

func fuse8(s int) bool { return false }

func (tw *Table) radix8Last(src, dst []complex128, s int, inverse bool) {
	panic("fft: no fused stage in this build")
}

func radix2(src, dst []complex128, s int) { radix2Go(src, dst, s) }

func realForwardPosts(dst, z, w []complex128) { realForwardPostsGo(dst, z, w) }

func realInversePres(y, c, w []complex128) { realInversePresGo(y, c, w) }
