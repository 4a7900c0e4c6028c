package cuda

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"
)

// NVRTC is libnvrtc, the runtime compiler of CUDA C++ to PTX.
type NVRTC struct {
	Lib *Handle

	nvrtcVersion              func(major, minor *int32) int32
	nvrtcGetNumSupportedArchs func(n *int32) int32
	nvrtcGetSupportedArchs    func(archs *int32) int32
	nvrtcCreateProgram        func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcCompileProgram       func(prog uintptr, numOptions int32, options unsafe.Pointer) int32
	nvrtcGetProgramLogSize    func(prog uintptr, n *uint64) int32
	nvrtcGetProgramLog        func(prog uintptr, log *byte) int32
	nvrtcGetPTXSize           func(prog uintptr, n *uint64) int32
	nvrtcGetPTX               func(prog uintptr, ptx *byte) int32
	nvrtcGetCUBINSize         func(prog uintptr, n *uint64) int32
	nvrtcGetCUBIN             func(prog uintptr, cubin *byte) int32
	nvrtcDestroyProgram       func(prog *uintptr) int32
}

// OpenNVRTC finds and loads libnvrtc; maxCUDA > 0 skips NVRTCs of a newer CUDA major version
// than the driver supports (their PTX would not load).
func OpenNVRTC(s Search, maxCUDA int) (*NVRTC, error) {
	h, err := s.Find(LibNVRTC, maxCUDA)
	if err != nil {
		return nil, err
	}
	n := &NVRTC{Lib: h}
	if err := bindAll(h, []symbol{
		{&n.nvrtcVersion, "nvrtcVersion"}, {&n.nvrtcCreateProgram, "nvrtcCreateProgram"},
		{&n.nvrtcCompileProgram, "nvrtcCompileProgram"}, {&n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"},
		{&n.nvrtcGetProgramLog, "nvrtcGetProgramLog"}, {&n.nvrtcGetPTXSize, "nvrtcGetPTXSize"},
		{&n.nvrtcGetPTX, "nvrtcGetPTX"}, {&n.nvrtcDestroyProgram, "nvrtcDestroyProgram"},
	}); err != nil {
		return nil, err
	}
	// Since CUDA 11.1 and 11.2; without them, PTX for the device's own architecture.
	if bind(h, &n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize") != nil || bind(h, &n.nvrtcGetCUBIN, "nvrtcGetCUBIN") != nil {
		n.nvrtcGetCUBINSize, n.nvrtcGetCUBIN = nil, nil
	}
	if bind(h, &n.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs") != nil ||
		bind(h, &n.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs") != nil {
		n.nvrtcGetNumSupportedArchs, n.nvrtcGetSupportedArchs = nil, nil
	}
	return n, nil
}

// Version returns NVRTC's CUDA version.
func (n *NVRTC) Version() (major, minor int, err error) {
	var a, b int32
	err = nvrtcError("nvrtcVersion", n.nvrtcVersion(&a, &b))
	return int(a), int(b), err
}

// SupportedArchs returns the compute capabilities NVRTC can compile for, as 10·major + minor
// (90 for 9.0), ascending; nil when this NVRTC cannot tell.
func (n *NVRTC) SupportedArchs() ([]int, error) {
	if n.nvrtcGetNumSupportedArchs == nil {
		return nil, nil
	}
	var c int32
	if err := nvrtcError("nvrtcGetNumSupportedArchs", n.nvrtcGetNumSupportedArchs(&c)); err != nil || c <= 0 {
		return nil, err
	}
	archs := make([]int32, c)
	if err := nvrtcError("nvrtcGetSupportedArchs", n.nvrtcGetSupportedArchs(&archs[0])); err != nil {
		return nil, err
	}
	out := make([]int, c)
	for i, a := range archs {
		out[i] = int(a)
	}
	return out, nil
}

// ArchOption returns the --gpu-architecture option to compile for a device of compute
// capability cc (10·major + minor). When NVRTC supports cc itself and can emit CUBIN, it is
// sm_cc: machine code, which the driver loads even when NVRTC is of a newer CUDA minor
// version than the driver (minor-version compatibility). Otherwise it is PTX (compute_XY) for
// the highest architecture NVRTC supports that is not above cc, which the driver compiles
// for the device, provided the driver is at least as new as NVRTC.
func (n *NVRTC) ArchOption(cc int, supported []int) string {
	return archOption(cc, supported, n.nvrtcGetCUBIN != nil)
}

func archOption(cc int, supported []int, cubin bool) string {
	if cubin && slices.Contains(supported, cc) {
		return fmt.Sprintf("--gpu-architecture=sm_%d", cc)
	}
	best := 0
	for _, a := range supported {
		if a <= cc && a > best {
			best = a
		}
	}
	if best == 0 {
		best = cc
	}
	return fmt.Sprintf("--gpu-architecture=compute_%d", best)
}

// emitsCUBIN reports whether options ask for machine code (an sm_XY architecture).
func emitsCUBIN(options []string) bool {
	for _, o := range options {
		if strings.HasPrefix(o, "--gpu-architecture=sm_") || strings.HasPrefix(o, "-arch=sm_") {
			return true
		}
	}
	return false
}

// Compile compiles CUDA C++ source with the given options (e.g.
// "--gpu-architecture=compute_90", "-DREAL=float") to PTX, or to CUBIN when the architecture
// is an sm_XY one. A compilation error carries NVRTC's log.
func (n *NVRTC) Compile(src, name string, options []string) (code []byte, log string, err error) {
	var prog uintptr
	if err := nvrtcError("nvrtcCreateProgram", n.nvrtcCreateProgram(&prog, src, name, 0, nil, nil)); err != nil {
		return nil, "", err
	}
	defer n.nvrtcDestroyProgram(&prog)

	// const char* const* options: NUL-terminated copies and an array of their addresses.
	bufs := make([][]byte, len(options))
	ptrs := make([]*byte, max(len(options), 1))
	for i, o := range options {
		bufs[i] = append([]byte(o), 0)
		ptrs[i] = &bufs[i][0]
	}
	status := n.nvrtcCompileProgram(prog, int32(len(options)), unsafe.Pointer(&ptrs[0]))
	runtime.KeepAlive(bufs)
	runtime.KeepAlive(ptrs)
	log = n.programLog(prog)
	if err := nvrtcError("nvrtcCompileProgram", status); err != nil {
		err.(*Error).Detail = firstLines(log, 12)
		return nil, log, err
	}
	var size uint64
	if emitsCUBIN(options) {
		if n.nvrtcGetCUBIN == nil {
			return nil, log, &Error{Call: "nvrtcGetCUBIN", Name: "missing", Detail: "this NVRTC cannot emit CUBIN; use a compute_XY architecture"}
		}
		if err := nvrtcError("nvrtcGetCUBINSize", n.nvrtcGetCUBINSize(prog, &size)); err != nil {
			return nil, log, err
		}
		buf := make([]byte, max(size, 1))
		if err := nvrtcError("nvrtcGetCUBIN", n.nvrtcGetCUBIN(prog, &buf[0])); err != nil {
			return nil, log, err
		}
		return buf[:size], log, nil
	}
	if err := nvrtcError("nvrtcGetPTXSize", n.nvrtcGetPTXSize(prog, &size)); err != nil {
		return nil, log, err
	}
	buf := make([]byte, size+1)
	if err := nvrtcError("nvrtcGetPTX", n.nvrtcGetPTX(prog, &buf[0])); err != nil {
		return nil, log, err
	}
	return []byte(cString(buf)), log, nil
}

func (n *NVRTC) programLog(prog uintptr) string {
	var size uint64
	if n.nvrtcGetProgramLogSize(prog, &size) != 0 || size <= 1 {
		return ""
	}
	buf := make([]byte, size+1)
	if n.nvrtcGetProgramLog(prog, &buf[0]) != 0 {
		return ""
	}
	return strings.TrimSpace(cString(buf))
}

// firstLines folds the first n lines of s onto one line.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	more := ""
	if len(lines) > n {
		more = fmt.Sprintf(" … (%d more lines)", len(lines)-n)
		lines = lines[:n]
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ") + more
}
