//go:build !(linux && (amd64 || arm64))

package cuda

import (
	"errors"
	"runtime"
)

// Supported reports whether this build can load the CUDA libraries at all.
const Supported = false

var errPlatform = errors.New("the GPU backend runs on linux/amd64 and linux/arm64 only, not " + runtime.GOOS + "/" + runtime.GOARCH)

func dlopen(string) (uintptr, error)         { return 0, errPlatform }
func dlclose(uintptr)                        {}
func dlsym(uintptr, string) (uintptr, error) { return 0, errPlatform }
func bind(*Handle, any, string) error        { return errPlatform }
