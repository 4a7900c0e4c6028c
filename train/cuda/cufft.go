package cuda

import "fmt"

// FFTType is a cufftType: the kind of a transform.
type FFTType int32

// The real transforms. R2C and D2Z are forward (exponent −1), C2R and Z2D inverse (+1), all
// unnormalised, like gonum's fourier.FFT.
const (
	R2C FFTType = 0x2a // CUFFT_R2C: float → complex float
	C2R FFTType = 0x2c // CUFFT_C2R: complex float → float
	D2Z FFTType = 0x6a // CUFFT_D2Z: double → complex double
	Z2D FFTType = 0x6c // CUFFT_Z2D: complex double → double
)

func (t FFTType) String() string {
	switch t {
	case R2C:
		return "R2C"
	case C2R:
		return "C2R"
	case D2Z:
		return "D2Z"
	case Z2D:
		return "Z2D"
	}
	return fmt.Sprintf("cufftType(%#x)", int32(t))
}

// Plan is a cufftHandle.
type Plan int32

// CUFFT is libcufft. It runs in the primary context of the device current on the calling
// thread (it uses the runtime API, which shares that context with the driver API).
type CUFFT struct {
	Lib *Handle

	cufftGetVersion        func(v *int32) int32
	cufftCreate            func(plan *int32) int32
	cufftSetAutoAllocation func(plan, auto int32) int32
	cufftMakePlanMany64    func(plan, rank int32, n *int64, inembed *int64, istride, idist int64, onembed *int64, ostride, odist int64, typ int32, batch int64, workSize *uint64) int32
	cufftSetWorkArea       func(plan int32, area uint64) int32
	cufftSetStream         func(plan int32, s uintptr) int32
	cufftExecR2C           func(plan int32, in, out uint64) int32
	cufftExecC2R           func(plan int32, in, out uint64) int32
	cufftExecD2Z           func(plan int32, in, out uint64) int32
	cufftExecZ2D           func(plan int32, in, out uint64) int32
	cufftDestroy           func(plan int32) int32
}

// OpenCUFFT finds and loads libcufft; maxCUDA > 0 skips cuFFTs of a newer CUDA major version
// than the driver supports.
func OpenCUFFT(s Search, maxCUDA int) (*CUFFT, error) {
	h, err := s.Find(LibCUFFT, maxCUDA)
	if err != nil {
		return nil, err
	}
	c := &CUFFT{Lib: h}
	if err := bindAll(h, []symbol{
		{&c.cufftGetVersion, "cufftGetVersion"}, {&c.cufftCreate, "cufftCreate"},
		{&c.cufftSetAutoAllocation, "cufftSetAutoAllocation"}, {&c.cufftMakePlanMany64, "cufftMakePlanMany64"},
		{&c.cufftSetWorkArea, "cufftSetWorkArea"}, {&c.cufftSetStream, "cufftSetStream"},
		{&c.cufftExecR2C, "cufftExecR2C"}, {&c.cufftExecC2R, "cufftExecC2R"},
		{&c.cufftExecD2Z, "cufftExecD2Z"}, {&c.cufftExecZ2D, "cufftExecZ2D"},
		{&c.cufftDestroy, "cufftDestroy"},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Version returns cuFFT's version as 1000·major + 100·minor + patch (11201 is 11.2.1).
func (c *CUFFT) Version() (int, error) {
	var v int32
	err := cufftError("cufftGetVersion", c.cufftGetVersion(&v))
	return int(v), err
}

// CUFFTVersionString formats a cufftGetVersion number: 11201 is "11.2.1".
func CUFFTVersionString(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/1000, v%1000/100, v%100)
}

// PlanMany makes a batch of 1-D transforms of n points, each batch element contiguous (the
// basic layout: real elements n apart, complex ones n/2+1 apart), without allocating a work
// area: it returns the work area's size, to be given with SetWorkArea before the plan runs.
// Plans run one after another on one stream can share one work area of their largest size.
func (c *CUFFT) PlanMany(n, batch int64, typ FFTType) (Plan, uint64, error) {
	var p int32
	if err := cufftError("cufftCreate", c.cufftCreate(&p)); err != nil {
		return 0, 0, err
	}
	if err := cufftError("cufftSetAutoAllocation", c.cufftSetAutoAllocation(p, 0)); err != nil {
		c.cufftDestroy(p)
		return 0, 0, err
	}
	dims := []int64{n}
	var work uint64
	if err := cufftError("cufftMakePlanMany64", c.cufftMakePlanMany64(p, 1, &dims[0], nil, 1, 0, nil, 1, 0, int32(typ), batch, &work)); err != nil {
		c.cufftDestroy(p)
		err.(*Error).Detail = fmt.Sprintf("%s of %d points, batch %d", typ, n, batch)
		return 0, 0, err
	}
	return Plan(p), work, nil
}

// SetWorkArea gives a plan its work area.
func (c *CUFFT) SetWorkArea(p Plan, area DevicePtr) error {
	return cufftError("cufftSetWorkArea", c.cufftSetWorkArea(int32(p), uint64(area)))
}

// SetStream makes a plan run on stream s.
func (c *CUFFT) SetStream(p Plan, s Stream) error {
	return cufftError("cufftSetStream", c.cufftSetStream(int32(p), uintptr(s)))
}

// Exec queues the plan's transform of in into out (out of place; an inverse transform may
// overwrite its input).
func (c *CUFFT) Exec(p Plan, typ FFTType, in, out DevicePtr) error {
	switch typ {
	case R2C:
		return cufftError("cufftExecR2C", c.cufftExecR2C(int32(p), uint64(in), uint64(out)))
	case C2R:
		return cufftError("cufftExecC2R", c.cufftExecC2R(int32(p), uint64(in), uint64(out)))
	case D2Z:
		return cufftError("cufftExecD2Z", c.cufftExecD2Z(int32(p), uint64(in), uint64(out)))
	case Z2D:
		return cufftError("cufftExecZ2D", c.cufftExecZ2D(int32(p), uint64(in), uint64(out)))
	}
	panic("cuda: unknown FFT type " + typ.String())
}

// Destroy frees a plan.
func (c *CUFFT) Destroy(p Plan) error { return cufftError("cufftDestroy", c.cufftDestroy(int32(p))) }
