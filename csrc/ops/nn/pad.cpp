#include "ops/nn/pad.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/manipulation.h"
#include "ops/views.h"

namespace ts::nn {

namespace {

// reflect/replicate with a negative pad on a side: output position i reads the input at
// i - left reflected (or clamped) into [0, n), as PyTorch maps them (the reflection is of the
// whole input, not of what the crop leaves).
Tensor pad_by_index(const Tensor& x, int64_t axis, int64_t left, int64_t right,
                    const std::string& mode) {
  const int64_t n = x.dim(axis), size = n + left + right;
  TS_CHECK(size >= 0 && n > 0 && (mode != "reflect" || (left < n && right < n)), ValueError,
           "pad: ", mode, " padding (", left, ", ", right, ") does not fit the dimension size ", n);
  Tensor idx = Tensor::empty(Shape{size}, DType::Int64);
  int64_t* p = idx.data<int64_t>();
  const int64_t period = n > 1 ? 2 * (n - 1) : 1;
  for (int64_t i = 0; i < size; ++i) {
    int64_t q = i - left;
    if (mode == "reflect") {
      q = std::llabs(q) % period;
      if (q >= n) q = period - q;
    } else {
      q = std::clamp<int64_t>(q, 0, n - 1);
    }
    p[i] = q;
  }
  return index_select(x, axis, to_device(idx, x.device()));
}

Tensor pad_axis(Tensor x, int64_t axis, int64_t left, int64_t right, const std::string& mode,
                const Scalar& value) {
  int64_t n = x.dim(axis);
  if ((left < 0 || right < 0) && (mode == "reflect" || mode == "replicate"))
    return pad_by_index(x, axis, left, right, mode);
  if (left < 0 || right < 0) {
    // Negative pads crop first; the positive side then pads the cropped tensor (PyTorch's
    // semantics for constant, and for circular: it wraps what is left).
    const int64_t lo = std::max<int64_t>(-left, 0), hi = std::max<int64_t>(-right, 0);
    TS_CHECK(n - lo - hi >= 0, ValueError, "pad: negative padding (", left, ", ", right,
             ") crops more than the dimension size ", n);
    x = slice(x, axis, lo, n - hi, 1);
    left = std::max<int64_t>(left, 0);
    right = std::max<int64_t>(right, 0);
    n = x.dim(axis);
  }
  if (left == 0 && right == 0) return x;
  Tensor lo, hi;
  if (mode == "constant") {
    const auto block = [&](int64_t k) {
      Shape s = x.shape();
      s[axis] = k;
      Tensor b = Tensor::empty(s, x.dtype(), x.device());
      fill_(b, value);
      return b;
    };
    lo = block(left);
    hi = block(right);
  } else if (mode == "reflect") {
    TS_CHECK(left < n && right < n, ValueError, "pad: reflect padding (", left, ", ", right,
             ") must be smaller than the dimension size ", n);
    lo = flip(slice(x, axis, 1, left + 1, 1), Shape{axis});
    hi = flip(slice(x, axis, n - 1 - right, n - 1, 1), Shape{axis});
  } else if (mode == "replicate") {
    TS_CHECK(n > 0, ValueError, "pad: replicate padding of an empty dimension");
    Shape s = x.shape();
    s[axis] = left;
    lo = broadcast_to(slice(x, axis, 0, 1, 1), s);
    s[axis] = right;
    hi = broadcast_to(slice(x, axis, n - 1, n, 1), s);
  } else if (mode == "circular") {
    TS_CHECK(left <= n && right <= n, ValueError, "pad: circular padding (", left, ", ", right,
             ") exceeds size ", n);
    lo = slice(x, axis, n - left, n, 1);
    hi = slice(x, axis, 0, right, 1);
  } else {
    throw ValueError(
        str("pad: unknown mode '", mode, "' (constant, reflect, replicate, circular)"));
  }
  std::vector<Tensor> parts;
  if (left) parts.push_back(lo);
  parts.push_back(x);
  if (right) parts.push_back(hi);
  return concat(parts, axis);
}

}  // namespace

Tensor pad(const Tensor& x, const Shape& pad, const std::string& mode, const Scalar& value) {
  const int64_t len = pad.size();
  TS_CHECK(len % 2 == 0 && len / 2 <= x.ndim(), ValueError, "pad: padding length ", len,
           " must be even and at most 2*ndim (", 2 * x.ndim(), ")");
  Tensor out = x;
  for (int64_t k = 0; k < len / 2; ++k)
    out = pad_axis(out, x.ndim() - 1 - k, pad[2 * k], pad[2 * k + 1], mode, value);
  return out;
}

}  // namespace ts::nn
