//go:build !noasm

#include "textflag.h"

// The kernels of vec.go, each doing what its Go loop does in the same order: Dot's sixteen
// lanes are Y0–Y3 (entries i+0…3, 4…7, 8…11, 12…15 of each block), Axpy's entries one
// fused multiply-add each. The loops' bodies are the macros below, one home each for every
// kernel that runs them (they are inlined, not called: a shared CALLed row routine measured
// 3–70% slower on these vectors).

// DOT runs Dot on CX entries from SI (x) and DI (y): Y0–Y3 the lanes, Y4–Y7 and X1–X3 scratch;
// the sum in X0. Its four labels are arguments (one expansion per kernel).
#define DOT(LOOP, REDUCE, TAIL, DONE) \
	VXORPD Y0, Y0, Y0; \
	VXORPD Y1, Y1, Y1; \
	VXORPD Y2, Y2, Y2; \
	VXORPD Y3, Y3, Y3; \
	MOVQ   CX, BX; \
	SHRQ   $4, BX; \
	JZ     REDUCE; \
LOOP: \
	VMOVUPD     0(SI), Y4; \
	VMOVUPD     32(SI), Y5; \
	VMOVUPD     64(SI), Y6; \
	VMOVUPD     96(SI), Y7; \
	VFMADD231PD 0(DI), Y4, Y0; \
	VFMADD231PD 32(DI), Y5, Y1; \
	VFMADD231PD 64(DI), Y6, Y2; \
	VFMADD231PD 96(DI), Y7, Y3; \
	ADDQ        $128, SI; \
	ADDQ        $128, DI; \
	DECQ        BX; \
	JNZ         LOOP; \
REDUCE: \
	VADDPD       Y1, Y0, Y0; \
	VADDPD       Y3, Y2, Y2; \
	VADDPD       Y2, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPD       X1, X0, X0; \
	VPERMILPD    $1, X0, X1; \
	VADDSD       X1, X0, X0; \
	VXORPD       X2, X2, X2; \
	ANDQ         $15, CX; \
	JZ           DONE; \
TAIL: \
	VMOVSD      (SI), X3; \
	VFMADD231SD (DI), X3, X2; \
	ADDQ        $8, SI; \
	ADDQ        $8, DI; \
	DECQ        CX; \
	JNZ         TAIL; \
DONE: \
	VADDSD X2, X0, X0

// ROW runs y ← OP(Y0, x, y) on CX entries from SI (x) and DI (y), in blocks of sixteen, four
// and one (X0 holds Y0's low entry): OPPD and OPSD are VFMADD231PD and VFMADD231SD (Axpy:
// y + a·x) or VFNMADD231PD and VFNMADD231SD (the outer products: y − a·x), each entry
// rounded once. Y1–Y4 scratch; its six labels are arguments.
#define ROW(OPPD, OPSD, B16, B4, B4LOOP, B1, B1LOOP, DONE) \
	MOVQ CX, BX; \
	SHRQ $4, BX; \
	JZ   B4; \
B16: \
	VMOVUPD    0(DI), Y1; \
	VMOVUPD    32(DI), Y2; \
	VMOVUPD    64(DI), Y3; \
	VMOVUPD    96(DI), Y4; \
	OPPD     0(SI), Y0, Y1; \
	OPPD     32(SI), Y0, Y2; \
	OPPD     64(SI), Y0, Y3; \
	OPPD     96(SI), Y0, Y4; \
	VMOVUPD    Y1, 0(DI); \
	VMOVUPD    Y2, 32(DI); \
	VMOVUPD    Y3, 64(DI); \
	VMOVUPD    Y4, 96(DI); \
	ADDQ       $128, SI; \
	ADDQ       $128, DI; \
	DECQ       BX; \
	JNZ        B16; \
B4: \
	MOVQ CX, BX; \
	ANDQ $15, BX; \
	SHRQ $2, BX; \
	JZ   B1; \
B4LOOP: \
	VMOVUPD (DI), Y1; \
	OPPD  (SI), Y0, Y1; \
	VMOVUPD Y1, (DI); \
	ADDQ    $32, SI; \
	ADDQ    $32, DI; \
	DECQ    BX; \
	JNZ     B4LOOP; \
B1: \
	ANDQ $3, CX; \
	JZ   DONE; \
B1LOOP: \
	VMOVSD  (DI), X1; \
	OPSD  (SI), X0, X1; \
	VMOVSD  X1, (DI); \
	ADDQ    $8, SI; \
	ADDQ    $8, DI; \
	DECQ    CX; \
	JNZ     B1LOOP; \
DONE:

// func dotAVX2(x, y []float64) float64
TEXT ·dotAVX2(SB), NOSPLIT, $0-56
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ y_base+24(FP), DI
	DOT(dotloop, dotreduce, dottail, dotdone)
	VZEROUPPER
	MOVSD X0, ret+48(FP)
	RET

// func axpyAVX2(a float64, x, y []float64)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSD a+0(FP), Y0
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	ROW(VFMADD231PD, VFMADD231SD, axpy16, axpy4, axpy4loop, axpy1, axpy1loop, axpydone)
	VZEROUPPER
	RET

// The two outer-product kernels subtract Y0·x from one row at a time, each entry by one
// fused multiply-add (VFNMADD231PD: −(a·x) + y rounded once, which is FMA(−a, x, y)), in
// Axpy's blocks of sixteen, four and one.

// func subOuterUpperAVX2(x, h []float64, stride int)
// Row k: h[k·stride+k …] −= x[k]·x[k …], skipped where x[k] is ±0.
TEXT ·subOuterUpperAVX2(SB), NOSPLIT, $0-56
	MOVQ x_base+0(FP), R8   // &x[k]
	MOVQ x_len+8(FP), R9    // len(x) − k
	MOVQ h_base+24(FP), R10 // &h[k·stride+k]
	MOVQ stride+48(FP), R11
	INCQ R11
	SHLQ $3, R11            // bytes from one row's diagonal to the next's

upperrow:
	MOVQ (R8), AX
	SHLQ $1, AX             // the sign dropped: zero for ±0
	JZ   uppernext
	VBROADCASTSD (R8), Y0
	MOVQ R8, SI
	MOVQ R10, DI
	MOVQ R9, CX
	ROW(VFNMADD231PD, VFNMADD231SD, upper16, upper4, upper4loop, upper1, upper1loop, upperdone)

uppernext:
	ADDQ $8, R8
	ADDQ R11, R10
	DECQ R9
	JNZ  upperrow
	VZEROUPPER
	RET

// func subOuterAVX2(a, x, b []float64, stride int)
// Row r: b[r·stride …] −= a[r]·x, skipped where a[r] is ±0.
TEXT ·subOuterAVX2(SB), NOSPLIT, $0-80
	MOVQ a_base+0(FP), R8   // &a[r]
	MOVQ a_len+8(FP), R9    // rows left
	MOVQ x_base+24(FP), R12
	MOVQ x_len+32(FP), R13
	MOVQ b_base+48(FP), R10 // &b[r·stride]
	MOVQ stride+72(FP), R11
	SHLQ $3, R11

outerrow:
	MOVQ (R8), AX
	SHLQ $1, AX
	JZ   outernext
	VBROADCASTSD (R8), Y0
	MOVQ R12, SI
	MOVQ R10, DI
	MOVQ R13, CX
	ROW(VFNMADD231PD, VFNMADD231SD, outer16, outer4, outer4loop, outer1, outer1loop, outerdone)

outernext:
	ADDQ $8, R8
	ADDQ R11, R10
	DECQ R9
	JNZ  outerrow
	VZEROUPPER
	RET

// func reflectAVX2(v, data []float64, stride, count int, uu float64)
// For each of count vectors u (stride entries apart): s = Dot(v, u) as dotAVX2 makes it, then
// u += ((−2·s)/uu)·v as axpyAVX2 does.
TEXT ·reflectAVX2(SB), NOSPLIT, $0-72
	MOVQ v_base+0(FP), R8      // v
	MOVQ v_len+8(FP), R9       // len(v)
	MOVQ data_base+24(FP), R10 // the current vector
	MOVQ stride+48(FP), R11
	SHLQ $3, R11
	MOVQ count+56(FP), R12
	MOVQ $0xc000000000000000, AX
	MOVQ AX, X14               // −2

refcol:
	MOVQ R8, SI
	MOVQ R10, DI
	MOVQ R9, CX
	DOT(refdotloop, refreduce, reftail, refdotdone)
	VMULSD       X14, X0, X0       // −2·s
	VDIVSD       uu+64(FP), X0, X0 // ÷ uu
	VBROADCASTSD X0, Y0
	MOVQ         R8, SI
	MOVQ         R10, DI
	MOVQ         R9, CX
	ROW(VFMADD231PD, VFMADD231SD, refrow16, refrow4, refrow4loop, refrow1, refrow1loop, refrowdone)
	ADDQ R11, R10
	DECQ R12
	JNZ  refcol
	VZEROUPPER
	RET
