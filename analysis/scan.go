package analysis

import "math/bits"

// scanParallelMin is the shortest response for which the scan splits time into chunks;
// below it one chunk is cheaper than the two synchronisations.
const scanParallelMin = 1 << 13

// scanChunks is how many time chunks a response of at least scanParallelMin steps is cut
// into, whatever the number of threads: the chunking decides the order of the products, so
// a count taken from GOMAXPROCS made h differ in the last bits from one machine to another
// (at 5 or more chunks).
const scanChunks = 16

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
// (log₂C + p)·eps rather than the t·eps of a running product. p depends on T only (1, or
// scanChunks from scanParallelMin on), so h is the same to the bit on any number of threads.
// The input is δ[t], so every chunk but the first reduces to zeros: only the first is
// reduced, and the work is about T complex multiply-adds per mode for the down-sweeps, plus
// T/p for each reduction of the first chunk. Step 3 runs on up to GOMAXPROCS goroutines.
func scanImpulse(h []float64, md modal) {
	clear(h)
	h[0] = md.h0
	T := len(h) - 1
	if T == 0 || len(md.modes) == 0 {
		return
	}
	p := 1
	if T >= scanParallelMin {
		p = scanChunks
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

	// fill writes the chunk's input: u[t] = δ[t] for the global step t = c·C + k.
	fill := func(buf []complex128, c int) {
		clear(buf)
		if c == 0 {
			buf[0] = 1
		}
	}
	// Step 1: the first chunk's total (the state it produces from a zero state), per mode;
	// the other chunks' are zero.
	total0 := make([]complex128, nm)
	if chunks > 1 {
		buf := make([]complex128, C)
		for i := range md.modes {
			fill(buf, 0)
			upSweep(buf, powers[i])
			total0[i] = buf[C-1]
		}
	}
	// Step 2: carries[c][i] = state entering chunk c: carry_{c+1} = λ^C·carry_c + total_c.
	carries := make([][]complex128, chunks)
	carries[0] = make([]complex128, nm)
	for c := 1; c < chunks; c++ {
		carries[c] = make([]complex128, nm)
		for i := range md.modes {
			carries[c][i] = powers[i][levels] * carries[c-1][i]
			if c == 1 {
				carries[c][i] += total0[i]
			}
		}
	}
	// Step 3: per chunk, rebuild the tree, put the carry at the root, sweep down; the
	// exclusive prefix E[k] is the state before step k, so s[k] = λ·E[k] + u[k].
	parallelWorkers(chunks, func() func(int) {
		buf := make([]complex128, C)
		return func(c int) {
			start := c * C
			seg := h[1+start : 1+min(start+C, T)]
			for i, m := range md.modes {
				fill(buf, c)
				if c == 0 { // a later chunk's zero input reduces to zeros
					upSweep(buf, powers[i])
				}
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
