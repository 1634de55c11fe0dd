// CPU kernels of the linalg extension: LAPACK through LAPACKE, one call per batch entry in
// column-major layout (Note [LAPACK layout] in ops/linalg_ext.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <type_traits>

#include "core/parallel.h"
#include "cpu/blas.h"
#include "ops/linalg_ext.h"
#include "ops/linalg_lu.h"

// LAPACKE's complex types as std::complex (same layout as C's _Complex).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
#ifdef TESSERA_BLAS_SCIPY_OPENBLAS
#define TS_LAPACKE(name) scipy_LAPACKE_##name
#else
#define TS_LAPACKE(name) LAPACKE_##name
#endif

namespace ts {
namespace {

constexpr int kCol = LAPACK_COL_MAJOR;

// One struct per LAPACK type prefix (s, d, c, z) so the kernels below are written once.
template <class T>
struct Lapack;
#define TS_LAPACK_TRAITS(T, RT, p, eig, org)                                                 \
  template <>                                                                                \
  struct Lapack<T> {                                                                         \
    using R = RT;                                                                            \
    static int potrf(char uplo, int n, T* a, int lda) {                                      \
      return TS_LAPACKE(p##potrf)(kCol, uplo, n, a, lda);                                    \
    }                                                                                        \
    static int getrf(int n, T* a, int lda, int* piv) {                                       \
      return TS_LAPACKE(p##getrf)(kCol, n, n, a, lda, piv);                                  \
    }                                                                                        \
    static int getrf_mn(int m, int n, T* a, int lda, int* piv) {                             \
      return TS_LAPACKE(p##getrf)(kCol, m, n, a, lda, piv);                                  \
    }                                                                                        \
    static int getrs(char trans, int n, int nrhs, const T* a, int lda, const int* piv, T* b, \
                     int ldb) {                                                              \
      return TS_LAPACKE(p##getrs)(kCol, trans, n, nrhs, a, lda, piv, b, ldb);                \
    }                                                                                        \
    static int gesv(int n, int nrhs, T* a, int lda, int* piv, T* b, int ldb) {               \
      return TS_LAPACKE(p##gesv)(kCol, n, nrhs, a, lda, piv, b, ldb);                        \
    }                                                                                        \
    static int heevd(char jobz, int n, T* a, int lda, R* w) {                                \
      return TS_LAPACKE(eig)(kCol, jobz, 'L', n, a, lda, w);                                 \
    }                                                                                        \
    static int geqrf(int m, int n, T* a, int lda, T* tau) {                                  \
      return TS_LAPACKE(p##geqrf)(kCol, m, n, a, lda, tau);                                  \
    }                                                                                        \
    static int ungqr(int m, int n, int k, T* a, int lda, const T* tau) {                     \
      return TS_LAPACKE(org)(kCol, m, n, k, a, lda, tau);                                    \
    }                                                                                        \
    static int gesdd(char jobz, int m, int n, T* a, int lda, R* s, T* u, int ldu, T* vt,     \
                     int ldvt) {                                                             \
      return TS_LAPACKE(p##gesdd)(kCol, jobz, m, n, a, lda, s, u, ldu, vt, ldvt);            \
    }                                                                                        \
  };
TS_LAPACK_TRAITS(float, float, s, ssyevd, sorgqr)
TS_LAPACK_TRAITS(double, double, d, dsyevd, dorgqr)
TS_LAPACK_TRAITS(c64, float, c, cheevd, cungqr)
TS_LAPACK_TRAITS(c128, double, z, zheevd, zungqr)
#undef TS_LAPACK_TRAITS

// NaN inputs go through LAPACK (giving NaN results, as in NumPy) instead of LAPACKE's
// argument error.
const bool kNanCheckOff = (TS_LAPACKE(set_nancheck)(0), true);

// A dimension for LAPACK's 32-bit ints (the op layer keeps sizes small enough to index).
int dim32(int64_t v) {
  if (v > INT_MAX) throw ValueError(str("linalg: dimension ", v, " exceeds LAPACK's 32-bit limit"));
  return static_cast<int>(v);
}
// A leading dimension: LAPACK requires >= 1 even for empty matrices.
int ld32(int64_t v) { return dim32(std::max<int64_t>(v, 1)); }

// Runs f(b) for each batch entry. Small matrices go one per thread; large ones run one at a
// time so OpenBLAS can use its own threads inside each call.
template <class F>
void for_batches(int64_t batches, int64_t n, const F& f) {
  const auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b);
  };
  if (n <= 32)
    parallel_for(0, batches, std::max<int64_t>(1, 2048 / std::max<int64_t>(n * n, 1)), run);
  else
    run(0, batches);
}

template <class F>
void visit_lapack(DType d, const F& f) {
  visit_dtype<kFloatSet | kComplexSet>(d, "linalg", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, c64> ||
                  std::is_same_v<T, c128>)
      f(tag);
    else
      throw TypeError("linalg: kernels take float32/float64/complex64/complex128");
  });
}

void cpu_pack(const Tensor& src, const Tensor& dst) {
  visit_lapack(dst.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t nd = src.ndim(), m = src.dim(nd - 2), n = src.dim(nd - 1);
    const int64_t rs = src.strides()[nd - 2], cs = src.strides()[nd - 1];
    const T* s = src.data<T>();
    T* d = dst.data<T>();
    for_batches(dst.dim(0), std::max(m, n), [&](int64_t b) {
      int64_t off = 0, rem = b;  // batch b's offset: unravel b over src's batch dims
      for (int64_t k = nd - 3; k >= 0; --k) {
        off += (rem % src.dim(k)) * src.strides()[k];
        rem /= src.dim(k);
      }
      T* out = d + b * m * n;
      constexpr int64_t kTile = 32;  // a transposing copy: tiles keep both sides in cache
      for (int64_t j0 = 0; j0 < n; j0 += kTile)
        for (int64_t i0 = 0; i0 < m; i0 += kTile)
          for (int64_t j = j0; j < std::min(n, j0 + kTile); ++j)
            for (int64_t i = i0; i < std::min(m, i0 + kTile); ++i)
              out[i + j * m] = s[off + i * rs + j * cs];
    });
  });
}

void cpu_cholesky(const Tensor& a, bool upper, Info& info) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = a.dim(1);
    T* base = a.data<T>();
    for_batches(a.dim(0), n, [&](int64_t b) {
      T* p = base + b * n * n;
      info[b] = Lapack<T>::potrf(upper ? 'U' : 'L', dim32(n), p, ld32(n));
      // OpenBLAS's potrf takes a NaN pivot for positive (`ajj <= 0` is false for NaN): a NaN or
      // infinite matrix "factored" into NaNs where reference LAPACK (and PyTorch) fail.
      for (int64_t j = 0; info[b] == 0 && j < n; ++j)
        if (!std::isfinite(std::real(p[j + j * n]))) info[b] = static_cast<int>(j + 1);
      for (int64_t j = 0; j < n; ++j)  // LAPACK leaves the other triangle as it was
        for (int64_t i = 0; i < n; ++i)
          if (upper ? i > j : i < j) p[i + j * n] = T(0);
    });
  });
}

void cpu_solve(const Tensor& a, const Tensor& b, Info& info) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = a.dim(1), k = b.dim(1);
    for_batches(a.dim(0), n, [&](int64_t i) {
      std::vector<int> piv(std::max<int64_t>(n, 1));
      info[i] = Lapack<T>::gesv(dim32(n), dim32(k), a.data<T>() + i * n * n, ld32(n), piv.data(),
                                b.data<T>() + i * n * k, ld32(n));
    });
  });
}

void cpu_det(const Tensor& a, const Tensor& sign, const Tensor& logabs, const Tensor& det,
             Info& info) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = typename Lapack<T>::R;
    const int64_t n = a.dim(1);
    for_batches(a.dim(0), n, [&](int64_t b) {
      T* p = a.data<T>() + b * n * n;
      std::vector<int> piv(std::max<int64_t>(n, 1));
      const int r = n == 0 ? 0 : Lapack<T>::getrf(dim32(n), p, ld32(n), piv.data());
      info[b] = r < 0 ? r : 0;   // singular (r > 0) is a zero determinant, not an error
      T s(1), prod(1), perm(1);  // perm: the sign of getrf's row permutation
      R la(0);
      for (int64_t i = 0; i < n; ++i) {
        const T d = p[i + i * n];
        prod *= d;
        if (piv[i] != i + 1) {
          s = -s;
          perm = -perm;
        }
        const R ad = std::abs(d);
        s = ad == R(0) ? T(0) : s * (d / ad);
        la += std::log(ad);
      }
      if (s == T(0)) la = -INFINITY;
      sign.data<T>()[b] = s;
      logabs.data<R>()[b] = la;
      det.data<T>()[b] = perm * prod;
    });
  });
}

void cpu_eigh(const Tensor& a, const Tensor& w, bool vectors, Info& info) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = typename Lapack<T>::R;
    const int64_t n = a.dim(1);
    for_batches(a.dim(0), n, [&](int64_t b) {
      info[b] = Lapack<T>::heevd(vectors ? 'V' : 'N', dim32(n), a.data<T>() + b * n * n, ld32(n),
                                 w.data<R>() + b * n);
    });
  });
}

void cpu_qr(const Tensor& a, const Tensor& q, const Tensor& r, Info& info) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = a.dim(1), m = a.dim(2), kq = q.dim(1), k = std::min(m, n);
    const int64_t wcols = std::max(n, kq);
    for_batches(a.dim(0), std::max(m, n), [&](int64_t b) {
      // Work in an m x max(n, kq) buffer: geqrf on its first n columns, R from its upper
      // triangle, then Q (kq columns) generated in place by orgqr/ungqr.
      std::vector<T> w(std::max<int64_t>(m * wcols, 1)), tau(std::max<int64_t>(k, 1));
      std::copy(a.data<T>() + b * m * n, a.data<T>() + (b + 1) * m * n, w.data());
      int res =
          m > 0 && n > 0 ? Lapack<T>::geqrf(dim32(m), dim32(n), w.data(), ld32(m), tau.data()) : 0;
      T* rp = r.data<T>() + b * kq * n;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < kq; ++i) rp[i + j * kq] = i <= j && i < m ? w[i + j * m] : T(0);
      if (res == 0 && m > 0 && kq > 0)
        res = Lapack<T>::ungqr(dim32(m), dim32(kq), dim32(k), w.data(), ld32(m), tau.data());
      std::copy(w.data(), w.data() + m * kq, q.data<T>() + b * m * kq);
      info[b] = res;
    });
  });
}

void cpu_svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vt, Info& info) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = typename Lapack<T>::R;
    const int64_t n = a.dim(1), m = a.dim(2), k = s.dim(1);
    const bool vec = u.defined();
    const int64_t ucols = vec ? u.dim(1) : 0, vtrows = vec ? vt.dim(2) : 0;
    const char job = !vec ? 'N' : (ucols == m && vtrows == n && k < std::max(m, n)) ? 'A' : 'S';
    for_batches(a.dim(0), std::max(m, n), [&](int64_t b) {
      if (k == 0) {  // LAPACK rejects empty matrices; full U/V are then identities
        if (vec) {
          T* up = u.data<T>() + b * m * ucols;
          T* vp = vt.data<T>() + b * n * vtrows;
          for (int64_t i = 0; i < m * ucols; ++i) up[i] = (i % (m + 1) == 0) ? T(1) : T(0);
          for (int64_t i = 0; i < n * vtrows; ++i) vp[i] = (i % (n + 1) == 0) ? T(1) : T(0);
        }
        info[b] = 0;
        return;
      }
      T* p = a.data<T>() + b * m * n;
      int r = Lapack<T>::gesdd(job, dim32(m), dim32(n), p, ld32(m), s.data<R>() + b * k,
                               vec ? u.data<T>() + b * m * ucols : nullptr, ld32(m),
                               vec ? vt.data<T>() + b * vtrows * n : nullptr, ld32(vtrows));
      // Recent LAPACKs refuse NaN/inf input as an illegal argument: report it as NumPy does,
      // "did not converge", rather than as an internal error.
      if (r < 0 &&
          !std::all_of(p, p + m * n, [](const T& v) { return std::isfinite(std::abs(v)); }))
        r = 1;
      info[b] = r;
    });
  });
}

void cpu_lu_factor(const Tensor& a, const Tensor& piv, Info& info) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = a.dim(1), m = a.dim(2), k = piv.dim(1);
    for_batches(a.dim(0), std::max(m, n), [&](int64_t b) {
      int* p = piv.data<int>() + b * k;
      info[b] =
          k == 0 ? 0 : Lapack<T>::getrf_mn(dim32(m), dim32(n), a.data<T>() + b * m * n, ld32(m), p);
    });
  });
}

void cpu_lu_solve(const Tensor& lu, const Tensor& piv, const Tensor& b, char trans) {
  visit_lapack(lu.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = lu.dim(1), k = b.dim(1);
    const int* pv = piv.data<int>();  // getrs swaps rows by them: out of range is out of bounds
    for (int64_t i = 0; i < piv.numel(); ++i)
      TS_CHECK(pv[i] >= 1 && pv[i] <= n, RuntimeError, "linalg.lu_solve: pivots must be between 1 ",
               "and ", n, ", got ", pv[i], "; hint: pass the pivots of linalg.lu_factor");
    for_batches(lu.dim(0), n, [&](int64_t i) {
      const int r = Lapack<T>::getrs(trans, dim32(n), dim32(k), lu.data<T>() + i * n * n, ld32(n),
                                     piv.data<int>() + i * n, b.data<T>() + i * n * k, ld32(n));
      TS_CHECK(r == 0, RuntimeError, "lu_solve: LAPACK getrs rejected argument ", -r,
               " (an internal error; please report it)");
    });
  });
}

void cpu_trsm(const Tensor& a, const Tensor& b, bool upper, bool unit) {
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = a.dim(1), k = b.dim(1);
    for_batches(a.dim(0), n, [&](int64_t i) {
      trsm<T>(upper, unit, n, k, a.data<T>() + i * n * n, std::max<int64_t>(n, 1),
              b.data<T>() + i * n * k, std::max<int64_t>(n, 1));
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(lu_factor_stub, CPU, &cpu_lu_factor);
TS_REGISTER_KERNEL(lu_solve_stub, CPU, &cpu_lu_solve);
TS_REGISTER_KERNEL(trsm_stub, CPU, &cpu_trsm);
TS_REGISTER_KERNEL(lapack_pack_stub, CPU, &cpu_pack);
TS_REGISTER_KERNEL(cholesky_stub, CPU, &cpu_cholesky);
TS_REGISTER_KERNEL(solve_stub, CPU, &cpu_solve);
TS_REGISTER_KERNEL(det_stub, CPU, &cpu_det);
TS_REGISTER_KERNEL(eigh_stub, CPU, &cpu_eigh);
TS_REGISTER_KERNEL(qr_stub, CPU, &cpu_qr);
TS_REGISTER_KERNEL(svd_stub, CPU, &cpu_svd);

}  // namespace ts
