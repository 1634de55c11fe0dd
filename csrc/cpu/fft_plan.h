// tessera's own FFT engine (Note [FFT engine]): 1-D complex and real transforms of any length.
//
// Note [FFT engine]
// - Lengths whose prime factors are all <= kMaxGenericRadix run a self-sorting Stockham
//   decimation-in-frequency FFT: one pass per factor (radix 4, 2, 3, 5 butterflies written
//   out, a generic O(p^2) butterfly for other small primes), ping-ponging between the output
//   and a scratch buffer, so no bit-reversal pass and unit-stride inner loops in late passes.
// - Other lengths run Bluestein's chirp-z algorithm: a convolution computed with a 5-smooth
//   FFT of length >= 2n-1, so every length is O(n log n).
// - Lanes: a Stockham plan also runs L interleaved transforms at once (element j of lane q
//   at q + L*j) by scaling every pass's sub-problem count by L; transforms along an inner
//   axis use this on blocks of columns instead of transposing the tensor.
// - Real transforms of even length pack the n reals as n/2 complex values, run a half-length
//   complex FFT and untangle the spectrum in one post-processing pass (and the reverse for c2r).
// - Twiddles and chirps are computed in double from exactly reduced angles (never by repeated
//   multiplication) and rounded once, so float32 transforms stay accurate (~1e-7 relative).
// - Complex products are written out by hand: std::complex's operator* calls __mulsc3
//   (C99 Annex G NaN recovery), which is several times slower.
// - Plans are immutable once built and cached per (length, direction, precision) behind a
//   mutex; execute() is const and takes caller-owned scratch, so threads share plans freely.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace ts::fft_engine {

template <class T>
struct Cpx {
  T re, im;
};

template <class T>
inline Cpx<T> cmul(Cpx<T> a, Cpx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T>
inline Cpx<T> cadd(Cpx<T> a, Cpx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
inline Cpx<T> csub(Cpx<T> a, Cpx<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class T>
inline Cpx<T> cscale(Cpx<T> a, T s) {
  return {a.re * s, a.im * s};
}
template <class T>
inline Cpx<T> cconj(Cpx<T> a) {
  return {a.re, -a.im};
}

// Prime factors above this use Bluestein instead of an O(p^2) butterfly.
constexpr int64_t kMaxGenericRadix = 61;

template <class T>
class ComplexPlan {
 public:
  using C = Cpx<T>;
  ComplexPlan(int64_t n, bool forward);
  int64_t size() const { return n_; }
  int64_t work_size() const { return work_; }  // scratch elements execute() needs
  // out[k] = scale * sum_j in[j] exp(-+2 pi i jk/n); in and out must not overlap.
  void execute(const C* in, C* out, C* work, T scale) const;
  // `lanes` interleaved transforms at once (element j of lane q at q + lanes*j): the unit-stride
  // inner loops then run across lanes. Stockham plans only; work holds n * lanes elements.
  bool supports_lanes() const { return bhat_.empty(); }
  void execute_lanes(const C* in, C* out, C* work, int64_t lanes, T scale) const;

 private:
  struct Stage {
    int p;          // radix
    int64_t m, s;   // sub-length after this pass, number of interleaved sub-problems
    int64_t tw;     // offset of this pass's twiddles, m * (p - 1) of them
    int64_t roots;  // offset of the p-th roots of unity (generic radix only)
  };
  void run_stockham(const C* in, C* out, C* work, int64_t lanes) const;
  void run_bluestein(const C* in, C* out, C* work) const;

  int64_t n_ = 0, work_ = 0;
  bool forward_ = true;
  std::vector<Stage> stages_;
  std::vector<C> tw_;
  // Bluestein: chirp exp(-+i pi k^2/n) and the FFT of the conjugate chirp, divided by m.
  std::shared_ptr<const ComplexPlan<T>> sub_fwd_, sub_bwd_;
  std::vector<C> chirp_, bhat_;
};

// r2c: n reals -> n/2+1 complex (forward); c2r: n/2+1 complex -> n reals (backward; the
// imaginary parts of bin 0 and, for even n, bin n/2 are ignored as NumPy does).
template <class T>
class RealPlan {
 public:
  using C = Cpx<T>;
  explicit RealPlan(int64_t n);
  int64_t work_size() const { return work_; }
  void r2c(const T* in, C* out, C* work, T scale) const;
  void c2r(const C* in, T* out, C* work, T scale) const;

 private:
  int64_t n_ = 0, work_ = 0;
  std::shared_ptr<const ComplexPlan<T>> fwd_, bwd_;  // length n/2 (even n) or n (odd n)
  std::vector<C> w_;                                 // exp(-2 pi i k/n), k <= n/2 (even n)
};

template <class T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n, bool forward);
template <class T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n);

}  // namespace ts::fft_engine
