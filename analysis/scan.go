package analysis

import (
	"math/bits"
	"sync"
)

// scanParallelMin is the shortest response for which the scan splits time across goroutines;
// below it one chunk is cheaper than the two synchronisations.
const scanParallelMin = 1 << 13

// scanImpulse computes h[t] = h0·δ[t] + Σᵢ wᵢ·Re(rᵢ·sᵢ[t-1]) where sᵢ runs the diagonal
// recurrence sᵢ[t] = λᵢ·sᵢ[t-1] + u[t] with u = δ (LDStack paper, eq. 3 with B' the all-ones vector,
// and C' the residues), by the parallel linear recurrence of the LDStack paper, Prop. 2:
//
//  1. the T = len(h) - 1 steps are cut into p chunks of a power-of-two length C; each chunk
//     is reduced (an up-sweep of a balanced tree of the operator
//     (a₁, b₁) ⊕ (a₂, b₂) = (a₁a₂, a₂b₁ + b₂), here with aₖ = λ, so a segment of length 2ᵈ
//     carries λ^(2ᵈ), formed by repeated squaring);
//  2. the chunk carries (the state entering each chunk) are combined in order, p steps;
//  3. each chunk rebuilds its tree, puts its carry at the root and sweeps down (Blelloch's
//     work-efficient scan), which yields every state of the chunk.
//
// Each state passes through about 2·log₂C products, so its rounding error grows like
// log₂C·eps rather than the t·eps of a running product. Work is about 3T complex
// multiply-adds per mode; steps 1 and 3 run on p goroutines.
func scanImpulse(h []float64, md modal, procs int) {
	clear(h)
	h[0] = md.h0
	T := len(h) - 1
	if T == 0 || len(md.modes) == 0 {
		return
	}
	p := 1
	if procs > 1 && T >= scanParallelMin {
		p = procs
	}
	C := nextPow2((T + p - 1) / p)
	chunks := (T + C - 1) / C
	nm := len(md.modes)

	// powers[d] = λ^(2^d) per mode, d ≤ log₂C.
	levels := 0
	for 1<<levels < C {
		levels++
	}
	powers := make([][]complex128, nm)
	for i, m := range md.modes {
		pw := make([]complex128, levels+1)
		pw[0] = m.pole
		for d := 1; d <= levels; d++ {
			pw[d] = pw[d-1] * pw[d-1]
		}
		powers[i] = pw
	}

	// Step 1: chunk totals b (the state a chunk produces from a zero state), per chunk and mode.
	totals := make([][]complex128, chunks)
	run := func(body func(c int, buf []complex128)) {
		if chunks == 1 {
			body(0, make([]complex128, C))
			return
		}
		var wg sync.WaitGroup
		for c := 0; c < chunks; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body(c, make([]complex128, C))
			}()
		}
		wg.Wait()
	}
	// fill writes the chunk's input: u[t] = δ[t] for the global step t = c·C + k.
	fill := func(buf []complex128, c int) {
		clear(buf)
		if c == 0 {
			buf[0] = 1
		}
	}
	if chunks > 1 {
		run(func(c int, buf []complex128) {
			tot := make([]complex128, nm)
			for i := range md.modes {
				fill(buf, c)
				upSweep(buf, powers[i])
				tot[i] = buf[C-1]
			}
			totals[c] = tot
		})
	}
	// Step 2: carries[c][i] = state entering chunk c: carry_{c+1} = λ^C·carry_c + total_c.
	carries := make([][]complex128, chunks)
	carries[0] = make([]complex128, nm)
	for c := 1; c < chunks; c++ {
		carries[c] = make([]complex128, nm)
		for i := range md.modes {
			carries[c][i] = powers[i][levels]*carries[c-1][i] + totals[c-1][i]
		}
	}
	// Step 3: per chunk, rebuild the tree, put the carry at the root, sweep down; the
	// exclusive prefix E[k] is the state before step k, so s[k] = λ·E[k] + u[k].
	run(func(c int, buf []complex128) {
		start := c * C
		seg := h[1+start : 1+min(start+C, T)]
		for i, m := range md.modes {
			fill(buf, c)
			upSweep(buf, powers[i])
			buf[C-1] = carries[c][i]
			downSweep(buf, powers[i])
			l, r, w := m.pole, m.residue, m.weight
			u0 := complex(0, 0)
			if c == 0 {
				u0 = 1
			}
			for k := range seg {
				s := l * buf[k]
				if k == 0 {
					s += u0
				}
				seg[k] += w * (real(r)*real(s) - imag(r)*imag(s))
			}
		}
	})
}

// upSweep reduces buf (length a power of two) in place: afterwards buf[C-1] holds the
// chunk's total and the odd nodes hold the partial totals the down-sweep needs.
func upSweep(buf []complex128, pw []complex128) {
	C := len(buf)
	for d := 0; 1<<d < C; d++ {
		half, stride := 1<<d, 2<<d
		a := pw[d]
		for i := stride - 1; i < C; i += stride {
			buf[i] = a*buf[i-half] + buf[i]
		}
	}
}

// downSweep turns the reduced tree, with the incoming state at the root, into the exclusive
// prefixes: buf[k] becomes the state before step k.
func downSweep(buf []complex128, pw []complex128) {
	C := len(buf)
	d := 0
	for 1<<d < C {
		d++
	}
	for d--; d >= 0; d-- {
		half, stride := 1<<d, 2<<d
		a := pw[d]
		for i := stride - 1; i < C; i += stride {
			left := buf[i-half]
			buf[i-half] = buf[i]
			buf[i] = a*buf[i] + left
		}
	}
}

// nextPow2 returns the smallest power of two ≥ n (1 for n ≤ 1).
func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}
