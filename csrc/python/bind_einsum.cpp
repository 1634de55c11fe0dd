// The binding of einsum (ops/einsum.h) with every call form (issue 17): NumPy's / PyTorch's
// einsum(equation, *operands), PyTorch's single list of operands einsum(equation, [a, b]) and
// its sublist form einsum(op1, [0, 1], op2, [1, 2], [0, 2]); NumPy's optimize= is accepted (the
// contraction order is always chosen greedily).
#include "ops/einsum.h"
#include "python/convert.h"
#include "python/input_arg.h"

namespace ts::python {

namespace {

// An operand: a tensor, or a number or array-like (a list, a NumPy array) as asarray reads it;
// anything else (None, a string, ...) is a TypeError naming einsum and the operand.
Tensor operand_of(py::handle h, size_t i) {
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  const bool number = PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()) || PyComplex_Check(h.ptr());
  const bool array_like = PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) ||
                          py::isinstance<py::array>(h) || py::hasattr(h, "__array__");
  TS_CHECK(number || array_like, TypeError, "einsum(): expected a tensor as operand ", i, ", got ",
           type_name(h), "; hint: einsum('ij,jk->ik', a, b)");
  return py::module_::import("tessera").attr("asarray")(h).cast<Tensor>();
}

// The equation of one sublist ([0, 1, Ellipsis] -> "ab...").
std::string sublist_word(py::handle sub) {
  TS_CHECK(py::isinstance<py::list>(sub) || py::isinstance<py::tuple>(sub), TypeError,
           "einsum(): in the sublist form each operand is followed by a list of subscripts "
           "(ints), got ",
           type_name(sub), "; hint: einsum(a, [0, 1], b, [1, 2], [0, 2])");
  std::string w;
  for (py::handle v : py::reinterpret_borrow<py::iterable>(sub)) {
    if (v.is(py::ellipsis())) {
      w += "...";
      continue;
    }
    TS_CHECK(PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()), TypeError,
             "einsum(): subscripts in the sublist form must be ints or Ellipsis, got ",
             type_name(v));
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    TS_CHECK(i >= 0 && i < 52, ValueError,
             "einsum(): expected subscript to be within the range [0, 52), got ",
             py::str(v).cast<std::string>());
    w.push_back(static_cast<char>(i < 26 ? 'a' + i : 'A' + (i - 26)));
  }
  return w;
}

Tensor einsum_py(const py::args& args, py::handle /*optimize*/) {
  TS_CHECK(args.size() >= 1, TypeError,
           "einsum(): missing the equation; hint: einsum('ij,jk->ik', a, b)");
  TS_CHECK(args.size() >= 2, ValueError,
           "einsum(): must specify the equation string and at least one operand, or at least one "
           "operand and its subscripts list; hint: einsum('ij->ji', x)");
  std::vector<Tensor> ops;
  std::string eq;
  if (py::isinstance<Tensor>(args[0])) {  // the sublist form
    const size_t n = args.size();
    std::string lhs;
    for (size_t i = 0; i + 1 < n; i += 2) {
      ops.push_back(operand_of(args[i], i / 2));
      lhs += (i ? "," : "") + sublist_word(args[i + 1]);
    }
    eq = n % 2 == 1 ? lhs + "->" + sublist_word(args[n - 1]) : lhs;
  } else {
    TS_CHECK(py::isinstance<py::str>(args[0]), TypeError,
             "einsum(): the equation must be a string such as 'ij,jk->ik', got ",
             py::str(py::type::handle_of(args[0]).attr("__name__")).cast<std::string>());
    eq = args[0].cast<std::string>();
    const bool one_list = args.size() == 2 &&
                          (py::isinstance<py::list>(args[1]) || py::isinstance<py::tuple>(args[1]));
    if (one_list) {
      for (py::handle h : py::reinterpret_borrow<py::sequence>(args[1]))
        ops.push_back(operand_of(h, ops.size()));
    } else {
      for (size_t i = 1; i < args.size(); ++i) ops.push_back(operand_of(args[i], i - 1));
    }
  }
  return einsum(eq, ops);
}

}  // namespace

void init_einsum(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def("einsum", &einsum_py, py::kw_only(), py::arg("optimize") = true,
        "einsum(equation, /, *operands, optimize=True)\n--\n\n"
        "Einstein summation, e.g. einsum('bij,bjk->bik', a, b), einsum('ii', a) (trace),\n"
        "einsum('...ij->...ji', a); implicit output (the broadcast dims, then the labels\n"
        "appearing once, sorted) without '->'. Operands promote to a common dtype; PyTorch's\n"
        "single list of operands and its sublist form einsum(op1, [0, 1], op2, [1, 2], [0, 2])\n"
        "are accepted. optimize is accepted for NumPy: pairs are contracted greedily by the\n"
        "smallest intermediate. Mismatches raise tessera.errors.ValueError (also a\n"
        "RuntimeError).");
}

}  // namespace ts::python
