// Autocast inside the ops: the one table of each op's cast policy (PyTorch's autocast op
// lists, CPU and CUDA apart) and OpScope, the guard an op puts at its entry
// (Note [Autocast inside the ops] in autocast_policy.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "autograd/autocast.h"

namespace ts::autocast {

struct OpPolicy {
  std::string_view op;  // the op's name (an ElementwiseDef's name for the elementwise ones)
  Policy cpu;
  Policy cuda;
  // PyTorch's CUDA fp32_set_opt_dtype: with an explicit dtype= the op is not cast on CUDA
  // (the CPU policy holds either way).
  bool opt_dtype = false;
};

// The table. Lower: to the autocast dtype; Fp32: to float32; Promote: to the widest floating
// input; None: no cast (the op still runs its insides with autocast off).
inline constexpr OpPolicy kOpPolicies[] = {
    // Lower precision on both device types (PyTorch's lower_precision_fp lists).
    {"matmul", Policy::Lower, Policy::Lower},
    {"vecdot", Policy::Lower, Policy::Lower},
    {"linear", Policy::Lower, Policy::Lower},
    {"conv", Policy::Lower, Policy::Lower},  // conv1d/2d/3d and conv_transpose1d/2d/3d
    {"scaled_dot_product_attention", Policy::Lower, Policy::Lower},
    // CPU decomposes tensordot into mm (lower); CUDA promotes.
    {"tensordot", Policy::Lower, Policy::Promote},
    {"bilinear", Policy::None, Policy::Promote},
    // Float32 on CUDA only (PyTorch's CUDA fp32 list; its CPU list leaves them alone).
    {"acos", Policy::None, Policy::Fp32},
    {"asin", Policy::None, Policy::Fp32},
    {"cosh", Policy::None, Policy::Fp32},
    {"exp", Policy::None, Policy::Fp32},
    {"expm1", Policy::None, Policy::Fp32},
    {"log", Policy::None, Policy::Fp32},
    {"log10", Policy::None, Policy::Fp32},
    {"log2", Policy::None, Policy::Fp32},
    {"log1p", Policy::None, Policy::Fp32},
    {"reciprocal", Policy::None, Policy::Fp32},
    {"sinh", Policy::None, Policy::Fp32},
    {"tan", Policy::None, Policy::Fp32},
    {"pow", Policy::None, Policy::Fp32},
    {"softplus", Policy::None, Policy::Fp32},
    {"layer_norm", Policy::None, Policy::Fp32},
    {"group_norm", Policy::None, Policy::Fp32},
    {"instance_norm", Policy::None, Policy::Fp32},
    {"cosine_similarity", Policy::None, Policy::Fp32},
    {"logsumexp", Policy::None, Policy::Fp32},
    {"vector_norm", Policy::None, Policy::Fp32},
    {"matrix_norm", Policy::None, Policy::Fp32},
    {"softmax", Policy::None, Policy::Fp32, true},
    {"log_softmax", Policy::None, Policy::Fp32, true},
    {"sum", Policy::None, Policy::Fp32, true},
    {"cumsum", Policy::None, Policy::Fp32, true},
    {"cumprod", Policy::None, Policy::Fp32, true},
    // Float32 on both (prod: CPU's fp32 list always, CUDA's fp32_set_opt_dtype).
    {"prod", Policy::Fp32, Policy::Fp32, true},
    // The losses: float32 on both. cross_entropy keeps 16-bit CUDA logits (Note [Cross
    // entropy on 16-bit logits] in nn/loss.cpp); binary_cross_entropy is banned on CUDA
    // (amp/_policy.py's cast_bce raises), float32 on CPU.
    {"cross_entropy", Policy::Fp32, Policy::Fp32},
    {"nll_loss", Policy::Fp32, Policy::Fp32},
    {"mse_loss", Policy::Fp32, Policy::Fp32},
    {"l1_loss", Policy::Fp32, Policy::Fp32},
    {"smooth_l1_loss", Policy::Fp32, Policy::Fp32},
    {"huber_loss", Policy::Fp32, Policy::Fp32},
    {"binary_cross_entropy", Policy::Fp32, Policy::None},
    {"binary_cross_entropy_with_logits", Policy::Fp32, Policy::Fp32},
    {"kl_div", Policy::Fp32, Policy::Fp32},
    {"poisson_nll_loss", Policy::Fp32, Policy::Fp32},
    {"soft_margin_loss", Policy::Fp32, Policy::Fp32},
    {"cosine_embedding_loss", Policy::Fp32, Policy::Fp32},
    {"margin_ranking_loss", Policy::Fp32, Policy::Fp32},
    {"hinge_embedding_loss", Policy::Fp32, Policy::Fp32},
    {"multilabel_margin_loss", Policy::Fp32, Policy::Fp32},
    {"multi_margin_loss", Policy::Fp32, Policy::Fp32},
    {"triplet_margin_loss", Policy::Fp32, Policy::Fp32},
    {"ctc_loss", Policy::Fp32, Policy::Fp32},
    // No cast, autocast off inside: batch norm takes a 16-bit input with float32 parameters
    // as it is (PyTorch), and its composite insides must not autocast.
    {"batch_norm", Policy::None, Policy::None},
};

// `op`'s packed policy (pack(cpu, cuda)); with `explicit_dtype` (the caller passed dtype=)
// an opt_dtype op's CUDA policy is none. Not in the table: a compile error where evaluated
// at compile time (TS_AUTOCAST_POLICY), else an exception.
constexpr uint8_t policy_of(std::string_view op, bool explicit_dtype = false) {
  for (const OpPolicy& e : kOpPolicies)
    if (e.op == op) return pack(e.cpu, explicit_dtype && e.opt_dtype ? Policy::None : e.cuda);
  throw "autocast: op not in kOpPolicies";
}

// The packed policy of `op`, checked at compile time.
#define TS_AUTOCAST_POLICY(op) \
  (std::integral_constant<uint8_t, ::ts::autocast::policy_of(op)>::value)
#define TS_AUTOCAST_POLICY_DTYPE(op) \
  (std::integral_constant<uint8_t, ::ts::autocast::policy_of(op, true)>::value)

// Run-time lookup (an ElementwiseDef's name, the Python ops' hook): nullopt when `op` is not
// in the table.
std::optional<uint8_t> find_policy(std::string_view op, bool explicit_dtype = false);

// The guard at an op's entry: when autocast is on in this thread, casts the op's tensors per
// `packed` (in place: the op then uses the casts) and turns autocast off until the op
// returns, so the ops it is made of don't cast again. One thread-local load when off.
class OpScope {
 public:
  template <class... Ts>
  explicit OpScope(uint8_t packed, Ts&... ts) {
    if (!active()) return;
    Tensor* args[] = {&ts..., nullptr};
    enter(packed, args, static_cast<int>(sizeof...(Ts)));
  }
  ~OpScope() {
    if (saved_) resume(saved_);
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  void enter(uint8_t packed, Tensor* const* args, int n);
  uint8_t saved_ = 0;
};

}  // namespace ts::autocast
