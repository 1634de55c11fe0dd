// CPU kernels for cumulative_sum and cumulative_prod: each (outer, inner-block) task scans
// along n sequentially, vectorized across a block of the inner dim; accumulators are in
// acc_t (float for float16/bfloat16) and each output is rounded from the running value.
#include <algorithm>

#include "cpu/convert.h"
#include "core/parallel.h"
#include "cpu/reduce_loops.h"
#include "cpu/loops.h"
#include "kernels/scalar_math.h"
#include "ops/cumulative.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

using reduce_detail::sum_t;

template <bool IsProd>
void scan_kernel(const ScanArgs& a, DType in, const char* name) {
  visit_dtype<kAllSet>(in, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = sum_t<T>;
    using A = acc_t<R>;
    constexpr int64_t kCols = 512;
    const int64_t n = a.n, inner = a.inner, nout = n + (a.include_initial ? 1 : 0);
    const int64_t ncb = (inner + kCols - 1) / kCols;
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * kCols, 1));
    const T* x = reinterpret_cast<const T*>(a.in);
    R* y = reinterpret_cast<R*>(a.out);
    if (inner == 1) {  // scan along contiguous rows: one running value per row
      const int64_t rgrain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
      parallel_for(0, a.outer, rgrain, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const T* xi = x + p * n;
          R* yo = y + p * nout;
          A acc = A(IsProd ? 1 : 0);
          if (a.include_initial) *yo++ = convert<R, A>(acc);
          for (int64_t i = 0; i < n; ++i) {
            const A v = convert<A, T>(xi[i]);
            acc = IsProd ? scalar::wrap_mul(acc, v) : scalar::wrap_add(acc, v);  // ints wrap
            yo[i] = convert<R, A>(acc);
          }
        }
      });
      return;
    }
    parallel_for(0, a.outer * ncb, grain, [&](int64_t b, int64_t e) {
      A acc[kCols];
      for (int64_t t = b; t < e; ++t) {
        const int64_t p = t / ncb, c0 = (t % ncb) * kCols, w = std::min(kCols, inner - c0);
        const T* xi = x + p * n * inner + c0;
        R* yo = y + p * nout * inner + c0;
        for (int64_t c = 0; c < w; ++c) acc[c] = A(IsProd ? 1 : 0);
        if (a.include_initial) {
          for (int64_t c = 0; c < w; ++c) yo[c] = convert<R, A>(acc[c]);
          yo += inner;
        }
        for (int64_t i = 0; i < n; ++i, xi += inner, yo += inner)
          for (int64_t c = 0; c < w; ++c) {
            const A v = convert<A, T>(xi[c]);
            acc[c] = IsProd ? scalar::wrap_mul(acc[c], v) : scalar::wrap_add(acc[c], v);
            yo[c] = convert<R, A>(acc[c]);
          }
      }
    });
  });
}

void cumsum_kernel(const ScanArgs& a, DType in) { scan_kernel<false>(a, in, "cumulative_sum"); }
void cumprod_kernel(const ScanArgs& a, DType in) { scan_kernel<true>(a, in, "cumulative_prod"); }

}  // namespace

TS_REGISTER_KERNEL(cumsum_stub, CPU, &cumsum_kernel);
TS_REGISTER_KERNEL(cumprod_stub, CPU, &cumprod_kernel);

}  // namespace ts
