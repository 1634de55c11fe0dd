// CPU kernels of batch normalization (ops/batch_norm.h): one channel per task for the
// statistics and the backward's reductions (channels never share output), (n, c) planes for
// the elementwise passes. Sums are in double for float32 (PyTorch accumulates in double on
// the CPU too), float for 16-bit inputs through float.
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "ops/batch_norm.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

template <class T>
using Stat = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
void stats_any(const Tensor& x, const Tensor& mean, const Tensor& var) {
  const int64_t N = x.dim(0), C = x.dim(1), L = x.numel() / std::max<int64_t>(N * C, 1);
  const T* xp = x.data<T>();
  Stat<T>* mp = mean.data<Stat<T>>();
  Stat<T>* vp = var.data<Stat<T>>();
  parallel_for(0, C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * L, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t c = lo; c < hi; ++c) {
                   double s = 0;
                   for (int64_t n = 0; n < N; ++n) {
                     const T* r = xp + (n * C + c) * L;
                     acc_t<T> part = 0;
                     for (int64_t l = 0; l < L; ++l) part += acc_t<T>(r[l]);
                     s += part;
                   }
                   const double m = s / double(N * L);
                   double q = 0;
                   for (int64_t n = 0; n < N; ++n) {
                     const T* r = xp + (n * C + c) * L;
                     const acc_t<T> mm = acc_t<T>(m);
                     acc_t<T> part = 0;
                     for (int64_t l = 0; l < L; ++l) {
                       const acc_t<T> d = acc_t<T>(r[l]) - mm;
                       part += d * d;
                     }
                     q += part;
                   }
                   mp[c] = Stat<T>(m);
                   vp[c] = Stat<T>(q / double(N * L));
                 }
               });
}

template <class T>
void apply_any(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor* w,
               const Tensor* b, const Tensor& y) {
  using A = acc_t<T>;
  const int64_t N = x.dim(0), C = x.dim(1), L = x.numel() / std::max<int64_t>(N * C, 1);
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  const Stat<T>* mp = mean.data<Stat<T>>();
  const Stat<T>* rp = rstd.data<Stat<T>>();
  const Stat<T>* wp = w ? w->data<Stat<T>>() : nullptr;
  const Stat<T>* bp = b ? b->data<Stat<T>>() : nullptr;
  parallel_for(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   const int64_t c = p % C;
                   const A scale = A(rp[c]) * (wp ? A(wp[c]) : A(1));
                   const A shift = (bp ? A(bp[c]) : A(0)) - A(mp[c]) * scale;
                   const T* r = xp + p * L;
                   T* o = yp + p * L;
                   for (int64_t l = 0; l < L; ++l) o[l] = T(A(r[l]) * scale + shift);
                 }
               });
}

template <class T>
void backward_any(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                  const Tensor* w, const Tensor* gx, const Tensor* gw, const Tensor* gb,
                  bool training) {
  using A = acc_t<T>;
  const int64_t N = x.dim(0), C = x.dim(1), L = x.numel() / std::max<int64_t>(N * C, 1);
  const T* xp = x.data<T>();
  const T* gp = gy.data<T>();
  const Stat<T>* mp = mean.data<Stat<T>>();
  const Stat<T>* rp = rstd.data<Stat<T>>();
  const Stat<T>* wp = w ? w->data<Stat<T>>() : nullptr;
  T* gxp = gx ? gx->data<T>() : nullptr;
  Stat<T>* gwp = gw ? gw->data<Stat<T>>() : nullptr;
  Stat<T>* gbp = gb ? gb->data<Stat<T>>() : nullptr;
  const double count = double(N * L);
  parallel_for(0, C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * L, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t c = lo; c < hi; ++c) {
                   const A m = A(mp[c]), r = A(rp[c]);
                   double sg = 0, sgx = 0;  // sum(gy), sum(gy * (x - mean))
                   for (int64_t n = 0; n < N; ++n) {
                     const T* g = gp + (n * C + c) * L;
                     const T* xr = xp + (n * C + c) * L;
                     A a = 0, bsum = 0;
                     for (int64_t l = 0; l < L; ++l) {
                       a += A(g[l]);
                       bsum += A(g[l]) * (A(xr[l]) - m);
                     }
                     sg += a;
                     sgx += bsum;
                   }
                   if (gbp) gbp[c] = Stat<T>(sg);
                   if (gwp) gwp[c] = Stat<T>(sgx * double(r));
                   if (!gxp) continue;
                   const A wv = wp ? A(wp[c]) : A(1);
                   const A k = wv * r;
                   // training: gx = k * (gy - mean(gy) - xhat * mean(gy * xhat))
                   const A mg = training ? A(sg / count) : A(0);
                   const A proj = training ? A(sgx / count) * r * r : A(0);
                   for (int64_t n = 0; n < N; ++n) {
                     const T* g = gp + (n * C + c) * L;
                     const T* xr = xp + (n * C + c) * L;
                     T* o = gxp + (n * C + c) * L;
                     for (int64_t l = 0; l < L; ++l)
                       o[l] = T(k * (A(g[l]) - mg - (A(xr[l]) - m) * proj));
                   }
                 }
               });
}

void cpu_stats(const Tensor& x, const Tensor& mean, const Tensor& var) {
  visit_dtype<kFloatSet>(x.dtype(), "batch_norm", [&](auto tag) {
    stats_any<typename decltype(tag)::type>(x, mean, var);
  });
}
void cpu_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor* w,
               const Tensor* b, const Tensor& y) {
  visit_dtype<kFloatSet>(x.dtype(), "batch_norm", [&](auto tag) {
    apply_any<typename decltype(tag)::type>(x, mean, rstd, w, b, y);
  });
}
void cpu_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                  const Tensor* w, const Tensor* gx, const Tensor* gw, const Tensor* gb,
                  bool training) {
  visit_dtype<kFloatSet>(x.dtype(), "batch_norm_backward", [&](auto tag) {
    backward_any<typename decltype(tag)::type>(gy, x, mean, rstd, w, gx, gw, gb, training);
  });
}

}  // namespace

TS_REGISTER_KERNEL(batch_norm_stats_stub, CPU, &cpu_stats);
TS_REGISTER_KERNEL(batch_norm_apply_stub, CPU, &cpu_apply);
TS_REGISTER_KERNEL(batch_norm_backward_stub, CPU, &cpu_backward);

}  // namespace ts
