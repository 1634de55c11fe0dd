// Bindings of the set functions (ops/unique.h), each defined once (issue 17): torch.unique and
// unique_consecutive (x.unique / x.unique_consecutive are the same functions), the array API's
// unique_all / unique_counts / unique_inverse / unique_values (named tuples), isin with a
// Python number on either side, and torch.cross (x.cross too; linalg.cross is in
// bind_linalg_decomp.cpp).
#include "ops/elementwise.h"
#include "ops/unique.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

py::object torch_return_type(const char* name, std::initializer_list<const char*> fields);

namespace {

// torch's TypeError for a non-tensor where `op` takes the Tensor `name` at `pos`.
const Tensor& torch_tensor(py::handle h, const char* op, const char* name, int pos) {
  if (!py::isinstance<Tensor>(h))
    throw TypeError(str(op, "(): argument '", name, "' (position ", pos, ") must be Tensor, not ",
                        type_name(h)));
  return h.cast<const Tensor&>();
}

// The array API's x: a tensor, TypeError otherwise.
const Tensor& array_x(py::handle h, const char* op) {
  if (!py::isinstance<Tensor>(h))
    throw TypeError(str(op, ": x must be a tensor, got ", type_name(h),
                        "; hint: convert it with tessera.asarray first"));
  return h.cast<const Tensor&>();
}

// A flag: a Python (or NumPy) bool, as torch requires; TypeError naming the op otherwise.
bool flag(py::handle h, const char* op, const char* name) {
  if (!PyBool_Check(h.ptr()) && type_name(h) != "bool_")
    throw TypeError(str(op, "(): argument '", name, "' must be bool, not ", type_name(h)));
  return PyObject_IsTrue(h.ptr()) == 1;
}

std::optional<int64_t> dim_of(py::handle dim, const char* op) {
  if (dim.is_none()) return std::nullopt;
  return int_arg(dim, op, "dim");
}

// torch's result: values alone, or the tuple (values, [inverse], [counts]).
py::object torch_unique_result(UniqueParts r, bool inverse, bool counts) {
  if (!inverse && !counts) return py::cast(std::move(r.values));
  py::list out;
  out.append(py::cast(std::move(r.values)));
  if (inverse) out.append(py::cast(std::move(r.inverse)));
  if (counts) out.append(py::cast(std::move(r.counts)));
  return py::tuple(out);
}

py::object unique_py(py::handle input, py::handle sorted, py::handle return_inverse,
                     py::handle return_counts, py::handle dim) {
  const Tensor& x = torch_tensor(input, "unique", "input", 1);
  flag(sorted, "unique", "sorted");  // torch sorts either way (as its CPU unique does)
  const bool inv = flag(return_inverse, "unique", "return_inverse"),
             cnt = flag(return_counts, "unique", "return_counts");
  return torch_unique_result(unique(x, dim_of(dim, "unique"), false, false, inv, cnt), inv, cnt);
}

py::object unique_consecutive_py(py::handle input, py::handle return_inverse,
                                 py::handle return_counts, py::handle dim) {
  const char* op = "unique_consecutive";
  const Tensor& x = torch_tensor(input, op, "input", 1);
  const bool inv = flag(return_inverse, op, "return_inverse"),
             cnt = flag(return_counts, op, "return_counts");
  return torch_unique_result(unique(x, dim_of(dim, op), true, false, inv, cnt), inv, cnt);
}

// The array API's unique_all / unique_counts / unique_inverse (named tuples) and
// unique_values (the values alone), by name.
py::object array_unique(py::handle h, const std::string& op) {
  const bool all = op == "unique_all", counts = all || op == "unique_counts",
             inverse = all || op == "unique_inverse";
  UniqueParts r = unique(array_x(h, op.c_str()), std::nullopt, false, all, inverse, counts);
  if (all)
    return torch_return_type("UniqueAllResult", {"values", "indices", "inverse_indices", "counts"})(
        r.values, r.indices, r.inverse, r.counts);
  if (counts)
    return torch_return_type("UniqueCountsResult", {"values", "counts"})(r.values, r.counts);
  if (inverse)
    return torch_return_type("UniqueInverseResult", {"values", "inverse_indices"})(r.values,
                                                                                   r.inverse);
  return py::cast(std::move(r.values));
}

// An isin operand: a tensor, or a Python number / array-like (a number stays weak).
Tensor isin_operand(py::handle h, const char* name, int pos) {
  Tensor t;
  if (!to_operand(h, t))
    throw TypeError(str("isin(): argument '", name, "' (position ", pos,
                        ") must be Tensor or a number, not ", type_name(h)));
  return t;
}

constexpr const char* kUniqueDoc =
    "unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)\n--\n\n"
    "torch.unique: the distinct values of the flattened input in ascending order (NaNs last,\n"
    "each NaN its own value; -0.0 merges with 0.0), or with dim the distinct slices along dim\n"
    "in lexicographic order. With return_inverse / return_counts also (in that order) the\n"
    "int64 position of each element (slice) in the result, input's shape (with dim: its\n"
    "length along dim), and how often each value occurs. sorted is accepted; the result is\n"
    "sorted either way. Not differentiable.";
constexpr const char* kUniqueConsecutiveDoc =
    "unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)\n--\n\n"
    "torch.unique_consecutive: each run of equal consecutive elements of the flattened input\n"
    "(or slices along dim) collapsed to one, plus the int64 inverse indices (which run each\n"
    "element belongs to) and run lengths when asked. Not differentiable.";

}  // namespace

void init_sets(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def("unique", &unique_py, py::arg("input"), py::arg("sorted") = true,
        py::arg("return_inverse") = false, py::arg("return_counts") = false,
        py::arg("dim") = py::none(), kUniqueDoc);
  m.def("unique_consecutive", &unique_consecutive_py, py::arg("input"),
        py::arg("return_inverse") = false, py::arg("return_counts") = false,
        py::arg("dim") = py::none(), kUniqueConsecutiveDoc);
  m.def(
      "unique_all", [](py::handle x) { return array_unique(x, "unique_all"); }, py::arg("x"),
      py::pos_only(),
      "unique_all(x, /)\n--\n\n"
      "UniqueAllResult(values, indices, inverse_indices, counts) of the array API: the sorted\n"
      "distinct values of x (NaNs last and each distinct; complex values in NumPy's order),\n"
      "the flat index of each one's first occurrence, for every element of x the position of\n"
      "its value in values (x's shape), and how often each occurs. Index arrays are int64.");
  m.def(
      "unique_counts", [](py::handle x) { return array_unique(x, "unique_counts"); }, py::arg("x"),
      py::pos_only(),
      "unique_counts(x, /)\n--\n\n"
      "UniqueCountsResult(values, counts): the sorted distinct values of x and how often each\n"
      "occurs (int64).");
  m.def(
      "unique_inverse", [](py::handle x) { return array_unique(x, "unique_inverse"); },
      py::arg("x"), py::pos_only(),
      "unique_inverse(x, /)\n--\n\n"
      "UniqueInverseResult(values, inverse_indices): the sorted distinct values of x and, for\n"
      "every element of x, the int64 position of its value in values (values[inverse_indices]\n"
      "rebuilds x).");
  m.def(
      "unique_values", [](py::handle x) { return array_unique(x, "unique_values"); }, py::arg("x"),
      py::pos_only(), "unique_values(x, /)\n--\n\nThe sorted distinct values of x (1-D).");
  m.def(
      "isin",
      [](py::handle elements, py::handle test_elements, py::handle assume_unique,
         py::handle invert) {
        flag(assume_unique, "isin", "assume_unique");  // a hint: the result is the same
        return isin(isin_operand(elements, "elements", 1),
                    isin_operand(test_elements, "test_elements", 2),
                    flag(invert, "isin", "invert"));
      },
      py::arg("elements"), py::arg("test_elements"), py::kw_only(),
      py::arg("assume_unique") = false, py::arg("invert") = false,
      "isin(elements, test_elements, *, assume_unique=False, invert=False)\n--\n\n"
      "Bool tensor of elements' shape: True where an element of elements occurs anywhere in\n"
      "test_elements (compared in their promoted dtype, a Python number weak; NaN is never\n"
      "found); invert=True negates it. Either side may be a number. assume_unique is torch's\n"
      "hint and changes nothing.");
  m.def(
      "cross",
      [](py::handle input, py::handle other, py::handle dim, py::handle out) {
        const Tensor& a = torch_tensor(input, "cross", "input", 1);
        const Tensor& b = torch_tensor(other, "cross", "other", 2);
        Tensor r = cross_torch(a, b, dim_of(dim, "cross"));
        return result_or_out("cross", std::move(r), out, OutDtype::Exact, {&a, &b});
      },
      py::arg("input"), py::arg("other"), py::arg("dim") = py::none(), py::kw_only(),
      py::arg("out") = py::none(),
      "cross(input, other, dim=None, *, out=None)\n--\n\n"
      "torch.cross: the cross product of 3-element vectors along dim (by default the first\n"
      "dim of input of size 3; linalg.cross defaults to the last); differentiable.");
  bind_functions_as_methods(m, {"unique", "unique_consecutive", "cross"});
}

}  // namespace ts::python
