// Build configuration and threading controls.
#include "core/cpu_allocator.h"
#include "cpu/blas.h"
#include "core/parallel.h"
#include "python/convert.h"

namespace ts::python {

void init_config(py::module_& m) {
  m.attr("__version__") = TESSERA_VERSION;
  m.def("_build_config", []() {
    py::dict d;
    d["version"] = TESSERA_VERSION;
    d["blas"] = blas_name();
    d["blas_threads"] = blas_uses_our_threads() ? "tessera" : "blas";
    d["openmp"] = openmp_enabled();
    d["cuda"] = static_cast<bool>(TESSERA_WITH_CUDA);
    d["compiler"] = __VERSION__;
    return d;
  });
  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 1)
          throw py::value_error("set_num_threads: expected a positive thread count, got " +
                                std::to_string(n));
        set_num_threads(n);
        blas_set_num_threads(n);
      },
      py::arg("n"), "Threads used by tessera's CPU kernels and its BLAS.");
  m.def("get_num_threads", &get_num_threads);
  m.def("_blas_num_threads", &blas_get_num_threads);
  m.def("_cpu_cached_bytes", &cpu_cached_bytes, "Bytes of freed large CPU blocks kept for reuse.");
  m.def("_cpu_empty_cache", &cpu_empty_cache, "Returns cached CPU blocks to the system.");
}

}  // namespace ts::python
