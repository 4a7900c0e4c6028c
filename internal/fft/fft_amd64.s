//go:build !noasm && !amd64.v3

#include "textflag.h"

// AVX2 kernels of fft.go's stages and real.go's twiddling, two complex values (re, im, re, im)
// per YMM register. Each does the Go code's operations in its order, without FMA (Go rounds
// every product); where the Go code negates or swaps parts, the kernels flip sign bits and
// permute, which is exact, and a − (−b) is a + b to the bit.

// SWAPRI swaps each complex value's real and imaginary parts.
#define SWAPRI(x, out) VPERMILPD $5, x, out

// CMUL is Go's complex product out = w·x of x by the twiddles whose real parts are in wr and
// imaginary parts in wi: (xr·wr − xi·wi) + i(xi·wr + xr·wi). x is kept; tmp is scratch.
#define CMUL(x, wr, wi, tmp, out) \
	SWAPRI(x, tmp); \
	VMULPD wi, tmp, tmp; \
	VMULPD wr, x, out; \
	VADDSUBPD tmp, out, out

// BFLY is the radix-4 butterfly of a, b, c, d in Y0–Y3 before the twiddles: apc = a + c,
// amc = a − c, bpd = b + d, bmd = b − d, t = ±i·bmd (Y14 flips the sign bit: the real part
// forward, t = i·bmd; the imaginary part inverse, t = −i·bmd). Out: y0 = apc + bpd in Y2,
// y1 = amc − t in Y3, y2 = apc − bpd in Y4, y3 = amc + t in Y0; Y1 and Y5 scratch.
#define BFLY \
	VADDPD Y2, Y0, Y4; \
	VSUBPD Y2, Y0, Y0; \
	VADDPD Y3, Y1, Y5; \
	VSUBPD Y3, Y1, Y1; \
	SWAPRI(Y1, Y1); \
	VXORPD Y14, Y1, Y1; \
	VADDPD Y5, Y4, Y2; \
	VSUBPD Y5, Y4, Y4; \
	VSUBPD Y1, Y0, Y3; \
	VADDPD Y1, Y0, Y0

// MASKS sets Y14 to the sign bits BFLY flips and Y15 to those that conjugate the twiddles'
// imaginary parts (none forward), by the bool at inv.
#define MASKS(inv, FWD) \
	VXORPD Y15, Y15, Y15; \
	VMOVUPD signre<>(SB), Y14; \
	CMPB   inv, $0; \
	JEQ    FWD; \
	VMOVUPD signim<>(SB), Y14; \
	VMOVUPD signall<>(SB), Y15; \
FWD: \
	NOP

DATA signre<>+0(SB)/8, $0x8000000000000000
DATA signre<>+8(SB)/8, $0
DATA signre<>+16(SB)/8, $0x8000000000000000
DATA signre<>+24(SB)/8, $0
GLOBL signre<>(SB), RODATA|NOPTR, $32

DATA signim<>+0(SB)/8, $0
DATA signim<>+8(SB)/8, $0x8000000000000000
DATA signim<>+16(SB)/8, $0
DATA signim<>+24(SB)/8, $0x8000000000000000
GLOBL signim<>(SB), RODATA|NOPTR, $32

DATA signall<>+0(SB)/8, $0x8000000000000000
DATA signall<>+8(SB)/8, $0x8000000000000000
DATA signall<>+16(SB)/8, $0x8000000000000000
DATA signall<>+24(SB)/8, $0x8000000000000000
GLOBL signall<>(SB), RODATA|NOPTR, $32

DATA half<>+0(SB)/8, $0.5
DATA half<>+8(SB)/8, $0.5
DATA half<>+16(SB)/8, $0.5
DATA half<>+24(SB)/8, $0.5
GLOBL half<>(SB), RODATA|NOPTR, $32

// func radix4AVX2(dst, src, w []complex128, m, s, step int, inverse bool)
//
// radix4Forward (radix4Inverse when inverse) for s ≥ 2, even: for each p < m, the s
// sub-transforms' butterflies two at a time, a = src[s·p + q], b, c, d m·s further on each,
// y0…y3 = dst[4s·p + q], s further on each; twiddles w[p·step], w[2p·step], w[3p·step]
// (none at p = 0, as in Go).
TEXT ·radix4AVX2(SB), NOSPLIT, $8-97
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ w_base+48(FP), DX
	MOVQ m+72(FP), R8
	MOVQ s+80(FP), R11
	SHLQ $4, R11            // 16s: y1's offset from y0, in bytes
	IMULQ R11, R8           // 16sm: b's offset from a
	LEAQ (R8)(R8*1), R9     // c's
	LEAQ (R9)(R8*1), R10    // d's
	LEAQ (R11)(R11*1), R12  // y2's
	LEAQ (R12)(R11*1), R13  // y3's
	MOVQ step+88(FP), AX
	SHLQ $4, AX
	MOVQ AX, stride-8(SP)   // 16·step: the twiddles' offset per p, in bytes
	MASKS(inverse+96(FP), r4fwd)

	// p = 0: no twiddles.
	MOVQ s+80(FP), CX
	SHRQ $1, CX

r4p0:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R9*1), Y2
	VMOVUPD (SI)(R10*1), Y3
	BFLY
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, (DI)(R11*1)
	VMOVUPD Y4, (DI)(R12*1)
	VMOVUPD Y0, (DI)(R13*1)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     r4p0
	ADDQ    R13, DI

	MOVQ m+72(FP), BX
	DECQ BX
	JZ   r4done
	XORQ AX, AX

r4p:
	ADDQ         stride-8(SP), AX
	VBROADCASTSD (DX)(AX*1), Y8
	VBROADCASTSD 8(DX)(AX*1), Y9
	VBROADCASTSD (DX)(AX*2), Y10
	VBROADCASTSD 8(DX)(AX*2), Y11
	LEAQ         (AX)(AX*2), CX
	VBROADCASTSD (DX)(CX*1), Y12
	VBROADCASTSD 8(DX)(CX*1), Y13
	VXORPD       Y15, Y9, Y9
	VXORPD       Y15, Y11, Y11
	VXORPD       Y15, Y13, Y13
	MOVQ         s+80(FP), CX
	SHRQ         $1, CX

r4q:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R9*1), Y2
	VMOVUPD (SI)(R10*1), Y3
	BFLY
	VMOVUPD Y2, (DI)
	CMUL(Y3, Y8, Y9, Y5, Y6)
	VMOVUPD Y6, (DI)(R11*1)
	CMUL(Y4, Y10, Y11, Y5, Y7)
	VMOVUPD Y7, (DI)(R12*1)
	CMUL(Y0, Y12, Y13, Y5, Y1)
	VMOVUPD Y1, (DI)(R13*1)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     r4q
	ADDQ    R13, DI
	DECQ    BX
	JNZ     r4p

r4done:
	VZEROUPPER
	RET

// FIRSTTW loads the twiddles of butterflies p and p + 1 (AX = 16p·step bytes, R11 = 16·step)
// for radix4FirstAVX2: w[p·step] and w[(p+1)·step] split into real parts (Y8) and imaginary
// parts (Y9), w[2p·step]… into Y10 and Y11, w[3p·step]… into Y12 and Y13. R12, R13 scratch.
#define FIRSTTW \
	VMOVUPD     (DX)(AX*1), X8; \
	LEAQ        (AX)(R11*1), R12; \
	VINSERTF128 $1, (DX)(R12*1), Y8, Y8; \
	LEAQ        (AX)(AX*1), R12; \
	VMOVUPD     (DX)(R12*1), X10; \
	LEAQ        (R12)(R11*2), R13; \
	VINSERTF128 $1, (DX)(R13*1), Y10, Y10; \
	LEAQ        (AX)(AX*2), R12; \
	VMOVUPD     (DX)(R12*1), X12; \
	LEAQ        (R12)(R11*2), R13; \
	ADDQ        R11, R13; \
	VINSERTF128 $1, (DX)(R13*1), Y12, Y12; \
	VPERMILPD   $15, Y8, Y9; \
	VMOVDDUP    Y8, Y8; \
	VPERMILPD   $15, Y10, Y11; \
	VMOVDDUP    Y10, Y10; \
	VPERMILPD   $15, Y12, Y13; \
	VMOVDDUP    Y12, Y12; \
	VXORPD      Y15, Y9, Y9; \
	VXORPD      Y15, Y11, Y11; \
	VXORPD      Y15, Y13, Y13

// FIRSTLOAD loads a, b, c, d of butterflies p and p + 1 and runs BFLY and the twiddles:
// y0 in Y2, y1 in Y6, y2 in Y7, y3 in Y1 (before the twiddles: Y3, Y4, Y0).
#define FIRSTLOAD \
	VMOVUPD (SI), Y0; \
	VMOVUPD (SI)(R8*1), Y1; \
	VMOVUPD (SI)(R9*1), Y2; \
	VMOVUPD (SI)(R10*1), Y3; \
	BFLY; \
	CMUL(Y3, Y8, Y9, Y5, Y6); \
	CMUL(Y4, Y10, Y11, Y5, Y7); \
	CMUL(Y0, Y12, Y13, Y5, Y1)

// FIRSTSTORE stores butterfly p's y0…y3 and then p + 1's at DI (their lanes transposed).
#define FIRSTSTORE \
	VPERM2F128 $0x20, Y6, Y2, Y3; \
	VMOVUPD    Y3, (DI); \
	VPERM2F128 $0x20, Y1, Y7, Y4; \
	VMOVUPD    Y4, 32(DI); \
	VPERM2F128 $0x31, Y6, Y2, Y3; \
	VMOVUPD    Y3, 64(DI); \
	VPERM2F128 $0x31, Y1, Y7, Y4; \
	VMOVUPD    Y4, 96(DI); \
	ADDQ       $32, SI; \
	ADDQ       $128, DI; \
	LEAQ       (AX)(R11*2), AX

// func radix4FirstAVX2(dst, src, w []complex128, m, step int, inverse bool)
//
// radix4Forward (radix4Inverse when inverse) for s = 1 and m ≥ 2, even: butterflies p and
// p + 1 at once, a = src[p], b = src[p + m], c, d; y0…y3 = dst[4p…4p+3]. Butterfly 0 takes
// no twiddles, as in Go: its lanes are taken from before the products.
TEXT ·radix4FirstAVX2(SB), NOSPLIT, $0-89
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ w_base+48(FP), DX
	MOVQ m+72(FP), R8
	SHLQ $4, R8             // 16m: b's offset from a, in bytes
	LEAQ (R8)(R8*1), R9     // c's
	LEAQ (R9)(R8*1), R10    // d's
	MOVQ step+80(FP), R11
	SHLQ $4, R11            // 16·step
	MASKS(inverse+88(FP), r1fwd)
	MOVQ m+72(FP), BX
	SHRQ $1, BX
	XORQ AX, AX

	// Butterflies 0 and 1.
	FIRSTTW
	FIRSTLOAD
	VBLENDPD $3, Y3, Y6, Y6
	VBLENDPD $3, Y4, Y7, Y7
	VBLENDPD $3, Y0, Y1, Y1
	FIRSTSTORE
	DECQ     BX
	JZ       r1done

r1loop:
	FIRSTTW
	FIRSTLOAD
	FIRSTSTORE
	DECQ BX
	JNZ  r1loop

r1done:
	VZEROUPPER
	RET

// func radix2AVX2(dst, src []complex128, s int)
//
// radix2Go for s ≥ 2, even: dst[q] = src[q] + src[q+s], dst[q+s] = src[q] − src[q+s].
TEXT ·radix2AVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ s+48(FP), CX
	MOVQ CX, R8
	SHLQ $4, R8             // 16s
	SHRQ $1, CX

r2loop:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VADDPD  Y1, Y0, Y2
	VSUBPD  Y1, Y0, Y3
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, (DI)(R8*1)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     r2loop
	VZEROUPPER
	RET

// REVCONJ loads entries j−1 and j of a complex array at ptr (pointing at j−1) as conj(j),
// conj(j−1) into out.
#define REVCONJ(ptr, out) \
	VMOVUPD    (ptr), out; \
	VPERM2F128 $1, out, out, out; \
	VXORPD     Y13, out, out

// TWPAIR loads twiddles k and k + 1 from (ptr) as their real parts (wr) and imaginary parts (wi).
#define TWPAIR(ptr, wr, wi) \
	VMOVUPD   (ptr), wr; \
	VPERMILPD $15, wr, wi; \
	VMOVDDUP  wr, wr

// func realForwardPostsAVX2(dst, z, w []complex128)
//
// realForwardPostsGo: for k = 1 … h−2 (h = len(z), h − 2 even), zk = z[k],
// zc = conj z[h−k], e = (zk + zc)·0.5, o = (zk − zc)·0.5 (Go's complex products by 0.5 + 0i:
// (r·0.5 − i·0) + i(i·0.5 + r·0)), p = w[k]·o, dst[k] = e + (im p − i·re p), two k at a time.
TEXT ·realForwardPostsAVX2(SB), NOSPLIT, $0-72
	MOVQ    dst_base+0(FP), DI
	MOVQ    z_base+24(FP), SI
	MOVQ    z_len+32(FP), CX
	MOVQ    w_base+48(FP), DX
	SUBQ    $2, CX
	SHRQ    $1, CX          // pairs
	JZ      rfdone
	MOVQ    CX, BX
	SHLQ    $5, BX
	LEAQ    (SI)(BX*1), BX  // z[h−2]: the pair z[h−k−1], z[h−k] for k = 1
	ADDQ    $16, DI
	ADDQ    $16, SI
	ADDQ    $16, DX
	VMOVUPD signim<>(SB), Y13
	VMOVUPD half<>(SB), Y14
	VXORPD  Y15, Y15, Y15

rfloop:
	VMOVUPD (SI), Y0
	REVCONJ(BX, Y1)
	VADDPD  Y1, Y0, Y2      // zk + zc
	VSUBPD  Y1, Y0, Y3      // zk − zc
	CMUL(Y2, Y14, Y15, Y4, Y5) // e
	CMUL(Y3, Y14, Y15, Y4, Y6) // o
	TWPAIR(DX, Y7, Y8)
	CMUL(Y6, Y7, Y8, Y4, Y9) // p
	SWAPRI(Y9, Y9)
	VXORPD  Y13, Y9, Y9     // im p − i·re p
	VADDPD  Y9, Y5, Y5
	VMOVUPD Y5, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	SUBQ    $32, BX
	DECQ    CX
	JNZ     rfloop

rfdone:
	VZEROUPPER
	RET

// func realInversePresAVX2(y, c, w []complex128)
//
// realInversePresGo: for k = 1 … h−2 (h = len(y), h − 2 even), xk = c[k], xc = conj c[h−k],
// e = xk + xc, o = (xk − xc)·conj w[k], y[k] = e + (−im o + i·re o), two k at a time.
TEXT ·realInversePresAVX2(SB), NOSPLIT, $0-72
	MOVQ    y_base+0(FP), DI
	MOVQ    y_len+8(FP), CX
	MOVQ    c_base+24(FP), SI
	MOVQ    w_base+48(FP), DX
	SUBQ    $2, CX
	SHRQ    $1, CX          // pairs
	JZ      ridone
	MOVQ    CX, BX
	SHLQ    $5, BX
	LEAQ    (SI)(BX*1), BX  // c[h−2]: the pair c[h−k−1], c[h−k] for k = 1
	ADDQ    $16, DI
	ADDQ    $16, SI
	ADDQ    $16, DX
	VMOVUPD signim<>(SB), Y13
	VMOVUPD signre<>(SB), Y14
	VMOVUPD signall<>(SB), Y15

riloop:
	VMOVUPD (SI), Y0
	REVCONJ(BX, Y1)
	VADDPD  Y1, Y0, Y2      // e
	VSUBPD  Y1, Y0, Y3      // xk − xc
	TWPAIR(DX, Y7, Y8)
	VXORPD  Y15, Y8, Y8     // conj w
	CMUL(Y3, Y7, Y8, Y4, Y9) // o
	SWAPRI(Y9, Y9)
	VXORPD  Y14, Y9, Y9     // −im o + i·re o
	VADDPD  Y9, Y2, Y2
	VMOVUPD Y2, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	SUBQ    $32, BX
	DECQ    CX
	JNZ     riloop

ridone:
	VZEROUPPER
	RET

// CMULM is CMUL with the twiddles' real and imaginary parts in memory.
#define CMULM(x, wr, wi, tmp, out) \
	SWAPRI(x, tmp); \
	VMULPD wi, tmp, tmp; \
	VMULPD wr, x, out; \
	VADDSUBPD tmp, out, out

// func radix8LastAVX2(dst, src, w []complex128, s, step int, inverse bool)
//
// The last radix-4 stage of sub-transforms of length l = 8 (m = 2) and the radix-2 stage
// after it, for s ≥ 2, even: butterfly p = 1 (twiddles w[step], w[2step], w[3step], kept
// broadcast on the stack) and p = 0 (none) of sub-transforms q and q + 1, then
// dst[js + q] = y_j(0) + y_j(1) and dst[(4+j)s + q] = y_j(0) − y_j(1): the two stages'
// operations without the pass through memory between them.
TEXT ·radix8LastAVX2(SB), NOSPLIT, $192-89
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ w_base+48(FP), DX
	MOVQ s+72(FP), R11
	SHLQ $4, R11            // 16s
	MASKS(inverse+88(FP), r8fwd)
	MOVQ step+80(FP), AX
	SHLQ $4, AX
	VBROADCASTSD (DX)(AX*1), Y8
	VBROADCASTSD 8(DX)(AX*1), Y9
	VBROADCASTSD (DX)(AX*2), Y10
	VBROADCASTSD 8(DX)(AX*2), Y11
	LEAQ         (AX)(AX*2), CX
	VBROADCASTSD (DX)(CX*1), Y12
	VBROADCASTSD 8(DX)(CX*1), Y13
	VXORPD       Y15, Y9, Y9
	VXORPD       Y15, Y11, Y11
	VXORPD       Y15, Y13, Y13
	VMOVUPD      Y8, 0(SP)
	VMOVUPD      Y9, 32(SP)
	VMOVUPD      Y10, 64(SP)
	VMOVUPD      Y11, 96(SP)
	VMOVUPD      Y12, 128(SP)
	VMOVUPD      Y13, 160(SP)
	LEAQ         (R11)(R11*1), R8  // 32s: b's offset from a
	LEAQ         (R8)(R8*1), R9    // 64s: c's
	LEAQ         (R9)(R8*1), R10   // 96s: d's
	LEAQ         (R8)(R11*1), R12  // 48s
	LEAQ         (R9)(R11*1), R13  // 80s
	LEAQ         (R10)(R11*1), DX  // 112s
	LEAQ         (SI)(R11*1), BX   // butterfly 1's a
	MOVQ         s+72(FP), CX
	SHRQ         $1, CX

r8loop:
	VMOVUPD (BX), Y0
	VMOVUPD (BX)(R8*1), Y1
	VMOVUPD (BX)(R9*1), Y2
	VMOVUPD (BX)(R10*1), Y3
	BFLY
	CMULM(Y3, 0(SP), 32(SP), Y5, Y6)
	CMULM(Y4, 64(SP), 96(SP), Y5, Y7)
	CMULM(Y0, 128(SP), 160(SP), Y5, Y8)
	VMOVAPD Y2, Y9
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R9*1), Y2
	VMOVUPD (SI)(R10*1), Y3
	BFLY
	VADDPD  Y9, Y2, Y1
	VSUBPD  Y9, Y2, Y2
	VMOVUPD Y1, (DI)
	VMOVUPD Y2, (DI)(R9*1)
	VADDPD  Y6, Y3, Y1
	VSUBPD  Y6, Y3, Y3
	VMOVUPD Y1, (DI)(R11*1)
	VMOVUPD Y3, (DI)(R13*1)
	VADDPD  Y7, Y4, Y1
	VSUBPD  Y7, Y4, Y4
	VMOVUPD Y1, (DI)(R8*1)
	VMOVUPD Y4, (DI)(R10*1)
	VADDPD  Y8, Y0, Y1
	VSUBPD  Y8, Y0, Y0
	VMOVUPD Y1, (DI)(R12*1)
	VMOVUPD Y0, (DI)(DX*1)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     r8loop
	VZEROUPPER
	RET

// The frame of radix16AVX2: the first stage's outputs T[k][j] at 128k + 32j, its twiddles'
// real and imaginary parts broadcast at TWA + 64(3k + j − 1) and 32 more, then the counters.
#define TWA 512
#define PLEFT 1280
#define TOFF 1288
#define TSTEP 1296

// R16A runs the first stage's butterfly k (a at BX) into T[k][·] at T0, its twiddles at
// W1…W3 (offsets of TWA's pairs); R16A_NOTW without twiddles.
#define R16A_LOAD \
	VMOVUPD (BX), Y0; \
	VMOVUPD (BX)(R8*1), Y1; \
	VMOVUPD (BX)(R9*1), Y2; \
	VMOVUPD (BX)(R10*1), Y3; \
	BFLY

#define R16A(T0, W1, W2, W3) \
	R16A_LOAD; \
	VMOVUPD Y2, T0(SP); \
	CMULM(Y3, W1(SP), W1+32(SP), Y5, Y6); \
	VMOVUPD Y6, T0+32(SP); \
	CMULM(Y4, W2(SP), W2+32(SP), Y5, Y7); \
	VMOVUPD Y7, T0+64(SP); \
	CMULM(Y0, W3(SP), W3+32(SP), Y5, Y1); \
	VMOVUPD Y1, T0+96(SP)

#define R16A_NOTW(T0) \
	R16A_LOAD; \
	VMOVUPD Y2, T0(SP); \
	VMOVUPD Y3, T0+32(SP); \
	VMOVUPD Y4, T0+64(SP); \
	VMOVUPD Y0, T0+96(SP)

// R16B runs the second stage's butterfly j, on T[·][j], into dst at BX, R13 apart (AX = 3·R13),
// with the twiddles of Y8–Y13, or none (R16B_NOTW).
#define R16B_LOAD(TJ) \
	VMOVUPD TJ(SP), Y0; \
	VMOVUPD TJ+128(SP), Y1; \
	VMOVUPD TJ+256(SP), Y2; \
	VMOVUPD TJ+384(SP), Y3; \
	BFLY; \
	VMOVUPD Y2, (BX)

#define R16B(TJ) \
	R16B_LOAD(TJ); \
	CMUL(Y3, Y8, Y9, Y5, Y6); \
	VMOVUPD Y6, (BX)(R13*1); \
	CMUL(Y4, Y10, Y11, Y5, Y7); \
	VMOVUPD Y7, (BX)(R13*2); \
	CMUL(Y0, Y12, Y13, Y5, Y1); \
	VMOVUPD Y1, (BX)(AX*1)

#define R16B_NOTW(TJ) \
	R16B_LOAD(TJ); \
	VMOVUPD Y3, (BX)(R13*1); \
	VMOVUPD Y4, (BX)(R13*2); \
	VMOVUPD Y0, (BX)(AX*1)

// R16TWA broadcasts the first stage's twiddles w[j·p·step], j = 1, 2, 3, of butterfly k
// (BX = 16p·step bytes) into W1…W3 of the frame. AX scratch.
#define R16TWA(W1, W2, W3) \
	VBROADCASTSD (DX)(BX*1), Y0; \
	VBROADCASTSD 8(DX)(BX*1), Y1; \
	VXORPD       Y15, Y1, Y1; \
	VMOVUPD      Y0, W1(SP); \
	VMOVUPD      Y1, W1+32(SP); \
	VBROADCASTSD (DX)(BX*2), Y0; \
	VBROADCASTSD 8(DX)(BX*2), Y1; \
	VXORPD       Y15, Y1, Y1; \
	VMOVUPD      Y0, W2(SP); \
	VMOVUPD      Y1, W2+32(SP); \
	LEAQ         (BX)(BX*2), AX; \
	VBROADCASTSD (DX)(AX*1), Y0; \
	VBROADCASTSD 8(DX)(AX*1), Y1; \
	VXORPD       Y15, Y1, Y1; \
	VMOVUPD      Y0, W3(SP); \
	VMOVUPD      Y1, W3+32(SP)

// R16TW sets the twiddles of butterfly group p (TOFF = 16p·step bytes): the first stage's
// butterflies p + k·l/16 on the frame (16·(l/16)·step = len(w) bytes apart in the table), the
// second stage's w[4j·p·step] in Y8–Y13. CX and BX scratch; AX is 3·R13 after.
#define R16TW \
	MOVQ         TOFF(SP), BX; \
	MOVQ         w_len+56(FP), CX; \
	R16TWA(TWA, TWA+64, TWA+128); \
	ADDQ         CX, BX; \
	R16TWA(TWA+192, TWA+256, TWA+320); \
	ADDQ         CX, BX; \
	R16TWA(TWA+384, TWA+448, TWA+512); \
	ADDQ         CX, BX; \
	R16TWA(TWA+576, TWA+640, TWA+704); \
	MOVQ         TOFF(SP), BX; \
	SHLQ         $2, BX; \
	VBROADCASTSD (DX)(BX*1), Y8; \
	VBROADCASTSD 8(DX)(BX*1), Y9; \
	VBROADCASTSD (DX)(BX*2), Y10; \
	VBROADCASTSD 8(DX)(BX*2), Y11; \
	LEAQ         (BX)(BX*2), BX; \
	VBROADCASTSD (DX)(BX*1), Y12; \
	VBROADCASTSD 8(DX)(BX*1), Y13; \
	VXORPD       Y15, Y9, Y9; \
	VXORPD       Y15, Y11, Y11; \
	VXORPD       Y15, Y13, Y13; \
	LEAQ         (R13)(R13*2), AX

// R16KPTRk sets BX to the first stage's butterfly k's a, SI + k·R11 (k = 0: SI).
#define R16KPTR1 LEAQ (SI)(R11*1), BX
#define R16KPTR2 LEAQ (SI)(R11*2), BX
#define R16KPTR3 LEAQ (R11)(R11*2), BX; ADDQ SI, BX

// R16NEXT moves SI and DI to the next pair of sub-transforms.
#define R16NEXT \
	ADDQ $32, SI; \
	ADDQ $32, DI

// R16GROUP moves DI, 16s bytes past group p's first outputs, to group p + 1's, 256s bytes past
// them (48s + AX).
#define R16GROUP \
	LEAQ (R12)(R12*2), BX; \
	ADDQ BX, DI; \
	ADDQ AX, DI

// func radix16AVX2(dst, src, w []complex128, l, s, step int, inverse bool)
//
// Two radix-4 stages in one pass, for l ≥ 16 and s ≥ 2, even: the stage of s sub-transforms
// of length l (twiddles w[j·p·step]) and the one after it, of 4s sub-transforms of length l/4
// (twiddles w[4j·p'·step]). The second stage's butterfly p' of sub-transforms j·s + q takes
// the first stage's outputs j of its butterflies p' + k·l/16, k = 0…3, for sub-transform q:
// for each p' < l/16 and each pair q, q + 1, the first stage's four butterflies go through
// the frame, and the second stage's four write dst[16s·p' + 4s·j' + j·s + q]. Butterflies
// p = 0 and p' = 0 take no twiddles, as in Go.
TEXT ·radix16AVX2(SB), $1304-97
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ w_base+48(FP), DX
	MOVQ l+72(FP), R11
	SHRQ $4, R11            // l/16
	MOVQ R11, PLEFT(SP)
	MOVQ s+80(FP), R12
	SHLQ $4, R12            // 16s: j's stride in dst
	IMULQ R12, R11          // 16s·l/16: k's stride in src
	LEAQ (R11*4), R8        // 16s·l/4: the first stage's b from a
	LEAQ (R8)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R12*4), R13       // 64s: j''s stride in dst
	MOVQ step+88(FP), AX
	SHLQ $4, AX
	MOVQ AX, TSTEP(SP)
	MOVQ $0, TOFF(SP)
	MASKS(inverse+96(FP), r16fwd)

	// p' = 0: butterfly p = 0 of the first stage and the second stage's take no twiddles.
	R16TW
	MOVQ s+80(FP), CX
	SHRQ $1, CX

r16g0:
	MOVQ SI, BX
	R16A_NOTW(0)
	R16KPTR1
	R16A(128, TWA+192, TWA+256, TWA+320)
	R16KPTR2
	R16A(256, TWA+384, TWA+448, TWA+512)
	R16KPTR3
	R16A(384, TWA+576, TWA+640, TWA+704)
	MOVQ DI, BX
	R16B_NOTW(0)
	ADDQ R12, BX
	R16B_NOTW(32)
	ADDQ R12, BX
	R16B_NOTW(64)
	ADDQ R12, BX
	R16B_NOTW(96)
	R16NEXT
	DECQ CX
	JNZ  r16g0
	R16GROUP
	DECQ PLEFT(SP)
	JZ   r16done

r16g:
	MOVQ TSTEP(SP), BX
	ADDQ BX, TOFF(SP)
	R16TW
	MOVQ s+80(FP), CX
	SHRQ $1, CX

r16q:
	MOVQ SI, BX
	R16A(0, TWA, TWA+64, TWA+128)
	R16KPTR1
	R16A(128, TWA+192, TWA+256, TWA+320)
	R16KPTR2
	R16A(256, TWA+384, TWA+448, TWA+512)
	R16KPTR3
	R16A(384, TWA+576, TWA+640, TWA+704)
	MOVQ DI, BX
	R16B(0)
	ADDQ R12, BX
	R16B(32)
	ADDQ R12, BX
	R16B(64)
	ADDQ R12, BX
	R16B(96)
	R16NEXT
	DECQ CX
	JNZ  r16q
	R16GROUP
	DECQ PLEFT(SP)
	JNZ  r16g

r16done:
	VZEROUPPER
	RET
