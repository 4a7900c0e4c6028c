package sessions_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

func ExampleSession() {
	dir, _ := os.MkdirTemp("", "ssmlab")
	defer os.RemoveAll(dir)

	s := sessions.New()
	tf, _ := filters.NewTransferFunction([]float64{-0.9}, []float64{1}, 0)
	id, _ := s.AddFilter(filters.Document{Name: "leaky", Filter: tf})
	kernel, _ := arrays.New([]int{4}, []float64{0, 1, 0.9, 0.81})
	s.AddTarget(sessions.Target{Name: "decay", Kernels: kernel})
	s.UI.Selected = id
	fmt.Println(id, s.Summary(), "dirty:", s.Dirty())

	path := filepath.Join(dir, "work"+sessions.Extension)
	if err := s.Save(path); err != nil {
		panic(err)
	}
	loaded, _ := sessions.Load(path)
	e, _ := loaded.Filter(loaded.UI.Selected)
	fmt.Println(e.Name+":", e.Describe(), "dirty:", loaded.Dirty())
	// Output:
	// f1 1 filter, 1 target, 0 jobs dirty: true
	// leaky: tf filter of order 1 dirty: false
}
