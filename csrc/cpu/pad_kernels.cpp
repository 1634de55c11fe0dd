// CPU kernels of reflect/replicate/circular padding (Note [Pad kernels] in ops/nn/pad.h): the
// forward gathers rows by the maps of the outer two padded dims and copies each row's runs of
// consecutive sources (the unpadded middle) in one go; the backward adds the output gradient
// back at the sources, batch by batch (a batch's sources repeat; different batches never
// share one), in float for the 16-bit floats.
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/acc_type.h"
#include "ops/nn/pad.h"

namespace ts {
namespace {

// Runs of the last dim's map: output [start, start + len) reads input [src, src + len).
struct Run {
  int64_t start, len, src;
};

std::vector<Run> runs_of(const std::vector<int64_t>& m) {
  std::vector<Run> runs;
  for (int64_t i = 0; i < static_cast<int64_t>(m.size()); ++i) {
    if (!runs.empty() && runs.back().src + runs.back().len == m[i] &&
        runs.back().start + runs.back().len == i)
      ++runs.back().len;
    else
      runs.push_back({i, 1, m[i]});
  }
  return runs;
}

template <class T>
void pad_forward(const Tensor& x, const Tensor& out, const nn::PadMaps& m) {
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  const int64_t D = m.in[0], H = m.in[1], W = m.in[2];
  const int64_t Do = m.map[0].size(), Ho = m.map[1].size(), Wo = m.map[2].size();
  const std::vector<Run> runs = runs_of(m.map[2]);
  const int64_t rows = m.batch * Do * Ho;
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(Wo, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const int64_t j = r % Ho, i = (r / Ho) % Do, b = r / (Ho * Do);
                   const T* src = xp + ((b * D + m.map[0][i]) * H + m.map[1][j]) * W;
                   T* dst = op + r * Wo;
                   for (const Run& u : runs) {
                     if (u.len == 1)
                       dst[u.start] = src[u.src];
                     else
                       std::memcpy(dst + u.start, src + u.src, u.len * sizeof(T));
                   }
                 }
               });
}

template <class T>
void pad_backward(const Tensor& gy, const Tensor& gx, const nn::PadMaps& m) {
  using A = acc_t<T>;
  const T* gp = gy.data<T>();
  T* xp = gx.data<T>();
  const int64_t D = m.in[0], H = m.in[1], W = m.in[2], plane = D * H * W;
  const int64_t Do = m.map[0].size(), Ho = m.map[1].size(), Wo = m.map[2].size();
  const std::vector<Run> runs = runs_of(m.map[2]);
  parallel_for(0, m.batch, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane, 1)),
               [&](int64_t lo, int64_t hi) {
                 std::vector<A> buf;
                 for (int64_t b = lo; b < hi; ++b) {
                   A* acc;
                   if constexpr (std::is_same_v<A, T>) {
                     acc = xp + b * plane;
                   } else {
                     buf.resize(plane);
                     acc = buf.data();
                   }
                   std::fill(acc, acc + plane, A(0));
                   for (int64_t i = 0; i < Do; ++i)
                     for (int64_t j = 0; j < Ho; ++j) {
                       A* dst = acc + (m.map[0][i] * H + m.map[1][j]) * W;
                       const T* src = gp + ((b * Do + i) * Ho + j) * Wo;
                       for (const Run& u : runs) {
                         A* d = dst + u.src;
                         const T* s = src + u.start;
                         for (int64_t k = 0; k < u.len; ++k) d[k] += A(s[k]);
                       }
                     }
                   if constexpr (!std::is_same_v<A, T>) {
                     T* out = xp + b * plane;
                     for (int64_t k = 0; k < plane; ++k) out[k] = T(acc[k]);
                   }
                 }
               });
}

void cpu_pad(const Tensor& x, const Tensor& out, const nn::PadMaps& m) {
  visit_dtype<kFloatSet>(x.dtype(), "pad",
                         [&](auto tag) { pad_forward<typename decltype(tag)::type>(x, out, m); });
}

void cpu_pad_backward(const Tensor& gy, const Tensor& gx, const nn::PadMaps& m) {
  visit_dtype<kFloatSet>(gy.dtype(), "pad_backward",
                         [&](auto tag) { pad_backward<typename decltype(tag)::type>(gy, gx, m); });
}

}  // namespace

namespace nn {
TS_REGISTER_KERNEL(pad_stub, CPU, &cpu_pad);
TS_REGISTER_KERNEL(pad_backward_stub, CPU, &cpu_pad_backward);
}  // namespace nn

}  // namespace ts
