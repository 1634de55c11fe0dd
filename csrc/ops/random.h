// Random number generation: a counter-based Philox4x32-10 generator (Note [Counter-based
// RNG]) and the ops drawing from it: uniform_/normal_ fills, randint, randperm, shuffle_,
// multinomial, and fused dropout. CPU kernels in cpu/random_kernels.cpp, CUDA kernels (fills,
// randint, dropout) in cuda/random_kernels.cu.
#pragma once
#include <cstdint>
#include <utility>

#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "kernels/random_math.h"

namespace ts {

// Note [Counter-based RNG]: every random number is a pure function of (seed, offset, counter):
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) with
// key = seed and counter = (block index, offset). Each op call takes a fresh `offset` from its
// Generator, and element i of its output reads block i / k (k = elements per 4-word block), so
// results depend neither on the thread count nor on the chunking, and the CUDA kernels, which
// compute the same function (kernels/random_math.h, Note [Bit-identical random numbers]),
// reproduce the CPU stream bit for bit. One generator serves every device.
using rng::philox4x32_10;

// A stream of random numbers: a seed and the offset of the next op call.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_state(uint64_t seed, uint64_t offset) {
    seed_ = seed;
    offset_ = offset;
  }
  // The offset for one op call (each call gets its own, so successive calls differ).
  uint64_t next_offset() { return offset_++; }
  // (seed, offset) for one op call on `device`: the plain pair, or during a CUDA graph capture
  // and for a CUDA device, the pair Note [Graph-safe RNG] (kernels/random_math.h) describes.
  std::pair<uint64_t, uint64_t> next_philox(Device device) {
    if (graph_state_ != 0 && !device.is_cpu())
      return {graph_state_, rng::kGraphOffset | graph_calls_++};
    return {seed_, offset_++};
  }
  // A graph capture starts (state: device address of its {seed, base offset} words) / ends;
  // end returns how many offsets the captured ops use, by which each replay advances offset().
  void begin_graph_capture(uint64_t state) {
    graph_state_ = state;
    graph_calls_ = 0;
  }
  uint64_t end_graph_capture() {
    graph_state_ = 0;
    return graph_calls_;
  }
  bool graph_capturing() const { return graph_state_ != 0; }
  void advance(uint64_t n) { offset_ += n; }

 private:
  uint64_t seed_ = 0, offset_ = 0;
  uint64_t graph_state_ = 0, graph_calls_ = 0;
};

Generator& default_generator();

enum class RandomDist : uint8_t { Uniform, Normal };
// out (contiguous, floating): Uniform -> [a, b), Normal -> mean a, std b.
using RandomFillKernel = void (*)(const Tensor& out, RandomDist dist, double a, double b,
                                  uint64_t seed, uint64_t offset);
// out (contiguous, integer or floating): uniform integers in [low, low + range).
using RandintKernel = void (*)(const Tensor& out, int64_t low, uint64_t range, uint64_t seed,
                               uint64_t offset);
// out (contiguous int64 of n elements): a uniform random permutation of 0..n-1.
using RandpermKernel = void (*)(const Tensor& out, uint64_t seed, uint64_t offset);
// probs (R, n) contiguous float64, validated; out (R, k) int64.
using MultinomialKernel = void (*)(const Tensor& probs, const Tensor& out, bool replacement,
                                   uint64_t seed, uint64_t offset);
// x, y, mask contiguous with x's shape (y may be x): mask = rng::dropout_keep(word of element
// i, threshold), y = mask ? x * scale : 0.
using DropoutKernel = void (*)(const Tensor& x, const Tensor& y, const Tensor& mask,
                               uint64_t threshold, double scale, uint64_t seed, uint64_t offset);
// g, mask, out contiguous with g's shape: out = mask ? g * scale : 0, scaled in g's accumulation
// type.
using DropoutBackwardKernel = void (*)(const Tensor& g, const Tensor& mask, const Tensor& out,
                                       double scale);
TS_DECLARE_STUB(RandomFillKernel, random_fill_stub);
TS_DECLARE_STUB(DropoutBackwardKernel, dropout_backward_stub);
TS_DECLARE_STUB(DropoutKernel, dropout_stub);
TS_DECLARE_STUB(RandintKernel, randint_stub);
TS_DECLARE_STUB(RandpermKernel, randperm_stub);
TS_DECLARE_STUB(MultinomialKernel, multinomial_stub);

// In place over any floating x (views included): element order is x's C order.
void uniform_(const Tensor& x, double low, double high, Generator& g);
void normal_(const Tensor& x, double mean, double std, Generator& g);
// rand/randn's numbers in place: U[0, 1) or N(0, 1) for floating x; for complex x (torch's
// rule) independent real and imaginary parts, each U[0, 1) or N(0, 1/2) (so E|z|^2 = 1).
void standard_fill_(const Tensor& x, bool normal, Generator& g);
// Raises ValueError unless draws in [low, high) fit `dtype`, as PyTorch checks random_'s and
// randint's bounds: an integer dtype holds low and high - 1; a floating one has them within its
// finite range (float16 stops at 65504). Without the check the values wrap (randint(0, 300,
// dtype=uint8)) or turn infinite.
void check_draw_bounds(int64_t low, int64_t high, DType dtype, const char* op);
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device,
               Generator& g);
Tensor randperm(int64_t n, DType dtype, Device device, Generator& g);
// Permutes x along axis 0 in place.
void shuffle_(const Tensor& x, Generator& g);
// x[idx] along axis 0 for a 1-D int64 idx (callers guarantee 0 <= idx < x.dim(0)).
Tensor take_rows(const Tensor& x, const Tensor& idx);
// Fused dropout of a floating x with drop probability p in [0, 1]: (y, mask) with mask a bool
// tensor of x's shape (true = kept) and y = x * mask / (1 - p) (0 where dropped, also for
// p = 1). Element i (x's C order) draws from the generator as in Note [Counter-based RNG], so
// every device gives the same mask for the same seed. With `inplace`, y is x, written through.
std::pair<Tensor, Tensor> dropout(const Tensor& x, double p, Generator& g, bool inplace);
// The 1 / (1 - p) a kept element is multiplied by (0 for p = 1).
double dropout_scale(double p);
// The gradient of dropout in one pass: mask ? g * scale : 0 (mask: dropout's bool mask of g's
// shape), 16-bit g scaled in float32 like the forward. Not differentiable itself: the formula
// uses it when no graph is being built (autograd/formulas_nn.cpp dropout_bw).
Tensor dropout_backward(const Tensor& g, const Tensor& mask, double scale);

// probs (n,) or (R, n) non-negative weights -> (k,) or (R, k) int64 category indices.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& g);

}  // namespace ts
