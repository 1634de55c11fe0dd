#include "ops/linalg_ext.h"

#include <algorithm>

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(PackKernel, lapack_pack_stub, "linalg");
TS_DEFINE_STUB(CholeskyKernel, cholesky_stub, "cholesky");
TS_DEFINE_STUB(SolveKernel, solve_stub, "solve");
TS_DEFINE_STUB(DetKernel, det_stub, "det");
TS_DEFINE_STUB(EighKernel, eigh_stub, "eigh");
TS_DEFINE_STUB(QrKernel, qr_stub, "qr");
TS_DEFINE_STUB(SvdKernel, svd_stub, "svd");

namespace linalg_detail {

// The dtype LAPACK computes in: the standard requires floating inputs (TypeError otherwise,
// as PyTorch does); float16/bfloat16 go through float32.
DType compute_dtype(DType d, const char* op) {
  TS_CHECK(is_inexact(d), TypeError, op, ": expected a floating-point or complex input, got ",
           dtype_name(d), "; hint: cast first, e.g. x.astype(ts.float64)");
  return (d == DType::Float16 || d == DType::BFloat16) ? DType::Float32 : d;
}

void check_matrix(const Tensor& x, const char* op, bool square) {
  TS_CHECK(x.ndim() >= 2, ValueError, op,
           ": expected a (stack of) matrices with at least 2 dims, got shape ",
           shape_str(x.shape()));
  TS_CHECK(!square || x.dim(x.ndim() - 1) == x.dim(x.ndim() - 2), ValueError, op,
           ": expected square matrices, got shape ", shape_str(x.shape()));
}

Shape batch_of(const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }

Shape concat_shape(Shape s, std::initializer_list<int64_t> tail) {
  for (int64_t v : tail) s.push_back(v);
  return s;
}

// x (batch..., m, n) -> a fresh (B, n, m) contiguous buffer of column-major matrices.
Tensor to_lapack(const Tensor& x, DType dt) {
  const int64_t m = x.dim(x.ndim() - 2), n = x.dim(x.ndim() - 1);
  Tensor buf = Tensor::empty(Shape{numel_of(batch_of(x)), n, m}, dt, x.device());
  if (buf.numel() > 0) lapack_pack_stub.get(x.device())(astype(x, dt, false), buf);
  return buf;
}

// A (B, cols, rows) buffer of column-major matrices as (batch..., rows, cols).
Tensor from_lapack(const Tensor& buf, const Shape& batch, int64_t rows, int64_t cols) {
  return matrix_transpose(reshape(buf, concat_shape(batch, {cols, rows})));
}

void raise_on_info(const Info& info, const char* op, const char* what) {
  for (size_t b = 0; b < info.size(); ++b) {
    if (info[b] > 0)
      throw LinAlgError(str(op, ": ", what, info.size() > 1 ? str(" (batch entry ", b, ")") : ""));
    TS_CHECK(info[b] == 0, RuntimeError, op, ": LAPACK rejected argument ", -info[b],
             " (an internal error; please report it)");
  }
}

// Casts results computed in float32 back to the float16/bfloat16 input dtype.
Tensor out_as(const Tensor& t, DType in) {
  if (in != DType::Float16 && in != DType::BFloat16) return t;
  return astype(t, t.dtype() == DType::Float32 ? in : t.dtype(), false);
}

// Note [Host linear algebra]: a backend without LAPACK kernels runs the factorizations on the
// host: the inputs are copied over, the CPU's LAPACK computes, and the results are copied back
// to the input's device (a synchronization). CUDA registers all seven kernels
// (cuda/linalg_cusolver.cpp: cuSOLVER potrf, getrf/getrs, syevd/heevd, geqrf + orgqr/ungqr,
// gesvd; for batches of small matrices potrfBatched, syevjBatched and cuBLAS's batched LU),
// so every function here and the composites built on them (pinv, matrix_rank, norms...) stay
// on the device; only `info` comes back to the host, to raise the CPU path's errors.
bool host_lapack(const Tensor& x) {
  return !x.device().is_cpu() && !lapack_pack_stub.table[static_cast<int>(x.device().type)];
}
Tensor host(const Tensor& t) { return to_device(t, Device()); }
Tensor back(const Tensor& t, Device d) { return t.defined() ? to_device(t, d) : t; }

}  // namespace linalg_detail
using namespace linalg_detail;

Tensor cholesky_plain(const Tensor& x, bool upper) {
  if (host_lapack(x)) return back(cholesky_plain(host(x), upper), x.device());
  check_matrix(x, "cholesky", true);
  const DType dt = compute_dtype(x.dtype(), "cholesky");
  const int64_t n = x.dim(x.ndim() - 1);
  Tensor a = to_lapack(x, dt);
  Info info(a.dim(0));
  if (a.numel() > 0) cholesky_stub.get(x.device())(a, upper, info);
  raise_on_info(info, "cholesky", "the matrix is not positive-definite");
  return out_as(from_lapack(a, batch_of(x), n, n), x.dtype());
}

namespace {
// LU-based (sign, logabsdet, det) of x.
std::tuple<Tensor, Tensor, Tensor> lu_det(const Tensor& x, const char* op) {
  if (host_lapack(x)) {
    auto [sign, logabs, d] = lu_det(host(x), op);
    return {back(sign, x.device()), back(logabs, x.device()), back(d, x.device())};
  }
  check_matrix(x, op, true);
  const DType dt = compute_dtype(x.dtype(), op);
  Tensor a = to_lapack(x, dt);
  const Shape batch = batch_of(x);
  Tensor sign = Tensor::empty(batch, dt, x.device()), det = Tensor::empty(batch, dt, x.device());
  Tensor logabs = Tensor::empty(batch, to_real(dt), x.device());
  Info info(a.dim(0));
  if (a.dim(0) > 0)
    det_stub.get(x.device())(a, reshape(sign, Shape{-1}), reshape(logabs, Shape{-1}),
                             reshape(det, Shape{-1}), info);
  raise_on_info(info, op, "LU factorization failed");
  return {out_as(sign, x.dtype()), out_as(logabs, x.dtype()), out_as(det, x.dtype())};
}
}  // namespace

Tensor det_plain(const Tensor& x) { return std::get<2>(lu_det(x, "det")); }

std::pair<Tensor, Tensor> slogdet_plain(const Tensor& x) {
  auto [sign, logabs, d] = lu_det(x, "slogdet");
  return {sign, logabs};
}

namespace {
std::pair<Tensor, Tensor> eigh_impl(const Tensor& x, bool vectors, const char* op) {
  if (host_lapack(x)) {
    auto [w, v] = eigh_impl(host(x), vectors, op);
    return {back(w, x.device()), back(v, x.device())};
  }
  check_matrix(x, op, true);
  const DType dt = compute_dtype(x.dtype(), op);
  const int64_t n = x.dim(x.ndim() - 1);
  Tensor a = to_lapack(x, dt);
  Tensor w = Tensor::empty(Shape{a.dim(0), n}, to_real(dt), x.device());
  Info info(a.dim(0));
  if (a.numel() > 0) eigh_stub.get(x.device())(a, w, vectors, info);
  raise_on_info(info, op, "the eigenvalue algorithm did not converge");
  Tensor vals = out_as(reshape(w, concat_shape(batch_of(x), {n})), x.dtype());
  return {vals, vectors ? out_as(from_lapack(a, batch_of(x), n, n), x.dtype()) : Tensor()};
}
}  // namespace

std::pair<Tensor, Tensor> eigh_plain(const Tensor& x) { return eigh_impl(x, true, "eigh"); }
Tensor eigvalsh_plain(const Tensor& x) { return eigh_impl(x, false, "eigvalsh").first; }

namespace {
// Solves a @ out = b for (batch..., n, n) a and (batch..., n, k) b (same batch shape).
Tensor solve_matrices(const Tensor& a, const Tensor& b, DType dt, const char* op) {
  const int64_t n = a.dim(a.ndim() - 1), k = b.dim(b.ndim() - 1);
  Tensor la = to_lapack(a, dt), lb = to_lapack(b, dt);
  Info info(la.dim(0));
  if (la.numel() > 0 && lb.numel() > 0) solve_stub.get(a.device())(la, lb, info);
  raise_on_info(info, op, "the matrix is singular");
  return from_lapack(lb, batch_of(b), n, k);
}
}  // namespace

Tensor inv_plain(const Tensor& x) {
  if (host_lapack(x)) return back(inv_plain(host(x)), x.device());
  check_matrix(x, "inv", true);
  const DType dt = compute_dtype(x.dtype(), "inv");
  const int64_t n = x.dim(x.ndim() - 1);
  Tensor id = broadcast_to(eye(n, n, 0, dt, x.device()), x.shape());
  return out_as(solve_matrices(x, id, dt, "inv"), x.dtype());
}

Tensor solve_plain(const Tensor& x1, const Tensor& x2) {
  check_same_device("solve", x1, x2);
  if (host_lapack(x1)) return back(solve_plain(host(x1), host(x2)), x1.device());
  check_matrix(x1, "solve", true);
  const DType in = promote_types(x1.dtype(), x2.dtype());
  const DType dt = compute_dtype(in, "solve");
  const int64_t n = x1.dim(x1.ndim() - 1);
  TS_CHECK(x2.ndim() >= 1, ValueError, "solve: x2 must have at least 1 dimension");
  const bool vec = x2.ndim() == 1;  // the 2024.12 standard: a vector only when 1-D
  Tensor b = vec ? expand_dims(x2, -1) : x2;
  TS_CHECK(b.dim(b.ndim() - 2) == n, ValueError, "solve: shapes ", shape_str(x1.shape()), " and ",
           shape_str(x2.shape()), " are not compatible: x2 needs ", n, " rows",
           vec ? "" : " (x2 is a stack of matrices unless it is 1-D)");
  const Shape batch = vec ? batch_of(x1) : broadcast_shapes(batch_of(x1), batch_of(b), "solve");
  Tensor a = broadcast_to(x1, concat_shape(batch, {n, n}));
  b = broadcast_to(b, concat_shape(batch, {n, b.dim(b.ndim() - 1)}));
  Tensor out = solve_matrices(a, b, dt, "solve");
  return out_as(vec ? squeeze(out, Shape{-1}) : out, in);
}

std::pair<Tensor, Tensor> qr_plain(const Tensor& x, bool complete) {
  if (host_lapack(x)) {
    auto [q, r] = qr_plain(host(x), complete);
    return {back(q, x.device()), back(r, x.device())};
  }
  check_matrix(x, "qr", false);
  const DType dt = compute_dtype(x.dtype(), "qr");
  const int64_t m = x.dim(x.ndim() - 2), n = x.dim(x.ndim() - 1);
  const int64_t kq = complete ? m : std::min(m, n);
  Tensor a = to_lapack(x, dt);
  Tensor q = Tensor::empty(Shape{a.dim(0), kq, m}, dt, x.device());
  Tensor r = Tensor::empty(Shape{a.dim(0), n, kq}, dt, x.device());
  Info info(a.dim(0));
  if (a.dim(0) > 0) qr_stub.get(x.device())(a, q, r, info);
  raise_on_info(info, "qr", "the factorization failed");
  const Shape batch = batch_of(x);
  return {out_as(from_lapack(q, batch, m, kq), x.dtype()),
          out_as(from_lapack(r, batch, kq, n), x.dtype())};
}

namespace {
std::tuple<Tensor, Tensor, Tensor> svd_impl(const Tensor& x, bool vectors, bool full,
                                            const char* op) {
  if (host_lapack(x)) {
    auto [u, sv, vt] = svd_impl(host(x), vectors, full, op);
    return {back(u, x.device()), back(sv, x.device()), back(vt, x.device())};
  }
  check_matrix(x, op, false);
  const DType dt = compute_dtype(x.dtype(), op);
  const int64_t m = x.dim(x.ndim() - 2), n = x.dim(x.ndim() - 1), k = std::min(m, n);
  Tensor a = to_lapack(x, dt);
  const int64_t B = a.dim(0), ucols = full ? m : k, vtrows = full ? n : k;
  Tensor s = Tensor::empty(Shape{B, k}, to_real(dt), x.device()), u, vt;
  if (vectors) {
    u = Tensor::empty(Shape{B, ucols, m}, dt, x.device());
    vt = Tensor::empty(Shape{B, n, vtrows}, dt, x.device());
  }
  Info info(B);
  if (B > 0) svd_stub.get(x.device())(a, s, u, vt, info);
  raise_on_info(info, op, "SVD did not converge (is the input finite?)");
  const Shape batch = batch_of(x);
  Tensor sv = out_as(reshape(s, concat_shape(batch, {k})), x.dtype());
  if (!vectors) return {Tensor(), sv, Tensor()};
  return {out_as(from_lapack(u, batch, m, ucols), x.dtype()), sv,
          out_as(from_lapack(vt, batch, vtrows, n), x.dtype())};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd_plain(const Tensor& x, bool full) {
  return svd_impl(x, true, full, "svd");
}
Tensor svdvals_plain(const Tensor& x) { return std::get<1>(svd_impl(x, false, false, "svdvals")); }

Tensor factorization_info(const Tensor& x, bool cholesky, bool upper) {
  if (host_lapack(x)) return back(factorization_info(host(x), cholesky, upper), x.device());
  const char* op = cholesky ? "cholesky_ex" : "inv_ex";
  check_matrix(x, op, true);
  const DType dt = compute_dtype(x.dtype(), op);
  const int64_t n = x.dim(x.ndim() - 1);
  Tensor a = to_lapack(x, dt);
  Info info(a.dim(0));
  if (a.numel() > 0) {
    if (cholesky) {
      cholesky_stub.get(x.device())(a, upper, info);
    } else {  // getrf's info through the solve kernel, with one (zero) right-hand side
      Tensor b = Tensor::empty(Shape{a.dim(0), 1, n}, dt, x.device());
      fill_(b, Scalar::from_int(0));
      solve_stub.get(x.device())(a, b, info);
    }
  }
  Tensor out = Tensor::empty(batch_of(x), DType::Int32, Device());
  int32_t* p = out.data<int32_t>();
  for (size_t b = 0; b < info.size(); ++b) {
    TS_CHECK(info[b] >= 0, RuntimeError, op, ": LAPACK rejected argument ", -info[b],
             " (an internal error; please report it)");
    p[b] = info[b];
  }
  return back(out, x.device());
}

// ---- autograd: each op computes without recording its internals (unrecorded), then records
// one node.
void linalg_detail::fresh(std::initializer_list<const Tensor*> ts_) {
  for (const Tensor* t : ts_)
    if (t->defined()) t->impl()->is_view = false;  // results, not views of the inputs
}

Tensor cholesky(const Tensor& x, bool upper) {
  if (!autograd::needs_grad({&x})) return cholesky_plain(x, upper);
  Tensor out = unrecorded([&] { return cholesky_plain(x, upper); });
  fresh({&out});
  autograd::record_linalg(autograd::LinalgOp::Cholesky, {x}, {out}, upper ? 1 : 0);
  return out;
}
Tensor det(const Tensor& x) {
  if (!autograd::needs_grad({&x})) return det_plain(x);
  Tensor out = unrecorded([&] { return det_plain(x); });
  fresh({&out});
  autograd::record_linalg(autograd::LinalgOp::Det, {x}, {out});
  return out;
}
std::pair<Tensor, Tensor> slogdet(const Tensor& x) {
  if (!autograd::needs_grad({&x})) return slogdet_plain(x);
  auto r = unrecorded([&] { return slogdet_plain(x); });
  fresh({&r.first, &r.second});
  autograd::record_linalg(autograd::LinalgOp::Slogdet, {x}, {r.first, r.second});
  return r;
}
std::pair<Tensor, Tensor> eigh(const Tensor& x) {
  if (!autograd::needs_grad({&x})) return eigh_plain(x);
  auto r = unrecorded([&] { return eigh_plain(x); });
  fresh({&r.first, &r.second});
  autograd::record_linalg(autograd::LinalgOp::Eigh, {x}, {r.first, r.second});
  return r;
}
Tensor eigvalsh(const Tensor& x) {
  if (!autograd::needs_grad({&x})) return eigvalsh_plain(x);
  auto r = unrecorded([&] { return eigh_plain(x); });  // the vectors are needed for backward
  fresh({&r.first, &r.second});
  autograd::record_linalg(autograd::LinalgOp::Eigh, {x}, {r.first, r.second});
  return r.first;
}
Tensor inv(const Tensor& x) {
  if (!autograd::needs_grad({&x})) return inv_plain(x);
  Tensor out = unrecorded([&] { return inv_plain(x); });
  fresh({&out});
  autograd::record_linalg(autograd::LinalgOp::Inv, {x}, {out});
  return out;
}
Tensor solve(const Tensor& x1, const Tensor& x2) {
  if (!autograd::needs_grad({&x1, &x2})) return solve_plain(x1, x2);
  Tensor out = unrecorded([&] { return solve_plain(x1, x2); });
  fresh({&out});
  autograd::record_linalg(autograd::LinalgOp::Solve, {x1, x2}, {out}, x2.ndim() == 1 ? 1 : 0);
  return out;
}
std::pair<Tensor, Tensor> qr(const Tensor& x, bool complete) {
  if (!autograd::needs_grad({&x})) return qr_plain(x, complete);
  auto r = unrecorded([&] { return qr_plain(x, complete); });
  fresh({&r.first, &r.second});
  autograd::record_linalg(autograd::LinalgOp::Qr, {x}, {r.first, r.second}, complete ? 1 : 0);
  return r;
}
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& x, bool full) {
  if (!autograd::needs_grad({&x})) return svd_plain(x, full);
  auto r = unrecorded([&] { return svd_plain(x, full); });
  fresh({&std::get<0>(r), &std::get<1>(r), &std::get<2>(r)});
  autograd::record_linalg(autograd::LinalgOp::Svd, {x},
                          {std::get<0>(r), std::get<1>(r), std::get<2>(r)}, full ? 1 : 0);
  return r;
}
Tensor svdvals(const Tensor& x) {
  if (!autograd::needs_grad({&x})) return svdvals_plain(x);
  Tensor out = unrecorded([&] { return svdvals_plain(x); });
  fresh({&out});
  autograd::record_linalg(autograd::LinalgOp::Svdvals, {x}, {out});
  return out;
}

}  // namespace ts
