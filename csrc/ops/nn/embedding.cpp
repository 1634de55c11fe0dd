#include "ops/nn/embedding.h"

#include <algorithm>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg_composite.h"
#include "ops/nn/similarity.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

TS_DEFINE_STUB(EmbeddingGatherKernel, embedding_gather_stub, "embedding");

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  TS_CHECK(is_integral(indices.dtype()), TypeError, op, ": indices must be integers, got ",
           dtype_name(indices.dtype()));
  TS_CHECK(weight.ndim() == 2, ValueError, op,
           ": weight must be 2-D (num_embeddings, dim), got "
           "shape ",
           shape_str(weight.shape()));
  TS_CHECK(indices.device() == weight.device(), ValueError, op, ": indices on ",
           indices.device().str(), " and weight on ", weight.device().str());
  const int64_t num = weight.dim(0);
  if (padding_idx)
    TS_CHECK(*padding_idx >= -num && *padding_idx < num, ValueError, op, ": padding_idx ",
             *padding_idx, " is out of range for ", num, " embeddings");
  Tensor flat;
  {
    autograd::GradModeGuard no_grad(false);
    flat = astype(reshape(indices, Shape{indices.numel()}), DType::Int64, false);
    // Host indices are checked here; on a device the kernels check them without a sync and
    // raise IndexError at the next synchronization (Note [Deferred device errors]).
    if (flat.device().is_cpu()) {
      const Tensor fc = contiguous(flat);
      const int64_t* p = fc.data<int64_t>();
      // PyTorch's embedding takes no negative indices (IndexError "index out of range").
      for (int64_t i = 0; i < fc.numel(); ++i)
        TS_CHECK(p[i] >= 0 && p[i] < num, IndexError, op, ": index out of range for ", num,
                 " embeddings (got ", p[i], "; indices must be in [0, ", num, "))");
    }
  }
  Shape shape = indices.shape();
  shape.push_back(weight.dim(1));
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    const Device dev = flat.device();
    if (!dev.is_cpu() && embedding_gather_stub.table[static_cast<int>(dev.type)]) {
      // One row-copy kernel that rejects negative and too-large indices at the next
      // synchronization, as PyTorch rejects them (index_select would wrap negative ones).
      TS_CHECK(num > 0 || flat.numel() == 0, IndexError, op,
               ": index out of range for 0 "
               "embeddings (the weight has no rows)");
      flat = contiguous(flat);
      out = Tensor::empty(Shape{flat.numel(), weight.dim(1)}, weight.dtype(), dev);
      embedding_gather_stub.get(dev)(weight, flat, out);
      out = reshape(out, shape);
    } else {
      out = reshape(index_select(weight, 0, flat), shape);
    }
  }
  const int64_t pad = padding_idx ? (*padding_idx + num) % num : -1;
  autograd::record_embedding(weight, out, flat, pad);
  return out;
}

std::vector<int64_t> host_indices(const Tensor& t) {
  autograd::GradModeGuard no_grad(false);
  const Tensor c = contiguous(astype(to_device(t, Device{}), DType::Int64, false));
  const int64_t* p = c.data<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

namespace {

// A 1-D int64 tensor of `v` on `device`.
Tensor index_tensor(const std::vector<int64_t>& v, Device device) {
  Tensor t = Tensor::empty(Shape{static_cast<int64_t>(v.size())}, DType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return device.is_cpu() ? t : to_device(t, device);
}

}  // namespace

Tensor embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm,
                         double norm_type) {
  const char* op = "embedding_renorm_";
  TS_CHECK(weight.ndim() == 2, ValueError, op,
           ": weight must be 2-D (num_embeddings, dim), got "
           "shape ",
           shape_str(weight.shape()));
  TS_CHECK(is_integral(indices.dtype()), TypeError, op, ": indices must be integers, got ",
           dtype_name(indices.dtype()));
  const int64_t num = weight.dim(0);
  std::vector<int64_t> rows = host_indices(indices);
  for (int64_t& r : rows) {
    TS_CHECK(r >= -num && r < num, IndexError, op, ": index out of range for ", num,
             " embeddings (got ", r, ")");
    r = (r + num) % num;
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (rows.empty()) return weight;
  autograd::GradModeGuard no_grad(false);
  const Tensor idx = index_tensor(rows, weight.device());
  const Tensor sel = index_select(weight, 0, idx);
  const Tensor norm = vector_norm(sel, Shape{1}, true, Scalar::from_double(norm_type));
  const Tensor big = binary_op(greater_def, norm, wrap_scalar(Scalar::from_double(max_norm)));
  const Tensor shrink = divide(wrap_scalar(Scalar::from_double(max_norm)),
                               add(norm, wrap_scalar(Scalar::from_double(1e-7))));
  const Tensor scale =
      astype(where(big, shrink, wrap_scalar(Scalar::from_double(1.0))), weight.dtype(), false);
  const int64_t k = static_cast<int64_t>(rows.size());
  const Tensor at = contiguous(broadcast_to(reshape(idx, Shape{k, 1}), Shape{k, weight.dim(1)}));
  scatter_(weight, 0, at, multiply(sel, scale), false);
  return weight;
}

Tensor embedding_op(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx,
                    std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq,
                    bool sparse) {
  TS_CHECK(!sparse, NotImplementedError,
           "embedding: sparse gradients are not supported; pass "
           "sparse=False (the gradient is dense)");
  if (max_norm) embedding_renorm_(weight, indices, *max_norm, norm_type);
  Tensor out = embedding(indices, weight, padding_idx);
  if (!scale_grad_by_freq || !autograd::needs_grad({&out})) return out;
  // each row's gradient divided by how often its index occurs in the batch
  const int64_t num = weight.dim(0);
  std::vector<int64_t> idx = host_indices(indices);
  std::vector<int64_t> count(static_cast<size_t>(num), 0);
  for (int64_t& i : idx) ++count[static_cast<size_t>(i = (i + num) % num)];
  Tensor scale = Tensor::empty(Shape{static_cast<int64_t>(idx.size()), 1}, DType::Float64);
  double* s = scale.data<double>();
  for (size_t j = 0; j < idx.size(); ++j) s[j] = 1.0 / static_cast<double>(count[idx[j]]);
  scale = astype(to_device(scale, out.device()), out.dtype(), false);
  const Shape shape = out.shape();
  const Shape rows{static_cast<int64_t>(idx.size()), weight.dim(1)};
  return reshape(scale_grad(reshape(out, rows), scale), shape);
}

Tensor dropout(const Tensor& x, double p, bool training, bool inplace, Generator* g) {
  TS_CHECK(p >= 0 && p <= 1, ValueError, "dropout: probability has to be between 0 and 1, but got ",
           p);
  if (!training || p == 0) return x;
  if (inplace && autograd::needs_grad({&x})) {
    // Written like x[...] = dropout(x): x takes the result's history (or a leaf is refused).
    autograd::check_inplace(x, "dropout");
    assign_inplace_result("dropout", x, dropout(x, p, training, false, g));
    return x;
  }
  Generator& gen = g ? *g : default_generator();
  Tensor y, mask;
  {
    autograd::GradModeGuard no_grad(false);
    std::tie(y, mask) = ts::dropout(x, p, gen, inplace);
  }
  if (!inplace) autograd::record_dropout(x, y, mask, dropout_scale(p));
  return y;
}

}  // namespace ts::nn
