#include "common/math_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

namespace tula::common {

std::string math_library() {
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (sgemm == nullptr || dladdr(sgemm, &info) == 0 || info.dli_fname == nullptr) return "";
  const std::unique_ptr<char, decltype(&std::free)> resolved(realpath(info.dli_fname, nullptr), &std::free);
  return resolved ? resolved.get() : info.dli_fname;
}

bool reference_blas_in_use() {
  // A LibTorch with MKL linked in provides sgemm_ from libtorch_cpu itself.
  const std::string path = math_library();
  if (std::filesystem::path(path).filename().string().rfind("libblas.so", 0) != 0) return false;
  // Debian's OpenBLAS and BLIS install a libblas.so.3 of their own that
  // depends on the library proper: a lookup through its handle (the library
  // and what it depends on) finds their entry points; through the reference
  // one's it does not, whatever else the process has loaded (a LAPACK
  // alternative may load OpenBLAS beside the reference BLAS).
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  bool optimized = false;
  for (const char* own_entry :
       {"openblas_get_config", "bli_info_get_version_str", "mkl_get_version", "MKL_Get_Version"}) {
    optimized = optimized || dlsym(handle, own_entry) != nullptr;
  }
  dlclose(handle);  // drops the reference NOLOAD took; the library stays
  return !optimized;
}

std::string math_library_warning() {
  if (!reference_blas_in_use()) return "";
  return "the CPU kernels call the reference BLAS (" + math_library() +
         "), with which the layers that call it take about twice as long as with OpenBLAS, or longer "
         "(docs/benchmarks/engine.md, \"The BLAS library\"); "
         "install an optimized one (Debian: apt-get install libopenblas0-openmp)";
}

}  // namespace tula::common
