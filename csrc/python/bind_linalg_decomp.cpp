// ts.linalg's factorizations and the functions built on them, as bindings in _C._linalg with
// the standard's and torch's argument forms parsed here (Note [linalg torch forms] in
// tessera/linalg.py): slogdet, eigh, solve, qr, svd, svdvals, matrix_rank, pinv. Results with
// several parts are named tuples (torch.return_types' fields), made once here.
#include <tuple>
#include <vector>

#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/linalg_composite.h"
#include "ops/linalg_ext.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

namespace {

// A named tuple class of tessera.linalg, made once (kept alive by the module attribute `attr`;
// its class name `name` when given).
py::object result_type(py::module_& l, const char* attr, py::tuple fields,
                       const char* name = nullptr) {
  py::object cls =
      py::module_::import("collections")
          .attr("namedtuple")(name ? name : attr, fields, py::arg("module") = "tessera.linalg");
  l.add_object(attr, cls);
  return cls;
}

bool flag(py::handle h, const char* op, const char* name) {
  if (!PyBool_Check(h.ptr()) && type_name(h) != "bool_")
    throw py::type_error(std::string(op) + ": argument '" + name + "' must be a bool, got " +
                         type_name(h));
  return PyObject_IsTrue(h.ptr()) == 1;
}

// torch's `B` of solve: positionally, as B= or other=; exactly one of them.
Tensor second_arg(py::handle x2, py::handle B, py::handle other, const char* op) {
  const int given = !x2.is(missing()) + !B.is(missing()) + !other.is(missing());
  if (given > 1) throw py::type_error(std::string(op) + "() got multiple values for argument 'B'");
  if (given == 0)
    throw py::type_error(std::string(op) + "() missing required argument 'B' (pos 2)");
  return operand_or_throw(!x2.is(missing()) ? x2 : !B.is(missing()) ? B : other, op);
}

std::optional<Tensor> tol_arg(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return operand_or_throw(h, op);
}

// UPLO 'L' reads the lower triangle; 'U' the upper one, which is the lower one of x^H.
Tensor by_uplo(const Tensor& x, py::handle uplo) {
  TS_CHECK(py::isinstance<py::str>(uplo), TypeError,
           "eigh(): argument 'UPLO' (position 2) must be str, not ", type_name(uplo));
  const std::string u = uplo.cast<std::string>();
  if (u != "L" && u != "U")
    throw RuntimeError("Expected UPLO argument to be 'L' or 'U', but got " +
                       py::str(uplo).cast<std::string>());
  return u == "U" ? conj(matrix_transpose(x)) : x;
}

void check_driver(py::handle driver, const char* op) {
  if (driver.is_none()) return;
  const std::string d = py::isinstance<py::str>(driver) ? driver.cast<std::string>() : "";
  if (d != "gesvd" && d != "gesvdj" && d != "gesvda")
    throw RuntimeError(std::string("linalg.") + op +
                       ": driver must be one of None, 'gesvd', 'gesvdj', 'gesvda' (it is ignored "
                       "off cuSOLVER), got " +
                       py::repr(driver).cast<std::string>());
}

std::string sig(const char* name, const char* params, const char* doc) {
  return std::string(name) + "(" + params + ")\n--\n\n" + doc;
}

// Tolerances of matrix_rank / pinv: torch's positional one (matrix_rank's tol is an absolute
// one, pinv's rcond a relative one) or atol= / rtol=, not both.
std::pair<std::optional<Tensor>, std::optional<Tensor>> tolerances(py::handle tol, bool tol_is_atol,
                                                                   py::handle atol, py::handle rtol,
                                                                   const char* op) {
  if (!tol.is_none()) {
    if (!atol.is_none() || !rtol.is_none())
      throw RuntimeError(std::string("linalg.") + op +
                         ": pass either the positional tolerance or atol= / rtol=, not both");
    if (tol_is_atol) return {tol_arg(tol, op), wrap_scalar(Scalar::from_double(0.0))};
    return {std::nullopt, tol_arg(tol, op)};
  }
  return {tol_arg(atol, op), tol_arg(rtol, op)};
}

// matrix_rank / pinv: x, torch's positional tolerance `tol_name` and hermitian, atol= / rtol=.
using TolFn = Tensor (*)(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
                         bool);
void def_tolerance(py::module_& l, const char* name, const char* tol_name, bool tol_is_atol,
                   TolFn fn, const char* doc) {
  l.def(
      name,
      [name, tol_is_atol, fn](py::handle x, py::handle tol, py::handle hermitian, py::handle atol,
                              py::handle rtol, py::handle A, py::handle input, py::handle out) {
        const Tensor t = first_arg(x, A, input, name);
        auto [at, rt] = tolerances(tol, tol_is_atol, atol, rtol, name);
        // torch's matrix_rank and pinv are composite: their out= casts
        return with_out(name, py::cast(fn(t, at, rt, flag(hermitian, name, "hermitian"))), out,
                        OutDtype::Cast);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg(tol_name) = py::none(),
      py::arg("hermitian") = false, py::kw_only(), py::arg("atol") = py::none(),
      py::arg("rtol") = py::none(), py::arg("A") = missing(), py::arg("input") = missing(),
      py::arg("out") = py::none(),
      sig(name,
          (std::string("x, /, ") + tol_name +
           "=None, hermitian=False, *, atol=None, rtol=None, A=None, input=None, out=None")
              .c_str(),
          doc)
          .c_str());
}

}  // namespace

void init_linalg_decomp(py::module_& l) {
  const py::object slogdet_t = result_type(l, "SlogdetResult", py::make_tuple("sign", "logabsdet"));
  const py::object eigh_t =
      result_type(l, "EighResult", py::make_tuple("eigenvalues", "eigenvectors"));
  const py::object qr_t = result_type(l, "QRResult", py::make_tuple("Q", "R"));
  const py::object svd_t = result_type(l, "SVDResult", py::make_tuple("U", "S", "Vh"));

  l.def(
      "slogdet",
      [slogdet_t](py::handle x, py::handle A, py::handle input, py::handle out) {
        auto [sign, logabs] = slogdet(first_arg(x, A, input, "slogdet"));
        return with_out("slogdet", slogdet_t(sign, logabs), out);
      },
      py::arg("x") = missing(), py::pos_only(), py::kw_only(), py::arg("A") = missing(),
      py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("slogdet", "x, /, *, A=None, input=None, out=None",
          "(sign, logabsdet) of (..., M, M) matrices; sign 0 and logabsdet -inf when singular.\n"
          "For complex input sign has modulus 1 (or 0). torch's forms too: A=, input=.")
          .c_str());
  l.def(
      "eigh",
      [eigh_t](py::handle x, py::handle uplo, py::handle A, py::handle input, py::handle out) {
        auto [w, v] = eigh(by_uplo(first_arg(x, A, input, "eigh"), uplo));
        return with_out("eigh", eigh_t(w, v), out);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("UPLO") = "L", py::kw_only(),
      py::arg("A") = missing(), py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("eigh", "x, /, UPLO='L', *, A=None, input=None, out=None",
          "(eigenvalues, eigenvectors): eigenvalues ascending and real, eigenvectors as columns,\n"
          "of Hermitian (..., M, M) matrices read from the lower triangle (torch's UPLO='U':\n"
          "the upper one).")
          .c_str());
  l.def(
      "solve",
      [](py::handle x1, py::handle x2, bool left, py::handle A, py::handle B, py::handle input,
         py::handle other, py::handle out) {
        const Tensor a = first_arg(x1, A, input, "solve");
        return with_out("solve", py::cast(linalg_solve(a, second_arg(x2, B, other, "solve"), left)),
                        out);
      },
      py::arg("x1") = missing(), py::arg("x2") = missing(), py::pos_only(), py::kw_only(),
      py::arg("left") = true, py::arg("A") = missing(), py::arg("B") = missing(),
      py::arg("input") = missing(), py::arg("other") = missing(), py::arg("out") = py::none(),
      sig("solve", "x1, x2, /, *, left=True, A=None, B=None, input=None, other=None, out=None",
          "Solves x1 @ out = x2 (out @ x1 = x2 when not `left`). x1: (..., M, M); x2: (..., M, "
          "K)\nstacks (batch dims broadcast), or a vector (M,) only when x2 is 1-D (the 2024.12\n"
          "standard's rule). PyTorch's batch of vectors, x2 of shape x1.shape[:-1], is taken\n"
          "where the standard's reading of x2 as (..., M, K) matrices cannot hold\n"
          "(x2.shape[-2] != M). torch's forms too: A=/input=, B=/other=.")
          .c_str());
  l.def(
      "qr",
      [qr_t](py::handle x, py::handle mode, py::handle A, py::handle input, py::handle out) {
        const Tensor t = first_arg(x, A, input, "qr");
        TS_CHECK(py::isinstance<py::str>(mode), TypeError,
                 "qr(): argument 'mode' (position 2) must be str, not ", type_name(mode));
        const std::string md = mode.cast<std::string>();
        if (md != "reduced" && md != "complete" && md != "r")
          throw ValueError("qr: mode must be 'reduced', 'complete' or torch's 'r', got " +
                           py::repr(mode).cast<std::string>());
        auto [q, r] = qr(t, md == "complete");
        if (md == "r") q = Tensor::empty({0}, t.dtype(), t.device());  // torch: R only
        return with_out("qr", qr_t(q, r), out);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("mode") = "reduced", py::kw_only(),
      py::arg("A") = missing(), py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("qr", "x, /, mode='reduced', *, A=None, input=None, out=None",
          "QR of (..., M, N): 'reduced' gives Q (..., M, K), R (..., K, N) with K = min(M, N);\n"
          "'complete' gives Q (..., M, M), R (..., M, N); torch's 'r' gives R only (Q empty).")
          .c_str());
  l.def(
      "svd",
      [svd_t](py::handle x, bool full_matrices, py::handle driver, py::handle A, py::handle input,
              py::handle out) {
        check_driver(driver, "svd");
        auto [u, s, vh] = svd(first_arg(x, A, input, "svd"), full_matrices);
        return with_out("svd", svd_t(u, s, vh), out);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("full_matrices") = true, py::kw_only(),
      py::arg("driver") = py::none(), py::arg("A") = missing(), py::arg("input") = missing(),
      py::arg("out") = py::none(),
      sig("svd", "x, /, full_matrices=True, *, driver=None, A=None, input=None, out=None",
          "x = U @ diag(S) @ Vh for (..., M, N): S (..., K) descending, K = min(M, N); U is\n"
          "(..., M, M) and Vh (..., N, N) when full_matrices, else (..., M, K) and (..., K, N).\n"
          "driver (torch's cuSOLVER choice) is checked and ignored.")
          .c_str());
  l.def(
      "svdvals",
      [](py::handle x, py::handle driver, py::handle A, py::handle input, py::handle out) {
        check_driver(driver, "svdvals");
        return with_out("svdvals", py::cast(svdvals(first_arg(x, A, input, "svdvals"))), out);
      },
      py::arg("x") = missing(), py::pos_only(), py::kw_only(), py::arg("driver") = py::none(),
      py::arg("A") = missing(), py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("svdvals", "x, /, *, driver=None, A=None, input=None, out=None",
          "Singular values (descending) of (..., M, N) -> (..., min(M, N)).")
          .c_str());
  def_tolerance(l, "matrix_rank", "tol", true, &matrix_rank,
                "Number of singular values (|eigenvalues| when hermitian) above max(atol, rtol * "
                "the\nlargest) of each matrix of (..., M, N) -> int64 (...). rtol defaults to\n"
                "max(M, N) * eps, or 0 when atol > 0 is given; torch's positional tol is atol.");
  def_tolerance(
      l, "pinv", "rcond", false, &pinv,
      "Moore-Penrose pseudo-inverse of (..., M, N) -> (..., N, M) via the SVD (eigh when\n"
      "hermitian), dropping singular values at or below max(atol, rtol * the largest); rtol\n"
      "defaults to max(M, N) * eps, or 0 when atol > 0 is given; torch's positional rcond is\n"
      "rtol. Differentiable with PyTorch's formula (Note [pinv backward] in\n"
      "csrc/autograd/formulas_linalg.cpp), which holds where the rank is locally constant.");
  const py::object lstsq_t =
      result_type(l, "LstsqResult",
                  py::make_tuple("solution", "residuals", "rank", "singular_values"), "lstsq");
  l.def(
      "lstsq",
      [lstsq_t](py::handle A, py::handle B, py::handle rcond, py::handle driver, py::handle input,
                py::handle b, py::handle other, py::handle out) {
        constexpr const char* op = "lstsq";
        const Tensor a = first_arg(A, missing(), input, op);
        const Tensor rhs = second_arg(B, b, other, op);
        std::optional<double> rc;
        if (!rcond.is_none()) {
          if (!PyFloat_Check(rcond.ptr()) && !PyLong_Check(rcond.ptr()))
            throw py::type_error("lstsq: argument 'rcond' must be a float or None, not " +
                                 type_name(rcond));
          rc = PyFloat_AsDouble(rcond.ptr());
        }
        std::optional<std::string> drv;
        if (!driver.is_none())
          drv = py::isinstance<py::str>(driver) ? driver.cast<std::string>()
                                                : py::repr(driver).cast<std::string>();
        const LstsqResult r = lstsq(a, rhs, rc, drv);
        return with_out(op, lstsq_t(r.solution, r.residuals, r.rank, r.singular_values), out);
      },
      py::arg("A") = missing(), py::arg("B") = missing(), py::arg("rcond") = py::none(),
      py::kw_only(), py::arg("driver") = py::none(), py::arg("input") = missing(),
      py::arg("b") = missing(), py::arg("other") = missing(), py::arg("out") = py::none(),
      sig("lstsq", "A, B, rcond=None, *, driver=None, input=None, b=None, other=None, out=None",
          "(solution, residuals, rank, singular_values) of min ||A X - B|| through the\n"
          "pseudo-inverse, singular values at or below rcond * the largest dropped (default:\n"
          "eps * max(M, N)). As torch's drivers: rank for all but 'gels', singular_values for\n"
          "'gelsd'/'gelss', and the squared residuals (..., K) when M > N for 'gels', and for\n"
          "'gelsd'/'gelss' when every matrix has full rank; the default driver is 'gelsy' on\n"
          "the CPU, 'gels' on CUDA. B may be a batch of vectors (B.ndim == A.ndim - 1).")
          .c_str());
  const py::object inv_ex_t =
      result_type(l, "InvExResult", py::make_tuple("inverse", "info"), "inv_ex");
  const py::object cholesky_ex_t =
      result_type(l, "CholeskyExResult", py::make_tuple("L", "info"), "cholesky_ex");
  const py::object solve_ex_t =
      result_type(l, "SolveExResult", py::make_tuple("result", "info"), "solve_ex");
  l.def(
      "inv_ex",
      [inv_ex_t](py::handle A, bool check_errors, py::handle input, py::handle out) {
        auto [r, info] = inv_ex(first_arg(A, missing(), input, "inv_ex"), check_errors);
        return with_out("inv_ex", inv_ex_t(r, info), out);
      },
      py::arg("A") = missing(), py::kw_only(), py::arg("check_errors") = false,
      py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("inv_ex", "A, *, check_errors=False, input=None, out=None",
          "(inverse, info) of linalg.inv: info (int32, per matrix) is 0 where it succeeded, else\n"
          "the 1-based index of the first zero pivot of the LU factorization (that matrix's\n"
          "inverse is NaN; the others are exact). check_errors=True raises instead.")
          .c_str());
  l.def(
      "cholesky_ex",
      [cholesky_ex_t](py::handle A, py::handle upper, bool check_errors, py::handle input,
                      py::handle out) {
        auto [r, info] = cholesky_ex(first_arg(A, missing(), input, "cholesky_ex"),
                                     flag(upper, "cholesky_ex", "upper"), check_errors);
        return with_out("cholesky_ex", cholesky_ex_t(r, info), out);
      },
      py::arg("A") = missing(), py::kw_only(), py::arg("upper") = false,
      py::arg("check_errors") = false, py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("cholesky_ex", "A, *, upper=False, check_errors=False, input=None, out=None",
          "(L, info) of linalg.cholesky: info (int32, per matrix) is 0 where it succeeded, else\n"
          "the order of the leading minor that is not positive-definite (that factor is NaN).")
          .c_str());
  l.def(
      "solve_ex",
      [solve_ex_t](py::handle A, py::handle B, bool left, bool check_errors, py::handle input,
                   py::handle b, py::handle other, py::handle out) {
        const Tensor a = first_arg(A, missing(), input, "solve_ex");
        auto [r, info] = solve_ex(a, second_arg(B, b, other, "solve_ex"), left, check_errors);
        return with_out("solve_ex", solve_ex_t(r, info), out);
      },
      py::arg("A") = missing(), py::arg("B") = missing(), py::kw_only(), py::arg("left") = true,
      py::arg("check_errors") = false, py::arg("input") = missing(), py::arg("b") = missing(),
      py::arg("other") = missing(), py::arg("out") = py::none(),
      sig("solve_ex",
          "A, B, *, left=True, check_errors=False, input=None, b=None, other=None, out=None",
          "(result, info) of linalg.solve: info (int32, per matrix of A) is 0 where A is\n"
          "invertible, else the 1-based index of its first zero pivot (that result is NaN).")
          .c_str());
  l.def(
      "multi_dot",
      [](py::handle tensors, py::handle out) {
        bool ok = py::isinstance<py::list>(tensors) || py::isinstance<py::tuple>(tensors);
        if (ok)
          for (py::handle t : tensors) ok = ok && py::isinstance<Tensor>(t);
        if (!ok)
          throw py::type_error(
              "linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of Tensors, not " +
              type_name(tensors));
        std::vector<Tensor> xs;
        for (py::handle t : tensors) xs.push_back(t.cast<const Tensor&>());
        return with_out("multi_dot", py::cast(multi_dot(xs)), out);
      },
      py::arg("tensors"), py::kw_only(), py::arg("out") = py::none(),
      sig("multi_dot", "tensors, *, out=None",
          "A @ B @ ... of 2-D tensors, the first may be 1-D (a row) and the last 1-D (a column),\n"
          "as torch.linalg.multi_dot.")
          .c_str());
  l.def(
      "tensorinv",
      [](py::handle A, py::handle ind, py::handle input, py::handle out) {
        return with_out("tensorinv",
                        py::cast(tensorinv(first_arg(A, missing(), input, "tensorinv"),
                                           int_arg(ind, "tensorinv", "ind"))),
                        out, OutDtype::Cast);
      },
      py::arg("A") = missing(), py::arg("ind") = 2, py::kw_only(), py::arg("input") = missing(),
      py::arg("out") = py::none(),
      sig("tensorinv", "A, ind=2, *, input=None, out=None",
          "The inverse of A seen as a matrix of its first `ind` dims by the rest, of shape\n"
          "A.shape[ind:] + A.shape[:ind].")
          .c_str());
  l.def(
      "tensorsolve",
      [](py::handle A, py::handle B, py::handle dims, py::handle input, py::handle b,
         py::handle other, py::handle out) {
        const Tensor a = first_arg(A, missing(), input, "tensorsolve");
        const Tensor rhs = second_arg(B, b, other, "tensorsolve");
        return with_out("tensorsolve",
                        py::cast(tensorsolve(
                            a, rhs,
                            dims.is_none() ? std::nullopt
                                           : std::optional<Shape>(to_shape(dims, "tensorsolve")))),
                        out, OutDtype::Cast);
      },
      py::arg("A") = missing(), py::arg("B") = missing(), py::arg("dims") = py::none(),
      py::kw_only(), py::arg("input") = missing(), py::arg("b") = missing(),
      py::arg("other") = missing(), py::arg("out") = py::none(),
      sig("tensorsolve", "A, B, dims=None, *, input=None, b=None, other=None, out=None",
          "X with tensordot(A, X, X.ndim) == B; A's dims `dims` are moved to the end first.")
          .c_str());
  l.def(
      "matrix_exp",
      [](py::handle input, py::handle A) {
        const bool has_a = !A.is(missing());
        if (has_a == !input.is(missing()))
          throw py::type_error(has_a ? "matrix_exp() got multiple values for argument 'input'"
                                     : "matrix_exp() missing required argument 'input' (pos 1)");
        const py::handle x = has_a ? A : input;
        if (!py::isinstance<Tensor>(x))
          throw py::type_error("matrix_exp: argument 1 must be a tensor, got " + type_name(x));
        return matrix_exp(x.cast<const Tensor&>());
      },
      py::arg("input") = missing(), py::kw_only(), py::arg("A") = missing(),
      sig("matrix_exp", "input, *, A=None",
          "exp of square (..., M, M) matrices by scaling and squaring with a degree-18 Taylor\n"
          "polynomial; differentiable. tessera.matrix_exp and Tensor.matrix_exp are this\n"
          "function; torch.linalg's A= too.")
          .c_str());
  l.def(
      "householder_product",
      [](py::handle A, py::handle tau, py::handle input, py::handle out) {
        const Tensor a = first_arg(A, missing(), input, "householder_product");
        if (tau.is(missing()))
          throw py::type_error("householder_product() missing required argument 'tau' (pos 2)");
        return with_out("householder_product",
                        py::cast(householder_product(
                            a, tensor_or_throw(tau, "linalg.householder_product", "tau"))),
                        out, OutDtype::Cast);
      },
      py::arg("A") = missing(), py::arg("tau") = missing(), py::kw_only(),
      py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("householder_product", "A, tau, *, input=None, out=None",
          "The first n columns of the product of the k Householder reflectors I - tau_i v_i v_i^H\n"
          "stored below the diagonal of A (..., m, n) (LAPACK's orgqr, as geqrf leaves them),\n"
          "m >= n >= k = tau.shape[-1]; differentiable. torch.orgqr and Tensor.orgqr are this\n"
          "function.")
          .c_str());
  l.def(
      "vander",
      [](py::handle x, py::handle N) {
        const Tensor t = tensor_or_throw(x, "linalg.vander", "x");
        return vander(t, N.is_none() ? std::nullopt
                                     : std::optional<int64_t>(int_arg(N, "linalg.vander", "N")));
      },
      py::arg("x"), py::kw_only(), py::arg("N") = py::none(),
      sig("vander", "x, *, N=None",
          "torch.linalg.vander: the powers x^0 ... x^(N-1) of x (..., K) along a new last dim\n"
          "(N defaults to K; integer inputs in int64).")
          .c_str());
  l.def(
      "cross",
      [](py::handle x1, py::handle x2, py::handle axis, py::handle dim, py::handle input,
         py::handle other, py::handle out) {
        const Tensor a = input_arg(x1, input, "cross");
        if (x2.is(missing()) == other.is(missing()))
          throw py::type_error(other.is(missing())
                                   ? "cross() missing required argument 'other' (pos 2)"
                                   : "cross() got multiple values for argument 'other'");
        const Tensor b = operand_or_throw(x2.is(missing()) ? other : x2, "cross");
        // torch's dim= wins over the standard's axis=
        return with_out("cross",
                        py::cast(cross(a, b, int_arg(dim.is_none() ? axis : dim, "cross", "axis"))),
                        out);
      },
      py::arg("x1") = missing(), py::arg("x2") = missing(), py::pos_only(), py::kw_only(),
      py::arg("axis") = -1, py::arg("dim") = py::none(), py::arg("input") = missing(),
      py::arg("other") = missing(), py::arg("out") = py::none(),
      sig("cross", "x1, x2, /, *, axis=-1, dim=None, input=None, other=None, out=None",
          "Cross product of 3-element vectors along `axis` (torch: `dim`), counted in the\n"
          "broadcast shape; other dims broadcast. torch's forms too: input=, other=, dim=.")
          .c_str());
  l.def(
      "outer",
      [](py::handle x1, py::handle x2) {
        return outer(operand_or_throw(x1, "outer"), operand_or_throw(x2, "outer"));
      },
      py::arg("x1"), py::arg("x2"), py::pos_only(),
      sig("outer", "x1, x2, /", "Outer product of 1-D x1 (M,) and x2 (N,) -> (M, N).").c_str());
  l.def(
      "diagonal",
      [](py::handle x, py::handle offset, py::handle dim1, py::handle dim2, py::handle A,
         py::handle input) {
        const Tensor t = first_arg(x, A, input, "diagonal");
        const bool standard = dim1.is_none() && dim2.is_none();
        TS_CHECK(!standard || t.ndim() >= 2, ValueError,
                 "diagonal: expected a (stack of) matrices with at least 2 dims, got shape ",
                 shape_str(t.shape()));
        return diagonal(t, int_arg(offset, "diagonal", "offset"),
                        dim1.is_none() ? -2 : int_arg(dim1, "diagonal", "dim1"),
                        dim2.is_none() ? -1 : int_arg(dim2, "diagonal", "dim2"));
      },
      py::arg("x") = missing(), py::pos_only(), py::kw_only(), py::arg("offset") = 0,
      py::arg("dim1") = py::none(), py::arg("dim2") = py::none(), py::arg("A") = missing(),
      py::arg("input") = missing(),
      sig("diagonal", "x, /, *, offset=0, dim1=-2, dim2=-1, A=None, input=None",
          "The offset-th diagonal of each matrix of (..., M, N) as a view of shape (..., K);\n"
          "torch's dim1= / dim2= pick other dims (then any rank), A= / input= the input.")
          .c_str());
  l.def(
      "trace",
      [](py::handle x, py::handle offset, py::handle dtype) {
        const Tensor t = operand_or_throw(x, "trace");
        TS_CHECK(t.ndim() >= 2, ValueError,
                 "trace: expected a (stack of) matrices with at least 2 dims, got shape ",
                 shape_str(t.shape()));
        return sum(diagonal(t, int_arg(offset, "trace", "offset"), -2, -1), Shape{-1}, false,
                   dtype.is_none() ? std::nullopt : std::optional<DType>(to_dtype(dtype)));
      },
      py::arg("x"), py::pos_only(), py::kw_only(), py::arg("offset") = 0,
      py::arg("dtype") = py::none(),
      sig("trace", "x, /, *, offset=0, dtype=None",
          "Sum of the offset-th diagonal of each matrix of (..., M, N) -> (...), accumulated in\n"
          "`dtype` when given (the standard's sum rules otherwise).")
          .c_str());
}

}  // namespace ts::python
