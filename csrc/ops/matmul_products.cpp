#include "ops/matmul_products.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "autograd/record_inplace.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/linalg_composite.h"
#include "ops/nn/operand_dtype.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

void check_rank(const char* op, const Tensor& x, int64_t nd, const char* name) {
  TS_CHECK(x.ndim() == nd, ValueError, op, ": ", name, " must be a ", nd, "D tensor, got ",
           x.ndim(), "D (shape ", shape_str(x.shape()), "); hint: torch.", op,
           " does not broadcast, use matmul for other ranks");
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  TS_CHECK(a.dtype() == b.dtype(), TypeError, op,
           ": expected both operands to have the same dtype, but got ", dtype_name(a.dtype()),
           " != ", dtype_name(b.dtype()), "; hint: convert one, e.g. b.to(a.dtype)");
}

bool scalar_is(const Scalar& s, double v) {
  switch (s.kind) {
    case ScalarKind::Bool:
    case ScalarKind::Int:
      return !s.is_u64 && static_cast<double>(s.i) == v;
    case ScalarKind::Float:
      return s.d == v;
    case ScalarKind::Complex:
      return s.c == std::complex<double>(v, 0);
  }
  return false;
}

// beta * input + alpha * prod with input broadcasting to prod's shape (Note in the header).
void check_scaled_input(const char* op, const Tensor& input, const Tensor& prod) {
  const Shape& ps = prod.shape();
  TS_CHECK(input.ndim() <= prod.ndim() && broadcast_shapes(input.shape(), ps, op) == ps, ValueError,
           op, ": input of shape ", shape_str(input.shape()),
           " does not broadcast to the product's shape ", shape_str(ps),
           "; hint: give input that shape or one that broadcasts to it");
}

Tensor scaled_sum(const char* op, const Tensor& input, const Scalar& beta, const Scalar& alpha,
                  const Tensor& prod) {
  check_scaled_input(op, input, prod);
  const Tensor p = scalar_is(alpha, 1) ? prod : multiply(wrap_scalar(alpha), prod);
  if (scalar_is(beta, 0)) {
    if (!autograd::needs_grad({&input})) return p;
    // input's values (NaN included) are ignored; its gradient is zero
    return add(
        p, where(wrap_scalar(Scalar::from_bool(false)), input, wrap_scalar(Scalar::from_int(0))));
  }
  return add(scalar_is(beta, 1) ? input : multiply(wrap_scalar(beta), input), p);
}

void check_mm(const char* op, const Tensor& a, const Tensor& b) {
  check_rank(op, a, 2, "mat1");
  check_rank(op, b, 2, "mat2");
  check_same_dtype(op, a, b);
  TS_CHECK(a.dim(1) == b.dim(0), ValueError, op, ": mat1 and mat2 shapes cannot be multiplied (",
           a.dim(0), "x", a.dim(1), " and ", b.dim(0), "x", b.dim(1),
           "); hint: the columns of mat1 must equal the rows of mat2");
}

void check_mv(const char* op, const Tensor& a, const Tensor& v) {
  check_rank(op, a, 2, "mat");
  check_rank(op, v, 1, "vec");
  check_same_dtype(op, a, v);
  TS_CHECK(a.dim(1) == v.dim(0), ValueError, op, ": size mismatch, got input (", a.dim(0), "x",
           a.dim(1), "), vec (", v.dim(0), ")");
}

void check_dot(const char* op, const Tensor& a, const Tensor& b) {
  check_rank(op, a, 1, "self");
  check_rank(op, b, 1, "other");
  check_same_dtype(op, a, b);
  TS_CHECK(a.dim(0) == b.dim(0), ValueError, op, ": inconsistent tensor size, expected tensor [",
           a.dim(0), "] and src [", b.dim(0), "] to have the same number of elements");
}

void check_bmm(const char* op, const Tensor& a, const Tensor& b) {
  check_rank(op, a, 3, "batch1");
  check_rank(op, b, 3, "batch2");
  check_same_dtype(op, a, b);
  TS_CHECK(a.dim(0) == b.dim(0) && a.dim(2) == b.dim(1), ValueError, op, ": batch1 ",
           shape_str(a.shape()), " and batch2 ", shape_str(b.shape()),
           " must agree in batch size and inner dimension; hint: ", op,
           " does not broadcast, use matmul");
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  check_mm("mm", a, b);
  return matmul(a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check_bmm("bmm", a, b);
  return matmul(a, b);
}

Tensor mv(const Tensor& a, const Tensor& v) {
  check_mv("mv", a, v);
  return matmul(a, v);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  check_dot("dot", a, b);
  return matmul(a, b);
}

Tensor vdot(const Tensor& a, const Tensor& b) {
  check_dot("vdot", a, b);
  return matmul(conj(a), b);
}

Tensor inner(const Tensor& a, const Tensor& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return multiply(a, b);
  TS_CHECK(a.dim(a.ndim() - 1) == b.dim(b.ndim() - 1), ValueError,
           "inner: input and other last dims must match, got ", a.dim(a.ndim() - 1), " and ",
           b.dim(b.ndim() - 1), " (shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()),
           ")");
  return tensordot(a, b, Shape{a.ndim() - 1}, Shape{b.ndim() - 1});
}

Tensor outer(const Tensor& a, const Tensor& b, const char* op) {
  check_rank(op, a, 1, "self");
  check_rank(op, b, 1, "vec2");
  return multiply(reshape(a, Shape{-1, 1}), b);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  const int64_t nd = std::max(a.ndim(), b.ndim());
  // a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...], then each (i_k, j_k) pair merged
  Shape ash, bsh, out;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t m = d < nd - a.ndim() ? 1 : a.dim(d - (nd - a.ndim()));
    const int64_t n = d < nd - b.ndim() ? 1 : b.dim(d - (nd - b.ndim()));
    ash.push_back(m);
    ash.push_back(1);
    bsh.push_back(1);
    bsh.push_back(n);
    out.push_back(m * n);
  }
  return reshape(multiply(reshape(a, ash), reshape(b, bsh)), out);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  TS_CHECK(x1.ndim() >= 2 && x2.ndim() >= 2, ValueError,
           "cdist: only supports at least 2D tensors, X1 got: ", x1.ndim(),
           "D, X2 got: ", x2.ndim(), "D");
  TS_CHECK(x1.dim(x1.ndim() - 1) == x2.dim(x2.ndim() - 1), ValueError,
           "cdist: X1 and X2 must have the same number of columns. X1: ", x1.dim(x1.ndim() - 1),
           " X2: ", x2.dim(x2.ndim() - 1));
  TS_CHECK(p >= 0, ValueError, "cdist: only supports non-negative p values, got ", p);
  TS_CHECK(is_floating(x1.dtype()), TypeError,
           "cdist: only supports floating-point dtypes, X1 got: ", dtype_name(x1.dtype()),
           "; cast it with .to(dtype)");
  nn::check_same_dtype("cdist", "X1", x1, {{"X2", &x2}});
  const Tensor diff = subtract(expand_dims(x1, -2), expand_dims(x2, -3));
  return vector_norm(diff, Shape{-1}, false, Scalar::from_double(p));
}

Tensor chain_matmul(const std::vector<Tensor>& ms) {
  TS_CHECK(!ms.empty(), ValueError, "chain_matmul: expected one or more matrices");
  for (size_t i = 0; i < ms.size(); ++i)
    TS_CHECK(ms[i].ndim() == 2, ValueError, "chain_matmul: matrix ", i,
             " must be a 2-D tensor, got ", ms[i].ndim(), "-D tensor");
  Tensor out = ms[0];
  for (size_t i = 1; i < ms.size(); ++i) out = mm(out, ms[i]);
  return out;
}

namespace {

// The product of a scaled sum, its operands checked first.
Tensor scaled_product(ScaledOp k, const Tensor& a, const Tensor& b, const char* op) {
  switch (k) {
    case ScaledOp::Addmm:
      check_mm(op, a, b);
      return matmul(a, b);
    case ScaledOp::Addmv:
      check_mv(op, a, b);
      return matmul(a, b);
    case ScaledOp::Addr:
      return outer(a, b, op);
    case ScaledOp::Baddbmm:
      check_bmm(op, a, b);
      return matmul(a, b);
    case ScaledOp::Addbmm: {
      check_bmm(op, a, b);  // sum_b a[b] @ b[b] as one product:
      const int64_t nb = a.dim(0), n = a.dim(1), m = a.dim(2), p = b.dim(2);
      const Tensor lhs = reshape(permute_dims(a, Shape{1, 0, 2}), Shape{n, nb * m});
      return matmul(lhs, reshape(b, Shape{nb * m, p}));
    }
  }
  throw RuntimeError(str(op, ": unknown product"));
}

}  // namespace

Tensor scaled_op(ScaledOp k, const Tensor& input, const Tensor& a, const Tensor& b,
                 const Scalar& beta, const Scalar& alpha, const char* op) {
  return scaled_sum(op, input, beta, alpha, scaled_product(k, a, b, op));
}

void scaled_op_(ScaledOp k, const Tensor& self, const Tensor& a, const Tensor& b,
                const Scalar& beta, const Scalar& alpha, const char* op) {
  using autograd::InplaceGrad;
  static constexpr InplaceGrad kGrad[] = {InplaceGrad::Addmm, InplaceGrad::Addmv,
                                          InplaceGrad::Addr, InplaceGrad::Baddbmm,
                                          InplaceGrad::Addbmm};
  autograd::check_inplace(self, op);
  autograd::record_inplace(kGrad[static_cast<int>(k)], self, a, b, {beta, alpha}, op, [&] {
    const Tensor prod = scaled_product(k, a, b, op);
    if (!scalar_is(beta, 1)) {
      assign_inplace_result(op, self, scaled_sum(op, self, beta, alpha, prod));
      return;
    }
    check_scaled_input(op, self, prod);
    binary_op_(kAdd, self, scalar_is(alpha, 1) ? prod : multiply(wrap_scalar(alpha), prod), op);
  });
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha) {
  return scaled_op(ScaledOp::Addmm, input, m1, m2, beta, alpha, "addmm");
}

Tensor addmv(const Tensor& input, const Tensor& m, const Tensor& v, const Scalar& beta,
             const Scalar& alpha) {
  return scaled_op(ScaledOp::Addmv, input, m, v, beta, alpha, "addmv");
}

Tensor addr(const Tensor& input, const Tensor& v1, const Tensor& v2, const Scalar& beta,
            const Scalar& alpha) {
  return scaled_op(ScaledOp::Addr, input, v1, v2, beta, alpha, "addr");
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha) {
  return scaled_op(ScaledOp::Baddbmm, input, b1, b2, beta, alpha, "baddbmm");
}

Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha) {
  return scaled_op(ScaledOp::Addbmm, input, b1, b2, beta, alpha, "addbmm");
}

}  // namespace ts
