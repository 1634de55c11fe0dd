// Bindings of the linalg extension's factorizations (ops/linalg_ext.h) and LinAlgError, and
// ts.linalg's functions that are bindings themselves (submodule _C._linalg: the norms and the
// matrix functions here, the factorizations in bind_linalg_decomp.cpp), with
// the standard's and torch's argument forms parsed here (Note [linalg torch forms] in
// tessera/linalg.py); the rest of the Python front is tessera/linalg.py.
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/linalg_composite.h"
#include "ops/linalg_ext.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

void init_linalg_decomp(py::module_& l);              // bind_linalg_decomp.cpp
void init_linalg_lu(py::module_& m, py::module_& l);  // bind_linalg_lu.cpp

namespace {

// One of an alias pair (the standard's name, torch's): a TypeError when both are given.
py::handle alias(py::handle a, py::handle b, const char* op, const char* names) {
  if (b.is_none()) return a;
  if (!a.is_none()) throw py::type_error(std::string(op) + ": got both " + names + "; pass one");
  return b;
}

bool truth(py::handle h) {
  const int t = PyObject_IsTrue(h.ptr());
  if (t < 0) throw py::error_already_set();
  return t != 0;
}

Tensor with_dtype(Tensor x, py::handle dtype) {
  return dtype.is_none() ? x : astype_op(x, to_dtype(dtype), true);
}

// A vector norm's ord: a real number; TypeError for other types (torch's), ValueError for
// bool and complex numbers.
Scalar vector_ord(py::handle ord, const char* op) {
  Scalar s;
  if (!to_scalar(ord, s))
    throw py::type_error(std::string(op) + ": argument 'ord' must be a number, not " +
                         type_name(ord));
  if (PyBool_Check(ord.ptr()) || s.kind == ScalarKind::Complex)
    throw ValueError(std::string(op) + ": ord must be a real number, got " +
                     py::repr(ord).cast<std::string>());
  return s;
}

// A matrix norm's ord: 'fro' (also None), 'nuc' or a number; other values raise in the op.
MatrixNormOrd matrix_ord(py::handle ord) {
  MatrixNormOrd o;
  if (ord.is_none()) {
    o.name = "fro";
  } else if (py::isinstance<py::str>(ord)) {
    o.name = ord.cast<std::string>();
    if (o.name.empty()) o.name = "''";
  } else if (!PyBool_Check(ord.ptr()) && (PyFloat_Check(ord.ptr()) || PyIndex_Check(ord.ptr()))) {
    o.p = PyFloat_AsDouble(ord.ptr());
    if (o.p == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  } else {
    o.name = py::repr(ord).cast<std::string>();
  }
  return o;
}

Tensor matrix_norm_py(const Tensor& x, py::handle ord, const Shape& d, bool keepdim) {
  if (d.size() != 2)
    throw RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + shape_str(d));
  return matrix_norm(x, matrix_ord(ord), d[0], d[1], keepdim);
}

std::string sig(const char* name, const char* params, const char* doc) {
  return std::string(name) + "(" + params + ")\n--\n\n" + doc;
}

void def_norms(py::module_& l) {
  l.def(
      "vector_norm",
      [](py::handle x, py::handle ord, py::handle dim, py::handle keepdim, py::handle axis,
         py::handle keepdims, py::handle dtype, py::handle input, py::handle out) {
        constexpr const char* op = "vector_norm";
        const Tensor t = with_dtype(input_arg(x, input, op), dtype);
        const py::handle ax = alias(axis, dim, op, "axis= and its alias dim=");
        const py::handle keep = alias(keepdims, keepdim, op, "keepdims= and its alias keepdim=");
        return with_out(op,
                        py::cast(vector_norm(t, ax.is_none() ? Axes() : Axes(to_shape(ax, op)),
                                             !keep.is_none() && truth(keep), vector_ord(ord, op))),
                        out);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("ord") = 2, py::arg("dim") = py::none(),
      py::arg("keepdim") = py::none(), py::kw_only(), py::arg("axis") = py::none(),
      py::arg("keepdims") = py::none(), py::arg("dtype") = py::none(), py::arg("input") = missing(),
      py::arg("out") = py::none(),
      sig("vector_norm",
          "x, /, ord=2, dim=None, keepdim=False, *, axis=None, keepdims=False, dtype=None, "
          "input=None, out=None",
          "p-norm over `axis` (all axes when None): ord 2 (default), 1, inf (max |x|), -inf\n"
          "(min |x|), 0 (count of nonzeros), or any p (sum |x|^p)^(1/p). Real dtype out.\n"
          "torch's forms too: positional ord, dim, keepdim; dim=/keepdim= aliases; input=;\n"
          "dtype= casts the input first.")
          .c_str());
  l.def(
      "matrix_norm",
      [](py::handle x, py::handle ord, py::handle dim, py::handle keepdim, py::handle keepdims,
         py::handle dtype, py::handle input, py::handle out) {
        constexpr const char* op = "matrix_norm";
        const Tensor t = with_dtype(input_arg(x, input, op), dtype);
        const py::handle keep = alias(keepdims, keepdim, op, "keepdims= and its alias keepdim=");
        return with_out(
            op, py::cast(matrix_norm_py(t, ord, to_shape(dim, op), !keep.is_none() && truth(keep))),
            out);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("ord") = "fro",
      py::arg("dim") = py::make_tuple(-2, -1), py::arg("keepdim") = py::none(), py::kw_only(),
      py::arg("keepdims") = py::none(), py::arg("dtype") = py::none(), py::arg("input") = missing(),
      py::arg("out") = py::none(),
      sig("matrix_norm",
          "x, /, ord='fro', dim=(-2, -1), keepdim=False, *, keepdims=False, dtype=None, "
          "input=None, out=None",
          "Norms of the matrices of (..., M, N) (torch: over the two dims `dim`): 'fro', 'nuc'\n"
          "(sum of singular values), 2 / -2 (largest / smallest singular value), 1 / -1 (max /\n"
          "min column abs sum), inf / -inf (max / min row abs sum). Real dtype out, shape (...)\n"
          "or (..., 1, 1) with keepdims (keepdim=). dtype= casts the input first.")
          .c_str());
  l.def(
      "norm",
      [](py::handle A, py::handle ord, py::handle dim, bool keepdim, py::handle dtype,
         py::handle input, py::handle out) {
        constexpr const char* op = "linalg.norm";
        const bool has_a = !A.is(missing());
        if (has_a && !input.is(missing()))
          throw py::type_error("norm() got multiple values for argument 'A'");
        if (!has_a && input.is(missing()))
          throw py::type_error("norm() missing required argument 'A' (pos 1)");
        const Tensor t = with_dtype(tensor_or_throw(has_a ? A : input, op, "A"), dtype);
        const std::optional<Shape> dims =
            dim.is_none() ? std::nullopt : std::optional<Shape>(to_shape(dim, op));
        if ((dims && dims->size() == 2) || (!dims && !ord.is_none() && t.ndim() == 2))
          return with_out(
              op, py::cast(matrix_norm_py(t, ord, dims ? *dims : Shape{-2, -1}, keepdim)), out);
        if (!ord.is_none() && !dims && t.ndim() != 1)
          throw RuntimeError(
              "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got " +
              std::to_string(t.ndim()) + "D.");
        if (py::isinstance<py::str>(ord))
          throw RuntimeError("linalg.vector_norm: ord " + py::repr(ord).cast<std::string>() +
                             " is a matrix norm; give two dims");
        return with_out(op,
                        py::cast(vector_norm(
                            t, dims ? Axes(*dims) : Axes(), keepdim,
                            ord.is_none() ? Scalar::from_int(2) : vector_ord(ord, "vector_norm"))),
                        out);
      },
      py::arg("A") = missing(), py::arg("ord") = py::none(), py::arg("dim") = py::none(),
      py::arg("keepdim") = false, py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("norm", "A, ord=None, dim=None, keepdim=False, *, dtype=None, input=None, out=None",
          "torch.linalg.norm: the vector norm over one dim (or the flattened tensor when ord and\n"
          "dim are None), the matrix norm over two dims (or a 2-D input with ord given).")
          .c_str());
}

// det, inv, eigvalsh, cholesky: x (or torch's A= / input=), their options, out= refused.
void def_matrix_fns(py::module_& l) {
  using Unary = Tensor (*)(const Tensor&);
  const struct {
    const char* name;
    Unary fn;
    const char* doc;
  } unary[] = {
      {"det", &det, "Determinants of (..., M, M) matrices -> shape (...)."},
      {"inv", &inv, "Inverses of (..., M, M) matrices; LinAlgError when singular."},
  };
  for (const auto& e : unary) {
    const Unary fn = e.fn;
    const char* name = e.name;
    l.def(
        name,
        [fn, name](py::handle x, py::handle A, py::handle input, py::handle out) {
          return with_out(name, py::cast(fn(first_arg(x, A, input, name))), out);
        },
        py::arg("x") = missing(), py::pos_only(), py::kw_only(), py::arg("A") = missing(),
        py::arg("input") = missing(), py::arg("out") = py::none(),
        sig(name, "x, /, *, A=None, input=None, out=None",
            (std::string(e.doc) + "\ntorch's forms too: A=, input=.").c_str())
            .c_str());
  }
  l.def(
      "matrix_power",
      [](py::handle x, py::handle n, py::handle A, py::handle input, py::handle out) {
        const Tensor t = first_arg(x, A, input, "matrix_power");
        if (n.is(missing()))
          throw py::type_error("matrix_power() missing required argument 'n' (pos 2)");
        return with_out("matrix_power", py::cast(matrix_power(t, int_arg(n, "matrix_power", "n"))),
                        out);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("n") = missing(), py::kw_only(),
      py::arg("A") = missing(), py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("matrix_power", "x, /, n, *, A=None, input=None, out=None",
          "x @ x @ ... (n times) for square (..., M, M); n = 0 gives identities and n < 0\n"
          "powers of the inverse. torch's forms too: n=, A=, input=.")
          .c_str());
  l.def(
      "eigvalsh",
      [](py::handle x, py::handle uplo, py::handle A, py::handle input, py::handle out) {
        const Tensor t = first_arg(x, A, input, "eigvalsh");
        TS_CHECK(py::isinstance<py::str>(uplo), TypeError,
                 "eigvalsh(): argument 'UPLO' (position 2) must be str, not ", type_name(uplo));
        const std::string u = uplo.cast<std::string>();
        if (u != "L" && u != "U")
          throw RuntimeError("Expected UPLO argument to be 'L' or 'U', but got " +
                             py::str(uplo).cast<std::string>());
        // the Hermitian matrix of x's upper triangle is the one of x^H's lower triangle
        return with_out("eigvalsh", py::cast(eigvalsh(u == "U" ? conj(matrix_transpose(t)) : t)),
                        out);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("UPLO") = "L", py::kw_only(),
      py::arg("A") = missing(), py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("eigvalsh", "x, /, UPLO='L', *, A=None, input=None, out=None",
          "Eigenvalues (ascending, real) of Hermitian (..., M, M) matrices -> (..., M), read\n"
          "from the lower triangle (torch's UPLO='U': the upper one).")
          .c_str());
  l.def(
      "cholesky",
      [](py::handle x, py::handle upper, py::handle A, py::handle input, py::handle out) {
        if (!PyBool_Check(upper.ptr()) && type_name(upper) != "bool_")
          throw py::type_error("cholesky: upper must be a bool, got " + type_name(upper));
        return with_out("cholesky",
                        py::cast(cholesky(first_arg(x, A, input, "cholesky"), truth(upper))), out);
      },
      py::arg("x") = missing(), py::pos_only(), py::kw_only(), py::arg("upper") = false,
      py::arg("A") = missing(), py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("cholesky", "x, /, *, upper=False, A=None, input=None, out=None",
          "Cholesky factor of Hermitian positive-definite (..., M, M) matrices: lower L with\n"
          "x = L @ L^H, or upper U with x = U^H @ U. LinAlgError when not positive-definite.")
          .c_str());
}

}  // namespace

void init_linalg(py::module_& m) {
  // Registered after the generic translators, so it is tried first (pybind11 tries the most
  // recently registered translator first) and LinAlgError wins over its ValueError base.
  // Both bases: NumPy's LinAlgError is a ValueError, torch's a RuntimeError, so code written
  // for either catches it.
  py::register_exception<LinAlgError>(
      m, "LinAlgError",
      py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_RuntimeError)));

  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  py::module_ l = m.def_submodule("_linalg", "ts.linalg's functions (python/tessera/linalg.py)");
  def_norms(l);
  def_matrix_fns(l);
  init_linalg_decomp(l);
  init_linalg_lu(m, l);
}

}  // namespace ts::python
