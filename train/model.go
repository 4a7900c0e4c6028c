package train

import "github.com/ssmlab/ssmlab/filters"

// model computes one channel's kernel and gradient from its flat parameter vector. A model is
// shared by all channels; the per-goroutine buffers live in the workspace it makes.
type model interface {
	numParams() int
	newWorkspace() workspace
	// kernel writes k[0..L-1]; grad then uses what kernel left in the workspace.
	kernel(ws workspace, p, k []float64)
	// grad writes ∂loss/∂p into g given e = ∂loss/∂k, for the p of the last kernel call.
	grad(ws workspace, p, e, g []float64)
	// filter returns the fitted filter and the condition number of its deployment step.
	filter(p []float64) (filters.Filter, float64, error)
	// maxRadius returns the spectral radius of the filter p describes.
	maxRadius(p []float64) float64
}

type workspace any
