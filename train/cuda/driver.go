package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Handles of the driver API. They are opaque values the driver hands out.
type (
	Device    int32   // CUdevice
	Context   uintptr // CUcontext
	Module    uintptr // CUmodule
	Function  uintptr // CUfunction
	Stream    uintptr // CUstream (0 is the legacy default stream)
	Event     uintptr // CUevent
	DevicePtr uint64  // CUdeviceptr
)

// Device attributes (CUdevice_attribute) this package reads.
const (
	AttrMultiprocessorCount    = 16 // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	AttrComputeCapabilityMajor = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	AttrComputeCapabilityMinor = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
)

// Driver is libcuda, the CUDA driver API. Its methods return *Error for a failed call. A
// context must be current on the calling OS thread for everything but Init, the version and
// device queries and PrimaryCtxRetain: see CtxSetCurrent and runtime.LockOSThread.
type Driver struct {
	Lib *Handle

	cuInit                       func(flags uint32) int32
	cuDriverGetVersion           func(v *int32) int32
	cuDeviceGetCount             func(n *int32) int32
	cuDeviceGet                  func(d *int32, ordinal int32) int32
	cuDeviceGetName              func(name *byte, n int32, d int32) int32
	cuDeviceTotalMem_v2          func(bytes *uint64, d int32) int32
	cuDeviceGetAttribute         func(v *int32, attr int32, d int32) int32
	cuDevicePrimaryCtxRetain     func(ctx *uintptr, d int32) int32
	cuDevicePrimaryCtxRelease_v2 func(d int32) int32
	cuCtxSetCurrent              func(ctx uintptr) int32
	cuCtxSynchronize             func() int32
	cuMemGetInfo_v2              func(free, total *uint64) int32
	cuMemAlloc_v2                func(p *uint64, bytes uint64) int32
	cuMemFree_v2                 func(p uint64) int32
	cuMemcpyHtoDAsync_v2         func(dst uint64, src unsafe.Pointer, bytes uint64, s uintptr) int32
	cuMemcpyDtoHAsync_v2         func(dst unsafe.Pointer, src uint64, bytes uint64, s uintptr) int32
	cuMemcpyDtoDAsync_v2         func(dst, src uint64, bytes uint64, s uintptr) int32
	cuMemsetD8Async              func(dst uint64, v uint8, n uint64, s uintptr) int32
	cuModuleLoadData             func(m *uintptr, image unsafe.Pointer) int32
	cuModuleGetFunction          func(f *uintptr, m uintptr, name string) int32
	cuModuleUnload               func(m uintptr) int32
	cuLaunchKernel               func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params, extra unsafe.Pointer) int32
	cuStreamCreate               func(s *uintptr, flags uint32) int32
	cuStreamSynchronize          func(s uintptr) int32
	cuStreamDestroy_v2           func(s uintptr) int32
	cuEventCreate                func(e *uintptr, flags uint32) int32
	cuEventRecord                func(e, s uintptr) int32
	cuEventSynchronize           func(e uintptr) int32
	cuEventElapsedTime           func(ms *float32, start, end uintptr) int32
	cuEventDestroy_v2            func(e uintptr) int32
}

// OpenDriver finds and loads libcuda. It does not initialise the driver (see Init).
func OpenDriver(s Search) (*Driver, error) {
	h, err := s.Find(LibCUDA, 0)
	if err != nil {
		return nil, err
	}
	d := &Driver{Lib: h}
	if err := bindAll(h, []symbol{
		{&d.cuInit, "cuInit"}, {&d.cuDriverGetVersion, "cuDriverGetVersion"},
		{&d.cuDeviceGetCount, "cuDeviceGetCount"}, {&d.cuDeviceGet, "cuDeviceGet"},
		{&d.cuDeviceGetName, "cuDeviceGetName"}, {&d.cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2"},
		{&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
		{&d.cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease_v2"},
		{&d.cuCtxSetCurrent, "cuCtxSetCurrent"}, {&d.cuCtxSynchronize, "cuCtxSynchronize"},
		{&d.cuMemGetInfo_v2, "cuMemGetInfo_v2"},
		{&d.cuMemAlloc_v2, "cuMemAlloc_v2"}, {&d.cuMemFree_v2, "cuMemFree_v2"},
		{&d.cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2"}, {&d.cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2"},
		{&d.cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2"}, {&d.cuMemsetD8Async, "cuMemsetD8Async"},
		{&d.cuModuleLoadData, "cuModuleLoadData"}, {&d.cuModuleGetFunction, "cuModuleGetFunction"},
		{&d.cuModuleUnload, "cuModuleUnload"}, {&d.cuLaunchKernel, "cuLaunchKernel"},
		{&d.cuStreamCreate, "cuStreamCreate"}, {&d.cuStreamSynchronize, "cuStreamSynchronize"},
		{&d.cuStreamDestroy_v2, "cuStreamDestroy_v2"}, {&d.cuEventCreate, "cuEventCreate"},
		{&d.cuEventRecord, "cuEventRecord"}, {&d.cuEventSynchronize, "cuEventSynchronize"},
		{&d.cuEventDestroy_v2, "cuEventDestroy_v2"},
	}); err != nil {
		return nil, err
	}
	// CUDA 12.8 added cuEventElapsedTime_v2 (the same prototype); CUDA 13's header drops
	// the first version.
	if bind(h, &d.cuEventElapsedTime, "cuEventElapsedTime_v2") != nil && bind(h, &d.cuEventElapsedTime, "cuEventElapsedTime") != nil {
		d.cuEventElapsedTime = nil
	}
	return d, nil
}

// Init initialises the driver (cuInit(0)); it must come first.
func (d *Driver) Init() error { return driverError("cuInit", d.cuInit(0)) }

// Version returns the CUDA version the driver supports, as 1000·major + 10·minor (12040 is
// 12.4; see VersionString).
func (d *Driver) Version() (int, error) {
	var v int32
	err := driverError("cuDriverGetVersion", d.cuDriverGetVersion(&v))
	return int(v), err
}

// DeviceCount returns the number of visible devices.
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	err := driverError("cuDeviceGetCount", d.cuDeviceGetCount(&n))
	return int(n), err
}

// DeviceGet returns the device with the given ordinal.
func (d *Driver) DeviceGet(ordinal int) (Device, error) {
	var dev int32
	err := driverError("cuDeviceGet", d.cuDeviceGet(&dev, int32(ordinal)))
	return Device(dev), err
}

// DeviceName returns the device's marketing name.
func (d *Driver) DeviceName(dev Device) (string, error) {
	buf := make([]byte, 256)
	if err := driverError("cuDeviceGetName", d.cuDeviceGetName(&buf[0], int32(len(buf)), int32(dev))); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// DeviceTotalMem returns the device's memory in bytes.
func (d *Driver) DeviceTotalMem(dev Device) (uint64, error) {
	var n uint64
	err := driverError("cuDeviceTotalMem_v2", d.cuDeviceTotalMem_v2(&n, int32(dev)))
	return n, err
}

// DeviceAttribute returns one of the device's attributes (Attr…).
func (d *Driver) DeviceAttribute(attr int, dev Device) (int, error) {
	var v int32
	err := driverError("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&v, int32(attr), int32(dev)))
	return int(v), err
}

// ComputeCapability returns the device's compute capability (9, 0 for an H100).
func (d *Driver) ComputeCapability(dev Device) (major, minor int, err error) {
	if major, err = d.DeviceAttribute(AttrComputeCapabilityMajor, dev); err != nil {
		return 0, 0, err
	}
	minor, err = d.DeviceAttribute(AttrComputeCapabilityMinor, dev)
	return major, minor, err
}

// PrimaryCtxRetain retains the device's primary context (the one the runtime API and so
// cuFFT use), creating it if needed.
func (d *Driver) PrimaryCtxRetain(dev Device) (Context, error) {
	var c uintptr
	err := driverError("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&c, int32(dev)))
	return Context(c), err
}

// PrimaryCtxRelease releases a PrimaryCtxRetain.
func (d *Driver) PrimaryCtxRelease(dev Device) error {
	return driverError("cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease_v2(int32(dev)))
}

// CtxSetCurrent binds c to the calling OS thread. Lock the goroutine to its thread first
// (runtime.LockOSThread) or the binding may be lost at the next call.
func (d *Driver) CtxSetCurrent(c Context) error {
	return driverError("cuCtxSetCurrent", d.cuCtxSetCurrent(uintptr(c)))
}

// CtxSynchronize waits for all work in the current context.
func (d *Driver) CtxSynchronize() error { return driverError("cuCtxSynchronize", d.cuCtxSynchronize()) }

// MemGetInfo returns the free and total device memory of the current context's device.
func (d *Driver) MemGetInfo() (free, total uint64, err error) {
	err = driverError("cuMemGetInfo_v2", d.cuMemGetInfo_v2(&free, &total))
	return free, total, err
}

// MemAlloc allocates bytes of device memory.
func (d *Driver) MemAlloc(bytes uint64) (DevicePtr, error) {
	var p uint64
	if err := driverError("cuMemAlloc_v2", d.cuMemAlloc_v2(&p, bytes)); err != nil {
		err.(*Error).Detail = fmt.Sprintf("allocating %d bytes", bytes)
		return 0, err
	}
	return DevicePtr(p), nil
}

// MemFree frees a MemAlloc.
func (d *Driver) MemFree(p DevicePtr) error {
	return driverError("cuMemFree_v2", d.cuMemFree_v2(uint64(p)))
}

// MemcpyHtoDAsync copies src to device memory dst on stream s. The copy reads src before it
// returns (pageable memory is staged), so src may be reused at once.
func (d *Driver) MemcpyHtoDAsync(dst DevicePtr, src []byte, s Stream) error {
	if len(src) == 0 {
		return nil
	}
	err := driverError("cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync_v2(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src)), uintptr(s)))
	runtime.KeepAlive(src)
	return err
}

// MemcpyDtoH copies device memory src into dst once the work queued on s before it is done,
// and returns when dst holds the data.
func (d *Driver) MemcpyDtoH(dst []byte, src DevicePtr, s Stream) error {
	if len(dst) == 0 {
		return nil
	}
	err := driverError("cuMemcpyDtoHAsync_v2", d.cuMemcpyDtoHAsync_v2(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst)), uintptr(s)))
	if err == nil {
		err = d.StreamSynchronize(s)
	}
	runtime.KeepAlive(dst)
	return err
}

// MemcpyDtoDAsync copies bytes of device memory on stream s.
func (d *Driver) MemcpyDtoDAsync(dst, src DevicePtr, bytes uint64, s Stream) error {
	return driverError("cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync_v2(uint64(dst), uint64(src), bytes, uintptr(s)))
}

// MemsetD8Async sets bytes of device memory to v on stream s.
func (d *Driver) MemsetD8Async(dst DevicePtr, v byte, bytes uint64, s Stream) error {
	return driverError("cuMemsetD8Async", d.cuMemsetD8Async(uint64(dst), v, bytes, uintptr(s)))
}

// ModuleLoadData loads a module from PTX text (JIT-compiled by the driver for the device).
func (d *Driver) ModuleLoadData(ptx []byte) (Module, error) {
	img := append(append([]byte(nil), ptx...), 0) // NUL-terminated
	var m uintptr
	err := driverError("cuModuleLoadData", d.cuModuleLoadData(&m, unsafe.Pointer(&img[0])))
	runtime.KeepAlive(img)
	return Module(m), err
}

// ModuleGetFunction returns the kernel name (an extern "C" __global__ function) of m.
func (d *Driver) ModuleGetFunction(m Module, name string) (Function, error) {
	var f uintptr
	if err := driverError("cuModuleGetFunction", d.cuModuleGetFunction(&f, uintptr(m), name)); err != nil {
		err.(*Error).Detail = "kernel " + name
		return 0, err
	}
	return Function(f), nil
}

// ModuleUnload unloads m.
func (d *Driver) ModuleUnload(m Module) error {
	return driverError("cuModuleUnload", d.cuModuleUnload(uintptr(m)))
}

// LaunchKernel queues f on stream s over a grid of blocks. args holds one 8-byte slot per
// kernel parameter (a pointer, a double, or an int in its low 4 bytes: this package runs on
// little-endian machines only); the driver copies them before it returns.
func (d *Driver) LaunchKernel(f Function, grid, block [3]uint32, shared uint32, s Stream, args []uint64) error {
	params := make([]unsafe.Pointer, max(len(args), 1))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	err := driverError("cuLaunchKernel", d.cuLaunchKernel(uintptr(f), grid[0], grid[1], grid[2],
		block[0], block[1], block[2], shared, uintptr(s), unsafe.Pointer(&params[0]), nil))
	runtime.KeepAlive(args)
	runtime.KeepAlive(params)
	return err
}

// StreamCreate creates a stream (flags 0: ordered with the legacy default stream).
func (d *Driver) StreamCreate(flags uint32) (Stream, error) {
	var s uintptr
	err := driverError("cuStreamCreate", d.cuStreamCreate(&s, flags))
	return Stream(s), err
}

// StreamSynchronize waits for the work queued on s.
func (d *Driver) StreamSynchronize(s Stream) error {
	return driverError("cuStreamSynchronize", d.cuStreamSynchronize(uintptr(s)))
}

// StreamDestroy destroys s once its work is done.
func (d *Driver) StreamDestroy(s Stream) error {
	return driverError("cuStreamDestroy_v2", d.cuStreamDestroy_v2(uintptr(s)))
}

// EventCreate creates an event (flags 0: with timing).
func (d *Driver) EventCreate(flags uint32) (Event, error) {
	var e uintptr
	err := driverError("cuEventCreate", d.cuEventCreate(&e, flags))
	return Event(e), err
}

// EventRecord records e on stream s.
func (d *Driver) EventRecord(e Event, s Stream) error {
	return driverError("cuEventRecord", d.cuEventRecord(uintptr(e), uintptr(s)))
}

// EventSynchronize waits for e.
func (d *Driver) EventSynchronize(e Event) error {
	return driverError("cuEventSynchronize", d.cuEventSynchronize(uintptr(e)))
}

// EventElapsed returns the milliseconds between two recorded events.
func (d *Driver) EventElapsed(start, end Event) (float32, error) {
	if d.cuEventElapsedTime == nil {
		return 0, &Error{Call: "cuEventElapsedTime", Name: "missing", Detail: d.Lib.Path + " exports neither cuEventElapsedTime_v2 nor cuEventElapsedTime"}
	}
	var ms float32
	err := driverError("cuEventElapsedTime", d.cuEventElapsedTime(&ms, uintptr(start), uintptr(end)))
	return ms, err
}

// EventDestroy destroys e.
func (d *Driver) EventDestroy(e Event) error {
	return driverError("cuEventDestroy_v2", d.cuEventDestroy_v2(uintptr(e)))
}

// cString returns the NUL-terminated string at the start of b.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
