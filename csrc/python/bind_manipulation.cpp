// Bindings for the manipulation area: concat / cat / concatenate and stack with every argument
// form; roll, repeat, tile, ... (whose Python wrappers in python/tessera/_manipulation.py still
// name keywords).
#include <algorithm>

#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/default_dtype.h"
#include "ops/indexing_advanced.h"
#include "ops/manipulation.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

namespace {
// The items of a sequence of tensors, read once (a list or tuple without an iterator). An item
// that is not a Tensor raises a TypeError naming it when tensors_only (torch.cat's rule), else
// is taken as asarray takes it.
std::vector<Tensor> tensor_list(py::handle seq, const char* op, bool tensors_only = false) {
  static PyTypeObject* const tensor_type =
      reinterpret_cast<PyTypeObject*>(py::type::of<Tensor>().ptr());
  if (PyObject_TypeCheck(seq.ptr(), tensor_type) || !PySequence_Check(seq.ptr()))
    throw py::type_error(std::string(op) + ": expected a sequence of tensors, got " +
                         py::type::handle_of(seq).attr("__name__").cast<std::string>());
  const py::object items =
      py::reinterpret_steal<py::object>(PySequence_Fast(seq.ptr(), "expected a sequence"));
  if (!items) throw py::error_already_set();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
  PyObject** item = PySequence_Fast_ITEMS(items.ptr());
  if (tensors_only)
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!PyObject_TypeCheck(item[i], tensor_type))
        throw py::type_error(std::string(op) + ": argument 1 (a sequence) must be tensors, got " +
                             Py_TYPE(item[i])->tp_name);
  std::vector<Tensor> out;
  out.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i)
    out.push_back(PyObject_TypeCheck(item[i], tensor_type)
                      ? py::handle(item[i]).cast<const Tensor&>()
                      : operand_or_throw(item[i], op));
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

// repeat() with repeats given as an int, or as a tensor, NumPy array or list of counts.
Tensor repeat_any(const Tensor& x, py::handle repeats, int64_t axis, bool flat) {
  if (PyLong_Check(repeats.ptr()) && !PyBool_Check(repeats.ptr()))
    return repeat(x, repeats.cast<int64_t>(), axis, flat);
  // Tensors, NumPy arrays/scalars and lists: repeat() checks the integer dtype and shape.
  Tensor r;
  if (PyBool_Check(repeats.ptr()) || !to_operand(repeats, r))
    throw py::type_error("repeat: repeats must be an int or a 1-D integer tensor, got " +
                         py::type::handle_of(repeats).attr("__name__").cast<std::string>());
  return repeat(x, r, axis, flat);
}

// x with at least nd dims, as torch's atleast_{1,2,3}d: (n,) -> (1, n) / (1, n, 1) and
// (m, n) -> (m, n, 1); a tensor with enough dims comes back as the same object.
py::object at_least(py::handle h, int64_t nd, const char* op) {
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    py::tuple out(py::len(h));
    for (size_t i = 0; i < out.size(); ++i) out[i] = at_least(h[py::int_(i)], nd, op);
    return out;
  }
  if (!py::isinstance<Tensor>(h))
    throw py::type_error(std::string(op) + ": expected Tensors, got " +
                         py::type::handle_of(h).attr("__name__").cast<std::string>());
  const Tensor& x = h.cast<const Tensor&>();
  if (x.ndim() >= nd) return py::reinterpret_borrow<py::object>(h);
  Shape shape(nd - 1, 1);
  shape.push_back(x.numel());
  if (nd == 3)
    shape = x.ndim() == 2 ? Shape{x.shape()[0], x.shape()[1], 1} : Shape{1, x.numel(), 1};
  return py::cast(reshape(x, shape, -1));
}

// The inputs of hstack / vstack / dstack / column_stack: a non-empty sequence of tensors.
std::vector<Tensor> stack_inputs(py::handle seq, const char* op) {
  if (py::isinstance<Tensor>(seq) || !(PyList_Check(seq.ptr()) || PyTuple_Check(seq.ptr())))
    throw py::type_error(std::string(op) + ": expected a sequence of Tensors, got " +
                         py::type::handle_of(seq).attr("__name__").cast<std::string>());
  if (py::len(seq) == 0) throw RuntimeError(str(op, ": expects a non-empty TensorList"));
  std::vector<Tensor> out;
  for (py::handle h : seq) out.push_back(tensor_or_throw(h, op, "tensors"));
  return out;
}

// Each input made at least nd-D, joined along axis (hstack: 0 for 1-D inputs).
Tensor join_at_least(py::handle seq, int64_t nd, int64_t axis, const char* op) {
  std::vector<Tensor> xs = stack_inputs(seq, op);
  for (Tensor& x : xs) x = at_least(py::cast(x), nd, op).cast<Tensor>();
  if (nd == 1 && xs[0].ndim() == 1) axis = 0;
  return concat(xs, axis);
}

py::tuple broadcast_shapes_of(const py::args& shapes) {
  Shape out;
  for (py::handle h : shapes) {
    const Shape s = to_shape(h, "broadcast_shapes");
    if (s.size() > out.size()) {
      Shape wider(s.size() - out.size(), 1);
      for (int64_t v : out) wider.push_back(v);
      out = wider;
    }
    for (int64_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[out.size() - s.size() + i];
      if (s[i] < 0)
        throw RuntimeError(str("broadcast_shapes: trying to create tensor with negative dimension ",
                               s[i], ": ", shape_str(s)));
      if (o == 1)
        o = s[i];
      else if (s[i] != 1 && s[i] != o)
        throw RuntimeError(
            str("broadcast_shapes: shape mismatch: objects cannot be broadcast to a "
                "single shape (",
                py::str(shapes).cast<std::string>(), ")"));
    }
  }
  py::tuple t(out.size());
  for (int64_t i = 0; i < out.size(); ++i) t[i] = py::int_(out[i]);
  return t;
}

// The standard's axis= and PyTorch's dim= for one parameter: at most one may be given.
py::handle axis_or_dim(py::handle axis, py::handle dim, const char* op) {
  if (!axis.is_none() && !dim.is_none())
    throw py::type_error(std::string(op) + "() got both axis= and its alias dim=; pass one");
  return axis.is_none() ? dim : axis;
}

Tensor zeros_of(const Shape& shape, DType dtype, Device device) {
  Tensor z = Tensor::empty(shape, dtype, device);
  fill_(z, Scalar::from_int(0));
  return z;
}

// torch.block_diag: the inputs (0-D -> 1x1, 1-D (n,) -> 1 x n) on the diagonal of one matrix
// of their promoted dtype, each row of blocks joined with zeros (differentiable).
Tensor block_diag_of(const py::args& tensors) {
  std::vector<Tensor> mats;
  for (py::handle h : tensors) {
    const Tensor& x = tensor_or_throw(h, "block_diag", "tensors");
    if (x.ndim() > 2)
      throw RuntimeError(
          str("block_diag: input tensors must have 2 or fewer dimensions, got ", x.ndim()));
    mats.push_back(x.ndim() == 2 ? x : reshape(x, Shape{1, x.numel()}, -1));
  }
  if (mats.empty()) return zeros_of(Shape{1, 0}, default_float_dtype(), Device{});
  DType dt = mats[0].dtype();
  int64_t cols = 0;
  for (const Tensor& m : mats) {
    dt = promote_types(dt, m.dtype());
    cols += m.shape()[1];
  }
  std::vector<Tensor> rows;
  int64_t c = 0;
  for (const Tensor& m : mats) {
    const int64_t r = m.shape()[0], w = m.shape()[1];
    const Tensor block = astype_op(m, dt, false);
    rows.push_back(concat({zeros_of(Shape{r, c}, dt, m.device()), block,
                           zeros_of(Shape{r, cols - c - w}, dt, m.device())},
                          1));
    c += w;
  }
  return concat(rows, 0);
}

// torch.cartesian_prod: every combination of the 1-D inputs' elements, as rows (the "ij"
// meshgrid of the inputs, flattened and stacked); one input comes back as itself.
py::object cartesian_prod_of(const py::args& tensors) {
  std::vector<Tensor> xs;
  for (py::handle h : tensors) {
    const Tensor& x = tensor_or_throw(h, "cartesian_prod", "tensors");
    if (x.ndim() != 1)
      throw RuntimeError(
          str("cartesian_prod: expect a 1D vector, but got shape ", shape_str(x.shape())));
    xs.push_back(x);
  }
  if (xs.empty()) throw RuntimeError("cartesian_prod: expects a non-empty TensorList");
  if (xs.size() == 1) return py::reinterpret_borrow<py::object>(tensors[0]);
  const int64_t k = xs.size();
  Shape full;
  for (const Tensor& x : xs) full.push_back(x.numel());
  std::vector<Tensor> cols;
  for (int64_t i = 0; i < k; ++i) {
    Shape s(k, 1);
    s[i] = full[i];
    cols.push_back(reshape(broadcast_to(reshape(xs[i], s, -1), full), Shape{-1}, -1));
  }
  return py::cast(stack(cols, 1));
}
}  // namespace

namespace {
std::vector<const Tensor*> pointers(const std::vector<Tensor>& xs) {
  std::vector<const Tensor*> p;
  for (const Tensor& x : xs) p.push_back(&x);
  return p;
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
          py::handle xs = one_of(arrays, tensors, "stack", "arrays", "tensors");
          if (!dim.is_none() && !axis.is_none())
            throw py::type_error("stack: got both axis= and its alias dim=; pass one");
          py::handle ax = dim.is_none() ? axis : dim;
          const std::vector<Tensor> ts_ = tensor_list(xs, "stack");
          return result_or_out("stack", stack(ts_, ax.is_none() ? 0 : int_arg(ax, "stack", "axis")),
                               out, OutDtype::Cast, pointers(ts_));
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
      std::vector<Tensor> xs = tensor_list(tensors, op, /*tensors_only=*/true);
      if (xs.empty()) throw RuntimeError(str(op, ": expects a non-empty TensorList"));
      auto legacy_empty = [](const Tensor& x) { return x.ndim() == 1 && x.shape()[0] == 0; };
      if (xs.size() > 1 && std::any_of(xs.begin(), xs.end(), legacy_empty)) {
        std::vector<Tensor> kept;
        for (const Tensor& x : xs)
          if (!legacy_empty(x)) kept.push_back(x);
        if (kept.empty()) kept.push_back(xs[0]);
        xs.swap(kept);
      }
      py::handle d = axis.is_none() ? dim : axis;
      return result_or_out(op, concat(xs, int_arg(d, op, "dim")), out, OutDtype::Cast,
                           pointers(xs));
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
  m.def("_repeat", [](const Tensor& x, py::handle repeats, py::handle axis) {
    const bool flat = axis.is_none();
    return repeat_any(x, repeats, flat ? 0 : int_arg(axis, "repeat", "axis"), flat);
  });
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    // ts.roll / x.roll (one object): torch's roll(input, shifts, dims=None) and the
    // standard's roll(x, /, shift, *, axis=None).
    m.def(
        "roll",
        [](const Tensor& x, py::handle shift, py::handle dims, py::handle axis, py::handle shifts) {
          const Shape s = to_shape(one_of(shifts, shift, "roll", "shifts", "shift"), "roll");
          if (!dims.is_none() && !axis.is_none())
            throw py::type_error(
                "roll() got multiple values for argument 'dims' (also given as 'axis')");
          py::handle d = dims.is_none() ? axis : dims;
          return d.is_none() ? roll(x, s, Shape{}, true) : roll(x, s, to_shape(d, "roll"), false);
        },
        py::arg("x"), py::pos_only(), py::arg("shift") = py::none(), py::arg("dims") = py::none(),
        py::kw_only(), py::arg("axis") = py::none(), py::arg("shifts") = py::none(),
        "roll(x, /, shift=None, dims=None, *, axis=None, shifts=None)\n--\n\n"
        "Rolls elements along dims by shifts (elements leaving one end come back at the\n"
        "other). dims=None rolls the flattened tensor and restores the shape. Tuples of shifts\n"
        "and dims pair up; one shift applies to every listed dim. shift= and axis= are the\n"
        "standard's names (its signature: shift second, positional or keyword); shifts= and\n"
        "dims= are torch's.");
    // ts.repeat_interleave / x.repeat_interleave (one object)
    m.def(
        "repeat_interleave",
        [](const Tensor& input, py::handle repeats, py::handle dim, py::handle output_size) {
          const auto check_size = [&](Tensor out, int64_t d) {
            // torch's hint of the result's length: it allocates that much, so a wrong hint is
            // an error there (never a silently shorter or longer result).
            if (output_size.is_none()) return out;
            const int64_t want = int_arg(output_size, "repeat_interleave", "output_size");
            if (want != out.shape()[d])
              throw RuntimeError(str("repeat_interleave: output_size=", want,
                                     " does not match the repeated length ", out.shape()[d],
                                     " (input shape ", shape_str(input.shape()),
                                     "); hint: pass the sum of repeats, or leave output_size "
                                     "out"));
            return out;
          };
          if (repeats.is_none()) {  // input holds the counts: index i repeated counts[i] times
            if (input.ndim() != 1)
              throw RuntimeError(str("repeat_interleave: repeats must be a 1-D tensor, got ",
                                     input.ndim(), " dims"));
            const Tensor idx = arange(Scalar::from_int(0), Scalar::from_int(input.shape()[0]),
                                      Scalar::from_int(1), DType::Int64, input.device());
            return check_size(repeat(idx, input, 0, false), 0);
          }
          py::object r = py::reinterpret_borrow<py::object>(repeats);
          if (py::isinstance<Tensor>(r) && r.cast<const Tensor&>().ndim() == 0)
            r = py::int_(r.attr("item")());
          if (PyLong_Check(r.ptr()) && !PyBool_Check(r.ptr()) && py::cast<int64_t>(r) < 0)
            throw RuntimeError(
                str("repeat_interleave: repeats can not be negative, got ", py::cast<int64_t>(r)));
          if (dim.is_none())
            return check_size(repeat_any(reshape(input, Shape{-1}, -1), r, 0, false), 0);
          const int64_t d = dim_index(dim, "repeat_interleave", input.ndim());
          return check_size(repeat_any(input, r, d, false), d);
        },
        py::arg("input"), py::arg("repeats") = py::none(), py::arg("dim") = py::none(),
        py::kw_only(), py::arg("output_size") = py::none(),
        "repeat_interleave(input, repeats=None, dim=None, *, output_size=None)\n--\n\n"
        "Repeats each element repeats times (an int or one count per element) along dim (of\n"
        "the flattened input when None). With only a 1-D count tensor, repeats each index i\n"
        "counts[i] times.");
  }
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    const char* names[] = {"atleast_1d", "atleast_2d", "atleast_3d"};
    const char* docs[] = {
        "Each tensor with at least 1 dim (0-D -> (1,))",
        "Each tensor with at least 2 dims ((n,) -> (1, n))",
        "Each tensor with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))"};
    for (int64_t nd = 1; nd <= 3; ++nd) {
      const char* name = names[nd - 1];
      m.def(
          name,
          [nd, name](const py::args& tensors) {
            return tensors.size() == 1 ? at_least(tensors[0], nd, name)
                                       : at_least(tensors, nd, name);
          },
          (std::string(name) + "(*tensors)\n--\n\n" + docs[nd - 1] +
           "; a tuple for several inputs or one sequence.")
              .c_str());
    }
    m.def(
        "hstack", [](py::handle tensors) { return join_at_least(tensors, 1, 1, "hstack"); },
        py::arg("tensors"),
        "hstack(tensors)\n--\n\nConcatenates along dim 1 (dim 0 for 1-D inputs).");
    m.def(
        "vstack", [](py::handle tensors) { return join_at_least(tensors, 2, 0, "vstack"); },
        py::arg("tensors"),
        "vstack(tensors)\n--\n\nConcatenates the inputs made at least 2-D along dim 0.");
    m.attr("row_stack") = m.attr("vstack");
    m.def(
        "dstack", [](py::handle tensors) { return join_at_least(tensors, 3, 2, "dstack"); },
        py::arg("tensors"),
        "dstack(tensors)\n--\n\nConcatenates the inputs made at least 3-D along dim 2.");
    m.def(
        "column_stack",
        [](py::handle tensors) {
          std::vector<Tensor> xs = stack_inputs(tensors, "column_stack");
          for (Tensor& x : xs)
            if (x.ndim() <= 1) x = reshape(x, Shape{x.numel(), 1}, -1);
          return concat(xs, 1);
        },
        py::arg("tensors"),
        "column_stack(tensors)\n--\n\n"
        "Stacks 0-D/1-D inputs as columns (n -> (n, 1)) and concatenates along dim 1.");
    m.def(
        "broadcast_tensors",
        [](const py::args& tensors) {
          return to_tuple(broadcast_arrays(tensor_list(tensors, "broadcast_tensors")));
        },
        "broadcast_tensors(*tensors)\n--\n\nViews of the inputs broadcast to their common shape.");
    m.def("broadcast_shapes", &broadcast_shapes_of,
          "broadcast_shapes(*shapes)\n--\n\n"
          "The broadcast of the given shapes (ints count as 1-D shapes).");
  }
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    // The standard's manipulation functions with PyTorch's names beside its own (the Tensor
    // methods x.flip / x.repeat / x.tile follow torch: csrc/python/bind_views.cpp).
    m.def(
        "permute_dims",
        [](const Tensor& x, py::handle axes) {
          return permute_dims(x, to_shape(axes, "permute_dims"));
        },
        py::arg("x"), py::pos_only(), py::arg("axes"),
        "permute_dims(x, /, axes)\n--\n\n"
        "A view with axes reordered: result.shape[i] == x.shape[axes[i]].");
    m.def(
        "expand_dims",
        [](const Tensor& x, py::handle axis_h, py::handle dim) {
          py::handle axis = axis_or_dim(axis_h, dim, "expand_dims");
          if (axis.is_none()) return expand_dims(x, 0);
          if (!(PyList_Check(axis.ptr()) || PyTuple_Check(axis.ptr())))
            return expand_dims(x, int_arg(axis, "expand_dims", "axis"));
          // a tuple inserts len(axis) axes, each in [-M, M) with M = x.ndim + len(axis)
          const Shape axes = to_shape(axis, "expand_dims");
          const int64_t m = x.ndim() + axes.size();
          Shape pos;
          for (int64_t a : axes) {
            if (a < -m || a >= m)
              throw IndexError(str("expand_dims: axis ", a,
                                   " is out of bounds for the result of dimension ", m));
            pos.push_back(a < 0 ? a + m : a);
          }
          std::sort(pos.begin(), pos.end());
          for (int64_t i = 1; i < pos.size(); ++i)
            if (pos[i] == pos[i - 1])
              throw ValueError(str("expand_dims: repeated axis in ", shape_str(axes)));
          Tensor out = x;
          for (int64_t p : pos) out = expand_dims(out, p);  // ascending: each lands in place
          return out;
        },
        py::arg("x"), py::pos_only(), py::arg("axis") = py::none(), py::kw_only(),
        py::arg("dim") = py::none(),
        "expand_dims(x, /, axis=0, *, dim=None)\n--\n\n"
        "A view with a new size-1 axis at axis (in the result's numbering); a tuple of axes\n"
        "inserts one per entry (each in [-M, M), M = x.ndim + len(axis)). dim= is PyTorch's\n"
        "name.");
    m.def(
        "flip",
        [](const Tensor& x, py::handle dims, py::handle axis) {
          py::handle a = axis_or_dim(axis, dims, "flip");
          return a.is_none() ? flip_all(x) : flip(x, to_shape(a, "flip"));
        },
        py::arg("x"), py::pos_only(), py::arg("dims") = py::none(), py::kw_only(),
        py::arg("axis") = py::none(),
        "flip(x, /, dims=None, *, axis=None)\n--\n\n"
        "A view with the order of elements reversed along axis (all axes when None); dims\n"
        "(also positional) is PyTorch's name for it.");
    m.def(
        "broadcast_arrays",
        [](const py::args& arrays) {
          return py::list(to_tuple(broadcast_arrays(tensor_list(arrays, "broadcast_arrays"))));
        },
        "broadcast_arrays(*arrays)\n--\n\n"
        "Read-through views of the inputs broadcast to their common shape (a list).");
    m.def(
        "unstack",
        [](const Tensor& x, py::handle axis, py::handle dim) {
          if (!dim.is_none()) {  // axis keeps its default 0 then
            if (!(PyLong_CheckExact(axis.ptr()) && py::cast<int64_t>(axis) == 0))
              throw py::type_error("unstack() got both axis= and its alias dim=; pass one");
            axis = dim;
          }
          return to_tuple(unstack(x, int_arg(axis, "unstack", "axis")));
        },
        py::arg("x"), py::pos_only(), py::kw_only(), py::arg("axis") = 0,
        py::arg("dim") = py::none(),
        "unstack(x, /, *, axis=0, dim=None)\n--\n\n"
        "Splits x along axis into a tuple of views, each without that axis.");
    m.def(
        "repeat",
        [](const Tensor& x, py::handle repeats, py::handle axis, py::handle dim) {
          py::handle a = axis_or_dim(axis, dim, "repeat");
          const bool flat = a.is_none();
          return repeat_any(x, repeats, flat ? 0 : int_arg(a, "repeat", "axis"), flat);
        },
        py::arg("x"), py::arg("repeats"), py::pos_only(), py::kw_only(),
        py::arg("axis") = py::none(), py::arg("dim") = py::none(),
        "repeat(x, repeats, /, *, axis=None, dim=None)\n--\n\n"
        "Repeats each element repeats times along axis (of the flattened x when None);\n"
        "repeats is an int or a 1-D integer tensor with one count per element along the axis.");
    m.def(
        "tile",
        [](const Tensor& input, py::handle dims, py::handle repetitions) {
          py::handle reps = one_of(dims, repetitions, "tile", "dims", "repetitions");
          return tile(input, to_shape(reps, "tile"));
        },
        py::arg("input"), py::arg("dims") = py::none(), py::kw_only(),
        py::arg("repetitions") = py::none(),
        "tile(input, dims)\n--\n\n"
        "input repeated dims[i] times along each axis i (the shorter of input.ndim and\n"
        "len(dims) is padded with leading 1s); repetitions= is the standard's name.");
    m.def(
        "take_along_dim",
        [](const Tensor& input, const Tensor& indices, py::handle dim) {
          // torch: negative indices count from the end with a dim, not without (gather's
          // RuntimeError on the flattened input)
          if (dim.is_none())
            return take_along_axis(reshape(input, Shape{-1}, -1), reshape(indices, Shape{-1}, -1),
                                   0);
          const int64_t d = dim_index(dim, "take_along_dim", input.ndim());
          if (indices.ndim() != input.ndim())
            throw RuntimeError(
                str("take_along_dim: input and indices should have the same "
                    "number of dimensions, but got ",
                    input.ndim(), " and ", indices.ndim()));
          // both broadcast to one shape except along d
          Shape sx = input.shape(), si = indices.shape();
          sx[d] = si[d] = 1;
          Shape b = broadcast_shapes(sx, si, "take_along_dim");
          sx = si = b;
          sx[d] = input.shape()[d];
          si[d] = indices.shape()[d];
          return take_along_axis(broadcast_to(input, sx), broadcast_to(indices, si), d, true);
        },
        py::arg("input"), py::arg("indices"), py::arg("dim") = py::none(),
        "take_along_dim(input, indices, dim=None)\n--\n\n"
        "Picks values along dim at indices (which broadcast against input elsewhere); with\n"
        "dim None, from the flattened input.");
    m.def("block_diag", &block_diag_of,
          "block_diag(*tensors)\n--\n\n"
          "The block-diagonal matrix of the inputs (0-D -> 1x1, 1-D (n,) -> 1 x n), of their\n"
          "promoted dtype.");
    m.def("cartesian_prod", &cartesian_prod_of,
          "cartesian_prod(*tensors)\n--\n\n"
          "All combinations of the 1-D inputs' elements, as rows (one input: itself).");
  }
  bind_functions_as_methods(m, {"roll", "repeat_interleave", "take_along_dim"});
  m.def("_tile", [](const Tensor& x, py::handle reps) { return tile(x, to_shape(reps, "tile")); });
}

}  // namespace ts::python
