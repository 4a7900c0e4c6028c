package figures_test

import (
	"bytes"
	"fmt"

	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/filters"
)

// A filter and its conversion to another form, overlaid in two panels and written as SVG.
func ExampleNew() {
	res, err := filters.NewTransferFunction([]float64{-1, 0.5}, []float64{0, 0.5}, 0)
	if err != nil {
		panic(err)
	}
	zpk, _, err := filters.ToZPK(res)
	if err != nil {
		panic(err)
	}
	fig, err := figures.New([]figures.Kind{figures.Impulse, figures.PoleZero},
		[]figures.Series{{Name: "tf", Filter: res}, {Name: "zpk", Filter: zpk}}, figures.Options{})
	if err != nil {
		panic(err)
	}
	svg, err := fig.Render(figures.SVG)
	if err != nil {
		panic(err)
	}
	w, h := fig.Size()
	fmt.Println(fig.Panels(), "panels,", bytes.HasPrefix(svg, []byte("<?xml")), w > h)
	// Output: 2 panels, true false
}
