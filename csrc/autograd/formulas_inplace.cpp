// Backward formulas of the in-place ops that record one node (record_inplace.h), PyTorch's
// derivatives.yaml entries for lerp_, addcmul_, addcdiv_ and the scaled products, written with
// ops so gradients of every order work. Inputs (self's old value, a, b); the gradient is that of
// self's new value (self's shape: the in-place rules forbid broadcasting self).
#include "autograd/record_inplace.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "autograd/view_writes.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/linalg.h"
#include "ops/views.h"

namespace ts::autograd {

namespace {

using G = const variable_list&;
#define FORMULA(name) variable_list name(const BackwardCtx& c, G g)

// Scalars ride on the node as (real, imaginary) in `scalars`, attrs[i] saying whether scalar i
// is complex (a real one multiplies as a weak float, keeping the gradient's dtype).
void put_scalar(FormulaNode& n, const Scalar& s) {
  const bool cplx = s.kind == ScalarKind::Complex;
  const std::complex<double> v = cplx ? s.c : std::complex<double>(s.to<double>(), 0.0);
  n.scalars.push_back(v.real());
  n.scalars.push_back(v.imag());
  n.attrs.push_back(cplx ? 1 : 0);
}
Scalar scalar_at(const BackwardCtx& c, size_t i) {
  const double re = c.scalar(2 * i), im = c.scalar(2 * i + 1);
  return c.attr(i) ? Scalar::from_complex({re, im}) : Scalar::from_double(re);
}
// g * conj(s), g itself when s == 1 (PyTorch's maybe_multiply).
Tensor times_conj(const Tensor& g, const Scalar& s) {
  if (s.kind != ScalarKind::Complex) return s.d == 1.0 ? g : multiply(g, wrap_scalar(s));
  return multiply(g, wrap_scalar(Scalar::from_complex(std::conj(s.c))));
}
Tensor chain(const Tensor& g, const Tensor& d) { return multiply(g, conj(d)); }
Tensor mH(const Tensor& t) { return conj(matrix_transpose(t)); }

// 1 - w; a Python-number weight on the host (two weak operands would compute in the default
// float dtype, losing float64 precision).
Tensor one_minus(const Tensor& w) {
  if (!w.is_wrapped_number()) return subtract(wrap_scalar(Scalar::from_double(1.0)), w);
  const Scalar v = item(w);
  if (v.kind == ScalarKind::Complex) return wrap_scalar(Scalar::from_complex(1.0 - v.c));
  return wrap_scalar(Scalar::from_double(1.0 - v.to<double>()));
}

// self + w * (end - self); saved (w, end, self's old value), the last two only when w needs a
// gradient (a tensor weight).
FORMULA(lerp_bw) {
  const Tensor w = c.saved(0);
  return {c.needs(0) ? chain(g[0], one_minus(w)) : Tensor(), c.needs(1) ? chain(g[0], w) : Tensor(),
          c.needs(2) ? chain(g[0], subtract(c.saved(1), c.saved(2))) : Tensor()};
}
// self + value * t1 * t2; saved (t1, t2), each only when the other needs a gradient.
FORMULA(addcmul_bw) {
  const Scalar v = scalar_at(c, 0);
  return {c.needs(0) ? g[0] : Tensor(),
          c.needs(1) ? times_conj(chain(g[0], c.saved(1)), v) : Tensor(),
          c.needs(2) ? times_conj(chain(g[0], c.saved(0)), v) : Tensor()};
}
// self + value * t1 / t2; saved (t1 when t2 needs a gradient, t2).
FORMULA(addcdiv_bw) {
  const Scalar v = scalar_at(c, 0);
  Tensor g1, g2;
  if (c.needs(1)) g1 = times_conj(divide(g[0], conj(c.saved(1))), v);
  if (c.needs(2)) {
    const Tensor t2 = c.saved(1);
    g2 = negative(times_conj(chain(g[0], divide(c.saved(0), multiply(t2, t2))), v));
  }
  return {c.needs(0) ? g[0] : Tensor(), g1, g2};
}
// beta * self + alpha * (a @ b); attrs[2] the kind; saved (a, b), each only when the other
// needs a gradient. Addmm, Baddbmm and Addbmm (g (n, p) against (B, ...) factors: matmul
// broadcasts it over the batch) share one form; Addmv's a gets g outer conj(v); Addr's
// factors are vectors.
FORMULA(scaled_bw) {
  const Scalar beta = scalar_at(c, 0), alpha = scalar_at(c, 1);
  const auto kind = static_cast<InplaceGrad>(c.attr(2));
  Tensor ga, gb;
  if (kind == InplaceGrad::Addr) {
    if (c.needs(1)) ga = matmul(g[0], conj(c.saved(1)));
    if (c.needs(2)) gb = matmul(matrix_transpose(g[0]), conj(c.saved(0)));
  } else {
    if (c.needs(1))
      ga = kind == InplaceGrad::Addmv ? multiply(expand_dims(g[0], -1), conj(c.saved(1)))
                                      : matmul(g[0], mH(c.saved(1)));
    if (c.needs(2)) gb = matmul(mH(c.saved(0)), g[0]);
  }
  return {c.needs(0) ? times_conj(g[0], beta) : Tensor(),
          ga.defined() ? times_conj(ga, alpha) : Tensor(),
          gb.defined() ? times_conj(gb, alpha) : Tensor()};
}

const Formula kLerpScalar{"LerpBackward", lerp_bw}, kLerpTensor{"LerpBackward1", lerp_bw},
    kAddcmul{"AddcmulBackward", addcmul_bw}, kAddcdiv{"AddcdivBackward", addcdiv_bw},
    kAddmm{"AddmmBackward", scaled_bw}, kAddmv{"AddmvBackward", scaled_bw},
    kAddr{"AddrBackward", scaled_bw}, kBaddbmm{"BaddbmmBackward", scaled_bw},
    kAddbmm{"AddbmmBackward", scaled_bw};

// The node of `kind` (a Lerp with a tensor weight is PyTorch's second overload).
const Formula& formula_of(InplaceGrad kind, const Tensor& b) {
  static const Formula* const kByKind[] = {&kLerpScalar, &kAddcmul, &kAddcdiv, &kAddmm,
                                           &kAddmv,      &kAddr,    &kBaddbmm, &kAddbmm};
  if (kind == InplaceGrad::Lerp && !b.is_wrapped_number()) return kLerpTensor;
  return *kByKind[static_cast<int>(kind)];
}

// Saves t when `when`, else an empty slot (the formula's indices stay fixed).
void save_if(FormulaNode& n, bool when, const Tensor& t) {
  if (when)
    n.save(t);
  else
    n.saved.emplace_back();
}

// A copy of self's current value with self's history (PyTorch's original_self), taken before
// the write.
Tensor original_self(const Tensor& self) {
  const Edge e = gradient_edge(self);
  Tensor copy = clone(self);
  if (e.valid()) set_history(copy, e.fn, e.input_nr);
  return copy;
}

}  // namespace

std::shared_ptr<Node> begin_inplace(InplaceGrad kind, const Tensor& self, const Tensor& a,
                                    const Tensor& b, std::initializer_list<Scalar> scalars,
                                    const char* op) {
  if (!needs_grad({&self, &a, &b})) return nullptr;
  check_view_write(self, true, op);
  auto node = record(formula_of(kind, b), {self, a, b}, {});
  node->out_meta.push_back({self.shape(), self.dtype(), self.device()});
  for (const Scalar& s : scalars) put_scalar(*node, s);
  const bool need_a = node->next_edges[1].valid(), need_b = node->next_edges[2].valid();
  switch (kind) {
    case InplaceGrad::Lerp:
      node->save(b);
      save_if(*node, need_b, a);
      save_if(*node, need_b, need_b ? original_self(self) : Tensor());
      break;
    case InplaceGrad::Addcdiv:
      save_if(*node, need_b, a);
      save_if(*node, need_a || need_b, b);
      break;
    default:  // the products and addcmul: each factor for the other's gradient
      node->attrs.push_back(static_cast<int64_t>(kind));
      save_if(*node, need_b, a);
      save_if(*node, need_a, b);
  }
  for (SavedTensor& s : node->saved) s.preserve_if_aliases(self);
  if (anomaly_enabled()) node->creation_site = "(see the Python traceback of the forward call)";
  return node;
}

void end_inplace(const Tensor& self, const std::shared_ptr<Node>& node) {
  if (node) commit_write(self, Edge{node, 0});
}

}  // namespace ts::autograd
