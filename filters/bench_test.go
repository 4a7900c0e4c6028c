package filters

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvert times each conversion, report included (the report computes both impulse
// responses over ReportLength samples), at the orders the issue names.
func BenchmarkConvert(b *testing.B) {
	type route struct{ from, to Form }
	routes := []route{
		{FormDense, FormDiagonal}, {FormDense, FormTF}, {FormDense, FormZPK}, {FormDense, FormRotation},
		{FormDiagonal, FormDense}, {FormDiagonal, FormTF}, {FormTF, FormDiagonal}, {FormTF, FormZPK},
		{FormRotation, FormTF}, {FormZPK, FormTF},
	}
	for _, n := range []int{16, 64, 256} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		orig := randomStable(rng, n, 0.9)
		for _, r := range routes {
			src, _, err := Convert(orig, r.from)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s-%s/n=%d", r.from, r.to, n), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := Convert(src, r.to); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
