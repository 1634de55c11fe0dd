// pixel_shuffle, pixel_unshuffle, channel_shuffle: shuffle.h.
#include "ops/nn/shuffle.h"

#include "core/checked_math.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/copy.h"
#include "ops/views.h"

namespace ts::nn {

namespace {

// The leading dims (*) of a (*, C, H, W) input and the three trailing sizes.
Shape lead_dims(const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 3); }

// (0, 1, ..., n - 1) followed by n + p for each p in `tail`.
Shape lead_then(int64_t n, std::initializer_list<int64_t> tail) {
  Shape perm;
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  for (int64_t p : tail) perm.push_back(n + p);
  return perm;
}

Shape concat(Shape a, std::initializer_list<int64_t> tail) {
  for (int64_t v : tail) a.push_back(v);
  return a;
}

void check_3d(const Tensor& x, const char* op) {
  TS_CHECK(x.ndim() >= 3, ValueError, op,
           ": expects input to have at least 3 dimensions, but got input with ", x.ndim(),
           " dimension(s) (shape ", shape_str(x.shape()), "); pass (*, C, H, W)");
}

}  // namespace

Tensor pixel_shuffle(const Tensor& x, int64_t r) {
  const char* op = "pixel_shuffle";
  TS_CHECK(r > 0, ValueError, op, ": expects a positive upscale_factor, but got ", r);
  check_3d(x, op);
  const int64_t nd = x.ndim(), c = x.dim(nd - 3), h = x.dim(nd - 2), w = x.dim(nd - 1);
  // r * r wrapped to 0 for r = 2^32 and c % 0 killed the process (SIGFPE)
  int64_t r2 = 0;
  TS_CHECK(mul_ok(r, r, &r2), ValueError, op, ": upscale_factor ", r,
           " is too large: upscale_factor^2 overflows int64 (input of shape ",
           shape_str(x.shape()), ")");
  TS_CHECK(c % r2 == 0, ValueError, op,
           ": expects its input's 'channel' dimension (-3) to be divisible by upscale_factor^2 = ",
           r2, ", but input.size(-3)=", c, " is not (shape ", shape_str(x.shape()), ")");
  const Shape lead = lead_dims(x);
  const Tensor y = reshape(x, concat(lead, {c / r2, r, r, h, w}));
  return reshape(permute_dims(y, lead_then(lead.size(), {0, 3, 1, 4, 2})),
                 concat(lead, {c / r2, checked_mul(h, r, op), checked_mul(w, r, op)}));
}

Tensor pixel_unshuffle(const Tensor& x, int64_t r) {
  const char* op = "pixel_unshuffle";
  TS_CHECK(r > 0, ValueError, op, ": expects a positive downscale_factor, but got ", r);
  check_3d(x, op);
  const int64_t nd = x.ndim(), c = x.dim(nd - 3), h = x.dim(nd - 2), w = x.dim(nd - 1);
  TS_CHECK(h % r == 0, ValueError, op,
           ": expects height to be divisible by downscale_factor, but input.size(-2)=", h,
           " is not divisible by ", r, " (shape ", shape_str(x.shape()), ")");
  TS_CHECK(w % r == 0, ValueError, op,
           ": expects width to be divisible by downscale_factor, but input.size(-1)=", w,
           " is not divisible by ", r, " (shape ", shape_str(x.shape()), ")");
  // PyTorch returns an empty input itself (a copy), its shape unchanged
  if (x.numel() == 0) return clone_op(x);
  const Shape lead = lead_dims(x);
  const Tensor y = reshape(x, concat(lead, {c, h / r, r, w / r, r}));
  return reshape(permute_dims(y, lead_then(lead.size(), {0, 2, 4, 1, 3})),
                 concat(lead, {c * r * r, h / r, w / r}));
}

Tensor channel_shuffle(const Tensor& x, int64_t g, const char* op) {
  TS_CHECK(g > 0, ValueError, op,
           ": Number of groups to divide channels in must be positive. Value of groups:", g);
  TS_CHECK(x.ndim() > 2, ValueError, op, ": expects input with > 2 dims, but got input with sizes ",
           shape_str(x.shape()), "; pass (N, C, *)");
  const int64_t c = x.dim(1);
  TS_CHECK(c % g == 0, ValueError, op, ": Number of channels (dim 1) must be divisible by groups ",
           g, ", got ", c, " channels (shape ", shape_str(x.shape()), ")");
  Shape split{x.dim(0), g, c / g};
  Shape perm{0, 2, 1};
  for (int64_t i = 2; i < x.ndim(); ++i) {
    split.push_back(x.dim(i));
    perm.push_back(i + 1);
  }
  return reshape(permute_dims(reshape(x, split), perm), x.shape());
}

}  // namespace ts::nn
