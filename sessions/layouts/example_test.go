package layouts_test

import (
	"fmt"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

func ExampleExport() {
	// Two channels of order 2, in the layout of the RTF reference module: ab holds the
	// denominators, then the numerators; h_0 the direct terms.
	c0, _ := filters.NewTransferFunction([]float64{-1, 0.5}, []float64{0, 0.5}, 0)
	c1, _ := filters.NewTransferFunction([]float64{-0.5, 0}, []float64{1, 0}, 0.25)
	bank, _ := filters.NewBank([]filters.Filter{c0, c1})
	tensors, _, _ := layouts.Export(filters.Document{Bank: bank}, layouts.RTF, layouts.Options{}, "layers.0.")
	for _, t := range tensors {
		fmt.Println(t.Name, arrays.ShapeString(t.Array.Shape), t.Array.Data)
	}
	// Output:
	// layers.0.ab (4, 2) [-1 0.5 -0.5 0 0 0.5 1 0]
	// layers.0.h_0 (2,) [0 0.25]
}
