// Bindings for the manipulation area: concat / cat / concatenate and stack with every argument
// form; roll, repeat, tile, ... (whose Python wrappers in python/tessera/_manipulation.py still
// name keywords).
#include "ops/manipulation.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {
std::vector<Tensor> tensor_list(py::handle seq, const char* op) {
  if (py::isinstance<Tensor>(seq) || !py::isinstance<py::sequence>(seq))
    throw py::type_error(std::string(op) + ": expected a sequence of tensors, got " +
                         py::type::handle_of(seq).attr("__name__").cast<std::string>());
  std::vector<Tensor> out;
  for (py::handle h : seq) out.push_back(operand_or_throw(h, op));
  return out;
}

// One argument under two names (arrays= / tensors=): exactly one may be given.
py::handle one_of(py::handle a, py::handle b, const char* op, const char* name, const char* alias) {
  if (!a.is_none() && !b.is_none())
    throw py::type_error(std::string(op) + "() got multiple values for argument '" + name +
                         "' (also given as '" + alias + "')");
  if (a.is_none() && b.is_none())
    throw py::type_error(std::string(op) + "() missing required argument '" + name + "'");
  return a.is_none() ? b : a;
}

py::tuple to_tuple(const std::vector<Tensor>& ts) {
  py::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = py::cast(ts[i]);
  return t;
}
}  // namespace

void init_manipulation(py::module_& m) {
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    // ts.stack in both conventions, parsed once: the standard's stack(arrays, /, *, axis=0)
    // and PyTorch's stack(tensors, dim=0) (positional dim, tensors=, dim=).
    m.def(
        "stack",
        [](py::handle arrays, py::handle dim, py::handle axis, py::handle tensors, py::handle out) {
          if (!out.is_none()) throw py::type_error("stack(): out= is not supported");
          py::handle xs = one_of(arrays, tensors, "stack", "arrays", "tensors");
          if (!dim.is_none() && !axis.is_none())
            throw py::type_error("stack: got both axis= and its alias dim=; pass one");
          py::handle ax = dim.is_none() ? axis : dim;
          return stack(tensor_list(xs, "stack"), ax.is_none() ? 0 : int_arg(ax, "stack", "axis"));
        },
        py::arg("arrays") = py::none(), py::arg("dim") = py::none(), py::kw_only(),
        py::arg("axis") = py::none(), py::arg("tensors") = py::none(), py::arg("out") = py::none(),
        "stack(arrays, dim=None, *, axis=None, tensors=None, out=None)\n--\n\n"
        "Joins same-shape tensors along a new axis: k tensors of shape S -> shape S with k\n"
        "inserted at axis (default 0). PyTorch's forms too: a positional dim, dim=, tensors=.");
  }
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    // ts.concat: the standard's concat(arrays, /, axis=0) (axis=None flattens every input) and
    // PyTorch's names (dim=, tensors=).
    m.def(
        "concat",
        [](py::handle arrays, py::handle axis, py::handle dim, py::handle tensors) {
          py::handle xs = one_of(arrays, tensors, "concat", "arrays", "tensors");
          if (!dim.is_none()) {
            if (!(PyLong_Check(axis.ptr()) && py::cast<int64_t>(axis) == 0))
              throw py::type_error("concat: got both dim and axis");
            axis = dim;
          }
          return axis.is_none()
                     ? concat(tensor_list(xs, "concat"), 0, true)
                     : concat(tensor_list(xs, "concat"), int_arg(axis, "concat", "axis"));
        },
        py::arg("arrays") = py::none(), py::arg("axis") = 0, py::kw_only(),
        py::arg("dim") = py::none(), py::arg("tensors") = py::none(),
        "concat(arrays, /, axis=0, *, dim=None, tensors=None)\n--\n\n"
        "Joins tensors along an existing axis (default 0); shapes must match except along\n"
        "axis. axis=None flattens every input first. The result's dtype is the promotion of\n"
        "the inputs'. dim= and tensors= are PyTorch's names.");
    // torch.cat / torch.concatenate: a positional dim; 1-D empty tensors of shape (0,) are
    // skipped (torch's legacy rule).
    auto cat = [](py::handle tensors, py::handle dim, py::handle axis, py::handle out,
                  const char* op) {
      if (!out.is_none()) throw py::type_error(std::string(op) + "(): out= is not supported");
      if (py::isinstance<py::sequence>(tensors) && !py::isinstance<Tensor>(tensors))
        for (py::handle h : tensors)
          if (!py::isinstance<Tensor>(h))
            throw py::type_error(std::string(op) +
                                 ": argument 1 (a sequence) must be tensors, got " +
                                 py::type::handle_of(h).attr("__name__").cast<std::string>());
      std::vector<Tensor> xs = tensor_list(tensors, op);
      if (xs.empty()) throw RuntimeError(str(op, ": expects a non-empty TensorList"));
      std::vector<Tensor> kept;
      for (const Tensor& x : xs)
        if (!(x.ndim() == 1 && x.shape()[0] == 0)) kept.push_back(x);
      if (kept.empty()) kept.push_back(xs[0]);
      py::handle d = axis.is_none() ? dim : axis;
      return concat(kept, int_arg(d, op, "dim"));
    };
    m.def(
        "cat",
        [cat](py::handle tensors, py::handle dim, py::handle axis, py::handle out) {
          return cat(tensors, dim, axis, out, "cat");
        },
        py::arg("tensors"), py::arg("dim") = 0, py::kw_only(), py::arg("axis") = py::none(),
        py::arg("out") = py::none(),
        "cat(tensors, dim=0, *, axis=None, out=None)\n--\n\n"
        "torch.cat: joins tensors along an existing dim; 1-D empty tensors of shape (0,) are\n"
        "skipped like torch's legacy rule.");
    m.def(
        "concatenate",
        [cat](py::handle tensors, py::handle axis, py::handle out) {
          return cat(tensors, axis, py::none(), out, "concatenate");
        },
        py::arg("tensors"), py::arg("axis") = 0, py::kw_only(), py::arg("out") = py::none(),
        "concatenate(tensors, axis=0, *, out=None)\n--\n\ntorch.concatenate: cat along axis.");
  }
  m.def("_stack", [](py::handle xs, py::handle axis) {
    return stack(tensor_list(xs, "stack"), int_arg(axis, "stack", "axis"));
  });
  m.def("_unstack", [](const Tensor& x, py::handle axis) {
    return to_tuple(unstack(x, int_arg(axis, "unstack", "axis")));
  });
  m.def("_split_with_sizes", [](const Tensor& x, py::handle sizes, py::handle dim) {
    int64_t d = int_arg(dim, "split", "dim");
    if (d < 0 && x.ndim() > 0) d += x.ndim();
    return to_tuple(split_with_sizes(x, d, to_shape(sizes, "split")));
  });
  m.def("_broadcast_arrays", [](py::handle xs) {
    return py::list(to_tuple(broadcast_arrays(tensor_list(xs, "broadcast_arrays"))));
  });
  m.def("_roll", [](const Tensor& x, py::handle shift, py::handle axis) {
    return axis.is_none() ? roll(x, to_shape(shift, "roll"), Shape{}, true)
                          : roll(x, to_shape(shift, "roll"), to_shape(axis, "roll"), false);
  });
  m.def("_repeat", [](const Tensor& x, py::handle repeats, py::handle axis) {
    const bool flat = axis.is_none();
    const int64_t ax = flat ? 0 : int_arg(axis, "repeat", "axis");
    if (PyLong_Check(repeats.ptr()) && !PyBool_Check(repeats.ptr()))
      return repeat(x, repeats.cast<int64_t>(), ax, flat);
    // Tensors, NumPy arrays/scalars and lists: repeat() checks the integer dtype and shape.
    Tensor r;
    if (PyBool_Check(repeats.ptr()) || !to_operand(repeats, r))
      throw py::type_error("repeat: repeats must be an int or a 1-D integer tensor, got " +
                           py::type::handle_of(repeats).attr("__name__").cast<std::string>());
    return repeat(x, r, ax, flat);
  });
  m.def("_tile", [](const Tensor& x, py::handle reps) { return tile(x, to_shape(reps, "tile")); });
}

}  // namespace ts::python
