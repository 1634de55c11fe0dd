// CPU kernels of the fft ops: batches of contiguous rows, spread over threads by rows, each
// thread with its own scratch; the plans (csrc/cpu/fft_plan.h) are shared read-only.
#include <algorithm>
#include <vector>

#include "cpu/fft_plan.h"
#include "cpu/parallel.h"
#include "ops/fft.h"

namespace ts {
namespace {

using fft_engine::Cpx;

// Rows per task: at least kGrainSize elements of work, so small batches stay on one thread.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)); }

template <class T>
void c2c(const FftArgs& a) {
  const auto plan = fft_engine::complex_plan<T>(a.n, a.forward);
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
