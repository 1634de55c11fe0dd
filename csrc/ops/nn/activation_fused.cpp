// The fused pointwise activations: activation_fused.h.
//
// Note [Fused activations]
// sigmoid, silu, mish, hardswish, hardsigmoid, elu/celu/selu, leaky_relu, hardtanh/relu6 and
// softplus were chains of elementwise ops (a sigmoid was eight kernels and four temporaries,
// a `where` on a data-dependent mask a mispredicted branch per element: 30-60x PyTorch's
// time on CPU). Each is now one kernel forward and one backward, from the scalar formulas in
// kernels/activation_math.h that the CPU and CUDA kernels share. The node saves x (sigmoid:
// its output y, as PyTorch). Its backward runs the fused backward kernel; when a graph
// of the backward is being recorded (create_graph) it instead multiplies g by f'(x) written
// with differentiable ops, with the same comparisons at the kinks (Note [Activation kinks]),
// so higher derivatives are PyTorch's.
#include "ops/nn/activation_fused.h"

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/elementwise_defs.h"
#include "ops/math.h"
#include "ops/memory_format.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_STUB(ActivationKernel, activation_stub, "activation");
TS_DEFINE_STUB(ActivationBackwardKernel, activation_backward_stub, "activation_backward");

namespace nn {
namespace {

using act::Act;
using act::ActParams;

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor B(const ElementwiseDef& d, const Tensor& a, double b) { return binary_op(d, a, sc(b)); }

// f'(x) with differentiable ops (the create_graph path; Note [Fused activations]); for
// sigmoid, f' of its saved output y.
Tensor derivative(const Tensor& x, const ActParams& p) {
  switch (p.kind) {
    case Act::Sigmoid:  // x is the output y here
      return multiply(x, subtract(sc(1.0), x));
    case Act::Silu: {
      const Tensor s = fused_activation(x, {Act::Sigmoid});
      return multiply(s, add(sc(1.0), multiply(x, subtract(sc(1.0), s))));
    }
    case Act::Mish: {
      const Tensor t = unary_op(tanh_def, fused_activation(x, {Act::Softplus, 1.0, 20.0}));
      const Tensor s = where(B(greater_def, x, 20.0), sc(1.0), fused_activation(x, {Act::Sigmoid}));
      return add(t, multiply(multiply(x, subtract(sc(1.0), multiply(t, t))), s));
    }
    case Act::Hardswish:
      return where(B(less_equal_def, x, -3.0), sc(0.0),
                   where(B(less_def, x, 3.0), add(divide(x, sc(3.0)), sc(0.5)), sc(1.0)));
    case Act::Hardsigmoid:
      return where(binary_op(logical_and_def, B(greater_def, x, -3.0), B(less_def, x, 3.0)),
                   sc(1.0 / 6.0), sc(0.0));
    case Act::Elu:
      return where(B(less_equal_def, x, 0.0),
                   multiply(sc(p.b * p.a / p.c), unary_op(exp_def, divide(x, sc(p.c)))), sc(p.b));
    case Act::LeakyRelu:
      return where(B(greater_def, x, 0.0), sc(1.0), sc(p.a));
    case Act::Hardtanh:
      return where(
          binary_op(logical_or_def, B(less_equal_def, x, p.a), B(greater_equal_def, x, p.b)),
          sc(0.0), sc(1.0));
    case Act::Softplus: {
      const Tensor bx = multiply(x, sc(p.a));
      return where(B(greater_def, bx, p.b), sc(1.0), fused_activation(bx, {Act::Sigmoid}));
    }
    default:
      break;
  }
  throw RuntimeError("activation: unknown kind");
}

ActParams params_of(const autograd::BackwardCtx& c) {
  return {static_cast<Act>(c.attr(0)), c.scalar(0), c.scalar(1), c.scalar(2)};
}

autograd::variable_list activation_bw(const autograd::BackwardCtx& c,
                                      const autograd::variable_list& g) {
  const Tensor x = c.saved(0);
  const ActParams p = params_of(c);
  if (!autograd::grad_enabled()) return {fused_activation_backward(x, g[0], p)};
  return {multiply(g[0], derivative(x, p))};
}

// PyTorch's node names (selu and celu are elu with other constants there too).
constexpr const char* kNames[] = {"SigmoidBackward",   "SiluBackward",        "MishBackward",
                                  "HardswishBackward", "HardsigmoidBackward", "EluBackward",
                                  "LeakyReluBackward", "HardtanhBackward",    "SoftplusBackward"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(Act::kCount));

const autograd::Formula kFormulas[] = {
    {kNames[0], activation_bw}, {kNames[1], activation_bw}, {kNames[2], activation_bw},
    {kNames[3], activation_bw}, {kNames[4], activation_bw}, {kNames[5], activation_bw},
    {kNames[6], activation_bw}, {kNames[7], activation_bw}, {kNames[8], activation_bw}};

void check_real_floating(const Tensor& x, const char* op) {
  TS_CHECK(is_floating(x.dtype()), TypeError, op,
           ": expected a real floating-point tensor (float16, bfloat16, float32, float64), got ",
           dtype_name(x.dtype()), " of shape ", shape_str(x.shape()));
}

}  // namespace

Tensor fused_activation(const Tensor& x, const ActParams& p) {
  check_real_floating(x, kNames[static_cast<int>(p.kind)]);
  Tensor out = empty_elementwise(x.shape(), x.dtype(), x.device(), {&x});
  if (x.numel() > 0) activation_stub.get(x.device())(copy_in_layout_of(x, out, false), out, p);
  if (autograd::needs_grad({&x})) {
    auto node = autograd::record(kFormulas[static_cast<int>(p.kind)], {x}, {out});
    node->attrs = Shape{static_cast<int64_t>(p.kind)};
    node->scalars = {p.a, p.b, p.c};
    // sigmoid saves its output (its backward needs no exp), the others their input
    if (p.kind == Act::Sigmoid)
      node->save(out, true);
    else
      node->save(x);
    if (autograd::anomaly_enabled())
      node->creation_site = "(see the Python traceback of the forward call)";
  }
  return out;
}

Tensor fused_activation_backward(const Tensor& x, const Tensor& gy, const ActParams& p) {
  TS_CHECK(x.shape() == gy.shape() && x.dtype() == gy.dtype(), ValueError,
           "activation_backward: the gradient (", dtype_name(gy.dtype()), " of shape ",
           shape_str(gy.shape()), ") must match the input (", dtype_name(x.dtype()), " of shape ",
           shape_str(x.shape()), ")");
  Tensor gx = empty_elementwise(x.shape(), x.dtype(), x.device(), {&gy, &x});
  if (x.numel() > 0)
    activation_backward_stub.get(x.device())(copy_in_layout_of(x, gx, false),
                                             copy_in_layout_of(gy, gx, false), gx, p);
  return gx;
}

}  // namespace nn
}  // namespace ts
