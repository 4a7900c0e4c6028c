// Package cuda binds, at run time and without cgo, the parts of three NVIDIA libraries that
// ssmlab's GPU backend uses: the CUDA driver API (libcuda: initialisation, devices, the
// primary context, memory, modules, launches, streams, events), NVRTC (libnvrtc: CUDA C++ to
// PTX or CUBIN) and cuFFT (libcufft: batched real transforms). The calls go through
// github.com/ebitengine/purego, so a binary built with CGO_ENABLED=0 still loads them when
// they are installed and runs without them when they are not.
//
// # Finding the libraries
//
// Search.Find tries, in order: the file named by the library's own variable (SSMLAB_LIBCUDA,
// SSMLAB_LIBNVRTC, SSMLAB_LIBCUFFT; when set, nothing else is tried), the directories of
// SSMLAB_CUDA_LIB_DIR, of LD_LIBRARY_PATH, the toolkit's (/usr/local/cuda/lib64, then
// /usr/local/cuda-*/lib64 newest first), the system's (/usr/lib/<arch>-linux-gnu, /usr/lib64,
// /usr/lib, WSL's /usr/lib/wsl/lib), the nvidia/*/lib folders of Python wheels, and last the
// directories of the dynamic loader's configuration (/etc/ld.so.conf). Only absolute
// directories are searched and only absolute paths loaded: a relative or empty entry of
// LD_LIBRARY_PATH, which the dynamic loader would read as the working directory, is ignored,
// and no bare soname is handed to the loader. In each directory the sonames are tried newest first:
// libcuda.so.1; libnvrtc.so.13, .12, .11.2; libcufft.so.12 (CUDA 13), .11 (CUDA 12), .10
// (CUDA 11); then the unversioned development links. Sonames of a newer CUDA than the driver
// supports are skipped, since their PTX or runtime would not load. Before the dynamic loader
// sees a file, Find checks that it is a regular ELF file; a missing library, a fake file or a
// library without the expected symbol gives a *LibraryError that names the library, the
// directories searched and every file rejected, never a panic or a hang.
//
// # Versions
//
// CUDA 11.2 or newer: NVRTC 11.2 was the first with a versioned soname and
// nvrtcGetSupportedArchs. The bindings' prototypes and the constants are checked against
// CUDA 11.8's headers (testdata/cuda_headers.txt, headers_test.go).
//
// # Errors
//
// Every call's status is checked. A failure is an *Error with the C function, the status and
// its name as the header spells it (CUDA_ERROR_OUT_OF_MEMORY, NVRTC_ERROR_COMPILATION with
// the compiler's log, CUFFT_INVALID_SIZE), plus a hint for the statuses a user can act on.
//
// # Threads
//
// A CUDA context is current per OS thread. Callers lock their goroutine to its thread
// (runtime.LockOSThread) and make the context current (Driver.CtxSetCurrent) before a run of
// calls. Library handles are never closed: unloading the driver is not supported by it.
//
// # Compiled kernels
//
// NVRTC.ArchOption picks machine code (sm_XY) when NVRTC knows the device's architecture,
// which the driver loads even when NVRTC is a newer CUDA minor version than the driver, and
// PTX for the newest architecture NVRTC knows otherwise. PTXCache keeps NVRTC's output under
// os.UserCacheDir()/ssmlab/ptx, one file per SHA-256 of the source, the options
// (architecture and macros) and the NVRTC version, written atomically.
//
// # Platforms
//
// Loading works on linux/amd64 and linux/arm64 (Supported). Elsewhere the package builds and
// every Find fails with a clear error. Importing purego makes a CGO_ENABLED=0 binary a
// dynamically linked one (it needs the system's C library and dynamic loader, as any program
// that loads a shared library does); build ssmlab with -tags nogpu for a fully static binary
// without the GPU backend.
package cuda
