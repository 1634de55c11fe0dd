#include "ops/nn/pad.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "autograd/function.h"
#include "core/error.h"
#include "core/scalar_range.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/indexing_advanced.h"
#include "ops/manipulation.h"
#include "ops/views.h"

namespace ts::nn {

TS_DEFINE_STUB(PadKernel, pad_stub, "pad");
TS_DEFINE_STUB(PadBackwardKernel, pad_backward_stub, "pad_backward");

namespace {

enum PadMode : int64_t { kReflect, kReplicate, kCircular };

// The size n + left + right of a dim of size n padded by (left, right), computed without
// overflow: (2^63 - 1, 2^63 - 1) on a dim of 3 wrapped around to a dim of 1 (silent garbage;
// torch too), and -left of INT64_MIN is undefined.
int64_t padded_size(int64_t n, int64_t left, int64_t right, const char* mode) {
  const __int128 size = static_cast<__int128>(n) + left + right;
  TS_CHECK(size <= INT64_MAX && left != INT64_MIN && right != INT64_MIN, ValueError, "pad: ",
           mode, " padding (", left, ", ", right, ") of a dimension of size ", n,
           " gives a size past int64; hint: pads must be far smaller than 2^63");
  return static_cast<int64_t>(size);
}

// The checks of pad_map below (and pad_axis / pad_by_index, with the same messages); the
// padded size, and in `*crop` the elements a negative circular pad crops on the left.
int64_t pad_extent(int64_t n, int64_t left, int64_t right, PadMode mode, int64_t* crop) {
  const char* name = mode == kReflect ? "reflect" : mode == kReplicate ? "replicate" : "circular";
  const int64_t size = padded_size(n, left, right, name);
  *crop = 0;
  if ((left < 0 || right < 0) && mode != kCircular) {
    TS_CHECK(size >= 0 && n > 0 && (mode != kReflect || (left < n && right < n)),
             ValueError, "pad: ", name, " padding (", left, ", ", right,
             ") does not fit the dimension size ", n);
  } else if (left < 0 || right < 0) {
    const int64_t lo = std::max<int64_t>(-left, 0), hi = std::max<int64_t>(-right, 0);
    TS_CHECK(lo <= n && hi <= n - lo, ValueError, "pad: negative padding (", left, ", ",
             right, ") crops more than the dimension size ", n);
    n -= lo + hi;
    TS_CHECK(left <= n && right <= n, ValueError, "pad: circular padding (", left, ", ", right,
             ") exceeds size ", n);
    *crop = lo;
  } else if (left != 0 || right != 0) {
    TS_CHECK(mode != kReflect || (left < n && right < n), ValueError, "pad: reflect padding (",
             left, ", ", right, ") must be smaller than the dimension size ", n);
    TS_CHECK(mode != kReplicate || n > 0, ValueError,
             "pad: replicate padding of an empty dimension");
    TS_CHECK(mode != kCircular || (left <= n && right <= n), ValueError, "pad: circular padding (",
             left, ", ", right, ") exceeds size ", n);
  }
  return size;
}

// Output position i of a dim of size n padded by (left, right) reads the input at the returned
// index: the same validation, error messages and mapping as pad_axis / pad_by_index below.
std::vector<int64_t> pad_map(int64_t n, int64_t left, int64_t right, PadMode mode) {
  int64_t lo = 0;
  std::vector<int64_t> m(pad_extent(n, left, right, mode, &lo));
  if (lo || (mode == kCircular && (left < 0 || right < 0))) {
    n -= std::max<int64_t>(-left, 0) + std::max<int64_t>(-right, 0);
    left = std::max<int64_t>(left, 0);
  }
  const int64_t period = n > 1 ? 2 * (n - 1) : 1;
  for (int64_t i = 0; i < static_cast<int64_t>(m.size()); ++i) {
    int64_t q;  // i - left, saturated (replicate clamps it; (-2^63 + 1, 2^63 - 1) wrapped)
    if (__builtin_sub_overflow(i, left, &q)) q = INT64_MAX;
    if (mode == kReflect) {
      q = std::llabs(q) % period;
      if (q >= n) q = period - q;
    } else if (mode == kReplicate) {
      q = std::clamp<int64_t>(q, 0, n - 1);
    } else {
      q = ((q % n) + n) % n;
    }
    m[i] = q + lo;
  }
  return m;
}

// The maps of the last pad.size() / 2 dims of `shape`, the others' identity.
PadMaps pad_maps(const Shape& shape, const Shape& pad, PadMode mode) {
  PadMaps m;
  const int64_t nd = shape.size(), k = pad.size() / 2;
  for (int64_t d = 0; d < nd - 3; ++d) m.batch *= shape[d];
  for (int64_t j = 2; j >= 0; --j) {  // the last dim first, as pad_axis checks them
    const int64_t axis = nd - 3 + j;
    m.in[j] = axis >= 0 ? shape[axis] : 1;
    const int64_t from_last = 2 - j;  // the pair index of this dim in `pad`
    if (from_last < k) {
      m.map[j] = pad_map(m.in[j], pad[2 * from_last], pad[2 * from_last + 1], mode);
    } else {
      m.map[j].resize(m.in[j]);
      for (int64_t i = 0; i < m.in[j]; ++i) m.map[j][i] = i;
    }
  }
  return m;
}

Shape padded_shape(const Shape& shape, const PadMaps& m) {
  Shape s = shape;
  const int64_t nd = s.size();
  for (int64_t j = 0; j < 3; ++j)
    if (nd - 3 + j >= 0) s[nd - 3 + j] = m.map[j].size();
  return s;
}

Tensor pad_gather(const Tensor& x, const Shape& pad, PadMode mode);
Tensor pad_scatter(const Tensor& gy, const Shape& in_shape, const Shape& pad, PadMode mode);

// Both directions' nodes: attrs (mode, pads...); the backward of either is the other.
Shape pad_attrs(const Shape& pad, PadMode mode) {
  Shape a{mode};
  for (int64_t v : pad) a.push_back(v);
  return a;
}

void unpack_attrs(const autograd::BackwardCtx& c, Shape& pad, PadMode& mode) {
  const Shape& a = c.node.attrs;
  mode = static_cast<PadMode>(a[0]);
  pad = Shape{};
  for (int64_t i = 1; i < a.size(); ++i) pad.push_back(a[i]);
}

autograd::variable_list pad_bw(const autograd::BackwardCtx& c, const autograd::variable_list& g) {
  Shape pad;
  PadMode mode;
  unpack_attrs(c, pad, mode);
  return {pad_scatter(g[0], c.input(0).shape, pad, mode)};
}

autograd::variable_list pad_backward_bw(const autograd::BackwardCtx& c,
                                        const autograd::variable_list& g) {
  Shape pad;
  PadMode mode;
  unpack_attrs(c, pad, mode);
  return {pad_gather(g[0], pad, mode)};
}

const autograd::Formula kPadFormulas[] = {{"ReflectionPadBackward", pad_bw},
                                          {"ReplicationPadBackward", pad_bw},
                                          {"CircularPadBackward", pad_bw}};
const autograd::Formula kPadBackwardFormula{"PadBackwardBackward", pad_backward_bw};

Tensor pad_gather(const Tensor& x, const Shape& pad, PadMode mode) {
  // The output first (checked, and a MemoryError naming its size when too large), then the
  // maps, which are no larger than its dims.
  Shape out_shape = x.shape();
  for (int64_t k = 0, nd = x.ndim(), crop = 0; k < static_cast<int64_t>(pad.size()) / 2; ++k)
    out_shape[nd - 1 - k] = pad_extent(x.dim(nd - 1 - k), pad[2 * k], pad[2 * k + 1], mode, &crop);
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  const PadMaps m = pad_maps(x.shape(), pad, mode);
  if (out.numel() > 0) pad_stub.get(x.device())(contiguous(x), out, m);
  if (autograd::needs_grad({&x})) {
    auto node = autograd::record(kPadFormulas[mode], {x}, {out});
    node->attrs = pad_attrs(pad, mode);
  }
  return out;
}

Tensor pad_scatter(const Tensor& gy, const Shape& in_shape, const Shape& pad, PadMode mode) {
  const PadMaps m = pad_maps(in_shape, pad, mode);
  Tensor gx = Tensor::empty(in_shape, gy.dtype(), gy.device());
  if (gx.numel() > 0) pad_backward_stub.get(gy.device())(contiguous(gy), gx, m);
  if (autograd::needs_grad({&gy})) {
    auto node = autograd::record(kPadBackwardFormula, {gy}, {gx});
    node->attrs = pad_attrs(pad, mode);
  }
  return gx;
}

// The kernels' domain: 1-3 padded dims of a floating CPU tensor (any layout: the gather reads
// a contiguous copy).
bool pad_kernel_applies(const Tensor& x, int64_t pairs, const std::string& mode) {
  const DType dt = x.dtype();
  return (mode == "reflect" || mode == "replicate" || mode == "circular") && pairs >= 1 &&
         pairs <= 3 && x.device().is_cpu() &&
         (dt == DType::Float32 || dt == DType::Float64 || dt == DType::Float16 ||
          dt == DType::BFloat16);
}

// reflect/replicate with a negative pad on a side: output position i reads the input at
// i - left reflected (or clamped) into [0, n), as PyTorch maps them (the reflection is of the
// whole input, not of what the crop leaves).
Tensor pad_by_index(const Tensor& x, int64_t axis, int64_t left, int64_t right,
                    const std::string& mode) {
  const int64_t n = x.dim(axis), size = padded_size(n, left, right, mode.c_str());
  TS_CHECK(size >= 0 && n > 0 && (mode != "reflect" || (left < n && right < n)), ValueError,
           "pad: ", mode, " padding (", left, ", ", right, ") does not fit the dimension size ", n);
  Tensor idx = Tensor::empty(Shape{size}, DType::Int64);
  int64_t* p = idx.data<int64_t>();
  const int64_t period = n > 1 ? 2 * (n - 1) : 1;
  for (int64_t i = 0; i < size; ++i) {
    int64_t q;  // i - left, saturated (replicate clamps it; (-2^63 + 1, 2^63 - 1) wrapped)
    if (__builtin_sub_overflow(i, left, &q)) q = INT64_MAX;
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
  padded_size(n, left, right, mode.c_str());
  if ((left < 0 || right < 0) && (mode == "reflect" || mode == "replicate"))
    return pad_by_index(x, axis, left, right, mode);
  if (left < 0 || right < 0) {
    // Negative pads crop first; the positive side then pads the cropped tensor (PyTorch's
    // semantics for constant, and for circular: it wraps what is left).
    const int64_t lo = std::max<int64_t>(-left, 0), hi = std::max<int64_t>(-right, 0);
    TS_CHECK(lo <= n && hi <= n - lo, ValueError, "pad: negative padding (", left, ", ", right,
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
  // the fill value must fit x's dtype (Note [Checked scalar writes]): 300 into uint8 wrapped
  if (mode == "constant") check_scalar_fits(value, x.dtype(), "pad");
  if (pad_kernel_applies(x, len / 2, mode))
    return pad_gather(x, pad,
                      mode == "reflect"     ? kReflect
                      : mode == "replicate" ? kReplicate
                                            : kCircular);
  Tensor out = x;
  for (int64_t k = 0; k < len / 2; ++k)
    out = pad_axis(out, x.ndim() - 1 - k, pad[2 * k], pad[2 * k + 1], mode, value);
  return out;
}

}  // namespace ts::nn
