package fft

// The stages and the real transforms' twiddling, by the Go loops.

func (tw *Table) radix4(src, dst []complex128, l, s int, inverse bool) {
	tw.radix4Go(src, dst, l, s, inverse)
}

func radix2(src, dst []complex128, s int) { radix2Go(src, dst, s) }

func realForwardPosts(dst, z, w []complex128) { realForwardPostsGo(dst, z, w) }

func realInversePres(y, c, w []complex128) { realInversePresGo(y, c, w) }
