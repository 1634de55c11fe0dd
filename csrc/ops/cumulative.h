// cumulative_sum, cumulative_prod (array API 2024.12) and diff.
#pragma once
#include <optional>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// A scan over a contiguous input viewed as (outer, n, inner) along the middle dim, into a
// contiguous output (outer, n + include_initial, inner) of dtype sum_dtype(in).
struct ScanArgs {
  const char* in;
  char* out;
  int64_t outer, n, inner;
  bool include_initial;
};
using ScanKernel = void (*)(const ScanArgs&, DType in);
TS_DECLARE_STUB(ScanKernel, cumsum_stub);
TS_DECLARE_STUB(ScanKernel, cumprod_stub);

// axis may be omitted only for 1-D input.
Tensor cumulative_sum(const Tensor& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                      bool include_initial);
Tensor cumulative_prod(const Tensor& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                       bool include_initial);

// n-th forward difference along axis, after concatenating prepend/x/append along it
// (a 0-d prepend/append is broadcast to a single slice). Booleans give x[1:] != x[:-1].
Tensor diff(const Tensor& x, int64_t axis, int64_t n, const Tensor* prepend, const Tensor* append);

}  // namespace ts
