package train

import (
	"strconv"

	"github.com/ssmlab/ssmlab/filters/rtf"
)

// gpuMaxOrder is the largest order the GPU kernels take: they keep a channel's a and b̃ in
// shared memory arrays of MAX_ORDER doubles (TestGPUUnsupportedJobs checks the two agree).
const gpuMaxOrder = 1024

// The kernels of the GPU backend, in CUDA C++17 compiled by NVRTC at first use (with
// -DREAL=float or -DREAL=double, gpuOptions) and cached as PTX. The same text compiles as plain C++ for
// the tests' CPU emulation of a device (gpu_emu_test.go), so it sticks to what both accept:
// no headers, no warp intrinsics, no atomics, no early exit before a __syncthreads, and
// reductions over blockDim.x a power of two no larger than MAX_BLOCK.
//
// Layout (D channels, P parameters per channel, L kernel samples, H = L/2+1 bins):
//
//	p, m, v, g, good*, best   double [D][P]   parameters [a (den), b̃ (n), h0], Adam state, gradient
//	aeff                      double [D][n]   the effective denominator (after the Montel map)
//	pad                       real [2][D][L]  padded a (with a₀ = 1) then b̃; later IFFT outputs
//	spec                      cpx  [2][D][H]  FFT(a) then FFT(b̃), whose slot then holds a copy of G
//	G                         cpx  [D][H]     G = FFT(b̃)/FFT(a)
//	k, e, y                   real [D][L]     kernel, ∂loss/∂k, target
//	x                         cpx  [2][D][H]  FFT(e)/conj(A), then ·conj(G)
//
// Every index into a [D][L] or [D][H] array is 64-bit: D·L reaches 2^34. gpuSource is the
// kernels' text after the constants it takes from Go (MONTEL_EPS, rtf.MontelEps).
var gpuSource = "#define MONTEL_EPS " + strconv.FormatFloat(rtf.MontelEps, 'e', -1, 64) + "\n" + gpuKernels

const gpuKernels = `
typedef REAL real;
struct alignas(2 * sizeof(REAL)) cpx { real x, y; };
typedef unsigned long long idx;

#define MAX_BLOCK 1024
#define MAX_ORDER 1024

// isfin tells whether v is finite without any header: NaN and ±Inf fail the comparison.
__device__ bool isfin(double v) { return fabs(v) <= 1.7976931348623157e308; }

// cdiv is a/b by Smith's algorithm in double, as Go divides complex128.
__device__ void cdiv(double ar, double ai, double br, double bi, double* er, double* ei) {
	if (fabs(br) >= fabs(bi)) {
		double r = bi / br, den = br + r * bi;
		*er = (ar + ai * r) / den;
		*ei = (ai - ar * r) / den;
	} else {
		double r = br / bi, den = bi + r * br;
		*er = (ar * r + ai) / den;
		*ei = (ai * r - ar) / den;
	}
}

// block_sum returns the sum of every thread's v to every thread of the block.
__device__ double block_sum(double v, double* sh) {
	unsigned t = threadIdx.x;
	sh[t] = v;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s) sh[t] += sh[t + s];
		__syncthreads();
	}
	double r = sh[0];
	__syncthreads();
	return r;
}

// schedule is Optim.learningRate: linear warmup, then cosine decay to 1/100.
__device__ double schedule(int step, int total, double lr, int warmup, int cosine) {
	if (warmup > 0 && step < warmup) lr *= (double)(step + 1) / (double)warmup;
	if (cosine && total > 1) {
		double x = (double)step / (double)(total - 1);
		lr *= 0.01 + 0.99 * 0.5 * (1 + cos(3.141592653589793 * x));
	}
	return lr;
}

// montel_norm is rtf.L1MontelNorm of the raw values w[:n] and scalar w[n]: Σ|w| + MONTEL_EPS,
// summed in its order (MONTEL_EPS is rtf.MontelEps, defined from Go: gpuSource).
__device__ double montel_norm(const double* w, int n) {
	double s = 0;
	for (int i = 0; i <= n; i++) s += fabs(w[i]);
	return s + MONTEL_EPS;
}

// within is rtfModel.within for one channel's raw parameters w, run by the whole block:
// the Schur–Cohn step-down recursion on a(rz), every reflection coefficient inside (-1, 1).
// Thread 0 forms the scaled denominator in the CPU's order of operations; each order's
// step-down is spread over the block. a and nx are MAX_ORDER-long shared scratch.
__device__ bool within(const double* w, int n, int montel, double r, double* a, double* nx) {
	if (threadIdx.x == 0) {
		double s = montel ? montel_norm(w, n) : 1;
		double scale = 1;
		for (int i = 0; i < n; i++) {
			double ai = montel ? w[i] / s : w[i];
			scale /= r;
			a[i] = ai * scale;
		}
	}
	__syncthreads();
	for (int order = n; order >= 1; order--) {
		double k = a[order - 1];
		if (!(fabs(k) < 1)) return false; // every thread read the same k: all return
		double den = 1 - k * k;
		for (int i = 1 + threadIdx.x; i < order; i += blockDim.x)
			nx[i - 1] = (a[i - 1] - k * a[order - i - 1]) / den;
		__syncthreads();
		double* t = a;
		a = nx;
		nx = t;
	}
	return true;
}

// rtf_denominator: one thread per channel. aeff = a, or with the Montel map
// a = w[:n]/montel_norm over the n+1 raw values (scale = montel_norm, kept for the gradient).
extern "C" __global__ void rtf_denominator(const double* p, int np, int n, int montel, int d, double* aeff, double* scale) {
	int ch = blockIdx.x * blockDim.x + threadIdx.x;
	if (ch >= d) return;
	const double* w = p + (idx)ch * np;
	double s = montel ? montel_norm(w, n) : 1;
	scale[ch] = s;
	double* a = aeff + (idx)ch * n;
	for (int i = 0; i < n; i++) a[i] = montel ? w[i] / s : w[i];
}

// rtf_pad: grid (⌈L/B⌉, D). pad[0][ch] = [1, a₁…aₙ, 0…], pad[1][ch] = [0, b̃₁…b̃ₙ, 0…].
extern "C" __global__ void rtf_pad(const double* p, const double* aeff, int np, int n, int den, int L, int d, real* pad) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int ch = blockIdx.y;
	if (j >= L) return;
	real* pa = pad + (idx)ch * L;
	real* pb = pad + ((idx)d + ch) * L;
	pa[j] = j == 0 ? (real)1 : (j <= n ? (real)aeff[(idx)ch * n + j - 1] : (real)0);
	pb[j] = (j >= 1 && j <= n) ? (real)p[(idx)ch * np + den + j - 1] : (real)0;
}

// rtf_divide: grid (⌈H/B⌉, D). G = FFT(b̃)/FFT(a), kept in g and copied over FFT(b̃)'s slot,
// which the inverse transform may then overwrite.
extern "C" __global__ void rtf_divide(cpx* spec, cpx* g, int h, int d) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int ch = blockIdx.y;
	if (i >= h) return;
	idx ia = (idx)ch * h + i, ib = ((idx)d + ch) * h + i;
	cpx fa = spec[ia], fb = spec[ib];
	double qr, qi;
	cdiv(fb.x, fb.y, fa.x, fa.y, &qr, &qi);
	cpx q;
	q.x = (real)qr;
	q.y = (real)qi;
	g[ia] = q;
	spec[ib] = q;
}

// rtf_residual: grid (T, D). The inverse transform left L·k (unnormalised) in k: scale it,
// add h0 at 0, and write e = 2·(k − y)·escale (escale = 1/L for mse, 1/‖y‖² for relative)
// and the block's partial sum of (k − y)², accumulated in double, to partial[ch][blockIdx.x].
extern "C" __global__ void rtf_residual(real* k, real* e, const real* y, const double* p, int np, int L, const double* escale, double* partial) {
	__shared__ double sh[MAX_BLOCK];
	int ch = blockIdx.y;
	idx base = (idx)ch * L;
	double inv = 1.0 / L, h0 = p[(idx)ch * np + np - 1], es = escale[ch];
	double s = 0;
	for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < L; j += gridDim.x * blockDim.x) {
		double kv = (double)k[base + j] * inv;
		if (j == 0) kv += h0;
		double r = kv - (double)y[base + j];
		k[base + j] = (real)kv;
		e[base + j] = (real)(2 * r * es);
		s += r * r;
	}
	s = block_sum(s, sh);
	if (threadIdx.x == 0) partial[(idx)ch * gridDim.x + blockIdx.x] = s;
}

// loss_finish: one thread per channel. loss = Σ(k − y)²·escale and the relative L2 error
// √(Σ(k − y)²/‖y‖²) (√Σ(k − y)² for a zero target), as distill.loss and relL2.
extern "C" __global__ void loss_finish(const double* partial, int tiles, int d, const double* escale, const double* ynorm, double* loss, double* rel) {
	int ch = blockIdx.x * blockDim.x + threadIdx.x;
	if (ch >= d) return;
	double s = 0;
	for (int i = 0; i < tiles; i++) s += partial[(idx)ch * tiles + i];
	loss[ch] = s * escale[ch];
	double yn = ynorm[ch];
	rel[ch] = yn == 0 ? sqrt(s) : sqrt(s / yn);
}

// rtf_adjoint: grid (⌈H/B⌉, D). With E = FFT(e) in x[0]: x[0] = E/conj(A) and
// x[1] = E·conj(G)/conj(A), the spectra of the gradients with respect to b̃ and −a.
extern "C" __global__ void rtf_adjoint(cpx* x, const cpx* spec, const cpx* g, int h, int d) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int ch = blockIdx.y;
	if (i >= h) return;
	idx i0 = (idx)ch * h + i, i1 = ((idx)d + ch) * h + i;
	cpx ev = x[i0], a = spec[i0], gv = g[i0];
	double qr, qi;
	cdiv(ev.x, ev.y, a.x, -(double)a.y, &qr, &qi);
	double gr = gv.x, gi = -(double)gv.y;
	cpx q0, q1;
	q0.x = (real)qr;
	q0.y = (real)qi;
	q1.x = (real)(qr * gr - qi * gi);
	q1.y = (real)(qr * gi + qi * gr);
	x[i0] = q0;
	x[i1] = q1;
}

// rtf_gather: one block per channel. From the inverse transforms in pad (L times the
// sequences): ∂/∂b̃ⱼ = x0[j]/L and ∂/∂aⱼ = −x1[j]/L for j = 1…n, the Montel chain rule
// ∂aⱼ/∂wᵢ = δᵢⱼ/s − wⱼ·sign(wᵢ)/s², and ∂/∂h0 = e[0].
extern "C" __global__ void rtf_gather(const real* x, const real* e, const double* p, const double* scale, int np, int n, int den, int montel, int L, int d, double* g) {
	__shared__ double sh[MAX_BLOCK];
	int ch = blockIdx.x;
	const real* x0 = x + (idx)ch * L;
	const real* x1 = x + ((idx)d + ch) * L;
	const double* w = p + (idx)ch * np;
	double* gc = g + (idx)ch * np;
	double inv = 1.0 / L;
	double dot = 0;
	for (int j = threadIdx.x; j < n; j += blockDim.x) {
		gc[den + j] = (double)x0[j + 1] * inv;
		double ga = -(double)x1[j + 1] * inv;
		gc[j] = ga;
		dot += ga * w[j];
	}
	if (montel) {
		dot = block_sum(dot, sh);
		double s = scale[ch];
		for (int i = threadIdx.x; i <= n; i += blockDim.x) {
			double sign = w[i] > 0 ? 1.0 : (w[i] < 0 ? -1.0 : 0.0);
			double v = -dot * sign / (s * s);
			if (i < n) v += gc[i] / s;
			gc[i] = v;
		}
	}
	if (threadIdx.x == 0) gc[den + n] = (double)e[(idx)ch * L];
}

// restore is cpuTrainer.rollback for one channel: back to the last good parameters and
// optimiser state, at half the learning rate.
__device__ void restore(idx o, int np, int ch, double* p, double* m, double* v, const double* goodp,
		const double* goodm, const double* goodv, const int* goodt, int* t, double* lrscale) {
	for (int i = threadIdx.x; i < np; i += blockDim.x) {
		p[o + i] = goodp[o + i];
		m[o + i] = goodm[o + i];
		v[o + i] = goodv[o + i];
	}
	if (threadIdx.x == 0) {
		t[ch] = goodt[ch];
		lrscale[ch] /= 2;
	}
}

// adam_update: one block per channel; cpuTrainer.stepChannel after the gradient. A
// non-finite gradient rolls the channel back without a step. Otherwise Adam (or AdamW) at
// the scheduled rate times the channel's scale; then, under a radius constraint, every
// 'every' steps the Schur–Cohn check either keeps the state as the good one or rolls back.
extern "C" __global__ void adam_update(double* p, double* m, double* v, const double* g,
		double* goodp, double* goodm, double* goodv, int* goodt, int* step, int* t, double* lrscale,
		int np, int n, int montel, double lr0, double beta1, double beta2, double eps, double wd,
		int adamw, int warmup, int cosine, int total, int radius, double maxr, int every) {
	__shared__ double sh[MAX_BLOCK];
	__shared__ double sa[MAX_ORDER], sb[MAX_ORDER];
	int ch = blockIdx.x;
	idx o = (idx)ch * np;
	int st = step[ch], tt = t[ch] + 1;
	double scale = lrscale[ch];
	double bad = 0;
	for (int i = threadIdx.x; i < np; i += blockDim.x)
		if (!isfin(g[o + i])) bad = 1;
	if (block_sum(bad, sh) > 0) {
		restore(o, np, ch, p, m, v, goodp, goodm, goodv, goodt, t, lrscale);
		return;
	}
	double lr = schedule(st, total, lr0, warmup, cosine) * scale;
	double c1 = 1 - pow(beta1, (double)tt), c2 = 1 - pow(beta2, (double)tt);
	double decay = adamw ? lr * wd : 0.0;
	for (int i = threadIdx.x; i < np; i += blockDim.x) {
		double gi = g[o + i];
		double mi = beta1 * m[o + i] + (1 - beta1) * gi;
		double vi = beta2 * v[o + i] + (1 - beta2) * gi * gi;
		m[o + i] = mi;
		v[o + i] = vi;
		p[o + i] -= lr * (mi / c1) / (sqrt(vi / c2) + eps) + decay * p[o + i];
	}
	__syncthreads(); // every thread has read step, t and lrscale, and written its parameters
	if (threadIdx.x == 0) {
		t[ch] = tt;
		step[ch] = st + 1;
	}
	if (!radius || (st + 1) % every != 0) return;
	if (!within(p + o, n, montel, maxr, sa, sb)) {
		restore(o, np, ch, p, m, v, goodp, goodm, goodv, goodt, t, lrscale);
		return;
	}
	for (int i = threadIdx.x; i < np; i += blockDim.x) {
		goodp[o + i] = p[o + i];
		goodm[o + i] = m[o + i];
		goodv[o + i] = v[o + i];
	}
	if (threadIdx.x == 0) goodt[ch] = tt;
}

// track_best: one block per channel. Keep the parameters when their relative error beats
// the best so far and they satisfy the radius constraint (cpuTrainer.Step's bookkeeping).
extern "C" __global__ void track_best(const double* p, const double* rel, double* best, double* bestrel,
		int np, int n, int montel, int radius, double maxr) {
	__shared__ double sa[MAX_ORDER], sb[MAX_ORDER];
	int ch = blockIdx.x;
	idx o = (idx)ch * np;
	double r = rel[ch], b = bestrel[ch];
	__syncthreads(); // every thread has read bestrel before thread 0 may write it
	if (!(r < b)) return;
	if (radius && !within(p + o, n, montel, maxr, sa, sb)) return;
	for (int i = threadIdx.x; i < np; i += blockDim.x) best[o + i] = p[o + i];
	if (threadIdx.x == 0) bestrel[ch] = r;
}
// Variable projection's sums over the samples (sampleSums, gpu_varpro.go), float64 whatever
// REAL is, for a batch of R problems, one per grid row: meta int [R][4] holds each problem's
// poles, pairs, samples m and whether it wants the derivative sums; w double [R][P][2] its
// poles' logarithms (pairs first, then the real poles, whose imaginary part is 0 or π); x, y,
// e double [R][M]; c double [R][2P] the residues; out double [R][P][4].

// vp_pow is λ^t from λ's logarithm w: exp(t·w), the sign of a negative real pole by t's parity.
__device__ void vp_pow(double wr, double wi, int isreal, int t, double* pr, double* pi) {
	double m = exp((double)t * wr);
	if (isreal) {
		*pr = (wi != 0 && (t & 1)) ? -m : m;
		*pi = 0;
		return;
	}
	*pr = m * cos((double)t * wi);
	*pi = m * sin((double)t * wi);
}

// block_sum4 is block_sum of four values at once (sh holds 4·MAX_BLOCK doubles).
__device__ void block_sum4(double* v, double* sh) {
	unsigned t = threadIdx.x, b = blockDim.x;
	for (int j = 0; j < 4; j++) sh[j * b + t] = v[j];
	__syncthreads();
	for (unsigned s = b / 2; s > 0; s >>= 1) {
		if (t < s)
			for (int j = 0; j < 4; j++) sh[j * b + t] += sh[j * b + t + s];
		__syncthreads();
	}
	for (int j = 0; j < 4; j++) v[j] = sh[j * b];
	__syncthreads();
}

// vp_project: grid (P, R), a block per pole of a problem. out = [Re, Im] of Σ x_τ λ^τ, then
// of Σ x_τ τ λ^(τ−s) (s = 1 for a real pole; zeros unless the problem wants them).
extern "C" __global__ void vp_project(const int* meta, const double* w, const double* x, int P, int M, double* out) {
	__shared__ double sh[4 * MAX_BLOCK];
	int p = blockIdx.x, r = blockIdx.y;
	const int* mt = meta + (idx)r * 4;
	int np = mt[0], pairs = mt[1], m = mt[2], deriv = mt[3];
	if (p >= np) return; // the whole block
	double wr = w[((idx)r * P + p) * 2], wi = w[((idx)r * P + p) * 2 + 1];
	int isreal = p >= pairs;
	const double* xr = x + (idx)r * M;
	double v[4] = {0, 0, 0, 0};
	for (int t = threadIdx.x; t < m; t += blockDim.x) {
		double pr, pi, xt = xr[t];
		vp_pow(wr, wi, isreal, t, &pr, &pi);
		v[0] += xt * pr;
		v[1] += xt * pi;
		if (deriv && t > 0) {
			if (isreal) vp_pow(wr, wi, isreal, t - 1, &pr, &pi);
			v[2] += xt * t * pr;
			v[3] += xt * t * pi;
		}
	}
	block_sum4(v, sh);
	if (threadIdx.x == 0)
		for (int j = 0; j < 4; j++) out[((idx)r * P + p) * 4 + j] = v[j];
}

// vp_residual: grid (⌈M/B⌉, R), a thread per sample. e = Φc − y.
extern "C" __global__ void vp_residual(const int* meta, const double* w, const double* c, const double* y, int P, int M, double* e) {
	int t = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
	const int* mt = meta + (idx)r * 4;
	int np = mt[0], pairs = mt[1], m = mt[2];
	if (t >= m) return;
	const double* wp = w + (idx)r * P * 2;
	const double* cr = c + (idx)r * 2 * P;
	double v = -y[(idx)r * M + t];
	for (int p = 0; p < np; p++) {
		double pr, pi;
		vp_pow(wp[2 * p], wp[2 * p + 1], p >= pairs, t, &pr, &pi);
		if (p < pairs) v += 2 * (cr[2 * p] * pr - cr[2 * p + 1] * pi);
		else v += cr[pairs + p] * pr;
	}
	e[(idx)r * M + t] = v;
}
`

// Kernel names, as the launcher uses them; a test checks them against the source.
const (
	kDenominator = "rtf_denominator"
	kPad         = "rtf_pad"
	kDivide      = "rtf_divide"
	kResidual    = "rtf_residual"
	kLossFinish  = "loss_finish"
	kAdjoint     = "rtf_adjoint"
	kGather      = "rtf_gather"
	kAdam        = "adam_update"
	kTrackBest   = "track_best"
	kVPProject   = "vp_project"
	kVPResidual  = "vp_residual"
)

var gpuKernelNames = []string{kDenominator, kPad, kDivide, kResidual, kLossFinish, kAdjoint, kGather, kAdam, kTrackBest, kVPProject, kVPResidual}

// gpuSourceName is the kernel source's file name in compiler messages.
const gpuSourceName = "ssmlab_gpu.cu"

// gpuDialect is the C++ standard the kernel source is written in, named to every compiler
// of it: NVRTC before CUDA 12 defaults to an older dialect and rejects alignas.
// CUDA 11.0's NVRTC was the first to accept C++17.
const gpuDialect = "c++17"

// gpuOptions are NVRTC's options to compile gpuSource for arch (an --gpu-architecture
// option) in one precision.
func gpuOptions(arch string, f64 bool) []string {
	return []string{arch, "--std=" + gpuDialect, "-DREAL=" + gpuReal(f64)}
}

// gpuReal is the C type of the kernels' REAL in one precision.
func gpuReal(f64 bool) string {
	if f64 {
		return "double"
	}
	return "float"
}
