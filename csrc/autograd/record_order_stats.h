// Recording of the order-statistics reductions (ops/order_stats.h) whose gradient is not a
// gather: the median of all elements shares its gradient evenly (PyTorch's
// evenly_distribute_backward).
#pragma once
#include "core/tensor.h"

namespace ts::autograd {

// out (0-d) = a value of x; its gradient goes evenly to the elements equal to it (to the NaNs
// when it is NaN).
void record_evenly_distributed(const Tensor& x, const Tensor& out);

}  // namespace ts::autograd
