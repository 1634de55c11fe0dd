// CPU reference kernels of flash attention (ops/attention.h). Each query row runs an online
// softmax over blocks of keys, so no (L, S) score matrix exists; the backward is two passes
// (dq over query rows, then dk/dv over key rows) that recompute the probabilities from the
// saved lse, so each output row is written by one thread: no atomics or per-thread copies,
// and the result does not depend on the thread count. float16/bfloat16 inputs are widened
// to float once up front; float32 computes in float, float64 in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dtype.h"
#include "core/parallel.h"
#include "ops/attention.h"
#include "kernels/random_math.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

constexpr int64_t kKeyBlock = 64;

// Eight independent partial sums so the compiler can vectorize the reduction.
template <class A>
A dot(const A* a, const A* b, int64_t n) {
  A part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int u = 0; u < 8; ++u) part[u] += a[i + u] * b[i + u];
  A s = 0;
  for (; i < n; ++i) s += a[i] * b[i];
  for (int u = 0; u < 8; ++u) s += part[u];
  return s;
}

template <class A>
void axpy(A alpha, const A* x, A* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// Query i sees keys [0, visible(i)).
inline int64_t visible(bool causal, int64_t i, int64_t S) {
  return causal ? std::min(i + 1, S) : S;
}

// Rows of about kGrainSize multiply-adds per parallel chunk.
inline int64_t grain(int64_t per_row) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(per_row, 1));
}

// The inputs in the compute type A: views of the tensors when T == A, widened copies else.
template <class T, class A>
struct Widened {
  std::vector<A> buf;
  const A* p;
  explicit Widened(const Tensor& x) {
    if constexpr (std::is_same_v<T, A>) {
      p = x.data<T>();
    } else {
      const T* s = x.data<T>();
      buf.resize(static_cast<size_t>(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i) buf[i] = static_cast<A>(s[i]);
      p = buf.data();
    }
  }
};

struct Dims {
  int64_t N, L, S, E, Ev;
  double scale;
  bool causal;
  AttentionDropout drop;
  // The dropout factor of query row r = n * L + i and key j: 0 (dropped) or drop.scale, or 1
  // without dropout (Note [Attention dropout]).
  template <class A>
  A keep(int64_t r, int64_t j) const {
    if (!drop.on()) return A(1);
    return rng::attention_keep_at(static_cast<uint64_t>(r / L), static_cast<uint64_t>(r % L),
                                  static_cast<uint64_t>(j), static_cast<uint64_t>(L),
                                  static_cast<uint64_t>(S), drop.threshold, drop.seed,
                                  drop.offset)
               ? static_cast<A>(drop.scale)
               : A(0);
  }
};

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
             const AttentionDropout& drop) {
  return Dims{q.dim(0) * q.dim(1), q.dim(2), k.dim(2), q.dim(3), v.dim(3), scale, causal, drop};
}

template <class T, class A>
void forward(const Tensor& qt, const Tensor& kt, const Tensor& vt, const Tensor& out,
             const Tensor& lse, const Dims& d) {
  const Widened<T, A> q(qt), k(kt), v(vt);
  T* op = out.data<T>();
  A* lp = lse.data<A>();
  const A scale = static_cast<A>(d.scale), ninf = -std::numeric_limits<A>::infinity();
  parallel_for(0, d.N * d.L, grain(d.S * (d.E + d.Ev)), [&](int64_t lo, int64_t hi) {
    std::vector<A> s(kKeyBlock), acc(d.Ev);
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t n = r / d.L, i = r % d.L, nk = visible(d.causal, i, d.S);
      const A* qi = q.p + r * d.E;
      const A* kn = k.p + n * d.S * d.E;
      const A* vn = v.p + n * d.S * d.Ev;
      std::fill(acc.begin(), acc.end(), A(0));
      A m = ninf, l = 0;
      for (int64_t j0 = 0; j0 < nk; j0 += kKeyBlock) {
        const int64_t nb = std::min(kKeyBlock, nk - j0);
        A bm = ninf;
        for (int64_t j = 0; j < nb; ++j) {
          s[j] = scale * dot(qi, kn + (j0 + j) * d.E, d.E);
          bm = std::max(bm, s[j]);
        }
        const A mn = std::max(m, bm);
        const A alpha = m == ninf ? A(0) : std::exp(m - mn);
        l *= alpha;
        for (auto& a : acc) a *= alpha;
        for (int64_t j = 0; j < nb; ++j) {
          const A p = std::exp(s[j] - mn);
          l += p;
          const A pk = p * d.keep<A>(r, j0 + j);
          if (pk != A(0)) axpy(pk, vn + (j0 + j) * d.Ev, acc.data(), d.Ev);
        }
        m = mn;
      }
      const A inv = A(1) / l;
      for (int64_t c = 0; c < d.Ev; ++c) op[r * d.Ev + c] = static_cast<T>(acc[c] * inv);
      lp[r] = m + std::log(l);
    }
  });
}

void cpu_flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                         const Tensor& lse, double scale, bool causal,
                         const AttentionDropout& drop) {
  const Dims d = dims_of(q, k, v, scale, causal, drop);
  visit_dtype<kFloatSet>(q.dtype(), "flash_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    forward<T, acc_t<T>>(q, k, v, out, lse, d);
  });
}

template <class T, class A>
void store(const std::vector<A>& src, const Tensor& dst) {
  T* p = dst.data<T>();
  for (size_t i = 0; i < src.size(); ++i) p[i] = static_cast<T>(src[i]);
}

// The (dropped) probability p and score gradient ds = p * (keep * dO_i . v_j - D_i) of query
// row r, key j (keep: the dropout factor, Note [Attention dropout]).
template <class A>
struct PairGrad {
  const A *q, *k, *v, *go, *lse, *D;
  const Dims& d;
  void operator()(int64_t n, int64_t i, int64_t j, A& p, A& ds) const {
    const int64_t r = n * d.L + i, c = n * d.S + j;
    const A scale = static_cast<A>(d.scale), keep = d.keep<A>(r, j);
    p = std::exp(scale * dot(q + r * d.E, k + c * d.E, d.E) - lse[r]);
    ds = p * (keep == A(0) ? -D[r] : keep * dot(go + r * d.Ev, v + c * d.Ev, d.Ev) - D[r]);
    p *= keep;
  }
};

template <class T, class A>
void backward(const Tensor& qt, const Tensor& kt, const Tensor& vt, const Tensor& ot,
              const Tensor& lset, const Tensor& gt, const Tensor& dqt, const Tensor& dkt,
              const Tensor& dvt, const Dims& d) {
  const Widened<T, A> q(qt), k(kt), v(vt), o(ot), go(gt);
  const A* lse = lset.data<A>();
  const A scale = static_cast<A>(d.scale);
  std::vector<A> D(d.N * d.L), dq(qt.numel()), dk(kt.numel()), dv(vt.numel());
  parallel_for(0, d.N * d.L, grain(d.Ev), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) D[r] = dot(go.p + r * d.Ev, o.p + r * d.Ev, d.Ev);
  });
  const PairGrad<A> pg{q.p, k.p, v.p, go.p, lse, D.data(), d};
  const int64_t work = d.S * (d.E + d.Ev);
  parallel_for(0, d.N * d.L, grain(work), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t n = r / d.L, i = r % d.L;
      A* dqi = dq.data() + r * d.E;
      for (int64_t j = 0; j < visible(d.causal, i, d.S); ++j) {
        A p, ds;
        pg(n, i, j, p, ds);
        axpy(scale * ds, k.p + (n * d.S + j) * d.E, dqi, d.E);
      }
    }
  });
  parallel_for(0, d.N * d.S, grain(d.L * (d.E + d.Ev)), [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      const int64_t n = c / d.S, j = c % d.S;
      A* dkj = dk.data() + c * d.E;
      A* dvj = dv.data() + c * d.Ev;
      for (int64_t i = d.causal ? j : 0; i < d.L; ++i) {  // the queries that see key j
        A p, ds;
        pg(n, i, j, p, ds);
        axpy(p, go.p + (n * d.L + i) * d.Ev, dvj, d.Ev);
        axpy(scale * ds, q.p + (n * d.L + i) * d.E, dkj, d.E);
      }
    }
  });
  store<T>(dq, dqt);
  store<T>(dk, dkt);
  store<T>(dv, dvt);
}

void cpu_flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                  const Tensor& out, const Tensor& lse, const Tensor& gout,
                                  const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                  double scale, bool causal, const AttentionDropout& drop) {
  const Dims d = dims_of(q, k, v, scale, causal, drop);
  visit_dtype<kFloatSet>(q.dtype(), "flash_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    backward<T, acc_t<T>>(q, k, v, out, lse, gout, dq, dk, dv, d);
  });
}

}  // namespace

TS_REGISTER_KERNEL(flash_attention_stub, CPU, &cpu_flash_attention);
TS_REGISTER_KERNEL(flash_attention_backward_stub, CPU, &cpu_flash_attention_backward);

}  // namespace ts
