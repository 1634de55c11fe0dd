// embedding_bag: embedding_bag.h.
#include "ops/nn/embedding_bag.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/indexing_advanced.h"
#include "ops/nn/embedding.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

namespace {

// A host tensor of `v` (int64 or bool) with `shape`, moved to `device`.
template <class T>
Tensor host_tensor(const std::vector<T>& v, const Shape& shape, DType dtype, Device device) {
  Tensor t = Tensor::empty(shape, dtype);
  std::copy(v.begin(), v.end(), t.data<T>());
  return device.is_cpu() ? t : to_device(t, device);
}

// The bag of every index position (-1: in no bag) and the number of bags.
std::vector<int64_t> bags_of(const Tensor& input, const std::optional<Tensor>& offsets,
                             bool include_last_offset, int64_t& nbags) {
  const char* op = "embedding_bag";
  const int64_t n = input.numel();
  if (input.ndim() == 2) {
    TS_CHECK(!offsets, ValueError, op,
             ": offsets must be None when input is 2-D (each row is a bag, as PyTorch's "
             "fixed-length mini-batch); got offsets of shape ",
             shape_str(offsets->shape()), " with input of shape ", shape_str(input.shape()));
    nbags = input.dim(0);
    std::vector<int64_t> bag(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) bag[static_cast<size_t>(i)] = i / input.dim(1);
    return bag;
  }
  TS_CHECK(input.ndim() == 1, ValueError, op,
           ": input has to be 1D (with offsets) or 2D Tensor, but got shape ",
           shape_str(input.shape()));
  TS_CHECK(offsets.has_value(), ValueError, op, ": offsets are required for a 1-D input (shape ",
           shape_str(input.shape()), "): pass a 1-D tensor of bag starts");
  TS_CHECK(offsets->ndim() == 1, ValueError, op, ": offsets has to be a 1D Tensor, got shape ",
           shape_str(offsets->shape()));
  TS_CHECK(is_integral(offsets->dtype()), TypeError, op, ": offsets must be integers, got ",
           dtype_name(offsets->dtype()));
  std::vector<int64_t> off = host_indices(*offsets);
  if (!off.empty()) {
    TS_CHECK(off[0] == 0, ValueError, op,
             ": offsets must start at 0 (the first bag starts at position 0), got offsets[0] = ",
             off[0]);
    for (size_t i = 1; i < off.size(); ++i)
      TS_CHECK(off[i] >= off[i - 1], ValueError, op,
               ": offsets must be non-decreasing, got offsets[", i, "]=", off[i], " < offsets[",
               i - 1, "]=", off[i - 1]);
    TS_CHECK(off.back() <= n, ValueError, op,
             ": offsets[-1] can not be greater than input's length ", n, " but got offsets[-1] of ",
             off.back());
  }
  if (include_last_offset) {
    TS_CHECK(!off.empty(), ValueError, op,
             ": include_last_offset: number of offset should be at least 1");
    // the last bag still runs to the input's end (PyTorch's; offsets[-1] is documented as n)
    if (off.size() > 1) off.back() = n;
  } else {
    off.push_back(n);
  }
  nbags = static_cast<int64_t>(off.size()) - 1;
  std::vector<int64_t> bag(static_cast<size_t>(n), -1);
  for (int64_t b = 0; b < nbags; ++b)
    for (int64_t j = off[b]; j < off[b + 1]; ++j) bag[static_cast<size_t>(j)] = b;
  return bag;
}

}  // namespace

Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const std::optional<Tensor>& offsets, std::optional<double> max_norm,
                     double norm_type, bool scale_grad_by_freq, const std::string& mode,
                     bool sparse, const std::optional<Tensor>& per_sample_weights,
                     bool include_last_offset, std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag";
  TS_CHECK(mode == "sum" || mode == "mean" || mode == "max", ValueError, op,
           ": mode must be one of sum, mean, max, got '", mode, "'");
  TS_CHECK(!sparse, NotImplementedError, op,
           ": sparse gradients are not supported; pass sparse=False (the gradient is dense)");
  TS_CHECK(!(mode == "max" && scale_grad_by_freq), ValueError, op,
           ": max mode does not support scaling the gradient by the frequency; pass "
           "scale_grad_by_freq=False");
  TS_CHECK(is_integral(input.dtype()), TypeError, op, ": indices must be integers, got ",
           dtype_name(input.dtype()));
  TS_CHECK(weight.ndim() == 2, ValueError, op,
           ": weight must be 2-D (num_embeddings, embedding_dim), got shape ",
           shape_str(weight.shape()));
  if (per_sample_weights) {
    TS_CHECK(mode == "sum", NotImplementedError, op,
             ": per_sample_weights was not None. per_sample_weights is only supported for "
             "mode='sum' (got mode='",
             mode, "')");
    TS_CHECK(per_sample_weights->shape() == input.shape(), ValueError, op,
             ": If per_sample_weights (", shape_str(per_sample_weights->shape()),
             ") is not None, then it must have the same shape as the input (",
             shape_str(input.shape()), ")");
  }
  const int64_t num = weight.dim(0), dim = weight.dim(1);
  int64_t pad = -1;
  if (padding_idx) {
    TS_CHECK(*padding_idx >= -num && *padding_idx < num, ValueError, op,
             ": padding_idx must be within the number of embeddings, ", -num, " through ", num - 1,
             ", but got ", *padding_idx);
    pad = (*padding_idx + num) % num;
  }
  int64_t nbags = 0;
  const std::vector<int64_t> bag = bags_of(input, offsets, include_last_offset, nbags);
  const std::vector<int64_t> idx = host_indices(input);
  const int64_t m = static_cast<int64_t>(idx.size());
  // (B, Lmax) table of positions into the looked-up rows; free slots point at 0, masked.
  std::vector<int64_t> count(static_cast<size_t>(nbags), 0), slot(static_cast<size_t>(m), -1);
  for (int64_t j = 0; j < m; ++j) {
    const int64_t b = bag[static_cast<size_t>(j)];
    if (b < 0 || (pad >= 0 && (idx[j] + num) % num == pad)) continue;
    slot[static_cast<size_t>(j)] = count[static_cast<size_t>(b)]++;
  }
  int64_t lmax = 1;
  for (int64_t c : count) lmax = std::max(lmax, c);
  std::vector<int64_t> pos(static_cast<size_t>(nbags * lmax), 0);
  std::vector<bool> filled(static_cast<size_t>(nbags * lmax), false);
  for (int64_t j = 0; j < m; ++j) {
    if (slot[static_cast<size_t>(j)] < 0) continue;
    const size_t at = static_cast<size_t>(bag[static_cast<size_t>(j)] * lmax + slot[j]);
    pos[at] = j;
    filled[at] = true;
  }
  const Device dev = weight.device();
  const Tensor flat = reshape(input, Shape{m});
  Tensor rows = embedding_op(flat, weight, std::nullopt, max_norm, norm_type, scale_grad_by_freq,
                             false);  // (M, dim)
  if (per_sample_weights) {
    TS_CHECK(per_sample_weights->dtype() == weight.dtype(), TypeError, op, ": per_sample_weights (",
             dtype_name(per_sample_weights->dtype()), ") must have the weight's dtype (",
             dtype_name(weight.dtype()), ")");
    rows = multiply(rows, reshape(*per_sample_weights, Shape{m, 1}));
  }
  if (m == 0) {  // zeros, still connected to weight (and per_sample_weights) as PyTorch's
    Tensor z = Tensor::empty(Shape{nbags, dim}, weight.dtype(), dev);
    fill_(z, Scalar::from_int(0));
    return add(z, sum(rows, Shape{0}, true, std::nullopt));
  }
  const Tensor table =
      reshape(index_select(rows, 0, host_tensor(pos, Shape{nbags * lmax}, DType::Int64, dev)),
              Shape{nbags, lmax, dim});
  Tensor mask = Tensor::empty(Shape{nbags, lmax, 1}, DType::Bool);
  std::copy(filled.begin(), filled.end(), mask.data<bool>());
  if (!dev.is_cpu()) mask = to_device(mask, dev);
  const Tensor zero = wrap_scalar(Scalar::from_double(0.0));
  if (mode == "max") {
    const Tensor ninf = wrap_scalar(Scalar::from_double(-std::numeric_limits<double>::infinity()));
    const Tensor best = max(where(mask, table, ninf), Shape{1}, false);
    std::vector<bool> nonempty(static_cast<size_t>(nbags));
    for (int64_t b = 0; b < nbags; ++b) nonempty[static_cast<size_t>(b)] = count[b] > 0;
    Tensor some = Tensor::empty(Shape{nbags, 1}, DType::Bool);
    std::copy(nonempty.begin(), nonempty.end(), some.data<bool>());
    if (!dev.is_cpu()) some = to_device(some, dev);
    return where(some, best, zero);
  }
  const Tensor total = sum(where(mask, table, zero), Shape{1}, false, std::nullopt);
  if (mode == "sum") return total;
  std::vector<int64_t> denom(count);
  for (int64_t& c : denom) c = std::max<int64_t>(c, 1);
  return divide(
      total, astype(host_tensor(denom, Shape{nbags, 1}, DType::Int64, dev), total.dtype(), false));
}

}  // namespace ts::nn
