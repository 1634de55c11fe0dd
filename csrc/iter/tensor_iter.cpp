#include "iter/tensor_iter.h"

#include <algorithm>

namespace ts {

ElementwiseIter ElementwiseIter::make(const Tensor& out,
                                      std::initializer_list<const Tensor*> inputs, const char* op) {
  ElementwiseIter it;
  it.nops = 1 + static_cast<int>(inputs.size());
  TS_CHECK(it.nops <= kMaxOperands, RuntimeError, op, ": too many operands");
  TS_CHECK(out.ndim() <= 64, ValueError, op, ": at most 64 dimensions are supported");
  const Shape& oshape = out.shape();
  const int64_t nd = oshape.size();
  it.numel = out.numel();

  // Byte strides of every operand, aligned to the output's dims.
  Strides full[kMaxOperands];
  const Tensor* ops[kMaxOperands];
  ops[0] = &out;
  int k = 1;
  for (const Tensor* t : inputs) ops[k++] = t;
  for (k = 0; k < it.nops; ++k) {
    const Tensor& t = *ops[k];
    it.base[k] = t.data_ptr();
    full[k].resize(nd, 0);
    const int64_t lead = nd - t.ndim();
    TS_CHECK(lead >= 0, ValueError, op, ": operand of shape ", shape_str(t.shape()),
             " does not broadcast to ", shape_str(oshape));
    for (int64_t d = 0; d < t.ndim(); ++d) {
      const int64_t s = t.dim(d);
      if (s == oshape[lead + d]) {
        full[k][lead + d] = s == 1 ? 0 : t.strides()[d] * t.itemsize();
      } else if (s == 1) {
        full[k][lead + d] = 0;
      } else {
        throw ValueError(str(op, ": operand of shape ", shape_str(t.shape()),
                             " does not broadcast to ", shape_str(oshape)));
      }
    }
  }

  // Innermost-first order of the non-trivial dims, sorted by the output's |stride| (or the
  // first input's, where the output is broadcast) so the output is written in memory order.
  SmallVec<int64_t, 8> order;
  for (int64_t d = nd - 1; d >= 0; --d)
    if (oshape[d] != 1) order.push_back(d);
  auto key = [&](int64_t d) {
    for (int q = 0; q < it.nops; ++q)
      if (full[q][d] != 0) return static_cast<int64_t>(std::llabs(full[q][d]));
    return int64_t(0);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return key(a) < key(b); });

  // Coalesce adjacent dims that every operand walks as one.
  for (int64_t i = 0; i < order.size(); ++i) {
    const int64_t d = order[i];
    if (!it.shape.empty()) {
      bool merge = true;
      const int64_t last = it.shape.size() - 1;
      for (int q = 0; q < it.nops && merge; ++q)
        merge = it.strides[q][last] * it.shape[last] == full[q][d];
      if (merge) {
        it.shape[last] *= oshape[d];
        continue;
      }
    }
    it.shape.push_back(oshape[d]);
    for (int q = 0; q < it.nops; ++q) it.strides[q].push_back(full[q][d]);
  }
  return it;
}

}  // namespace ts
