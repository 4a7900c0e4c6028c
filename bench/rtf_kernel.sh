#!/usr/bin/env bash
# RTF kernel generation, Go against PyTorch's CPU path, in one run on the same machine with the
# same number of threads (D = 1024 channels, n = 64, L = 4096, float64):
#
#   bash bench/rtf_kernel.sh [threads] [count]
#
# Needs Debian's python3-torch (apt-get install -y python3-torch). The Go figure is
# BenchmarkRTFKernel in analysis/bench_test.go with GOMAXPROCS = threads; the torch figure is
# bench/rtf_kernel_torch.py with torch.set_num_threads(threads).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
threads=${1:-2}
count=${2:-5}
echo "--- go (GOMAXPROCS=$threads)"
go test ./analysis -run '^$' -bench '^BenchmarkRTFKernel$' -benchtime 20x -count "$count" -cpu "$threads"
echo "--- torch ($threads threads)"
/usr/bin/python3 bench/rtf_kernel_torch.py --threads "$threads" --float32
