// Bindings of the namespace's matrix products (ops/matmul_products.h, ops/linalg.h): the array
// API's tensordot, vecdot, matrix_transpose and PyTorch's mm, bmm, mv, dot, vdot, inner, outer
// (ger), kron, cdist, chain_matmul, addmm, addmv, addr, baddbmm, addbmm. Every argument form is
// parsed here once: the standard's axes=/axis= beside torch's dims/dim=, beta=/alpha=
// (keyword-only), out=. torch's products are also the Tensor methods (x.mm is ts.mm, Note [One
// function, two spellings]); their in-place twins (x.addmm_, ...) are generated in
// python/tessera/_tensor_methods.py. python/tessera/_linalg_core.py only names them.
#include <deque>

#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/linalg.h"
#include "ops/linalg_composite.h"
#include "ops/linalg_ext.h"
#include "ops/linalg_torch_forms.h"
#include "ops/matmul_products.h"
#include "ops/views.h"
#include "python/elementwise_binding.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

// beta= / alpha=: a Python number (bool included) or a one-element tensor.
Scalar coefficient(py::handle h, const char* op, const char* name) {
  Scalar s;
  if (PyBool_Check(h.ptr())) return Scalar::from_bool(h.ptr() == Py_True);
  if (to_scalar(h, s)) return s;
  if (py::isinstance<Tensor>(h) && h.cast<const Tensor&>().numel() == 1)
    return item(h.cast<const Tensor&>());
  throw TypeError(
      str(op, ": ", name, " must be a number, got ", type_name(h), "; hint: pass ", name, "=0.5"));
}

// tensordot's axes (the standard's) or dims (torch's): an int n, a pair of axis sequences (or
// ints), or a tensor holding either.
Tensor tensordot_py(const Tensor& a, const Tensor& b, py::handle axes) {
  constexpr const char* op = "tensordot";
  py::object ax = py::reinterpret_borrow<py::object>(axes);
  if (py::isinstance<Tensor>(ax))
    ax = ax.cast<const Tensor&>().ndim() == 0 ? ax.attr("__int__")() : ax.attr("tolist")();
  if (PyIndex_Check(ax.ptr())) return tensordot(a, b, py::cast<int64_t>(ax.attr("__index__")()));
  if (!PySequence_Check(ax.ptr()) || PyUnicode_Check(ax.ptr()) || py::len(ax) != 2)
    throw TypeError(str(op, ": axes must be an int or a pair of axis sequences, got ",
                        py::repr(ax).cast<std::string>(), "; hint: axes=2 or axes=([1], [0])"));
  const py::sequence pair = ax.cast<py::sequence>();
  return tensordot(a, b, to_shape(pair[0], op), to_shape(pair[1], op));
}

using Binary = Tensor (*)(const Tensor&, const Tensor&);

const char* doc(const char* name, const char* params, const char* text) {
  static std::deque<std::string> docs;  // alive for the module
  return docs.emplace_back(str(name, "(", params, ")\n--\n\n", text)).c_str();
}

void def_binary(py::module_& m, const char* name, Binary fn, const char* other, const char* text) {
  m.def(
      name,
      [name, fn, other](py::handle x, py::handle y, py::handle out) {
        // torch's outer, ger and kron are composite: their out= casts (Note [out= rules])
        const std::string_view n(name);
        const OutDtype rule =
            n == "outer" || n == "ger" || n == "kron" ? OutDtype::Cast : OutDtype::Exact;
        return result_or_out(name,
                             fn(tensor_or_throw(x, name, "input"), tensor_or_throw(y, name, other)),
                             out, rule);
      },
      py::arg("input"), py::arg(other), py::kw_only(), py::arg("out") = py::none(),
      doc(name, str("input, ", other, ", *, out=None").c_str(), text));
}

// name(input, a1, a2, *, beta=1, alpha=1, out=None) and its in-place method Tensor.<name>_.
void def_scaled(py::module_& m, const char* name, ScaledOp k, const char* a1, const char* a2,
                const char* text) {
  m.def(
      name,
      [name, k, a1, a2](py::handle x, py::handle y, py::handle z, py::handle beta, py::handle alpha,
                        py::handle out) {
        return result_or_out(
            name,
            scaled_op(k, tensor_or_throw(x, name, "input"), tensor_or_throw(y, name, a1),
                      tensor_or_throw(z, name, a2), coefficient(beta, name, "beta"),
                      coefficient(alpha, name, "alpha"), name),
            out, k == ScaledOp::Addr ? OutDtype::Cast : OutDtype::Exact);  // torch's addr casts
      },
      py::arg("input"), py::arg(a1), py::arg(a2), py::kw_only(), py::arg("beta") = 1,
      py::arg("alpha") = 1, py::arg("out") = py::none(),
      doc(name, str("input, ", a1, ", ", a2, ", *, beta=1, alpha=1, out=None").c_str(), text));
  static std::deque<std::string> names;  // alive for the module
  const char* op = names.emplace_back(str(name, "_")).c_str();
  py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"))
      .def(
          op,
          [op, k, a1, a2](py::object self, py::handle y, py::handle z, py::handle beta,
                          py::handle alpha) {
            scaled_op_(k, tensor_or_throw(self, op, "self"), tensor_or_throw(y, op, a1),
                       tensor_or_throw(z, op, a2), coefficient(beta, op, "beta"),
                       coefficient(alpha, op, "alpha"), op);
            return self;
          },
          py::arg(a1), py::arg(a2), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1,
          doc(op, str("$self, /, ", a1, ", ", a2, ", *, beta=1, alpha=1").c_str(),
              str("In-place ", name, ": self = beta * self + alpha * the product; returns self.")
                  .c_str()));
}

// A bool argument: a Python (or NumPy) bool; TypeError otherwise, as torch.
bool flag(py::handle h, const char* op, const char* name) {
  if (!PyBool_Check(h.ptr()) && type_name(h) != "bool_")
    throw TypeError(str(op, ": argument '", name, "' must be bool, not ", type_name(h)));
  const int t = PyObject_IsTrue(h.ptr());
  if (t < 0) throw py::error_already_set();
  return t != 0;
}

// torch.return_types.<name>: a named tuple class made once per name.
py::object return_type(const char* name, std::initializer_list<const char*> fields) {
  static py::dict* types = new py::dict();  // leaked: lives as long as the module
  const py::str key(name);
  if (!types->contains(key)) {
    py::list f;
    for (const char* n : fields) f.append(n);
    (*types)[key] = py::module_::import("collections")
                        .attr("namedtuple")(name, f, py::arg("module") = "tessera");
  }
  return (*types)[key];
}

Tensor zeros(const Shape& shape, const Tensor& like) {
  Tensor z = Tensor::empty(shape, like.dtype(), like.device());
  fill_(z, Scalar::from_int(0));
  return z;
}

// torch.svd: (U, S, V) with V (not V^H); some=True is the reduced SVD. Without compute_uv, U
// (m, m) and V (n, n) are zeros whatever `some` (as torch).
py::object legacy_svd(const Tensor& x, bool some, bool compute_uv) {
  const py::object svd_t = return_type("svd", {"U", "S", "V"});
  TS_CHECK(x.ndim() >= 2, ValueError,
           "svd: expected a (stack of) matrices with at least 2 dims, "
           "got shape ",
           shape_str(x.shape()));
  if (!compute_uv) {
    Shape su(x.shape().begin(), x.shape().end() - 2), sv = su;
    const int64_t m = x.dim(x.ndim() - 2), n = x.dim(x.ndim() - 1);
    su.push_back(m);
    su.push_back(m);
    sv.push_back(n);
    sv.push_back(n);
    return svd_t(zeros(su, x), svdvals(x), zeros(sv, x));
  }
  const auto [u, s, vh] = svd(x, !some);
  return svd_t(u, s, matrix_transpose(conj(vh)));
}

Tensor outer_fn(const Tensor& a, const Tensor& b) { return outer(a, b, "outer"); }
Tensor ger_fn(const Tensor& a, const Tensor& b) { return outer(a, b, "ger"); }

// PyTorch's spellings over the linalg ops: det, logdet, inverse, pinverse, matrix_power,
// cholesky, cholesky_inverse, cholesky_solve and the legacy svd, qr, slogdet (named tuples).
void def_torch_linalg(py::module_& m) {
  using Unary = Tensor (*)(const Tensor&);
  struct U {
    const char* name;
    Unary fn;
    const char* text;
  };
  static const U unary[] = {
      {"det", &det, "Determinants of (..., M, M) matrices -> shape (...) (torch.linalg.det)."},
      {"logdet", &logdet,
       "log(det(input)); for real input NaN where det < 0, -inf where det == 0; for complex\n"
       "input the complex log (log|det| + i arg(det); -inf + nan*i where det == 0, as torch)."},
      {"inverse", &inv, "Inverses of (..., M, M) matrices (torch.linalg.inv)."},
  };
  for (const U& u : unary) {
    const char* name = u.name;
    const Unary fn = u.fn;
    m.def(
        name, [name, fn](py::handle x) { return fn(tensor_or_throw(x, name, "input")); },
        py::arg("input"), doc(name, "input", u.text));
  }
  m.def(
      "slogdet",
      [](py::handle x) {
        const auto [sign, logabs] = slogdet(tensor_or_throw(x, "slogdet", "input"));
        return return_type("slogdet", {"sign", "logabsdet"})(sign, logabs);
      },
      py::arg("input"),
      doc("slogdet", "input",
          "(sign, log|det|) of square matrices, a named tuple (torch.linalg.slogdet)."));
  m.def(
      "pinverse",
      [](py::handle x, double rcond) {
        return pinv(tensor_or_throw(x, "pinverse", "input"), std::nullopt,
                    wrap_scalar(Scalar::from_double(rcond)), false);
      },
      py::arg("input"), py::arg("rcond") = 1e-15,
      doc("pinverse", "input, rcond=1e-15",
          "The pseudo-inverse dropping singular values at or below rcond * the largest."));
  m.def(
      "matrix_power",
      [](py::handle x, py::handle n) {
        return matrix_power(tensor_or_throw(x, "matrix_power", "input"),
                            int_arg(n, "matrix_power", "n"));
      },
      py::arg("input"), py::arg("n"),
      doc("matrix_power", "input, n",
          "input @ input @ ... (n times) for square (..., M, M); n = 0 gives identities and\n"
          "n < 0 powers of the inverse."));
  m.def(
      "cholesky",
      [](py::handle x, py::handle upper) {
        return cholesky(tensor_or_throw(x, "cholesky", "input"), flag(upper, "cholesky", "upper"));
      },
      py::arg("input"), py::arg("upper") = false,
      doc("cholesky", "input, upper=False",
          "torch.cholesky: the lower (or `upper`) Cholesky factor."));
  m.def(
      "cholesky_inverse",
      [](py::handle x, py::handle upper) {
        return cholesky_inverse(tensor_or_throw(x, "cholesky_inverse", "input"),
                                flag(upper, "cholesky_inverse", "upper"));
      },
      py::arg("input"), py::arg("upper") = false,
      doc("cholesky_inverse", "input, upper=False",
          "The inverse of A = L L^H (or U^H U with upper=True) from its Cholesky factor."));
  m.def(
      "cholesky_solve",
      [](py::handle x, py::handle factor, py::handle upper) {
        constexpr const char* op = "cholesky_solve";
        return cholesky_solve(tensor_or_throw(x, op, "input"),
                              tensor_or_throw(factor, op, "input2"), flag(upper, op, "upper"));
      },
      py::arg("input"), py::arg("input2"), py::arg("upper") = false,
      doc("cholesky_solve", "input, input2, upper=False",
          "X with A X = input where A = L L^H (L = input2; U^H U with upper=True)."));
  m.def(
      "svd",
      [](py::handle x, py::handle some, py::handle compute_uv) {
        return legacy_svd(tensor_or_throw(x, "svd", "input"), flag(some, "svd", "some"),
                          flag(compute_uv, "svd", "compute_uv"));
      },
      py::arg("input"), py::arg("some") = true, py::arg("compute_uv") = true,
      doc("svd", "input, some=True, compute_uv=True",
          "Deprecated torch.svd: (U, S, V) with V (not V^H); `some` gives the reduced form;\n"
          "without `compute_uv`, U (m, m) and V (n, n) are zeros whatever `some` (as torch)."));
  m.def(
      "qr",
      [](py::handle x, py::handle some) {
        const auto [q, r] = qr(tensor_or_throw(x, "qr", "input"), !flag(some, "qr", "some"));
        return return_type("qr", {"Q", "R"})(q, r);
      },
      py::arg("input"), py::arg("some") = true,
      doc("qr", "input, some=True", "torch.qr: (Q, R), reduced unless some=False."));
  m.def(
      "vander",
      [](py::handle x, py::handle N, py::handle increasing) {
        constexpr const char* op = "vander";
        const Tensor& t = tensor_or_throw(x, op, "x");
        const std::optional<int64_t> n =
            N.is_none() ? std::nullopt : std::optional<int64_t>(int_arg(N, op, "N"));
        try {
          return vander(t, n, flag(increasing, op, "increasing"));
        } catch (const std::bad_alloc&) {  // the output's allocation, named
          PyErr_SetString(PyExc_MemoryError, str("vander: out of memory for the output of ",
                                                 t.dim(0), " x ", n ? *n : t.dim(0), " elements")
                                                 .c_str());
          throw py::error_already_set();
        }
      },
      py::arg("x"), py::arg("N") = py::none(), py::arg("increasing") = false,
      doc("vander", "x, N=None, increasing=False",
          "The (len(x), N) Vandermonde matrix of a 1-D tensor: columns x**(N-1) ... x**0 (or\n"
          "increasing); integer and bool inputs give int64 (torch.vander)."));
  bind_functions_as_methods(m, {"det", "logdet", "inverse", "slogdet", "pinverse", "matrix_power",
                                "cholesky", "cholesky_inverse", "cholesky_solve", "svd", "qr"});
}

}  // namespace

void init_matmul(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "tensordot",
      [](py::handle x1, py::handle x2, py::handle dims, py::handle axes, py::handle out) {
        constexpr const char* op = "tensordot";
        if (!dims.is_none() && !axes.is_none())
          throw py::type_error("tensordot: give the contracted dims once (dims or axes)");
        const py::handle ax = !dims.is_none() ? dims : axes;
        return result_or_out(
            op,
            tensordot_py(tensor_or_throw(x1, op, "x1"), tensor_or_throw(x2, op, "x2"),
                         ax.is_none() ? py::int_(2) : ax),
            out, OutDtype::Exact);
      },
      py::arg("x1"), py::arg("x2"), py::pos_only(), py::arg("dims") = py::none(), py::kw_only(),
      py::arg("axes") = py::none(), py::arg("out") = py::none(),
      doc("tensordot", "x1, x2, /, dims=None, *, axes=None, out=None",
          "Contracts `axes` of x1 with those of x2: an int n (the last n of x1 with the first n\n"
          "of x2) or a pair of axis sequences (default 2). PyTorch's `dims` (positional or\n"
          "keyword, an int, a pair of sequences or a tensor) is the same argument."));
  m.def(
      "vecdot",
      [](py::handle x1, py::handle x2, int64_t axis, py::handle dim, py::handle out) {
        constexpr const char* op = "vecdot";
        const Tensor& a = tensor_or_throw(x1, op, "x1");
        const Tensor& b = tensor_or_throw(x2, op, "x2");
        if (!dim.is_none()) {
          if (axis != -1) throw py::type_error("vecdot: pass either axis= or dim=, not both");
          // torch's dim counts in the broadcast shape, so a non-negative one works too
          const int64_t nd = std::max(a.ndim(), b.ndim());
          axis = py::cast<int64_t>(dim);
          if (axis >= 0 && axis < nd) axis -= nd;
        }
        return result_or_out(op, vecdot(a, b, axis), out, OutDtype::Exact);
      },
      py::arg("x1"), py::arg("x2"), py::pos_only(), py::kw_only(), py::arg("axis") = -1,
      py::arg("dim") = py::none(), py::arg("out") = py::none(),
      doc("vecdot", "x1, x2, /, *, axis=-1, dim=None, out=None",
          "sum(conj(x1) * x2, axis) with broadcasting over the other dims. PyTorch's dim= is\n"
          "accepted too, counted in the broadcast shape (so a non-negative dim also works)."));
  m.def(
      "matrix_transpose",
      [](py::handle x) { return matrix_transpose(tensor_or_throw(x, "matrix_transpose", "x")); },
      py::arg("x"), py::pos_only(),
      doc("matrix_transpose", "x, /",
          "Swaps the last two axes (a view): (..., m, n) -> (..., n, m)."));

  struct B {
    const char* name;
    Binary fn;
    const char* other;
    const char* text;
  };
  static const B binary[] = {
      {"mm", &mm, "mat2", "(n, m) @ (m, p) -> (n, p). Like torch, no broadcasting and one dtype."},
      {"bmm", &bmm, "mat2",
       "(b, n, m) @ (b, m, p) -> (b, n, p); no broadcasting of the batch, one dtype."},
      {"mv", &mv, "vec", "(n, m) @ (m,) -> (n,); one dtype for both."},
      {"dot", &dot, "tensor",
       "Inner product of two 1-D tensors of the same length and dtype (0-d result)."},
      {"vdot", &vdot, "other", "dot(conj(input), other) of 1-D tensors."},
      {"inner", &inner, "other",
       "Sum over the last dims of input and other (a 0-d operand multiplies); shape\n"
       "input.shape[:-1] + other.shape[:-1]."},
      {"outer", &outer_fn, "vec2",
       "(n,) x (m,) -> (n, m) with out[i, j] = input[i] * vec2[j] (dtypes promote)."},
      {"ger", &ger_fn, "vec2", "torch.ger: outer(input, vec2)."},
      {"kron", &kron, "other", "The Kronecker product (ranks padded with leading 1s to match)."},
  };
  for (const B& b : binary) def_binary(m, b.name, b.fn, b.other, b.text);
  m.def(
      "cdist",
      [](py::handle x1, py::handle x2, double p, py::handle compute_mode) {
        constexpr const char* op = "cdist";
        (void)compute_mode;  // every mode computes the same distances here
        return cdist(tensor_or_throw(x1, op, "x1"), tensor_or_throw(x2, op, "x2"), p);
      },
      py::arg("x1"), py::arg("x2"), py::arg("p") = 2.0,
      py::arg("compute_mode") = "use_mm_for_euclid_dist_if_necessary",
      doc("cdist", "x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'",
          "Pairwise p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M)\n"
          "-> (..., P, R)."));
  m.def(
      "chain_matmul",
      [](py::args matrices, py::handle out) {
        constexpr const char* op = "chain_matmul";
        std::vector<Tensor> ms;
        for (py::handle h : matrices) {
          if (!py::isinstance<Tensor>(h))
            throw TypeError(
                str(op, ": matrix ", ms.size(), " must be a 2-D tensor, got ", type_name(h)));
          ms.push_back(h.cast<const Tensor&>());
        }
        return result_or_out(op, chain_matmul(ms), out, OutDtype::Exact);
      },
      py::kw_only(), py::arg("out") = py::none(),
      doc("chain_matmul", "*matrices, out=None", "The product of 2-D matrices, left to right."));

  def_scaled(m, "addmm", ScaledOp::Addmm, "mat1", "mat2",
             "beta * input + alpha * (mat1 @ mat2); input broadcasts to the product's shape.\n"
             "beta=0 ignores input's values (NaN included), as torch.");
  def_scaled(m, "addmv", ScaledOp::Addmv, "mat", "vec", "beta * input + alpha * (mat @ vec).");
  def_scaled(m, "addr", ScaledOp::Addr, "vec1", "vec2",
             "beta * input + alpha * outer(vec1, vec2).");
  def_scaled(m, "baddbmm", ScaledOp::Baddbmm, "batch1", "batch2",
             "beta * input + alpha * bmm(batch1, batch2).");
  def_scaled(m, "addbmm", ScaledOp::Addbmm, "batch1", "batch2",
             "beta * input + alpha * sum_b (batch1[b] @ batch2[b]).");
  def_torch_linalg(m);
  bind_functions_as_methods(m, {"mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "kron",
                                "addmm", "addmv", "addr", "baddbmm", "addbmm"});
}

}  // namespace ts::python
