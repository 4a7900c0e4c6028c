package filters_test

import (
	"fmt"

	"github.com/ssmlab/ssmlab/filters"
)

func ExampleConvert() {
	// A damped oscillator x[t+1] = A x[t] + B u[t], y = C x + D u.
	f, err := filters.NewDense([][]float64{{0.9, -0.2}, {0.2, 0.9}}, []float64{1, 0}, []float64{0, 1}, 0)
	if err != nil {
		panic(err)
	}
	tf, rep, err := filters.ToTF(f)
	if err != nil {
		panic(err)
	}
	fmt.Printf("a = %.4f, b = %.4f\n", tf.Den, tf.Num)
	fmt.Println("accurate:", rep.RelError < 1e-14, "warnings:", len(rep.Warnings))
	// Output:
	// a = [-1.8000 0.8500], b = [0.0000 0.2000]
	// accurate: true warnings: 0
}

func ExamplePoles() {
	tf, _ := filters.NewTransferFunction([]float64{-1.8, 0.85}, []float64{0, 0.2}, 0)
	p, _ := filters.Poles(tf)
	fmt.Printf("%.4f\n", p)
	// Output:
	// [(0.9000+0.2000i) (0.9000-0.2000i)]
}

func ExampleContinuous_Discretize() {
	// x' = -x + u sampled with a zero-order hold at Δt = 0.1: Ā = e^{-0.1}, B̄ = 1 - e^{-0.1}.
	sys, _ := filters.NewDense([][]float64{{-1}}, []float64{1}, []float64{1}, 0)
	d, _ := (&filters.Continuous{System: sys, Dt: 0.1, Method: filters.ZOH}).Discretize()
	fmt.Printf("%.6f\n", d.Impulse(3))
	// Output:
	// [0.000000 0.095163 0.086107]
}
