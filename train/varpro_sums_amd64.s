//go:build !noasm && !amd64.v3

#include "textflag.h"

// AVX2 kernels of cpuSums (varpro_sums_amd64.go): four pole pairs per YMM register, one
// register for the real parts and one for the imaginary parts, each lane doing the Go
// code's operations on its pole in the Go code's order (no FMA: Go rounds every product).
// Loading two registers of interleaved complex values and unpacking puts the poles in the
// lanes as 0, 2, 1, 3; unpacking again at the end undoes it.

// LOADC4 loads four complex values from off(ptr) into re and im (lanes 0, 2, 1, 3).
#define LOADC4(ptr, off, re, im, tmp) \
	VMOVUPD off(ptr), re; \
	VMOVUPD off+32(ptr), tmp; \
	VUNPCKHPD tmp, re, im; \
	VUNPCKLPD tmp, re, re

// STOREC4 stores re and im (lanes 0, 2, 1, 3) as four complex values at off(ptr).
#define STOREC4(re, im, ptr, off, tmp) \
	VUNPCKLPD im, re, tmp; \
	VMOVUPD tmp, off(ptr); \
	VUNPCKHPD im, re, tmp; \
	VMOVUPD tmp, off+32(ptr)

// CMUL is Go's complex multiplication p *= l: (pr·lr − pi·li) + i(pr·li + pi·lr).
#define CMUL(pr, pi, lr, li, t1, t2) \
	VMULPD li, pr, t1; \
	VMULPD lr, pr, pr; \
	VMULPD li, pi, t2; \
	VSUBPD t2, pr, pr; \
	VMULPD lr, pi, pi; \
	VADDPD t1, pi, pi

// PSTEP is one sample of project's pair loop, x_τ in Y0 and τ in Y1:
// q = (x·re p, x·im p); s0 += q; s1 += (τ·re q, τ·im q); p *= l.
#define PSTEP(pr, pi, s0r, s0i, s1r, s1i, lr, li) \
	VMULPD Y0, pr, Y2; \
	VMULPD Y0, pi, Y3; \
	VADDPD Y2, s0r, s0r; \
	VADDPD Y3, s0i, s0i; \
	VMULPD Y1, Y2, Y2; \
	VMULPD Y1, Y3, Y3; \
	VADDPD Y2, s1r, s1r; \
	VADDPD Y3, s1i, s1i; \
	CMUL(pr, pi, lr, li, Y2, Y3)

// PINIT sets p = 1 and the sums to 0.
#define PINIT(pr, pi, s0r, s0i, s1r, s1i) \
	VMOVUPD one<>(SB), pr; \
	VXORPD pi, pi, pi; \
	VXORPD s0r, s0r, s0r; \
	VXORPD s0i, s0i, s0i; \
	VXORPD s1r, s1r, s1r; \
	VXORPD s1i, s1i, s1i

DATA one<>+0(SB)/8, $1.0
DATA one<>+8(SB)/8, $1.0
DATA one<>+16(SB)/8, $1.0
DATA one<>+24(SB)/8, $1.0
GLOBL one<>(SB), RODATA|NOPTR, $32

// FLUSHAT zeroes the lanes of (pr, pi) whose parts are both below the lanes of thr, as
// underflow.Complex does; the ordered comparison keeps a NaN part. Temporaries t1, t2.
#define FLUSHAT(pr, pi, t1, t2, thr) \
	VANDPD  absmask<>(SB), pr, t1; \
	VCMPPD  $0x11, thr, t1, t1; \
	VANDPD  absmask<>(SB), pi, t2; \
	VCMPPD  $0x11, thr, t2, t2; \
	VANDPD  t2, t1, t1; \
	VANDNPD pr, t1, pr; \
	VANDNPD pi, t1, pi

// FLUSH is FLUSHAT for a power, which starts at 1: below underflow.Below (2^-800, tiny<>).
#define FLUSH(pr, pi, t1, t2) FLUSHAT(pr, pi, t1, t2, tiny<>(SB))

// RTHRESH stores at slot the flush threshold of a residual's chains starting at (pr, pi):
// underflow.Below·chainScale, (|Re p| + |Im p|)·2^-800 lane by lane.
#define RTHRESH(pr, pi, t1, t2, slot) \
	VANDPD  absmask<>(SB), pr, t1; \
	VANDPD  absmask<>(SB), pi, t2; \
	VADDPD  t2, t1, t1; \
	VMULPD  tiny<>(SB), t1, t1; \
	VMOVUPD t1, slot

// FLUSHEVERY counts down the samples (DX; steps of four for residual) between flushes.
#define FLUSHEVERY $64

// FLUSHDUE2 counts a sample down and, once FLUSHEVERY have passed, flushes two registers'
// powers (a, b) with temporaries Y2, Y3; skip is the label after it. FLUSHDUE1 flushes one.
#define FLUSHDUE2(ar, ai, br, bi, skip) \
	DECQ  DX; \
	JNZ   skip; \
	FLUSH(ar, ai, Y2, Y3); \
	FLUSH(br, bi, Y2, Y3); \
	MOVQ  FLUSHEVERY, DX

#define FLUSHDUE1(ar, ai, skip) \
	DECQ  DX; \
	JNZ   skip; \
	FLUSH(ar, ai, Y2, Y3); \
	MOVQ  FLUSHEVERY, DX

DATA absmask<>+0(SB)/8, $0x7fffffffffffffff
DATA absmask<>+8(SB)/8, $0x7fffffffffffffff
DATA absmask<>+16(SB)/8, $0x7fffffffffffffff
DATA absmask<>+24(SB)/8, $0x7fffffffffffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32

DATA tiny<>+0(SB)/8, $0x0df0000000000000
DATA tiny<>+8(SB)/8, $0x0df0000000000000
DATA tiny<>+16(SB)/8, $0x0df0000000000000
DATA tiny<>+24(SB)/8, $0x0df0000000000000
GLOBL tiny<>(SB), RODATA|NOPTR, $32

// mask<>+32r: the first r of four lanes (residual's last samples).
DATA mask<>+32(SB)/8, $-1
DATA mask<>+64(SB)/8, $-1
DATA mask<>+72(SB)/8, $-1
DATA mask<>+96(SB)/8, $-1
DATA mask<>+104(SB)/8, $-1
DATA mask<>+112(SB)/8, $-1
GLOBL mask<>(SB), RODATA|NOPTR, $128

// func projectAVX2(mu []complex128, x []float64, v0, v1 []complex128)
// Eight pairs at a time (two independent registers' chains), then four; the poles of the
// first four are kept at 0(SP), of the next four at 64(SP).
TEXT ·projectAVX2(SB), NOSPLIT, $128-96
	MOVQ mu_base+0(FP), R8
	MOVQ mu_len+8(FP), R9
	MOVQ v0_base+48(FP), R10
	MOVQ v1_base+72(FP), R11

pairs8:
	CMPQ R9, $8
	JLT  pairs4
	LOADC4(R8, 0, Y4, Y5, Y2)
	VMOVUPD Y4, 0(SP)
	VMOVUPD Y5, 32(SP)
	LOADC4(R8, 64, Y4, Y5, Y2)
	VMOVUPD Y4, 64(SP)
	VMOVUPD Y5, 96(SP)
	PINIT(Y4, Y5, Y6, Y7, Y8, Y9)
	PINIT(Y10, Y11, Y12, Y13, Y14, Y15)
	VXORPD  Y1, Y1, Y1
	MOVQ    x_base+24(FP), SI
	MOVQ    x_len+32(FP), CX
	MOVQ    FLUSHEVERY, DX
	TESTQ   CX, CX
	JZ      store8

loop8:
	VBROADCASTSD (SI), Y0
	PSTEP(Y4, Y5, Y6, Y7, Y8, Y9, 0(SP), 32(SP))
	PSTEP(Y10, Y11, Y12, Y13, Y14, Y15, 64(SP), 96(SP))
	VADDPD one<>(SB), Y1, Y1
	ADDQ   $8, SI
	FLUSHDUE2(Y4, Y5, Y10, Y11, next8)

next8:
	DECQ CX
	JNZ  loop8

store8:
	STOREC4(Y6, Y7, R10, 0, Y2)
	STOREC4(Y12, Y13, R10, 64, Y2)
	STOREC4(Y8, Y9, R11, 0, Y2)
	STOREC4(Y14, Y15, R11, 64, Y2)
	ADDQ $128, R8
	ADDQ $128, R10
	ADDQ $128, R11
	SUBQ $8, R9
	JMP  pairs8

pairs4:
	TESTQ R9, R9
	JZ    done
	LOADC4(R8, 0, Y4, Y5, Y2)
	VMOVUPD Y4, 0(SP)
	VMOVUPD Y5, 32(SP)
	PINIT(Y4, Y5, Y6, Y7, Y8, Y9)
	VXORPD  Y1, Y1, Y1
	MOVQ    x_base+24(FP), SI
	MOVQ    x_len+32(FP), CX
	MOVQ    FLUSHEVERY, DX
	TESTQ   CX, CX
	JZ      store4

loop4:
	VBROADCASTSD (SI), Y0
	PSTEP(Y4, Y5, Y6, Y7, Y8, Y9, 0(SP), 32(SP))
	VADDPD one<>(SB), Y1, Y1
	ADDQ   $8, SI
	FLUSHDUE1(Y4, Y5, next4)

next4:
	DECQ CX
	JNZ  loop4

store4:
	STOREC4(Y6, Y7, R10, 0, Y2)
	STOREC4(Y8, Y9, R11, 0, Y2)

done:
	VZEROUPPER
	RET

// P0STEP is one sample of project0's pair loop, x_τ in Y0: s0 += (x·re p, x·im p); p *= l.
#define P0STEP(pr, pi, s0r, s0i, lr, li) \
	VMULPD Y0, pr, Y2; \
	VMULPD Y0, pi, Y3; \
	VADDPD Y2, s0r, s0r; \
	VADDPD Y3, s0i, s0i; \
	CMUL(pr, pi, lr, li, Y2, Y3)

// P0INIT sets p = 1 and the sum to 0.
#define P0INIT(pr, pi, s0r, s0i) \
	VMOVUPD one<>(SB), pr; \
	VXORPD pi, pi, pi; \
	VXORPD s0r, s0r, s0r; \
	VXORPD s0i, s0i, s0i

// func project0AVX2(mu []complex128, x []float64, v0 []complex128)
// Eight pairs at a time, then four, every operand in a register.
TEXT ·project0AVX2(SB), NOSPLIT, $0-72
	MOVQ mu_base+0(FP), R8
	MOVQ mu_len+8(FP), R9
	MOVQ v0_base+48(FP), R10

pairs8:
	CMPQ R9, $8
	JLT  pairs4
	LOADC4(R8, 0, Y12, Y13, Y2)
	LOADC4(R8, 64, Y14, Y15, Y2)
	P0INIT(Y4, Y5, Y6, Y7)
	P0INIT(Y8, Y9, Y10, Y11)
	MOVQ  x_base+24(FP), SI
	MOVQ  x_len+32(FP), CX
	MOVQ  FLUSHEVERY, DX
	TESTQ CX, CX
	JZ    store8

loop8:
	VBROADCASTSD (SI), Y0
	P0STEP(Y4, Y5, Y6, Y7, Y12, Y13)
	P0STEP(Y8, Y9, Y10, Y11, Y14, Y15)
	ADDQ $8, SI
	FLUSHDUE2(Y4, Y5, Y8, Y9, next8)

next8:
	DECQ CX
	JNZ  loop8

store8:
	STOREC4(Y6, Y7, R10, 0, Y2)
	STOREC4(Y10, Y11, R10, 64, Y2)
	ADDQ $128, R8
	ADDQ $128, R10
	SUBQ $8, R9
	JMP  pairs8

pairs4:
	TESTQ R9, R9
	JZ    done
	LOADC4(R8, 0, Y12, Y13, Y2)
	P0INIT(Y4, Y5, Y6, Y7)
	MOVQ  x_base+24(FP), SI
	MOVQ  x_len+32(FP), CX
	MOVQ  FLUSHEVERY, DX
	TESTQ CX, CX
	JZ    store4

loop4:
	VBROADCASTSD (SI), Y0
	P0STEP(Y4, Y5, Y6, Y7, Y12, Y13)
	ADDQ $8, SI
	FLUSHDUE1(Y4, Y5, next4)

next4:
	DECQ CX
	JNZ  loop4

store4:
	STOREC4(Y6, Y7, R10, 0, Y2)

done:
	VZEROUPPER
	RET

// RSTEP is one sample of residual's recursion for the first four pairs (p in Y0, Y1, l in
// Y6, Y7) and, with RSTEP8, the next four (Y2, Y3 and Y8, Y9): the real parts are kept at
// off(SP) and off+128(SP), a row of the 4×4 blocks TADD transposes.
#define RSTEP(off) \
	VMOVUPD Y0, off(SP); \
	CMUL(Y0, Y1, Y6, Y7, Y4, Y5)

#define RSTEP8(off) \
	VMOVUPD Y0, off(SP); \
	VMOVUPD Y2, off+128(SP); \
	CMUL(Y0, Y1, Y6, Y7, Y4, Y5); \
	CMUL(Y2, Y3, Y8, Y9, Y10, Y11)

// TADD adds to e_τ…e_τ+3 in Y15 the real parts of four samples at off(SP) (rows: samples,
// lanes: poles 0, 2, 1, 3), transposed, in pole order.
#define TADD(off) \
	VMOVUPD    off(SP), Y10; \
	VUNPCKHPD  off+32(SP), Y10, Y11; \
	VUNPCKLPD  off+32(SP), Y10, Y10; \
	VMOVUPD    off+64(SP), Y12; \
	VUNPCKHPD  off+96(SP), Y12, Y13; \
	VUNPCKLPD  off+96(SP), Y12, Y12; \
	VPERM2F128 $0x20, Y12, Y10, Y14; \
	VADDPD     Y14, Y15, Y15; \
	VPERM2F128 $0x31, Y12, Y10, Y14; \
	VADDPD     Y14, Y15, Y15; \
	VPERM2F128 $0x20, Y13, Y11, Y14; \
	VADDPD     Y14, Y15, Y15; \
	VPERM2F128 $0x31, Y13, Y11, Y14; \
	VADDPD     Y14, Y15, Y15

// RINIT loads four poles into lr, li and the residues c doubled into pr, pi.
#define RINIT(off, pr, pi, lr, li) \
	LOADC4(R8, off, lr, li, Y4); \
	LOADC4(R10, off, pr, pi, Y4); \
	VADDPD pr, pr, pr; \
	VADDPD pi, pi, pi

// func residualAVX2(mu []complex128, c, e []float64)
// Eight pairs at a time, then four; four samples at a time, the last ones masked. The flush
// thresholds of the first four chains are kept at 256(SP), of the next four at 288(SP).
TEXT ·residualAVX2(SB), NOSPLIT, $320-72
	MOVQ mu_base+0(FP), R8
	MOVQ mu_len+8(FP), R9
	MOVQ c_base+24(FP), R10

pairs8:
	CMPQ R9, $8
	JLT  pairs4
	RINIT(0, Y0, Y1, Y6, Y7)
	RINIT(64, Y2, Y3, Y8, Y9)
	RTHRESH(Y0, Y1, Y4, Y5, 256(SP))
	RTHRESH(Y2, Y3, Y4, Y5, 288(SP))
	MOVQ e_base+48(FP), DI
	MOVQ e_len+56(FP), CX
	MOVQ FLUSHEVERY, DX

block8:
	CMPQ CX, $4
	JLT  tail8
	RSTEP8(0)
	RSTEP8(32)
	RSTEP8(64)
	RSTEP8(96)
	VMOVUPD (DI), Y15
	TADD(0)
	TADD(128)
	VMOVUPD Y15, (DI)
	ADDQ    $32, DI
	SUBQ    $4, CX
	SUBQ    $4, DX
	JNZ     block8
	FLUSHAT(Y0, Y1, Y4, Y5, 256(SP))
	FLUSHAT(Y2, Y3, Y10, Y11, 288(SP))
	MOVQ    FLUSHEVERY, DX
	JMP     block8

tail8:
	TESTQ CX, CX
	JZ    next8
	RSTEP8(0)
	RSTEP8(32)
	RSTEP8(64)
	LEAQ       mask<>(SB), AX
	SHLQ       $5, CX
	VMOVUPD    (AX)(CX*1), Y4
	VMASKMOVPD (DI), Y4, Y15
	TADD(0)
	TADD(128)
	VMASKMOVPD Y15, Y4, (DI)

next8:
	ADDQ $128, R8
	ADDQ $128, R10
	SUBQ $8, R9
	JMP  pairs8

pairs4:
	TESTQ R9, R9
	JZ    done
	RINIT(0, Y0, Y1, Y6, Y7)
	RTHRESH(Y0, Y1, Y4, Y5, 256(SP))
	MOVQ e_base+48(FP), DI
	MOVQ e_len+56(FP), CX
	MOVQ FLUSHEVERY, DX

block4:
	CMPQ CX, $4
	JLT  tail4
	RSTEP(0)
	RSTEP(32)
	RSTEP(64)
	RSTEP(96)
	VMOVUPD (DI), Y15
	TADD(0)
	VMOVUPD Y15, (DI)
	ADDQ    $32, DI
	SUBQ    $4, CX
	SUBQ    $4, DX
	JNZ     block4
	FLUSHAT(Y0, Y1, Y4, Y5, 256(SP))
	MOVQ    FLUSHEVERY, DX
	JMP     block4

tail4:
	TESTQ CX, CX
	JZ    done
	RSTEP(0)
	RSTEP(32)
	RSTEP(64)
	LEAQ       mask<>(SB), AX
	SHLQ       $5, CX
	VMOVUPD    (AX)(CX*1), Y4
	VMASKMOVPD (DI), Y4, Y15
	TADD(0)
	VMASKMOVPD Y15, Y4, (DI)

done:
	VZEROUPPER
	RET
