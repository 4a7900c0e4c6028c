package cuda

import (
	"fmt"
	"strconv"
)

// Error is a failed call into one of the CUDA libraries: the call, its status code and the
// status's name as the library's header spells it (CUDA_ERROR_OUT_OF_MEMORY,
// NVRTC_ERROR_COMPILATION, CUFFT_ALLOC_FAILED, …).
type Error struct {
	Call   string // the C function, e.g. "cuMemAlloc_v2"
	Code   int    // its status (CUresult, nvrtcResult or cufftResult)
	Name   string // the status's name
	Detail string // more to say (a compiler log, a hint), or ""
}

func (e *Error) Error() string {
	msg := e.Call + ": " + e.Name
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Status codes that callers test for.
const (
	ErrorOutOfMemory       = 2   // CUDA_ERROR_OUT_OF_MEMORY
	ErrorStubLibrary       = 34  // CUDA_ERROR_STUB_LIBRARY
	ErrorNoDevice          = 100 // CUDA_ERROR_NO_DEVICE
	ErrorUnsupportedPTXVer = 222 // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
	ErrorInvalidPTX        = 218 // CUDA_ERROR_INVALID_PTX
	NVRTCErrorCompilation  = 6   // NVRTC_ERROR_COMPILATION
	CUFFTAllocFailed       = 2   // CUFFT_ALLOC_FAILED
)

const (
	cudaSuccess               = 0   // CUDA_SUCCESS
	nvrtcSuccess              = 0   // NVRTC_SUCCESS
	cufftSuccess              = 0   // CUFFT_SUCCESS
	errorSystemDriverMismatch = 803 // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
)

// driverNames are the CUresult values of cuda.h (CUDA 11.0 to 13.0).
var driverNames = map[int]string{
	0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
	3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 5: "CUDA_ERROR_PROFILER_DISABLED",
	6: "CUDA_ERROR_PROFILER_NOT_INITIALIZED", 7: "CUDA_ERROR_PROFILER_ALREADY_STARTED",
	8: "CUDA_ERROR_PROFILER_ALREADY_STOPPED", 34: "CUDA_ERROR_STUB_LIBRARY",
	46: "CUDA_ERROR_DEVICE_UNAVAILABLE", 100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
	102: "CUDA_ERROR_DEVICE_NOT_LICENSED", 200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT",
	202: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", 205: "CUDA_ERROR_MAP_FAILED", 206: "CUDA_ERROR_UNMAP_FAILED",
	207: "CUDA_ERROR_ARRAY_IS_MAPPED", 208: "CUDA_ERROR_ALREADY_MAPPED", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	210: "CUDA_ERROR_ALREADY_ACQUIRED", 211: "CUDA_ERROR_NOT_MAPPED", 212: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY",
	213: "CUDA_ERROR_NOT_MAPPED_AS_POINTER", 214: "CUDA_ERROR_ECC_UNCORRECTABLE",
	215: "CUDA_ERROR_UNSUPPORTED_LIMIT", 216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
	217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 218: "CUDA_ERROR_INVALID_PTX",
	219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", 220: "CUDA_ERROR_NVLINK_UNCORRECTABLE",
	221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", 222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	223: "CUDA_ERROR_JIT_COMPILATION_DISABLED", 224: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
	225: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", 226: "CUDA_ERROR_CONTAINED",
	300: "CUDA_ERROR_INVALID_SOURCE", 301: "CUDA_ERROR_FILE_NOT_FOUND",
	302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", 303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	304: "CUDA_ERROR_OPERATING_SYSTEM", 400: "CUDA_ERROR_INVALID_HANDLE", 401: "CUDA_ERROR_ILLEGAL_STATE",
	402: "CUDA_ERROR_LOSSY_QUERY", 500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	703: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", 704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", 708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
	709: "CUDA_ERROR_CONTEXT_IS_DESTROYED", 710: "CUDA_ERROR_ASSERT", 711: "CUDA_ERROR_TOO_MANY_PEERS",
	712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR", 715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS", 717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC",
	719: "CUDA_ERROR_LAUNCH_FAILED", 720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
	800: "CUDA_ERROR_NOT_PERMITTED", 801: "CUDA_ERROR_NOT_SUPPORTED", 802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	805: "CUDA_ERROR_MPS_CONNECTION_FAILED", 806: "CUDA_ERROR_MPS_RPC_FAILURE", 807: "CUDA_ERROR_MPS_SERVER_NOT_READY",
	808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", 809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
	810: "CUDA_ERROR_MPS_CLIENT_TERMINATED", 811: "CUDA_ERROR_CDP_NOT_SUPPORTED", 812: "CUDA_ERROR_CDP_VERSION_MISMATCH",
	900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	902: "CUDA_ERROR_STREAM_CAPTURE_MERGE", 903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
	904: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 905: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
	906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 907: "CUDA_ERROR_CAPTURED_EVENT",
	908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 909: "CUDA_ERROR_TIMEOUT",
	910: "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 911: "CUDA_ERROR_EXTERNAL_DEVICE",
	912: "CUDA_ERROR_INVALID_CLUSTER_SIZE", 913: "CUDA_ERROR_FUNCTION_NOT_LOADED",
	914: "CUDA_ERROR_INVALID_RESOURCE_TYPE", 915: "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
	999: "CUDA_ERROR_UNKNOWN",
}

// nvrtcNames are the nvrtcResult values of nvrtc.h.
var nvrtcNames = []string{
	"NVRTC_SUCCESS", "NVRTC_ERROR_OUT_OF_MEMORY", "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	"NVRTC_ERROR_INVALID_INPUT", "NVRTC_ERROR_INVALID_PROGRAM", "NVRTC_ERROR_INVALID_OPTION",
	"NVRTC_ERROR_COMPILATION", "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", "NVRTC_ERROR_INTERNAL_ERROR", "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
	"NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED", "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", "NVRTC_ERROR_PCH_CREATE",
	"NVRTC_ERROR_CANCELLED", "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
}

// cufftNames are the cufftResult values of cufft.h.
var cufftNames = []string{
	"CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE", "CUFFT_INVALID_VALUE",
	"CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED", "CUFFT_INVALID_SIZE",
	"CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST", "CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR",
	"CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED", "CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED",
	"CUFFT_MISSING_DEPENDENCY", "CUFFT_NVRTC_FAILURE", "CUFFT_NVJITLINK_FAILURE", "CUFFT_NVSHMEM_FAILURE",
}

// DriverErrorName returns the name of a CUresult, or "CUresult(N)" for a code this package
// does not know (a newer driver's).
func DriverErrorName(code int) string {
	if s, ok := driverNames[code]; ok {
		return s
	}
	return "CUresult(" + strconv.Itoa(code) + ")"
}

// NVRTCErrorName returns the name of an nvrtcResult, or "nvrtcResult(N)".
func NVRTCErrorName(code int) string {
	if code >= 0 && code < len(nvrtcNames) {
		return nvrtcNames[code]
	}
	return "nvrtcResult(" + strconv.Itoa(code) + ")"
}

// CUFFTErrorName returns the name of a cufftResult, or "cufftResult(N)".
func CUFFTErrorName(code int) string {
	if code >= 0 && code < len(cufftNames) {
		return cufftNames[code]
	}
	return "cufftResult(" + strconv.Itoa(code) + ")"
}

// driverHints explain the statuses a user can act on.
var driverHints = map[int]string{
	ErrorStubLibrary:          "this libcuda is the toolkit's link stub, not the driver; point SSMLAB_LIBCUDA at the driver's libcuda.so.1",
	ErrorNoDevice:             "no CUDA-capable device is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)",
	ErrorUnsupportedPTXVer:    "the NVRTC library is newer than the driver; use an NVRTC no newer than the driver's CUDA version (SSMLAB_LIBNVRTC)",
	ErrorOutOfMemory:          "the device is out of memory",
	errorSystemDriverMismatch: "the driver library does not match the loaded kernel module",
}

func driverError(call string, code int32) error {
	if code == cudaSuccess {
		return nil
	}
	c := int(code)
	return &Error{Call: call, Code: c, Name: DriverErrorName(c), Detail: driverHints[c]}
}

func nvrtcError(call string, code int32) error {
	if code == nvrtcSuccess {
		return nil
	}
	return &Error{Call: call, Code: int(code), Name: NVRTCErrorName(int(code))}
}

func cufftError(call string, code int32) error {
	if code == cufftSuccess {
		return nil
	}
	return &Error{Call: call, Code: int(code), Name: CUFFTErrorName(int(code))}
}

// VersionString formats a CUDA version number as the driver and runtime report it
// (1000·major + 10·minor): 12040 is "12.4".
func VersionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
