#include "ops/nn/embedding.h"

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

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
      for (int64_t i = 0; i < fc.numel(); ++i)
        TS_CHECK(p[i] >= -num && p[i] < num, IndexError, op, ": index out of range for ", num,
                 " embeddings (got ", p[i], ")");
    }
  }
  Shape shape = indices.shape();
  shape.push_back(weight.dim(1));
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    // The raw indices go to index_select, whose kernels check [-num, num) (on a device without
    // a sync); wrapping first would turn -num - 1 into a valid -1 and read the last row.
    out = reshape(index_select(weight, 0, flat), shape);
    flat = where(binary_op(less_def, flat, wrap_scalar(Scalar::from_int(0))),
                 add(flat, wrap_scalar(Scalar::from_int(num))), flat);
  }
  const int64_t pad = padding_idx ? (*padding_idx + num) % num : -1;
  autograd::record_embedding(weight, out, flat, pad);
  return out;
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
