// Which BLAS library this process's CPU kernels call. LibTorch's linear
// layers, and its convolutions where oneDNN does not take them, end in
// sgemm_ of whatever libblas.so.3 the system provides; on Debian that is
// Netlib's reference BLAS unless an optimized one is installed, and with it
// LeNet-5's and small_cnn's steps took 1.9-2.9x as long as with OpenBLAS
// (docs/benchmarks/engine.md, "The BLAS library"). Profiles record the library,
// since timings taken with one do not describe the other.
#pragma once
#include <string>

namespace tula::common {

// The file of the library that provides sgemm_ to this process, its links
// resolved ("/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"); ""
// when no loaded library provides it (a process without LibTorch, or a
// LibTorch with its BLAS linked in statically).
std::string math_library();

// True when that library is a reference BLAS (Netlib's, as Debian's libblas3
// installs it): a libblas.so that neither has nor depends on the optimized
// libraries' own entry points (OpenBLAS, BLIS, MKL).
bool reference_blas_in_use();

// A warning for the logs when reference_blas_in_use(), saying what it costs
// and which package to install; "" otherwise.
std::string math_library_warning();

}  // namespace tula::common
