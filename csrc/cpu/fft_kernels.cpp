// CPU kernels of the fft ops: batches of contiguous rows, spread over threads by rows, each
// thread with its own scratch; the plans (csrc/cpu/fft_plan.h) are shared read-only.
#include <algorithm>
#include <vector>

#include "cpu/fft_plan.h"
#include "core/parallel.h"
#include "ops/fft.h"

namespace ts {
namespace {

using fft_engine::Cpx;

// Rows per task: at least kGrainSize elements of work, so small batches stay on one thread.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)); }

// Transforms along the middle dim of (batch, n, inner): blocks of kLanes columns are gathered
// into an (n, kLanes) buffer and transformed together (Stockham plans), or one by one.
template <class T>
void c2c_columns(const FftArgs& a, const fft_engine::ComplexPlan<T>& plan) {
  constexpr int64_t kLanes = 16;
  const int64_t n = a.n, inner = a.inner, blocks = (inner + kLanes - 1) / kLanes;
  const auto* in = static_cast<const Cpx<T>*>(a.in);
  auto* out = static_cast<Cpx<T>*>(a.out);
  const T scale = static_cast<T>(a.scale);
  parallel_for(0, a.batch * blocks, row_grain(n * kLanes), [&](int64_t b, int64_t e) {
    std::vector<Cpx<T>> buf(2 * n * kLanes), work(std::max(plan.work_size(), n * kLanes));
    Cpx<T>* x = buf.data();
    Cpx<T>* y = x + n * kLanes;
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, c0 = (t % blocks) * kLanes, w = std::min(kLanes, inner - c0);
      const Cpx<T>* src = in + o * n * inner + c0;
      Cpx<T>* dst = out + o * n * inner + c0;
      if (plan.supports_lanes()) {
        for (int64_t j = 0; j < n; ++j)
          for (int64_t q = 0; q < w; ++q) x[j * w + q] = src[j * inner + q];
        plan.execute_lanes(x, y, work.data(), w, scale);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t q = 0; q < w; ++q) dst[j * inner + q] = y[j * w + q];
        continue;
      }
      for (int64_t q = 0; q < w; ++q) {
        for (int64_t j = 0; j < n; ++j) x[j] = src[j * inner + q];
        plan.execute(x, y, work.data(), scale);
        for (int64_t j = 0; j < n; ++j) dst[j * inner + q] = y[j];
      }
    }
  });
}

template <class T>
void c2c(const FftArgs& a) {
  const auto plan = fft_engine::complex_plan<T>(a.n, a.forward);
  if (a.inner > 1) return c2c_columns(a, *plan);
  const auto* in = static_cast<const Cpx<T>*>(a.in);
  auto* out = static_cast<Cpx<T>*>(a.out);
  parallel_for(0, a.batch, row_grain(a.n), [&](int64_t b, int64_t e) {
    std::vector<Cpx<T>> work(plan->work_size());
    for (int64_t r = b; r < e; ++r)
      plan->execute(in + r * a.n, out + r * a.n, work.data(), static_cast<T>(a.scale));
  });
}

template <class T>
void r2c(const FftArgs& a) {
  const auto plan = fft_engine::real_plan<T>(a.n);
  const int64_t m = a.n / 2 + 1;
  const auto* in = static_cast<const T*>(a.in);
  auto* out = static_cast<Cpx<T>*>(a.out);
  parallel_for(0, a.batch, row_grain(a.n), [&](int64_t b, int64_t e) {
    std::vector<Cpx<T>> work(plan->work_size());
    for (int64_t r = b; r < e; ++r)
      plan->r2c(in + r * a.n, out + r * m, work.data(), static_cast<T>(a.scale));
  });
}

template <class T>
void c2r(const FftArgs& a) {
  const auto plan = fft_engine::real_plan<T>(a.n);
  const int64_t m = a.n / 2 + 1;
  const auto* in = static_cast<const Cpx<T>*>(a.in);
  auto* out = static_cast<T*>(a.out);
  parallel_for(0, a.batch, row_grain(a.n), [&](int64_t b, int64_t e) {
    std::vector<Cpx<T>> work(plan->work_size());
    for (int64_t r = b; r < e; ++r)
      plan->c2r(in + r * m, out + r * a.n, work.data(), static_cast<T>(a.scale));
  });
}

void cpu_c2c(const FftArgs& a, DType dt) {
  dt == DType::Complex128 ? c2c<double>(a) : c2c<float>(a);
}
void cpu_r2c(const FftArgs& a, DType dt) {
  dt == DType::Complex128 ? r2c<double>(a) : r2c<float>(a);
}
void cpu_c2r(const FftArgs& a, DType dt) {
  dt == DType::Complex128 ? c2r<double>(a) : c2r<float>(a);
}

}  // namespace

TS_REGISTER_KERNEL(fft_c2c_stub, CPU, &cpu_c2c);
TS_REGISTER_KERNEL(fft_r2c_stub, CPU, &cpu_r2c);
TS_REGISTER_KERNEL(fft_c2r_stub, CPU, &cpu_c2r);

}  // namespace ts
