//go:build nogpu

package train

import "fmt"

// This build (-tags nogpu) leaves the CUDA bindings out: the binary is fully static.

func detectGPU() (Info, error) {
	return Info{}, fmt.Errorf("%w: this build has no GPU backend (built with -tags nogpu)", ErrNoGPU)
}

func openCUDA(bool) (device, error) {
	_, err := detectGPU()
	return nil, err
}
