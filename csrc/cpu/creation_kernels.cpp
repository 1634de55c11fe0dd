// CPU kernels for arange, linspace and the tril/triu band mask.
#include <algorithm>
#include <cstring>

#include "cpu/convert.h"
#include "core/parallel.h"
#include "ops/creation.h"

namespace ts {
namespace {

void cpu_arange(const Tensor& out, const Scalar& start, const Scalar& step) {
  const int64_t n = out.numel();
  visit_dtype<kRealSet>(out.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    if constexpr (std::is_integral_v<T>) {
      // Integer ranges are computed exactly modulo 2^64 (wrapping like a cast into T; in
      // unsigned arithmetic, where wrapping is defined).
      const uint64_t a = static_cast<uint64_t>(start.to<int64_t>()),
                     s = static_cast<uint64_t>(step.to<int64_t>());
      parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          o[i] = static_cast<T>(static_cast<int64_t>(a + static_cast<uint64_t>(i) * s));
      });
    } else {
      const double a = start.to<double>(), s = step.to<double>();
      parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = convert<T, double>(a + double(i) * s);
      });
    }
  });
}

void cpu_linspace(const Tensor& out, std::complex<double> start, std::complex<double> step,
                  std::complex<double> stop, bool last_is_stop) {
  const int64_t n = out.numel();
  visit_dtype<kInexactSet>(out.dtype(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>) {
      using V = typename T::value_type;
      auto at = [&](std::complex<double> v) {
        return T(static_cast<V>(v.real()), static_cast<V>(v.imag()));
      };
      for (int64_t i = 0; i < n; ++i) o[i] = at(start + double(i) * step);
      if (last_is_stop) o[n - 1] = at(stop);
    } else {
      const double a = start.real(), s = step.real();
      parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = convert<T, double>(a + double(i) * s);
      });
      if (last_is_stop) o[n - 1] = convert<T, double>(stop.real());
    }
  });
}

// Zero bits are zero in every dtype, so the mask needs no per-dtype code.
void cpu_tri_zero(const Tensor& out, int64_t k, bool upper) {
  const int64_t rows = out.dim(out.ndim() - 2), cols = out.dim(out.ndim() - 1);
  if (rows == 0 || cols == 0) return;
  // The user's diagonal offset, clamped so that i + k cannot overflow (same result).
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  const int64_t batch = out.numel() / (rows * cols), isz = out.itemsize();
  char* base = out.data_ptr();
  parallel_for(0, batch * rows, 256, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      char* row = base + r * cols * isz;
      const int64_t i = r % rows;
      // tril keeps cols [0, i + k]; triu keeps [i + k, cols).
      const int64_t edge = std::min(cols, std::max<int64_t>(0, upper ? i + k : i + k + 1));
      if (upper)
        std::memset(row, 0, edge * isz);
      else
        std::memset(row + edge * isz, 0, (cols - edge) * isz);
    }
  });
}

}  // namespace

TS_REGISTER_KERNEL(arange_stub, CPU, &cpu_arange);
TS_REGISTER_KERNEL(linspace_stub, CPU, &cpu_linspace);
TS_REGISTER_KERNEL(tri_zero_stub, CPU, &cpu_tri_zero);

}  // namespace ts
