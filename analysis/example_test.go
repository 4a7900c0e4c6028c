package analysis_test

import (
	"fmt"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
)

func ExampleImpulse() {
	// An RTF filter H(z) = 0.5 + z⁻¹/(1 - 0.9z⁻¹): h = (0.5, 1, 0.9, 0.81, …).
	f, _ := filters.NewTransferFunction([]float64{-0.9}, []float64{1}, 0.5)
	for _, m := range analysis.Methods {
		h, _ := analysis.Impulse(nil, f, 5, m)
		fmt.Printf("%-11s %.4f\n", m, h)
	}
	// Output:
	// recurrence  [0.5000 1.0000 0.9000 0.8100 0.7290]
	// fft         [0.5000 1.0000 0.9000 0.8100 0.7290]
	// vandermonde [0.5000 1.0000 0.9000 0.8100 0.7290]
	// scan        [0.5000 1.0000 0.9000 0.8100 0.7290]
}

func ExampleKernelPlan() {
	// The kernel of an RTF layer from its trained, truncation-corrected numerator b̃
	// (RTF paper, eq. 13): exact, not aliased, although the response is far from decayed at
	// L = 8.
	a, b := []float64{-0.99}, []float64{1}
	bt, _ := rtf.Truncate(a, b, 8)
	k, _ := analysis.NewKernelPlan(1, 8).Kernel(nil, a, bt, 0)
	fmt.Printf("b̃ = %.4f\nh = %.4f\n", bt, k)
	// Output:
	// b̃ = [0.0773]
	// h = [0.0000 1.0000 0.9900 0.9801 0.9703 0.9606 0.9510 0.9415]
}

func ExampleGroupDelayOf() {
	// A notch: zeros on the unit circle at ω = ±π/2, poles at ±0.9i. The delay stays
	// finite; the point on the zero is masked and holds the two-sided limit: the poles give
	// Re(z/(z - p)) = 10 + 0.5263 at z = i, the zeros -1/2 each.
	f, _ := filters.NewZPK([]complex128{1i, -1i}, []complex128{0.9i, -0.9i}, 1, 0)
	g, _ := analysis.GroupDelayOf(f, analysis.LinearGrid(5))
	fmt.Printf("τ = %.4f\nmasked = %v\n%s\n", g.Tau, g.Masked, g.Notes[0].Text)
	// Output:
	// τ = [0.1050 0.2077 9.5263 0.2077 0.1050]
	// masked = [false false true false false]
	// a zero on the unit circle at 0+1i: the phase jumps by π here; τ is the two-sided limit
}

func ExampleAnalyze() {
	// Poles 0.8 and 0.7: h[t] = (0.8^t - 0.7^t)/0.1, which peaks at 1.695 (t = 4) and stays
	// below 1e-9 of that from t = 101 on.
	f, _ := filters.NewTransferFunction([]float64{-1.5, 0.56}, []float64{1, 0}, 0)
	p, _ := analysis.Analyze(f, 1e-9)
	fmt.Printf("%v, ρ = %.2f, Montel Σ|aᵢ| = %.2f, memory %d samples, DC gain %.4f\n",
		p.Stability, p.SpectralRadius, p.Montel, p.Memory, p.DCGain)
	// Output:
	// stable, ρ = 0.80, Montel Σ|aᵢ| = 2.06, memory 101 samples, DC gain 16.6667
}

func ExampleBalancedTruncation() {
	// A slow strong mode and a fast weak one: σ₁ ≈ |r|/(1 - λ²) = 1/0.19 for the first, and
	// dropping the second costs at most the bound 2σ₂.
	f, _ := filters.NewDiagonal([]complex128{0.9, 0.2}, []complex128{1, 0.01}, 0)
	red, _ := analysis.BalancedTruncation(f, 1)
	fmt.Printf("order %d, HSV %.5f, bound %.5f\n", red.Order, red.HSV, red.Bound)
	// Output:
	// order 1, HSV [5.26599 0.00759], bound 0.01517
}
