// CPU kernels of the CTC loss (ops/nn/loss_ctc.h): PyTorch's ctc_loss_cpu_template and
// ctc_loss_backward_cpu_template (LossCTC.cpp), computed in log_probs' dtype as PyTorch does,
// one sample per task. The backward keeps two rows of beta instead of all T, adding
// alpha_t(s) beta_t(s) into its class's slot of the gradient as soon as beta_t(s) is known.
// A cell whose three predecessors are all -inf skips the exp/log (the result is -inf + lp,
// the value the full formula gives, NaN included), which most cells of long inputs are.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "ops/nn/loss_ctc.h"

namespace ts {
namespace {

constexpr uint32_t kCtcDTypes =
    (1u << static_cast<int>(DType::Float32)) | (1u << static_cast<int>(DType::Float64));

// Samples per task: a cell costs a few exp/log, so a task of ~2k cells is worth a thread.
int64_t sample_grain(int64_t T, int64_t L) {
  return std::max<int64_t>(1, 2048 / std::max<int64_t>(1, T * L));
}

// log(exp(a) + exp(b) + exp(c)) as PyTorch writes it (m = the largest, 0 when all are -inf).
template <class T>
T log3(T a, T b, T c) {
  T m = std::max(a, std::max(b, c));
  if (m == -std::numeric_limits<T>::infinity()) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

// The extended target of sample n: ext[s] = blank for even s, the label (s - 1) / 2 for odd s.
void extend(const int64_t* tg, int64_t len, int64_t blank, std::vector<int64_t>& ext) {
  ext.assign(2 * len + 1, blank);
  for (int64_t i = 0; i < len; ++i) ext[2 * i + 1] = tg[i];
}

template <class T>
void ctc_forward(const CtcArgs& a, const Tensor& nll_t, const Tensor& alpha_t) {
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  const int64_t Tn = a.log_probs.dim(0), N = a.log_probs.dim(1), C = a.log_probs.dim(2);
  const int64_t S = a.targets.dim(1), L = 2 * S + 1;
  const T* lp = a.log_probs.data<T>();
  const int64_t *tg = a.targets.data<int64_t>(), *il = a.input_lengths.data<int64_t>(),
                *tl = a.target_lengths.data<int64_t>();
  T *nll = nll_t.data<T>(), *alpha = alpha_t.data<T>();
  const int64_t step = N * C;  // between time steps of one sample
  parallel_for(0, N, sample_grain(Tn, L), [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> ext;
    for (int64_t n = lo; n < hi; ++n) {
      const int64_t in_len = il[n], len = tl[n], last = 2 * len;
      const T* x = lp + n * C;
      T* al = alpha + n * Tn * L;
      std::fill(al, al + L, ninf);
      if (in_len == 0) {
        nll[n] = -(len == 0 ? T(0) : ninf);
        continue;
      }
      extend(tg + n * S, len, a.blank, ext);
      al[0] = x[a.blank];
      if (len > 0) al[1] = x[ext[1]];
      for (int64_t t = 1; t < in_len; ++t) {
        const T* prev = al + (t - 1) * L;
        T* cur = al + t * L;
        const T* xt = x + t * step;
        for (int64_t s = 0; s <= last; ++s) {
          const T a1 = prev[s], a2 = s > 0 ? prev[s - 1] : ninf;
          const T a3 = s > 1 && ext[s - 2] != ext[s] ? prev[s - 2] : ninf;
          const T lx = xt[ext[s]];
          cur[s] = a1 == ninf && a2 == ninf && a3 == ninf ? ninf + lx : log3(a1, a2, a3) + lx;
        }
      }
      const T* end = al + (in_len - 1) * L;
      if (len == 0) {
        nll[n] = -end[0];
      } else {
        const T l1 = end[last], l2 = end[last - 1];
        T m = std::max(l1, l2);
        if (m == ninf) m = 0;
        nll[n] = -(std::log(std::exp(l1 - m) + std::exp(l2 - m)) + m);
      }
    }
  });
}

template <class T>
void ctc_backward(const CtcArgs& a, const Tensor& gnll_t, const Tensor& nll_t,
                  const Tensor& alpha_t, bool zero_infinity, const Tensor& grad_t) {
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  const int64_t Tn = a.log_probs.dim(0), N = a.log_probs.dim(1), C = a.log_probs.dim(2);
  const int64_t S = a.targets.dim(1), L = 2 * S + 1;
  const T *lp = a.log_probs.data<T>(), *gnll = gnll_t.data<T>(), *nll = nll_t.data<T>(),
          *alpha = alpha_t.data<T>();
  const int64_t *tg = a.targets.data<int64_t>(), *il = a.input_lengths.data<int64_t>(),
                *tl = a.target_lengths.data<int64_t>();
  T* grad = grad_t.data<T>();
  const int64_t step = N * C;
  parallel_for(0, N, sample_grain(Tn, L), [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> ext;
    std::vector<T> beta_next(L), beta_cur(L);
    for (int64_t n = lo; n < hi; ++n) {
      const T* x = lp + n * C;
      T* g = grad + n * C;
      const T z = nll[n];
      const int64_t in_len = zero_infinity && z == std::numeric_limits<T>::infinity() ? 0 : il[n];
      // g holds log sum_{s: l'_s = c} alpha_t(s) beta_t(s) (log of the empty sum: -inf) until
      // the last loop turns it into the gradient.
      for (int64_t t = 0; t < in_len; ++t) std::fill(g + t * step, g + t * step + C, ninf);
      if (in_len > 0) {
        const int64_t len = tl[n], last = 2 * len;
        const T* al = alpha + n * Tn * L;
        extend(tg + n * S, len, a.blank, ext);
        // beta at the last frame: the final blank and the final label.
        std::fill(beta_next.begin(), beta_next.begin() + last + 1, ninf);
        const T* xe = x + (in_len - 1) * step;
        T* ge = g + (in_len - 1) * step;
        const T* ae = al + (in_len - 1) * L;
        beta_next[last] = xe[a.blank];
        ge[a.blank] = ae[last] + beta_next[last];
        if (len > 0) {
          beta_next[last - 1] = xe[ext[last - 1]];
          ge[ext[last - 1]] = ae[last - 1] + beta_next[last - 1];
        }
        for (int64_t t = in_len - 2; t >= 0; --t) {
          const T* xt = x + t * step;
          const T* at = al + t * L;
          T* gt = g + t * step;
          for (int64_t s = last; s >= 0; --s) {
            const T b1 = beta_next[s], b2 = s < last ? beta_next[s + 1] : ninf;
            const T b3 = s < last - 1 && ext[s + 2] != ext[s] ? beta_next[s + 2] : ninf;
            const T lx = xt[ext[s]];
            const T b = b1 == ninf && b2 == ninf && b3 == ninf ? ninf + lx : log3(b1, b2, b3) + lx;
            beta_cur[s] = b;
            const T ab = at[s] + b;
            T& lcab = gt[ext[s]];
            if (lcab == ninf) {
              lcab = ab;
            } else {
              const T m = std::max(lcab, ab);
              lcab = std::log(std::exp(lcab - m) + std::exp(ab - m)) + m;
            }
          }
          std::swap(beta_cur, beta_next);
        }
        const T gr = gnll[n];
        for (int64_t t = 0; t < in_len; ++t) {
          const T* xt = x + t * step;
          T* gt = g + t * step;
          for (int64_t c = 0; c < C; ++c)
            gt[c] = (std::exp(xt[c]) - std::exp(gt[c] + z - xt[c])) * gr;
        }
      }
      for (int64_t t = in_len; t < Tn; ++t) std::fill(g + t * step, g + t * step + C, T(0));
    }
  });
}

void cpu_ctc_loss(const CtcArgs& a, const Tensor& nll, const Tensor& log_alpha) {
  visit_dtype<kCtcDTypes>(a.log_probs.dtype(), "ctc_loss", [&](auto tag) {
    ctc_forward<typename decltype(tag)::type>(a, nll, log_alpha);
  });
}

void cpu_ctc_loss_backward(const CtcArgs& a, const Tensor& grad_nll, const Tensor& nll,
                           const Tensor& log_alpha, bool zero_infinity, const Tensor& grad) {
  visit_dtype<kCtcDTypes>(a.log_probs.dtype(), "ctc_loss_backward", [&](auto tag) {
    ctc_backward<typename decltype(tag)::type>(a, grad_nll, nll, log_alpha, zero_infinity, grad);
  });
}

}  // namespace

TS_REGISTER_KERNEL(ctc_loss_stub, CPU, &cpu_ctc_loss);
TS_REGISTER_KERNEL(ctc_loss_backward_stub, CPU, &cpu_ctc_loss_backward);

}  // namespace ts
