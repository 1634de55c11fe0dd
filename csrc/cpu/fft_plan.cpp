// Plans and execution of the FFT engine (Note [FFT engine] in fft_plan.h).
#include "cpu/fft_plan.h"

#include <cmath>
#include <map>
#include <mutex>
#include <utility>

namespace ts::fft_engine {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// exp(sign * 2 pi i * num / den) with num reduced mod den first, so the angle is exact.
template <class T>
Cpx<T> root(int64_t num, int64_t den, int sign) {
  num %= den;
  if (num < 0) num += den;
  const double a = kTwoPi * static_cast<double>(num) / static_cast<double>(den);
  return {static_cast<T>(std::cos(a)), static_cast<T>(sign * std::sin(a))};
}

// Radices for a Stockham plan: 4s first (fewest passes), then 2, 3, 5, other small primes.
// Returns false when a prime factor exceeds kMaxGenericRadix.
bool factorize(int64_t n, std::vector<int>& radices) {
  while (n % 4 == 0) radices.push_back(4), n /= 4;
  for (int64_t p = 2; p * p <= n; p += (p == 2 ? 1 : 2))
    while (n % p == 0) {
      if (p > kMaxGenericRadix) return false;
      radices.push_back(static_cast<int>(p));
      n /= p;
    }
  if (n > 1) {
    if (n > kMaxGenericRadix) return false;
    radices.push_back(static_cast<int>(n));
  }
  return true;
}

// Smallest 2^a 3^b 5^c >= n: Bluestein's convolution length.
int64_t good_size(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t f5 = 1; f5 < best; f5 *= 5)
    for (int64_t f35 = f5; f35 < best; f35 *= 3) {
      int64_t v = f35;
      while (v < n) v *= 2;
      if (v < best) best = v;
    }
  return best;
}

// ---- Stockham passes. Pass input x holds s interleaved sub-problems of length p*m; element
// j + k*m of sub-problem q is x[q + s*(j + k*m)]. A pass takes the length-p DFT over k, applies
// the twiddles w_{pm}^{jr}, and stores bin r of position j at y[q + s*(p*j + r)], i.e. as
// sub-problem q + s*r of length m with stride s*p.

template <class T>
struct Radix2 {
  static constexpr int P = 2;
  static void bfly(Cpx<T>* a, int) {
    const Cpx<T> t = a[0];
    a[0] = cadd(t, a[1]);
    a[1] = csub(t, a[1]);
  }
};

template <class T>
struct Radix4 {
  static constexpr int P = 4;
  static void bfly(Cpx<T>* a, int sign) {
    const Cpx<T> t0 = cadd(a[0], a[2]), t1 = csub(a[0], a[2]);
    const Cpx<T> t2 = cadd(a[1], a[3]), d = csub(a[1], a[3]);
    const Cpx<T> t3 = {-sign * d.im, sign * d.re};  // d * (sign * i)
    a[0] = cadd(t0, t2);
    a[2] = csub(t0, t2);
    a[1] = cadd(t1, t3);
    a[3] = csub(t1, t3);
  }
};

template <class T>
struct Radix3 {
  static constexpr int P = 3;
  static void bfly(Cpx<T>* a, int sign) {
    const T s60 = static_cast<T>(0.86602540378443864676372317075294) * sign;
    const Cpx<T> t1 = cadd(a[1], a[2]), d = csub(a[1], a[2]);
    const Cpx<T> t2 = {a[0].re - T(0.5) * t1.re, a[0].im - T(0.5) * t1.im};
    const Cpx<T> r = {-s60 * d.im, s60 * d.re};  // i * sign * sin60 * d
    a[0] = cadd(a[0], t1);
    a[1] = cadd(t2, r);
    a[2] = csub(t2, r);
  }
};

template <class T>
struct Radix5 {
  static constexpr int P = 5;
  static void bfly(Cpx<T>* a, int sign) {
    const T c1 = static_cast<T>(0.30901699437494742410229341718282);         // cos(2pi/5)
    const T c2 = static_cast<T>(-0.80901699437494742410229341718282);        // cos(4pi/5)
    const T s1 = static_cast<T>(0.95105651629515357211643933337938) * sign;  // sin(2pi/5)
    const T s2 = static_cast<T>(0.58778525229247312916870595463907) * sign;  // sin(4pi/5)
    const Cpx<T> p14 = cadd(a[1], a[4]), m14 = csub(a[1], a[4]);
    const Cpx<T> p23 = cadd(a[2], a[3]), m23 = csub(a[2], a[3]);
    const Cpx<T> ta = {a[0].re + c1 * p14.re + c2 * p23.re, a[0].im + c1 * p14.im + c2 * p23.im};
    const Cpx<T> tb = {a[0].re + c2 * p14.re + c1 * p23.re, a[0].im + c2 * p14.im + c1 * p23.im};
    // i * (s1 m14 + s2 m23) and i * (s2 m14 - s1 m23)
    const Cpx<T> ua = {-(s1 * m14.im + s2 * m23.im), s1 * m14.re + s2 * m23.re};
    const Cpx<T> ub = {-(s2 * m14.im - s1 * m23.im), s2 * m14.re - s1 * m23.re};
    a[0] = {a[0].re + p14.re + p23.re, a[0].im + p14.im + p23.im};
    a[1] = cadd(ta, ua);
    a[4] = csub(ta, ua);
    a[2] = cadd(tb, ub);
    a[3] = csub(tb, ub);
  }
};

template <class T, class R>
void pass(int64_t m, int64_t s, const Cpx<T>* x, Cpx<T>* y, const Cpx<T>* tw, int sign) {
  constexpr int P = R::P;
  Cpx<T> a[P];
  for (int64_t q = 0; q < s; ++q) {  // j = 0: all twiddles are 1
    for (int k = 0; k < P; ++k) a[k] = x[q + s * (k * m)];
    R::bfly(a, sign);
    for (int r = 0; r < P; ++r) y[q + s * r] = a[r];
  }
  for (int64_t j = 1; j < m; ++j) {
    const Cpx<T>* w = tw + j * (P - 1);
    const Cpx<T>* xj = x + s * j;
    Cpx<T>* yj = y + s * P * j;
    for (int64_t q = 0; q < s; ++q) {
      for (int k = 0; k < P; ++k) a[k] = xj[q + s * (k * m)];
      R::bfly(a, sign);
      yj[q] = a[0];
      for (int r = 1; r < P; ++r) yj[q + s * r] = cmul(a[r], w[r - 1]);
    }
  }
}

template <class T>
void pass_generic(int p, int64_t m, int64_t s, const Cpx<T>* x, Cpx<T>* y, const Cpx<T>* tw,
                  const Cpx<T>* roots) {
  Cpx<T> a[kMaxGenericRadix];
  for (int64_t j = 0; j < m; ++j) {
    const Cpx<T>* w = tw + j * (p - 1);
    for (int64_t q = 0; q < s; ++q) {
      for (int k = 0; k < p; ++k) a[k] = x[q + s * (j + k * m)];
      for (int r = 0; r < p; ++r) {
        Cpx<T> acc = a[0];
        int idx = 0;
        for (int k = 1; k < p; ++k) {
          idx += r;
          if (idx >= p) idx -= p;
          acc = cadd(acc, cmul(a[k], roots[idx]));
        }
        y[q + s * (p * j + r)] = r == 0 ? acc : cmul(acc, w[r - 1]);
      }
    }
  }
}

template <class T>
void scale_inplace(Cpx<T>* v, int64_t n, T scale) {
  if (scale == T(1)) return;
  for (int64_t i = 0; i < n; ++i) v[i] = cscale(v[i], scale);
}

// Thread-safe cache of immutable plans. Building happens outside the lock: a Bluestein plan
// asks the cache for its sub-plans while being built.
template <class P>
class PlanCache {
 public:
  template <class Build>
  std::shared_ptr<const P> get(int64_t n, bool forward, const Build& build) {
    const std::pair<int64_t, bool> key{n, forward};
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    std::shared_ptr<const P> plan = build();
    std::lock_guard<std::mutex> g(mu_);
    // Bound memory (a plan holds about n twiddles): start over when the cache grows past
    // kMaxPlans plans or kMaxLengths summed lengths; plans in use stay alive via shared_ptr.
    if (plans_.size() >= kMaxPlans || lengths_ + n > kMaxLengths) {
      plans_.clear();
      lengths_ = 0;
    }
    auto it = plans_.emplace(key, std::move(plan));
    if (it.second) lengths_ += n;
    return it.first->second;
  }

 private:
  static constexpr size_t kMaxPlans = 64;
  static constexpr int64_t kMaxLengths = int64_t(1) << 25;
  int64_t lengths_ = 0;
  std::mutex mu_;
  std::map<std::pair<int64_t, bool>, std::shared_ptr<const P>> plans_;
};

}  // namespace

template <class T>
ComplexPlan<T>::ComplexPlan(int64_t n, bool forward) : n_(n), forward_(forward) {
  const int sign = forward ? -1 : 1;
  std::vector<int> radices;
  if (factorize(n, radices)) {
    int64_t len = n, s = 1;
    for (int p : radices) {
      const int64_t m = len / p;
      Stage st{p, m, s, static_cast<int64_t>(tw_.size()), 0};
      for (int64_t j = 0; j < m; ++j)
        for (int r = 1; r < p; ++r) tw_.push_back(root<T>(j * r, len, sign));
      if (p > 5) {
        st.roots = static_cast<int64_t>(tw_.size());
        for (int k = 0; k < p; ++k) tw_.push_back(root<T>(k, p, sign));
      }
      stages_.push_back(st);
      len = m;
      s *= p;
    }
    work_ = n;
    return;
  }
  // Bluestein: X_k = c_k * sum_j (x_j c_j) conj(c_{k-j}) with c_k = exp(sign i pi k^2 / n).
  const int64_t m = good_size(2 * n - 1);
  sub_fwd_ = complex_plan<T>(m, true);
  sub_bwd_ = complex_plan<T>(m, false);
  chirp_.resize(n);
  std::vector<Cpx<double>> b(m, Cpx<double>{0, 0}), bh(m);
  for (int64_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle exact for large k (unsigned: k^2 < 2^64 for n < 2^32).
    const uint64_t k2 =
        (static_cast<uint64_t>(k) * static_cast<uint64_t>(k)) % (2 * static_cast<uint64_t>(n));
    const Cpx<double> c = root<double>(static_cast<int64_t>(k2), 2 * n, sign);
    chirp_[k] = {static_cast<T>(c.re), static_cast<T>(c.im)};
    b[k] = cconj(c);
    if (k > 0) b[m - k] = cconj(c);
  }
  // The chirp's spectrum is computed in double even for float plans, then rounded once.
  const auto dplan = complex_plan<double>(m, true);
  std::vector<Cpx<double>> dwork(dplan->work_size());
  dplan->execute(b.data(), bh.data(), dwork.data(), 1.0 / static_cast<double>(m));
  bhat_.resize(m);
  for (int64_t k = 0; k < m; ++k) bhat_[k] = {static_cast<T>(bh[k].re), static_cast<T>(bh[k].im)};
  work_ = 2 * m + sub_fwd_->work_size();
}

template <class T>
void ComplexPlan<T>::run_stockham(const C* in, C* out, C* work, int64_t lanes) const {
  const size_t k = stages_.size();
  if (k == 0) {  // n == 1
    for (int64_t q = 0; q < lanes; ++q) out[q] = in[q];
    return;
  }
  const int sign = forward_ ? -1 : 1;
  const C* src = in;
  for (size_t i = 0; i < k; ++i) {
    C* dst = (k - 1 - i) % 2 == 0 ? out : work;  // the last pass lands in out
    const Stage& st = stages_[i];
    const int64_t s = st.s * lanes;
    const C* tw = tw_.data() + st.tw;
    switch (st.p) {
      case 4:
        pass<T, Radix4<T>>(st.m, s, src, dst, tw, sign);
        break;
      case 2:
        pass<T, Radix2<T>>(st.m, s, src, dst, tw, sign);
        break;
      case 3:
        pass<T, Radix3<T>>(st.m, s, src, dst, tw, sign);
        break;
      case 5:
        pass<T, Radix5<T>>(st.m, s, src, dst, tw, sign);
        break;
      default:
        pass_generic(st.p, st.m, s, src, dst, tw, tw_.data() + st.roots);
    }
    src = dst;
  }
}

template <class T>
void ComplexPlan<T>::run_bluestein(const C* in, C* out, C* work) const {
  const int64_t m = static_cast<int64_t>(bhat_.size());
  C* a = work;
  C* b = work + m;
  C* sub = work + 2 * m;
  for (int64_t k = 0; k < n_; ++k) a[k] = cmul(in[k], chirp_[k]);
  for (int64_t k = n_; k < m; ++k) a[k] = C{0, 0};
  sub_fwd_->execute(a, b, sub, T(1));
  for (int64_t k = 0; k < m; ++k) b[k] = cmul(b[k], bhat_[k]);
  sub_bwd_->execute(b, a, sub, T(1));
  for (int64_t k = 0; k < n_; ++k) out[k] = cmul(a[k], chirp_[k]);
}

template <class T>
void ComplexPlan<T>::execute(const C* in, C* out, C* work, T scale) const {
  if (bhat_.empty())
    run_stockham(in, out, work, 1);
  else
    run_bluestein(in, out, work);
  scale_inplace(out, n_, scale);
}

template <class T>
void ComplexPlan<T>::execute_lanes(const C* in, C* out, C* work, int64_t lanes, T scale) const {
  run_stockham(in, out, work, lanes);
  scale_inplace(out, n_ * lanes, scale);
}

template <class T>
RealPlan<T>::RealPlan(int64_t n) : n_(n) {
  if (n % 2 == 0) {
    const int64_t h = n / 2;
    fwd_ = complex_plan<T>(h, true);
    bwd_ = complex_plan<T>(h, false);
    w_.resize(h + 1);
    for (int64_t k = 0; k <= h; ++k) w_[k] = root<T>(k, n, -1);
    work_ = h + std::max(fwd_->work_size(), bwd_->work_size());
  } else {
    fwd_ = complex_plan<T>(n, true);
    bwd_ = complex_plan<T>(n, false);
    work_ = 2 * n + std::max(fwd_->work_size(), bwd_->work_size());
  }
}

template <class T>
void RealPlan<T>::r2c(const T* in, C* out, C* work, T scale) const {
  if (n_ % 2 != 0) {
    for (int64_t j = 0; j < n_; ++j) work[j] = C{in[j], T(0)};
    fwd_->execute(work, work + n_, work + 2 * n_, scale);
    for (int64_t k = 0; k <= n_ / 2; ++k) out[k] = work[n_ + k];
    return;
  }
  // z_j = x_2j + i x_2j+1 has DFT Z; X_k = E_k + w^k O_k with E_k = (Z_k + conj Z_{h-k})/2 and
  // O_k = (Z_k - conj Z_{h-k}) / 2i, the DFTs of the even and odd samples.
  const int64_t h = n_ / 2;
  C* z = work;
  fwd_->execute(reinterpret_cast<const C*>(in), z, work + h, T(1));
  const T half = T(0.5) * scale;
  for (int64_t k = 0; k <= h; ++k) {
    const C zk = z[k == h ? 0 : k], zm = cconj(z[k == 0 ? 0 : h - k]);
    const C e = cadd(zk, zm), d = csub(zk, zm);
    const C o = {d.im, -d.re};  // d / i
    out[k] = cscale(cadd(e, cmul(w_[k], o)), half);
  }
}

template <class T>
void RealPlan<T>::c2r(const C* in, T* out, C* work, T scale) const {
  if (n_ % 2 != 0) {
    work[0] = C{in[0].re, T(0)};
    for (int64_t k = 1; k <= n_ / 2; ++k) {
      work[k] = in[k];
      work[n_ - k] = cconj(in[k]);
    }
    bwd_->execute(work, work + n_, work + 2 * n_, scale);
    for (int64_t j = 0; j < n_; ++j) out[j] = work[n_ + j].re;
    return;
  }
  // The inverse of r2c's untangling: Z_k = 2 E_k + 2i O_k, then a half-length inverse FFT
  // yields the even samples in the real parts and the odd ones in the imaginary parts.
  const int64_t h = n_ / 2;
  C* z = work;
  for (int64_t k = 0; k < h; ++k) {
    const C xk = k == 0 ? C{in[0].re, T(0)} : in[k];
    const C xm = h - k == h ? C{in[h].re, T(0)} : cconj(in[h - k]);
    const C s = cadd(xk, xm), d = cmul(csub(xk, xm), cconj(w_[k]));
    z[k] = {(s.re - d.im) * scale, (s.im + d.re) * scale};  // (s + i d) * scale
  }
  bwd_->execute(z, reinterpret_cast<C*>(out), work + h, T(1));
}

template <class T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n, bool forward) {
  static PlanCache<ComplexPlan<T>> cache;
  return cache.get(n, forward, [&] { return std::make_shared<const ComplexPlan<T>>(n, forward); });
}

template <class T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n) {
  static PlanCache<RealPlan<T>> cache;
  return cache.get(n, true, [&] { return std::make_shared<const RealPlan<T>>(n); });
}

template class ComplexPlan<float>;
template class ComplexPlan<double>;
template class RealPlan<float>;
template class RealPlan<double>;
template std::shared_ptr<const ComplexPlan<float>> complex_plan<float>(int64_t, bool);
template std::shared_ptr<const ComplexPlan<double>> complex_plan<double>(int64_t, bool);
template std::shared_ptr<const RealPlan<float>> real_plan<float>(int64_t);
template std::shared_ptr<const RealPlan<double>> real_plan<double>(int64_t);

}  // namespace ts::fft_engine
