// Backward formulas of Tensor's conversion ops (csrc/ops/tensor_convert.cpp), written with ops
// so gradients of every order work.
#include "autograd/function.h"
#include "autograd/record_tensor.h"
#include "ops/tensor_convert.h"

namespace ts::autograd {

namespace {
// A device move: the gradient goes back where the input lives (itself recorded, so a
// create_graph backward sees the move).
variable_list to_device_bw(const BackwardCtx& c, const variable_list& g) {
  return {to_device_op(g[0], c.input(0).device, false)};
}
}  // namespace

void record_to_device(const Tensor& x, const Tensor& out) {
  if (!needs_grad({&x})) return;
  static const Formula kToDevice{"ToCopyBackward", to_device_bw};
  record(kToDevice, {x}, {out});
}

}  // namespace ts::autograd
