//go:build !nogpu

package train

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/ssmlab/ssmlab/train/cuda"
)

// cudaLibs is the process's CUDA: the three libraries, device 0 and (once a trainer needs
// it) its primary context and the compiled kernels. Loaded once; never unloaded.
type cudaLibs struct {
	drv  *cuda.Driver
	rtc  *cuda.NVRTC
	fft  *cuda.CUFFT
	dev  cuda.Device
	cc   int // compute capability, 10·major + minor
	info Info

	mu      sync.Mutex
	ctx     cuda.Context
	hasCtx  bool
	modules map[bool]map[string]cuda.Function // by float64-ness, then kernel name
}

var loadCUDA = sync.OnceValues(func() (*cudaLibs, error) {
	l, err := openCUDALibs(cuda.Search{})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	return l, nil
})

func detectGPU() (Info, error) {
	l, err := loadCUDA()
	if err != nil {
		return Info{}, err
	}
	return l.info, nil
}

func openCUDALibs(s cuda.Search) (*cudaLibs, error) {
	if !cuda.Supported {
		// Let the platform's reason speak for itself.
		_, err := s.Find(cuda.LibCUDA, 0)
		return nil, err
	}
	drv, err := cuda.OpenDriver(s)
	if err != nil {
		return nil, err
	}
	if err := drv.Init(); err != nil {
		return nil, err
	}
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("the CUDA driver sees no device")
	}
	ver, err := drv.Version()
	if err != nil {
		return nil, err
	}
	dev, err := drv.DeviceGet(0)
	if err != nil {
		return nil, err
	}
	l := &cudaLibs{drv: drv, dev: dev, modules: map[bool]map[string]cuda.Function{}}
	info := &l.info
	info.Driver = cuda.VersionString(ver)
	if info.Device, err = drv.DeviceName(dev); err != nil {
		return nil, err
	}
	if info.MemoryBytes, err = drv.DeviceTotalMem(dev); err != nil {
		return nil, err
	}
	major, minor, err := drv.ComputeCapability(dev)
	if err != nil {
		return nil, err
	}
	l.cc = 10*major + minor
	info.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	if info.Multiprocessors, err = drv.DeviceAttribute(cuda.AttrMultiprocessorCount, dev); err != nil {
		return nil, err
	}
	if l.rtc, err = cuda.OpenNVRTC(s, ver/1000); err != nil {
		return nil, err
	}
	rmaj, rmin, err := l.rtc.Version()
	if err != nil {
		return nil, err
	}
	info.NVRTC = fmt.Sprintf("%d.%d", rmaj, rmin)
	if l.fft, err = cuda.OpenCUFFT(s, ver/1000); err != nil {
		return nil, err
	}
	fv, err := l.fft.Version()
	if err != nil {
		return nil, err
	}
	info.CUFFT = cuda.CUFFTVersionString(fv)
	info.Libraries = []string{drv.Lib.Path, l.rtc.Lib.Path, l.fft.Lib.Path}
	return l, nil
}

// context retains the primary context (once) and makes it current on the calling thread,
// which the caller has locked.
func (l *cudaLibs) context() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.hasCtx {
		ctx, err := l.drv.PrimaryCtxRetain(l.dev)
		if err != nil {
			return err
		}
		l.ctx, l.hasCtx = ctx, true
	}
	return l.drv.CtxSetCurrent(l.ctx)
}

// kernels returns the kernels of gpuSource for one precision: compiled by NVRTC for the
// device's architecture (or the PTX cache's copy) and loaded, once per process.
func (l *cudaLibs) kernels(f64 bool) (map[string]cuda.Function, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fns, ok := l.modules[f64]; ok {
		return fns, nil
	}
	archs, err := l.rtc.SupportedArchs()
	if err != nil {
		return nil, err
	}
	opts := gpuOptions(l.rtc.ArchOption(l.cc, archs), f64)
	cache := cuda.DefaultPTXCache()
	ptx, key, cached, err := cache.CompileCached(l.rtc, gpuSource, gpuSourceName, opts)
	if err != nil {
		return nil, fmt.Errorf("compiling the GPU kernels: %w", err)
	}
	mod, err := l.drv.ModuleLoadData(ptx)
	if err != nil && cached {
		// A damaged or stale cache entry: compile afresh.
		cache.Remove(key)
		if ptx, _, _, err = cache.CompileCached(l.rtc, gpuSource, gpuSourceName, opts); err == nil {
			mod, err = l.drv.ModuleLoadData(ptx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("loading the GPU kernels: %w", err)
	}
	fns := map[string]cuda.Function{}
	for _, name := range gpuKernelNames {
		f, err := l.drv.ModuleGetFunction(mod, name)
		if err != nil {
			return nil, err
		}
		fns[name] = f
	}
	l.modules[f64] = fns
	return fns, nil
}

// cudaDevice is a device on CUDA: one stream per trainer, plans sharing one work area.
type cudaDevice struct {
	l      *cudaLibs
	fns    map[string]cuda.Function
	stream cuda.Stream
	f64    bool
	allocs []cuda.DevicePtr
	plans  []cudaPlan
	work   cuda.DevicePtr
	worksz uint64
}

type cudaPlan struct {
	plan cuda.Plan
	typ  cuda.FFTType
}

// cudaBlock is the threads per block of every launch: a power of two for the reductions.
const cudaBlock = 256

func openCUDA(f64 bool) (device, error) {
	l, err := loadCUDA()
	if err != nil {
		return nil, err
	}
	d := &cudaDevice{l: l, f64: f64}
	release, err := d.bind()
	if err != nil {
		return nil, err
	}
	defer release()
	if d.fns, err = l.kernels(f64); err != nil {
		return nil, err
	}
	if d.stream, err = l.drv.StreamCreate(0); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *cudaDevice) bind() (func(), error) {
	runtime.LockOSThread()
	if err := d.l.context(); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return runtime.UnlockOSThread, nil
}

func (d *cudaDevice) blockSize() int { return cudaBlock }

func (d *cudaDevice) alloc(bytes int64) (devPtr, error) {
	p, err := d.l.drv.MemAlloc(uint64(bytes))
	if err != nil {
		return 0, err
	}
	d.allocs = append(d.allocs, p)
	return devPtr(p), nil
}

func (d *cudaDevice) upload(dst devPtr, src []byte) error {
	return d.l.drv.MemcpyHtoDAsync(cuda.DevicePtr(dst), src, d.stream)
}

func (d *cudaDevice) download(dst []byte, src devPtr) error {
	return d.l.drv.MemcpyDtoH(dst, cuda.DevicePtr(src), d.stream)
}

func (d *cudaDevice) copy(dst, src devPtr, bytes int64) error {
	return d.l.drv.MemcpyDtoDAsync(cuda.DevicePtr(dst), cuda.DevicePtr(src), uint64(bytes), d.stream)
}

func (d *cudaDevice) zero(dst devPtr, bytes int64) error {
	return d.l.drv.MemsetD8Async(cuda.DevicePtr(dst), 0, uint64(bytes), d.stream)
}

func (d *cudaDevice) launch(name string, gx, gy int, args []uint64) error {
	f, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("train: gpu: no kernel %s in the module", name)
	}
	if gx < 1 || gy < 1 || gx > 1<<31-1 || gy > 65535 {
		return fmt.Errorf("train: gpu: kernel %s: grid %d × %d out of range", name, gx, gy)
	}
	err := d.l.drv.LaunchKernel(f, [3]uint32{uint32(gx), uint32(gy), 1}, [3]uint32{cudaBlock, 1, 1}, 0, d.stream, args)
	if err != nil {
		return fmt.Errorf("kernel %s: %w", name, err)
	}
	return nil
}

func (d *cudaDevice) plan(dir fftDir, n, batch int) (int, error) {
	typ := map[[2]bool]cuda.FFTType{
		{false, false}: cuda.R2C, {false, true}: cuda.C2R, {true, false}: cuda.D2Z, {true, true}: cuda.Z2D,
	}[[2]bool{d.f64, dir == fftInverse}]
	p, work, err := d.l.fft.PlanMany(int64(n), int64(batch), typ)
	if err != nil {
		return 0, err
	}
	d.plans = append(d.plans, cudaPlan{p, typ})
	if err := d.l.fft.SetStream(p, d.stream); err != nil {
		return 0, err
	}
	if work > d.worksz {
		// A larger shared work area: nothing runs yet (plans are made before the first
		// step), but wait anyway before freeing the old one.
		if err := d.l.drv.StreamSynchronize(d.stream); err != nil {
			return 0, err
		}
		if d.work != 0 {
			if err := d.l.drv.MemFree(d.work); err != nil {
				return 0, err
			}
			d.work = 0
		}
		w, err := d.l.drv.MemAlloc(work)
		if err != nil {
			return 0, fmt.Errorf("cuFFT work area: %w", err)
		}
		d.work, d.worksz = w, work
		for _, q := range d.plans[:len(d.plans)-1] {
			if err := d.l.fft.SetWorkArea(q.plan, d.work); err != nil {
				return 0, err
			}
		}
	}
	if d.work != 0 {
		if err := d.l.fft.SetWorkArea(p, d.work); err != nil {
			return 0, err
		}
	}
	return len(d.plans) - 1, nil
}

func (d *cudaDevice) fft(plan int, in, out devPtr) error {
	q := d.plans[plan]
	return d.l.fft.Exec(q.plan, q.typ, cuda.DevicePtr(in), cuda.DevicePtr(out))
}

func (d *cudaDevice) close() error {
	err := d.l.drv.StreamSynchronize(d.stream)
	for _, q := range d.plans {
		err = errors.Join(err, d.l.fft.Destroy(q.plan))
	}
	for _, p := range d.allocs {
		err = errors.Join(err, d.l.drv.MemFree(p))
	}
	if d.work != 0 {
		err = errors.Join(err, d.l.drv.MemFree(d.work))
	}
	err = errors.Join(err, d.l.drv.StreamDestroy(d.stream))
	d.plans, d.allocs, d.work = nil, nil, 0
	return err
}
