// Bindings of PyTorch's scatter reductions and index writes (ops/indexing_scatter.h): every
// argument form parsed here once, with the signatures inspect.signature shows (Note [Readable
// signatures]); the ops check shapes and dtypes and name themselves.
#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/indexing_scatter.h"
#include "python/convert.h"
#include "python/elementwise_binding.h"
#include "python/function_method.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

Tensor operand(py::handle h, const char* op) { return operand_or_throw(h, op); }

ScatterReduceOp reduce_arg(py::handle reduce, const char* op) {
  if (!py::isinstance<py::str>(reduce))
    throw py::type_error(std::string(op) + ": reduce must be a str ('sum', 'prod', 'mean', " +
                         "'amax' or 'amin'), got " +
                         py::type::handle_of(reduce).attr("__name__").cast<std::string>());
  return scatter_reduce_op(reduce.cast<std::string>(), op);
}

Tensor scatter_reduce_py(const Tensor& x, py::handle dim, py::handle index, py::handle src,
                         py::handle reduce, bool include_self, const char* op) {
  return scatter_reduce(x, int_arg(dim, op, "dim"), operand(index, op),
                        tensor_or_throw(src, op, "src"), reduce_arg(reduce, op), include_self);
}

constexpr const char* kScatterReduceDoc =
    "scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None)\n--\n\n"
    "A copy of input with src's values reduced into the elements index addresses along `dim`\n"
    "(out[index[i][j]][j] op= src[i][j] for dim=0), reduce one of 'sum', 'prod', 'mean', 'amax',\n"
    "'amin'. include_self=False leaves input's own values out where something is scattered.\n"
    "src has input's dtype; repeated indices combine. Differentiable in input and src.";

}  // namespace

void init_index_forms(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "scatter_reduce",
      [](py::handle x, py::handle dim, py::handle index, py::handle src, py::handle reduce,
         bool include_self, py::handle out) {
        const char* op = "scatter_reduce";
        return result_or_out(op,
                             scatter_reduce_py(tensor_or_throw(x, op, "input"), dim, index, src,
                                               reduce, include_self, op),
                             out);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"),
      py::kw_only(), py::arg("include_self") = true, py::arg("out") = py::none(),
      kScatterReduceDoc);
  bind_functions_as_methods(m, {"scatter_reduce"});
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "scatter_reduce_",
      [](py::object self, py::handle dim, py::handle index, py::handle src, py::handle reduce,
         bool include_self) {
        const char* op = "scatter_reduce_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        assign_inplace_result(op, x,
                              scatter_reduce_py(x, dim, index, src, reduce, include_self, op));
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"), py::kw_only(),
      py::arg("include_self") = true,
      "scatter_reduce_($self, /, dim, index, src, reduce, *, include_self=True)\n--\n\n"
      "In-place scatter_reduce (see ts.scatter_reduce); returns self.");
}

}  // namespace ts::python
