// PyTorch's matrix products over matmul (ops/linalg.h): mm, bmm, mv, dot, vdot, inner, outer,
// kron, cdist, chain_matmul and the scaled sums addmm, addmv, addr, baddbmm, addbmm. Each is
// composed of differentiable ops (matmul, multiply, add, reshape, vector_norm), so its gradient
// (and double backward) comes from their formulas (the in-place methods' from one node each,
// below); autocast applies in matmul.
#pragma once
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ts {

// Like torch, mm/bmm/mv/dot check ranks strictly (no broadcasting) and want both operands in
// one dtype (TypeError otherwise); shape errors are ValueErrors naming the op.
Tensor mm(const Tensor& a, const Tensor& b);    // (n, m) @ (m, p)
Tensor bmm(const Tensor& a, const Tensor& b);   // (b, n, m) @ (b, m, p)
Tensor mv(const Tensor& a, const Tensor& v);    // (n, m) @ (m,)
Tensor dot(const Tensor& a, const Tensor& b);   // (n,) . (n,) -> 0-d
Tensor vdot(const Tensor& a, const Tensor& b);  // dot(conj(a), b)
// Sum over the last dims (a 0-d operand multiplies): a.shape[:-1] + b.shape[:-1].
Tensor inner(const Tensor& a, const Tensor& b);
// (n,) x (m,) -> (n, m); `op` names the call (outer or ger).
Tensor outer(const Tensor& a, const Tensor& b, const char* op = "outer");
// The Kronecker product (ranks padded with leading 1s to match).
Tensor kron(const Tensor& a, const Tensor& b);
// Pairwise p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M) -> (..., P, R).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p);
// The product of 2-D matrices, left to right (torch.chain_matmul).
Tensor chain_matmul(const std::vector<Tensor>& ms);

// beta * input + alpha * product, input broadcasting to the product's shape (ValueError
// otherwise). beta == 0 ignores input's values (NaN included; its gradient is zero), as torch.
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha);
Tensor addmv(const Tensor& input, const Tensor& m, const Tensor& v, const Scalar& beta,
             const Scalar& alpha);
Tensor addr(const Tensor& input, const Tensor& v1, const Tensor& v2, const Scalar& beta,
            const Scalar& alpha);
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha);
// beta * input + alpha * sum_b (b1[b] @ b2[b]), as one (n, B*m) @ (B*m, p) product (integer
// dtypes stay as they are).
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha);

// The five scaled sums by kind, `op` naming the call in errors: scaled_op is the function,
// scaled_op_ the in-place method (x.addmm_(...)): self = beta * self + alpha * product with
// PyTorch's in-place rules; with beta == 1 the product is added straight into self (Note
// [In-place without a temporary]), otherwise the result is computed and copied in. While
// autograd records, that write records nothing and the method records one node of its own, as
// PyTorch's (AddmmBackward0, ..., AddbmmBackward0: autograd/record_inplace.h).
enum class ScaledOp : uint8_t { Addmm, Addmv, Addr, Baddbmm, Addbmm };
Tensor scaled_op(ScaledOp k, const Tensor& input, const Tensor& a, const Tensor& b,
                 const Scalar& beta, const Scalar& alpha, const char* op);
void scaled_op_(ScaledOp k, const Tensor& self, const Tensor& a, const Tensor& b,
                const Scalar& beta, const Scalar& alpha, const char* op);

}  // namespace ts
