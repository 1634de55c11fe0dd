// The LU family and triangular solves (ops/linalg_lu.h) with torch's argument forms: in
// ts.linalg (_C._linalg) solve_triangular, cond, lu_factor, lu_factor_ex, lu, lu_solve; in the
// namespace (and as Tensor methods where torch has them) the legacy lu, lu_solve, lu_unpack and
// triangular_solve. Several results are named tuples (torch.return_types' fields), made here.
#include <functional>
#include <string>
#include <vector>

#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/linalg_lu.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/out_arg.h"

namespace ts::python {

namespace {

std::string sig(const char* name, const char* params, const char* doc) {
  return std::string(name) + "(" + params + ")\n--\n\n" + doc;
}

// A named tuple class (module tessera.linalg), kept alive by the module attribute `attr`.
py::object result_type(py::module_& l, const char* attr, const char* name, py::tuple fields) {
  py::object cls = py::module_::import("collections")
                       .attr("namedtuple")(name, fields, py::arg("module") = "tessera.linalg");
  l.add_object(attr, cls);
  return cls;
}

// One of torch's names of an argument (`x` positionally or by its name, or an alias).
Tensor one_of(std::initializer_list<py::handle> given, const char* op, const char* name, int pos) {
  py::handle found = missing();
  for (py::handle h : given) {
    if (h.is(missing())) continue;
    if (!found.is(missing()))
      throw py::type_error(str(op, "() got multiple values for argument '", name, "'"));
    found = h;
  }
  if (found.is(missing()))
    throw py::type_error(str(op, "() missing required argument '", name, "' (pos ", pos, ")"));
  return tensor_or_throw(found, op, name);
}

const Tensor& pivots_arg(py::handle h, const char* op, const char* name) {
  return tensor_or_throw(h, op, name);
}

// cond's p: None / 2 / -2 through the singular values, else a matrix norm's order.
Tensor cond_of(const Tensor& a, py::handle p) {
  if (p.is_none()) return cond_svd(a, false);
  const std::string text = py::str(p).cast<std::string>();
  MatrixNormOrd ord;
  bool valid = false;
  if (py::isinstance<py::str>(p)) {
    ord.name = text;
    valid = text == "fro" || text == "nuc";
  } else if (!PyBool_Check(p.ptr()) && (PyFloat_Check(p.ptr()) || PyIndex_Check(p.ptr()))) {
    ord.p = PyFloat_AsDouble(p.ptr());
    if (ord.p == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    if (ord.p == 2 || ord.p == -2) return cond_svd(a, ord.p == -2);
    valid = ord.p == 1 || ord.p == -1 || std::isinf(ord.p);
  } else {
    throw py::type_error("linalg.cond(): argument 'p' must be a number, a str or None, not " +
                         type_name(p));
  }
  if (!valid && a.ndim() >= 2 && a.dim(a.ndim() - 1) == a.dim(a.ndim() - 2))
    throw RuntimeError("linalg.cond got an invalid norm type: " + text +
                       "; hint: p is one of None, 2, -2, 1, -1, inf, -inf, 'fro', 'nuc'");
  return cond_norm(a, ord, text);
}

// linalg.lu_factor / linalg.lu: A (or input=), pivot=, out=.
void def_pivoted(py::module_& l, const char* name,
                 std::function<py::object(const Tensor&, bool)> fn, const char* doc) {
  const std::string op = std::string("linalg.") + name;
  l.def(
      name,
      [op, fn](py::handle A, py::handle pivot, py::handle input, py::handle out) {
        const Tensor a = one_of({A, input}, op.c_str(), "A", 1);
        return with_out(op.c_str(), fn(a, bool_arg(pivot, op.c_str(), "pivot")), out);
      },
      py::arg("A") = missing(), py::kw_only(), py::arg("pivot") = true,
      py::arg("input") = missing(), py::arg("out") = py::none(),
      sig(name, "A, *, pivot=True, input=None, out=None", doc).c_str());
}

}  // namespace

void init_linalg_lu(py::module_& m, py::module_& l) {
  const py::object lu_factor_t =
      result_type(l, "LUFactorResult", "lu_factor", py::make_tuple("LU", "pivots"));
  const py::object lu_factor_ex_t =
      result_type(l, "LUFactorExResult", "lu_factor_ex", py::make_tuple("LU", "pivots", "info"));
  const py::object lu_t = result_type(l, "LUResult", "lu", py::make_tuple("P", "L", "U"));
  const py::object unpack_t =
      result_type(l, "LUUnpackResult", "lu_unpack", py::make_tuple("P", "L", "U"));
  const py::object infos_t =
      result_type(l, "LUWithInfoResult", "_lu_with_info", py::make_tuple("LU", "pivots", "info"));
  const py::object triangular_t = result_type(l, "TriangularSolveResult", "triangular_solve",
                                              py::make_tuple("solution", "cloned_coefficient"));

  l.def(
      "solve_triangular",
      [](py::handle A, py::handle B, py::handle upper, py::handle left, py::handle unitriangular,
         py::handle input, py::handle b, py::handle other, py::handle out) {
        constexpr const char* op = "linalg.solve_triangular";
        const Tensor a = one_of({A, input}, op, "A", 1);
        const Tensor rhs = one_of({B, b, other}, op, "B", 2);
        if (upper.is(missing()))
          throw py::type_error(
              "linalg.solve_triangular() missing required keyword argument "
              "'upper'");
        return with_out(op,
                        py::cast(solve_triangular(a, rhs, bool_arg(upper, op, "upper"),
                                                  bool_arg(left, op, "left"),
                                                  bool_arg(unitriangular, op, "unitriangular"))),
                        out);
      },
      py::arg("A") = missing(), py::arg("B") = missing(), py::kw_only(),
      py::arg("upper") = missing(), py::arg("left") = true, py::arg("unitriangular") = false,
      py::arg("input") = missing(), py::arg("b") = missing(), py::arg("other") = missing(),
      py::arg("out") = py::none(),
      sig("solve_triangular",
          "A, B, *, upper, left=True, unitriangular=False, input=None, b=None, other=None, "
          "out=None",
          "Solves T X = B (X T = B when not `left`) for T the upper (`upper`) or lower triangle\n"
          "of square A (..., n, n), its diagonal taken as ones when `unitriangular`; batch dims\n"
          "broadcast. A zero on the diagonal gives inf / nan, as BLAS trsm (no error).\n"
          "Differentiable. torch's forms too: input= for A, b= / other= for B.")
          .c_str());
  l.def(
      "cond",
      [](py::handle A, py::handle p, py::handle input, py::handle out) {
        const Tensor a = one_of({A, input}, "linalg.cond", "A", 1);
        return with_out("linalg.cond", py::cast(cond_of(a, p)), out, OutDtype::Cast);
      },
      py::arg("A") = missing(), py::arg("p") = py::none(), py::kw_only(),
      py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("cond", "A, p=None, *, input=None, out=None",
          "The condition number of (..., m, n) matrices: sigma_max / sigma_min for p None or 2\n"
          "(-2: its inverse), else norm(A, p) * norm(inv(A), p) for square A with p one of 1,\n"
          "-1, inf, -inf, 'fro', 'nuc' (inf for singular matrices). Real results.")
          .c_str());
  def_pivoted(
      l, "lu_factor",
      [lu_factor_t](const Tensor& a, bool pivot) {
        auto [lu, piv, info] = lu_factor_ex(a, pivot, true, "linalg.lu_factor");
        return lu_factor_t(lu, piv);
      },
      "(LU, pivots) of (..., m, n) matrices by partial pivoting, LAPACK's packed layout: "
      "L\n(unit diagonal) below and U on and above the diagonal of LU; pivots int32 "
      "(..., k),\nk = min(m, n), 1-based row swaps. A zero pivot raises LinAlgError "
      "(lu_factor_ex\nreports it instead). Differentiable in LU.");
  l.def(
      "lu_factor_ex",
      [lu_factor_ex_t](py::handle A, py::handle pivot, py::handle check_errors, py::handle input,
                       py::handle out) {
        constexpr const char* op = "linalg.lu_factor_ex";
        const Tensor a = one_of({A, input}, op, "A", 1);
        auto [lu, piv, info] = lu_factor_ex(a, bool_arg(pivot, op, "pivot"),
                                            bool_arg(check_errors, op, "check_errors"), op);
        return with_out(op, lu_factor_ex_t(lu, piv, info), out);
      },
      py::arg("A") = missing(), py::kw_only(), py::arg("pivot") = true,
      py::arg("check_errors") = false, py::arg("input") = missing(), py::arg("out") = py::none(),
      sig("lu_factor_ex", "A, *, pivot=True, check_errors=False, input=None, out=None",
          "(LU, pivots, info) of lu_factor; info (int32 (...)) is 0, or the 1-based index of the\n"
          "first zero pivot of that matrix (whose factors are still returned). check_errors=True\n"
          "raises LinAlgError instead.")
          .c_str());
  def_pivoted(
      l, "lu",
      [lu_t](const Tensor& a, bool pivot) {
        auto [p, lo, up] = linalg_lu(a, pivot);
        return lu_t(p, lo, up);
      },
      "(P, L, U) with A = P @ L @ U for (..., m, n) matrices, singular ones included: "
      "P\n(..., m, m) a permutation, L (..., m, k) unit lower and U (..., k, n) upper\n"
      "triangular, k = min(m, n). Differentiable in L and U.");
  l.def(
      "lu_solve",
      [](py::handle LU, py::handle pivots, py::handle B, py::handle left, py::handle adjoint,
         py::handle out) {
        constexpr const char* op = "linalg.lu_solve";
        const Tensor& lu = tensor_or_throw(LU, op, "LU");
        const Tensor x = lu_solve(lu, pivots_arg(pivots, op, "pivots"), tensor_or_throw(B, op, "B"),
                                  bool_arg(left, op, "left"), bool_arg(adjoint, op, "adjoint"));
        return with_out(op, py::cast(x), out);
      },
      py::arg("LU"), py::arg("pivots"), py::arg("B"), py::kw_only(), py::arg("left") = true,
      py::arg("adjoint") = false, py::arg("out") = py::none(),
      sig("lu_solve", "LU, pivots, B, *, left=True, adjoint=False, out=None",
          "Solves A X = B (X A = B when not `left`; A^H in place of A when `adjoint`) from A's\n"
          "(LU, pivots) of lu_factor; batch dims broadcast. Differentiable in LU and B.")
          .c_str());

  // ---- torch's legacy spellings in the namespace (Tensor methods too, but lu_unpack)
  m.def(
      "lu_unpack",
      [unpack_t](py::handle LU_data, py::handle LU_pivots, py::handle unpack_data,
                 py::handle unpack_pivots, py::handle out) {
        constexpr const char* op = "lu_unpack";
        auto [p, lo, up] = lu_unpack(
            tensor_or_throw(LU_data, op, "LU_data"), pivots_arg(LU_pivots, op, "LU_pivots"),
            bool_arg(unpack_data, op, "unpack_data"), bool_arg(unpack_pivots, op, "unpack_pivots"));
        return with_out(op, unpack_t(p, lo, up), out);
      },
      py::arg("LU_data"), py::arg("LU_pivots"), py::arg("unpack_data") = true,
      py::arg("unpack_pivots") = true, py::kw_only(), py::arg("out") = py::none(),
      sig("lu_unpack", "LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None",
          "(P, L, U) with A = P @ L @ U from lu_factor's (LU, pivots); L and U are empty unless\n"
          "unpack_data, P unless unpack_pivots. Differentiable in LU_data.")
          .c_str());
  m.def(
      "lu",
      [infos_t](py::handle A, py::handle pivot, py::handle get_infos, py::handle out) {
        constexpr const char* op = "lu";
        auto [lu, piv, info] =
            lu_factor_ex(tensor_or_throw(A, op, "A"), bool_arg(pivot, op, "pivot"), false, op);
        if (bool_arg(get_infos, op, "get_infos")) return with_out(op, infos_t(lu, piv, info), out);
        return with_out(op, py::make_tuple(lu, piv), out);
      },
      py::arg("A"), py::arg("pivot") = true, py::arg("get_infos") = false, py::kw_only(),
      py::arg("out") = py::none(),
      sig("lu", "A, pivot=True, get_infos=False, *, out=None",
          "Deprecated torch.lu: (LU, pivots) of linalg.lu_factor_ex, with its info when\n"
          "get_infos (never raises).")
          .c_str());
  m.def(
      "lu_solve",
      [](py::handle input, py::handle LU_data, py::handle LU_pivots, py::handle out) {
        constexpr const char* op = "lu_solve";
        const Tensor x = lu_solve(tensor_or_throw(LU_data, op, "LU_data"),
                                  pivots_arg(LU_pivots, op, "LU_pivots"),
                                  tensor_or_throw(input, op, "input"), true, false);
        return with_out(op, py::cast(x), out);
      },
      py::arg("input"), py::arg("LU_data"), py::arg("LU_pivots"), py::kw_only(),
      py::arg("out") = py::none(),
      sig("lu_solve", "input, LU_data, LU_pivots, *, out=None",
          "Deprecated torch.lu_solve: linalg.lu_solve(LU_data, LU_pivots, input).")
          .c_str());
  m.def(
      "triangular_solve",
      [triangular_t](py::handle input, py::handle A, py::handle upper, py::handle transpose,
                     py::handle unitriangular, py::handle b, py::handle out) {
        constexpr const char* op = "triangular_solve";
        const Tensor rhs = one_of({input, b}, op, "input", 1);
        const Tensor a = one_of({A}, op, "A", 2);
        const bool tr = bool_arg(transpose, op, "transpose");
        const Tensor x =
            solve_triangular(tr ? matrix_transpose(a) : a, rhs, bool_arg(upper, op, "upper") != tr,
                             true, bool_arg(unitriangular, op, "unitriangular"));
        return with_out(op, triangular_t(x, clone(a)), out);
      },
      py::arg("input") = missing(), py::arg("A") = missing(), py::arg("upper") = true,
      py::arg("transpose") = false, py::arg("unitriangular") = false, py::kw_only(),
      py::arg("b") = missing(), py::arg("out") = py::none(),
      sig("triangular_solve",
          "input, A, upper=True, transpose=False, unitriangular=False, *, b=None, out=None",
          "Deprecated torch.triangular_solve: (solution, cloned_coefficient), the solution X of\n"
          "op(A) X = input with op(A) = A^T when `transpose`, and a copy of A.")
          .c_str());
  bind_functions_as_methods(m, {"lu", "lu_solve", "triangular_solve"});
}

}  // namespace ts::python
