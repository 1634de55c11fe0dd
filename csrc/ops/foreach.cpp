#include "ops/foreach.h"

#include "core/error.h"
#include "iter/reduce_iter.h"
#include "ops/copy.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts {

Tensor foreach_norm(const std::vector<Tensor>& xs) {
  TS_CHECK(!xs.empty(), ValueError, "_foreach_norm: expected a non-empty list of tensors");
  const DType d = xs[0].dtype();
  const Device dev = xs[0].device();
  TS_CHECK(d == DType::Float32 || d == DType::Float64, TypeError,
           "_foreach_norm: expected float32 or float64 tensors, got ", dtype_name(d),
           "; hint: use linalg.vector_norm on each tensor for other dtypes");
  for (size_t i = 0; i < xs.size(); ++i)
    TS_CHECK(xs[i].dtype() == d && xs[i].device() == dev, TypeError, "_foreach_norm: tensor ", i,
             " is ", dtype_name(xs[i].dtype()), " on ", xs[i].device().str(), " but tensor 0 is ",
             dtype_name(d), " on ", dev.str(),
             "; hint: group the tensors by dtype and device first");
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor out = Tensor::empty(Shape{n}, d, dev);
  const auto kernel = sum_squares_stub.get(dev);
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& x = xs[i];
    // One run over all elements where the layout allows (a contiguous tensor is 1-D).
    const Tensor flat = x.is_contiguous()
                            ? x.as_strided(Shape{x.numel()}, Strides{1}, x.offset())
                            : contiguous(x).as_strided(Shape{x.numel()}, Strides{1}, 0);
    const Tensor o = out.as_strided(Shape{}, Strides{}, out.offset() + i);
    kernel(ReducePlan::make(flat, SmallVec<bool, 8>(1, true), o), d, d, 1.0);
  }
  std_sqrt_stub.get(dev)(out);
  return out;
}

}  // namespace ts
