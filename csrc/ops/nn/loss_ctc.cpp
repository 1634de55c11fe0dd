// The CTC loss (ops/nn/loss.h, kernels in ops/nn/loss_ctc.h): PyTorch's checks and forms
// (at::ctc_loss, LossCTC.cpp), one node for the per-sample negative log-likelihood
// (CtcLossBackward, autograd/formulas_loss.cpp), then zero_infinity and the reduction as
// recorded ops.
#include "ops/nn/loss_ctc.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/nn/loss.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_STUB(CtcLossKernel, ctc_loss_stub, "ctc_loss");
TS_DEFINE_STUB(CtcLossBackwardKernel, ctc_loss_backward_stub, "ctc_loss_backward");

namespace nn {
namespace {

constexpr const char* kOp = "ctc_loss";

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }

// Where the kernels run: `dev` when a kernel is registered for it, else the host (Note [CTC on
// the host]).
Device kernel_device(Device dev) {
  return ctc_loss_stub.table[static_cast<int>(dev.type)] ? dev : Device{};
}

// An int64 tensor of `v` on the host.
Tensor host_int64(const std::vector<int64_t>& v) {
  Tensor t = Tensor::empty(Shape{static_cast<int64_t>(v.size())}, DType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

// The values of integer lengths given as a tensor (any shape, any device; PyTorch flattens).
std::vector<int64_t> length_values(const Tensor& t, const char* what) {
  TS_CHECK(is_integral(t.dtype()), TypeError, kOp, ": ", what, " must be integers, got ",
           dtype_name(t.dtype()), " (pass int64 lengths, e.g. lengths.long())");
  const Tensor h = contiguous(astype(to_device(t, Device{}), DType::Int64, false));
  const int64_t* p = h.data<int64_t>();
  return std::vector<int64_t>(p, p + h.numel());
}

// Targets as the kernels take them: (N, S) int64 on the host, S the longest target length,
// entries past a sample's length set to blank. Checks shapes and labels.
Tensor padded_targets(const Tensor& targets, const std::vector<int64_t>& tl, int64_t N, int64_t C,
                      int64_t blank) {
  TS_CHECK(!is_complex(targets.dtype()), TypeError, kOp,
           ": targets must hold integer class indices, got ", dtype_name(targets.dtype()));
  TS_CHECK(targets.ndim() == 1 || targets.ndim() == 2, ValueError, kOp,
           ": targets must be 1-D (concatenated) or 2-D (padded, (N, S)), got shape ",
           shape_str(targets.shape()));
  int64_t S = 0, total = 0;  // total saturates (hostile lengths must not overflow it)
  for (int64_t v : tl) {
    S = std::max(S, v);
    total = v > std::numeric_limits<int64_t>::max() - total ? std::numeric_limits<int64_t>::max()
                                                            : total + v;
  }
  if (targets.ndim() == 2)
    TS_CHECK(targets.dim(0) == N && targets.dim(1) >= S, ValueError, kOp,
             ": padded targets must be (N=", N, ", S >= ", S,
             ") for the batch size and the longest target length, got shape ",
             shape_str(targets.shape()));
  else
    TS_CHECK(targets.dim(0) == total, ValueError, kOp,
             ": concatenated targets must have sum(target_lengths) = ", total, " entries, got ",
             targets.dim(0), " (or pass them padded, (N, S))");
  const Tensor h = contiguous(astype(to_device(targets, Device{}), DType::Int64, false));
  const int64_t* src = h.data<int64_t>();
  Tensor out = Tensor::empty(Shape{N, S}, DType::Int64);
  int64_t* dst = out.data<int64_t>();
  int64_t offset = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t* row = targets.ndim() == 2 ? src + n * h.dim(1) : src + offset;
    for (int64_t k = 0; k < S; ++k) {
      if (k >= tl[n]) {
        dst[n * S + k] = blank;
        continue;
      }
      const int64_t v = row[k];
      TS_CHECK(v >= 0 && v < C, IndexError, kOp, ": target labels must be in [0, ", C,
               ") (the classes of log_probs), got ", v, " at sample ", n, ", position ", k);
      TS_CHECK(v != blank, ValueError, kOp, ": targets must not contain the blank index ", blank,
               " (sample ", n, ", position ", k,
               "); blank stands between labels and is never a label itself");
      dst[n * S + k] = v;
    }
    offset += tl[n];
  }
  return out;
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets,
                const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity) {
  Tensor lp = log_probs;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("ctc_loss"), lp);
  TS_CHECK(lp.ndim() == 2 || lp.ndim() == 3, ValueError, kOp,
           ": log_probs must be (T, N, C) or unbatched (T, C), got shape ", shape_str(lp.shape()));
  if (lp.dtype() != DType::Float32 && lp.dtype() != DType::Float64)
    throw NotImplementedError(str(kOp, ": not implemented for log_probs of dtype ",
                                  dtype_name(lp.dtype()),
                                  " (float32 or float64 log-probabilities, as PyTorch; cast with "
                                  ".float() or run under autocast)"));
  const bool batched = lp.ndim() == 3;
  if (!batched) lp = expand_dims(lp, 1);
  const int64_t T = lp.dim(0), N = lp.dim(1), C = lp.dim(2);
  TS_CHECK(lp.numel() > 0, ValueError, kOp, ": log_probs must not be empty, got shape ",
           shape_str(log_probs.shape()));
  TS_CHECK(blank >= 0 && blank < C, ValueError, kOp, ": blank must be in label range [0, ", C,
           ") (the classes of log_probs), got ", blank);
  const auto n_in = static_cast<int64_t>(input_lengths.size()),
             n_tg = static_cast<int64_t>(target_lengths.size());
  TS_CHECK(n_in == N && n_tg == N, ValueError, kOp,
           ": input_lengths and target_lengths must have batch_size ", N,
           " entries each (log_probs of shape ", shape_str(log_probs.shape()), "), got ", n_in,
           " and ", n_tg);
  for (int64_t n = 0; n < N; ++n) {
    TS_CHECK(input_lengths[n] >= 0 && input_lengths[n] <= T, ValueError, kOp,
             ": input_lengths must be in [0, ", T, "] (the time steps of log_probs), got ",
             input_lengths[n], " at index ", n);
    TS_CHECK(target_lengths[n] >= 0, ValueError, kOp, ": target_lengths must be non-negative, got ",
             target_lengths[n], " at index ", n);
  }
  CtcArgs a;
  a.targets = padded_targets(targets, target_lengths, N, C, blank);
  a.input_lengths = host_int64(input_lengths);
  a.target_lengths = host_int64(target_lengths);
  a.blank = blank;
  const Device dev = lp.device(), kdev = kernel_device(dev);
  const int64_t S = a.targets.dim(1);
  Tensor nll = Tensor::empty(Shape{N}, lp.dtype(), kdev);
  const Tensor log_alpha = Tensor::empty(Shape{N, T, 2 * S + 1}, lp.dtype(), kdev);
  {
    autograd::GradModeGuard no_grad(false);
    // Note [CTC on the host]: kdev is the host unless a kernel is registered for dev.
    a.log_probs = contiguous(to_device(lp, kdev));
    a.targets = to_device(a.targets, kdev);
    a.input_lengths = to_device(a.input_lengths, kdev);
    a.target_lengths = to_device(a.target_lengths, kdev);
    ctc_loss_stub.get(kdev)(a, nll, log_alpha);
    nll = to_device(nll, dev);
  }
  autograd::record_ctc_loss(lp, a.targets, a.input_lengths, a.target_lengths, nll, log_alpha, blank,
                            zero_infinity);
  Tensor res = nll;
  if (zero_infinity)
    res =
        where(binary_op(equal_def, nll, sc(std::numeric_limits<double>::infinity())), sc(0.0), nll);
  if (reduction == Reduction::Mean) {
    // Each loss divided by its target length (at least 1), then the batch mean.
    Tensor div = Tensor::empty(Shape{N}, DType::Float64);
    for (int64_t n = 0; n < N; ++n)
      div.data<double>()[n] = static_cast<double>(std::max<int64_t>(target_lengths[n], 1));
    div = to_device(astype(div, res.dtype(), false), dev);
    return mean(divide(res, div), std::nullopt, false);
  }
  if (reduction == Reduction::Sum) return sum(res, std::nullopt, false, std::nullopt);
  return batched ? res : squeeze(res, Shape{0});
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity) {
  return ctc_loss(log_probs, targets, length_values(input_lengths, "input_lengths"),
                  length_values(target_lengths, "target_lengths"), blank, reduction, zero_infinity);
}

Tensor ctc_loss_backward(const Tensor& grad_nll, const Tensor& log_probs, const Tensor& targets,
                         const Tensor& input_lengths, const Tensor& target_lengths,
                         const Tensor& nll, const Tensor& log_alpha, int64_t blank,
                         bool zero_infinity) {
  autograd::GradModeGuard no_grad(false);
  const Device dev = log_probs.device(), kdev = log_alpha.device();  // Note [CTC on the host]
  CtcArgs a;
  a.log_probs = contiguous(to_device(log_probs, kdev));
  a.targets = targets;
  a.input_lengths = input_lengths;
  a.target_lengths = target_lengths;
  a.blank = blank;
  const DType dt = log_probs.dtype();
  const Tensor g = contiguous(astype(to_device(grad_nll, kdev), dt, false));
  const Tensor z = contiguous(to_device(nll, kdev));
  const Tensor grad = Tensor::empty(log_probs.shape(), dt, kdev);
  ctc_loss_backward_stub.get(kdev)(a, g, z, log_alpha, zero_infinity, grad);
  return to_device(grad, dev);
}

}  // namespace nn
}  // namespace ts
