//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// Supported reports whether this build can load the CUDA libraries at all.
const Supported = true

func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func dlclose(h uintptr) { _ = purego.Dlclose(h) }

func dlsym(h uintptr, name string) (uintptr, error) {
	p, err := purego.Dlsym(h, name)
	if err != nil {
		return 0, err
	}
	if p == 0 {
		return 0, fmt.Errorf("symbol %s not found", name)
	}
	return p, nil
}

// bind points fptr (a pointer to a func variable with the C function's signature) at the
// library's function name.
func bind(h *Handle, fptr any, name string) error {
	p, err := dlsym(h.h, name)
	if err != nil {
		return fmt.Errorf("%s: %s does not export %s", h.Path, h.Soname.File, name)
	}
	purego.RegisterFunc(fptr, p)
	return nil
}
