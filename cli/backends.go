package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ssmlab/ssmlab/train"
)

func newBackends(s *streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "backends",
		Short: "List the training backends and what --backend auto picks",
		Long: `Backends prints one line per training backend: cpu (always there, with its threads and
whether variable projection's sums run in AVX2 kernels) and gpu (the device and the driver,
NVRTC and cuFFT versions it found, or in one line why there is no GPU), then the backend
--backend auto picks.

--json prints the same as one line of JSON: "cpu" {"available" (true), "threads" (the Go
runtime's GOMAXPROCS), "sums" (how variable projection's sums run: "avx2" or "go")}, "gpu"
{"available", and "reason" where false, else "info" {"device", "memory_bytes",
"compute_capability", "multiprocessors", "driver" (the CUDA version the driver supports),
"nvrtc", "cufft", "libraries" (the files loaded)}}, and "auto" ("cpu" or "gpu": what
--backend auto picks for the rtf model's Adam recipe; variable projection, the default
distillation, runs on the CPU under auto whatever it says). The exit status is 0 with or
without a GPU.

The GPU runs the default distillation (variable projection: the same ladder, starts and
Levenberg–Marquardt as the CPU, its sums over the samples on the device) with --backend
gpu, and the rtf model's Adam recipe (its transforms in float32 with --backend gpu or auto,
in float64 with --backend gpu64); other jobs need the CPU (auto runs them there and says
so). Each of the projection's sums is a round trip to the device, and the CPU was faster at
every length measured, so auto runs variable projection on the CPU. The GPU code is
checked against the CPU on an emulated device and, in the README's figures, on an H200.

The GPU backend needs CUDA 11.2 or newer. It loads the CUDA driver (libcuda.so.1), NVRTC and
cuFFT at run time from the usual places: LD_LIBRARY_PATH, /usr/local/cuda*/lib64, the
system's library directories, the nvidia/*/lib folders of Python wheels and the directories
of /etc/ld.so.conf, absolute directories only (an empty or relative entry of LD_LIBRARY_PATH
is ignored). SSMLAB_CUDA_LIB_DIR names directories to search first; SSMLAB_LIBCUDA,
SSMLAB_LIBNVRTC and SSMLAB_LIBCUFFT name one library's file, as an absolute path.`,
		Example: `  ssmlab backends
  ssmlab backends --json | jq .gpu`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return s.writeOut([]byte(describeBackends(asJSON)))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one line of JSON")
	return cmd
}

// backendsDoc is ssmlab backends --json.
type backendsDoc struct {
	CPU  cpuDoc `json:"cpu"`
	GPU  gpuDoc `json:"gpu"`
	Auto string `json:"auto"`
}

type cpuDoc struct {
	Available bool   `json:"available"`
	Threads   int    `json:"threads"`
	Sums      string `json:"sums"` // train.CPUSums
}

type gpuDoc struct {
	Available bool        `json:"available"`
	Reason    string      `json:"reason,omitempty"`
	Info      *train.Info `json:"info,omitempty"`
}

func describeBackends(asJSON bool) string {
	doc := backendsDoc{CPU: cpuDoc{Available: true, Threads: runtime.GOMAXPROCS(0), Sums: train.CPUSums()}, Auto: "cpu"}
	info, err := train.DetectGPU()
	if err != nil {
		doc.GPU.Reason = train.NoGPUReason(err)
	} else {
		doc.GPU.Available, doc.GPU.Info, doc.Auto = true, &info, "gpu"
	}
	if asJSON {
		data, err := json.Marshal(doc)
		if err != nil {
			panic(err) // plain structs always marshal
		}
		return string(data)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cpu: available (pure Go, %d threads; %s)\n", doc.CPU.Threads, sumsWords(doc.CPU.Sums))
	if doc.GPU.Available {
		fmt.Fprintf(&b, "gpu: available: %s\n", info)
	} else {
		fmt.Fprintf(&b, "gpu: unavailable: %s\n", doc.GPU.Reason)
	}
	fmt.Fprintf(&b, "auto: %s\n", autoLine(doc.Auto))
	return b.String()
}

// sumsWords says how the CPU runs variable projection's sums, which set its speed on long
// kernels.
func sumsWords(sums string) string {
	if sums == "avx2" {
		return "variable projection's sums in AVX2 kernels"
	}
	return "variable projection's sums in portable Go loops, 4–8× slower than the AVX2 kernels this processor or build lacks"
}

// autoLine is what auto picks, in words: the GPU leaves variable projection to the CPU.
func autoLine(auto string) string {
	if auto != "gpu" {
		return auto
	}
	return "gpu (the Adam recipe; variable projection, the default distillation, runs on the CPU)"
}
