package presets_test

import (
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/presets"
)

func ExampleButter() {
	// scipy.signal.butter(2, 0.5, output="zpk"): cut-off ωc = π/2 rad/sample.
	f, err := presets.Butter(2, presets.Lowpass, math.Pi/2)
	if err != nil {
		panic(err)
	}
	fmt.Printf("zeros %.4f\npoles %.4f\ngain %.4f\n", f.Zeros, f.Poles, f.Gain)
	fmt.Printf("|H(ωc)|² = %.4f\n", math.Pow(cmplx.Abs(f.FreqResponse([]float64{math.Pi / 2})[0]), 2))
	// Output:
	// zeros [(-1.0000+0.0000i) (-1.0000+0.0000i)]
	// poles [(0.0000+0.4142i) (0.0000-0.4142i)]
	// gain 0.2929
	// |H(ωc)|² = 0.5000
}

func ExampleLegS() {
	a, b := presets.LegS(3)
	fmt.Printf("A = %.4f\nB = %.4f\n", mat.Formatted(a, mat.Prefix("    ")), b)
	// Output:
	// A = ⎡-1.0000   0.0000   0.0000⎤
	//     ⎢-1.7321  -2.0000   0.0000⎥
	//     ⎣-2.2361  -3.8730  -3.0000⎦
	// B = [1.0000 1.7321 2.2361]
}

func ExampleNew() {
	// The same call the CLI makes for `ssmlab preset resonator r=0.5 theta=pi/2`.
	r, err := presets.New("resonator", map[string]string{"r": "0.5", "theta": "pi/2"})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Name)
	p, _ := filters.Poles(r.Filter)
	fmt.Printf("poles %.4f\n", p)

	_, err = presets.New("resonator", map[string]string{"radius": "0.5"})
	fmt.Println(err)
	// Output:
	// resonator r=0.5 theta=1.5707963267948966
	// poles [(0.0000+0.5000i) (0.0000-0.5000i)]
	// resonator: unknown parameter "radius" (resonator accepts: r, theta)
}
