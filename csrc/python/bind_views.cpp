// PyTorch's view methods and their function forms (x.permute / ts.permute, transpose /
// swapaxes / swapdims, flatten, unsqueeze, squeeze, expand, flip, movedim / moveaxis, t,
// view_as / reshape_as / expand_as), each one lambda bound as the method and, where torch has
// one, as the namespace function: every argument form (varargs dims, one sequence, torch's
// keyword names, negative dims) is parsed here, once (issue 17, docs/design.md "Argument forms
// in the bindings").
#include <algorithm>

#include "ops/manipulation.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

// A dim in [-n, n) with n = max(ndim, 1) (a 0-d tensor takes 0 and -1, as in PyTorch).
int64_t dim_index(py::handle dim, const char* op, int64_t ndim) {
  if (PyBool_Check(dim.ptr()) || !PyIndex_Check(dim.ptr()))
    throw py::type_error(std::string(op) + ": dim must be an int, got " +
                         py::type::handle_of(dim).attr("__name__").cast<std::string>());
  const int64_t d = py::cast<int64_t>(dim.attr("__index__")());
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (d < -n || d >= n)
    throw IndexError(str(op, ": dimension out of range (expected to be in range of [", -n, ", ",
                         n - 1, "], but got ", d, ")"));
  return d < 0 ? d + n : d;
}

// The varargs sizes/dims of x.permute(2, 0, 1) / x.permute((2, 0, 1)) / x.permute(dims=...):
// one non-int argument is the sequence itself.
py::object varargs(const char* op, const char* kw_name, const py::args& args, py::handle keyword) {
  if (!keyword.is_none()) {
    if (args.size() > 0)
      throw py::type_error(std::string(op) + "() got multiple values for argument '" + kw_name +
                           "'");
    return py::reinterpret_borrow<py::object>(keyword);
  }
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr()) && PySequence_Check(args[0].ptr()) &&
      !PyUnicode_Check(args[0].ptr()))
    return args[0];
  return args;
}

// Two aliases of one parameter (dim0 / axis0): at most one may be given.
py::handle alias(py::handle a, py::handle b, const char* op, const char* name) {
  if (!a.is_none() && !b.is_none())
    throw py::type_error(std::string(op) + "() got multiple values for argument '" + name + "'");
  if (a.is_none() && b.is_none())
    throw py::type_error(std::string(op) + "() missing required argument '" + name + "'");
  return a.is_none() ? b : a;
}

Tensor swap_dims(const Tensor& x, py::handle d0, py::handle d1, py::handle a0, py::handle a1,
                 const char* op) {
  const int64_t a = dim_index(alias(d0, a0, op, "dim0"), op, x.ndim());
  const int64_t b = dim_index(alias(d1, a1, op, "dim1"), op, x.ndim());
  if (x.ndim() == 0) return reshape(x, x.shape(), 0);
  Shape perm(x.ndim());
  for (int64_t i = 0; i < x.ndim(); ++i) perm[(i)] = i;
  std::swap(perm[(a)], perm[(b)]);
  return permute_dims(x, perm);
}

Tensor flatten_dims(const Tensor& x, py::handle start, py::handle end) {
  if (x.ndim() == 0) return reshape(x, Shape{1}, -1);
  const int64_t s = dim_index(start, "flatten", x.ndim());
  const int64_t e = dim_index(end, "flatten", x.ndim());
  if (s > e)
    throw ValueError(str("flatten: start_dim ", py::str(start).cast<std::string>(),
                         " comes after end_dim ", py::str(end).cast<std::string>()));
  const Shape& in = x.shape();
  Shape out(in.begin(), in.begin() + s);
  int64_t merged = 1;
  for (int64_t i = s; i <= e; ++i) merged *= in[(i)];
  out.push_back(merged);
  for (int64_t i = e + 1; i < x.ndim(); ++i) out.push_back(in[i]);
  return reshape(x, out, -1);
}

// torch's squeeze: no dim squeezes every size-1 dim; a named dim that is not size 1 stays.
Tensor squeeze_torch(const Tensor& x, py::handle dim, py::handle axis) {
  if (!dim.is_none() && !axis.is_none())
    throw py::type_error("squeeze() got multiple values for argument 'dim'");
  py::handle d = dim.is_none() ? axis : dim;
  const Shape& shape = x.shape();
  Shape keep;
  if (d.is_none()) {
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (shape[(i)] == 1) keep.push_back(i);
    return squeeze(x, keep);
  }
  std::vector<int64_t> dims;
  if (PyIndex_Check(d.ptr()) || PyBool_Check(d.ptr())) {
    dims.push_back(dim_index(d, "squeeze", x.ndim()));
  } else {
    for (py::handle h : d) dims.push_back(dim_index(h, "squeeze", x.ndim()));
  }
  if (x.ndim() == 0) return reshape(x, x.shape(), 0);
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  for (int64_t i : dims)
    if (shape[(i)] == 1) keep.push_back(i);
  return squeeze(x, keep);
}

Tensor expand_sizes(const Tensor& x, const Shape& sizes) {
  const int64_t lead = static_cast<int64_t>(sizes.size()) - x.ndim();
  if (lead < 0)
    throw ValueError(str("expand: the number of sizes (", sizes.size(),
                         ") must be at least the tensor's dimension (", x.ndim(), ")"));
  Shape shape(sizes);
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    if (sizes[(i)] != -1) continue;
    if (i < lead)
      throw ValueError(str("expand: -1 is not allowed for the new leading dimension ", i));
    shape[(i)] = x.shape()[(i - lead)];
  }
  return broadcast_to(x, shape);
}

Tensor transpose_2d(const Tensor& x) {
  if (x.ndim() > 2)
    throw RuntimeError(
        str("t: expects a tensor with <= 2 dimensions, but self is ", x.ndim(), "D"));
  return x.ndim() < 2 ? x : permute_dims(x, Shape{1, 0});
}

void check_nd(const Tensor& x, const char* op) {
  if (x.ndim() == 0) throw RuntimeError(str(op, ": expected at least a 1-dimensional tensor"));
}

py::tuple to_tuple(const std::vector<Tensor>& ts) {
  py::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = py::cast(ts[i]);
  return t;
}

Tensor narrow_dim(const Tensor& x, py::handle dim, py::handle start_h, py::handle length_h) {
  check_nd(x, "narrow");
  const int64_t d = dim_index(dim, "narrow", x.ndim());
  const int64_t n = x.shape()[d];
  int64_t start = int_arg(start_h, "narrow", "start");
  const int64_t length = int_arg(length_h, "narrow", "length");
  if (start < -n || start > n)
    throw IndexError(str("narrow: start (", start, ") out of range for dimension ",
                         py::str(dim).cast<std::string>(), " of size ", n));
  if (start < 0) start += n;
  if (length < 0 || start + length > n)
    throw RuntimeError(str("narrow: start (", start, ") + length (", length,
                           ") exceeds dimension size (", n, ")"));
  return slice(x, d, start, start + length, 1);
}

Tensor select_dim(const Tensor& x, py::handle dim, py::handle index_h) {
  check_nd(x, "select");
  const int64_t d = dim_index(dim, "select", x.ndim());
  const int64_t n = x.shape()[d];
  const int64_t index = int_arg(index_h, "select", "index");
  if (index < -n || index >= n)
    throw IndexError(str("select: index ", index, " out of range for tensor of size ",
                         py::str(py::tuple(py::cast(x).attr("shape"))).cast<std::string>(),
                         " at dimension ", py::str(dim).cast<std::string>()));
  return select(x, d, index < 0 ? index + n : index);
}

py::tuple unbind_dim(const Tensor& x, py::handle dim) {
  check_nd(x, "unbind");
  const int64_t d = dim_index(dim, "unbind", x.ndim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x.shape()[d]; ++i) out.push_back(select(x, d, i));
  return to_tuple(out);
}

// torch.split: pieces of split_size (the last may be smaller) or of the listed sizes (which
// must add up to the dim's size), as views with one autograd node.
py::tuple split_dim(const Tensor& x, py::handle sizes_h, py::handle dim) {
  check_nd(x, "split");
  const int64_t d = dim_index(dim, "split", x.ndim());
  const int64_t n = x.shape()[d];
  Shape sizes;
  py::object sz = py::reinterpret_borrow<py::object>(sizes_h);
  if (py::isinstance<Tensor>(sz)) sz = sz.attr("tolist")();
  if (PyList_Check(sz.ptr()) || PyTuple_Check(sz.ptr())) {
    int64_t total = 0;
    bool negative = false;
    for (py::handle h : sz) {
      const int64_t v = int_arg(h, "split", "split_sizes");
      negative = negative || v < 0;
      total += v;
      sizes.push_back(v);
    }
    if (negative || total != n) {
      std::string list = "[";
      for (int64_t i = 0; i < sizes.size(); ++i) list += (i ? ", " : "") + std::to_string(sizes[i]);
      throw RuntimeError(str("split: split_with_sizes expects split_sizes to sum exactly to ", n,
                             " (input tensor's size at dimension ",
                             py::str(dim).cast<std::string>(), "), but got split_sizes=", list,
                             "]"));
    }
  } else {
    const int64_t size = int_arg(sz, "split", "split_size");
    if (size < 0 || (size == 0 && n != 0))
      throw RuntimeError(
          str("split: split_size must be positive (non-negative for an empty dim), "
              "got ",
              size));
    if (n == 0) {
      sizes.push_back(0);
    } else {
      for (int64_t i = 0; i < n / size; ++i) sizes.push_back(size);
      if (n % size) sizes.push_back(n % size);
    }
  }
  return to_tuple(split_with_sizes(x, d, sizes));
}

constexpr int64_t kMaxEmptyPieces = int64_t{1} << 16;

py::tuple chunk_dim(const Tensor& x, py::handle chunks_h, py::handle dim) {
  const int64_t chunks = int_arg(chunks_h, "chunk", "chunks");
  if (chunks <= 0) throw RuntimeError(str("chunk: chunks must be greater than 0, got ", chunks));
  check_nd(x, "chunk");
  const int64_t d = dim_index(dim, "chunk", x.ndim());
  const int64_t n = x.shape()[d];
  if (n == 0) {  // torch gives `chunks` empty pieces here
    if (chunks > kMaxEmptyPieces)
      throw ValueError(str("chunk: ", chunks,
                           " empty chunks is more than can be returned (at most ", kMaxEmptyPieces,
                           ")"));
    std::vector<Tensor> out;
    for (int64_t i = 0; i < chunks; ++i) out.push_back(slice(x, d, 0, 0, 1));
    return to_tuple(out);
  }
  return split_dim(x, py::int_((n + chunks - 1) / chunks), py::int_(d));
}

// x.repeat(*sizes) (NumPy's tile, at least x.ndim sizes) and x.tile(*reps) (fewer reps are
// padded with leading 1s): sizes as varargs, one sequence, or the keyword.
Shape int_list(py::handle seq, const char* op, const char* name) {
  Shape out;
  for (py::handle h : seq) out.push_back(int_arg(h, op, name));
  return out;
}

}  // namespace

void init_views(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));

  // ---- permute
  cls.def(
      "permute",
      [](const Tensor& self, const py::args& dims, py::handle kw) {
        return permute_dims(self, to_shape(varargs("permute", "dims", dims, kw), "permute"));
      },
      py::kw_only(), py::arg("dims") = py::none(),
      "permute($self, *dims)\n--\n\n"
      "A view with the dims reordered: result.shape[i] == self.shape[dims[i]] (dims as varargs,\n"
      "one sequence, or dims=).");
  m.def(
      "permute",
      [](const Tensor& input, py::handle dims) {
        return permute_dims(input, to_shape(dims, "permute"));
      },
      py::arg("input"), py::arg("dims"),
      "permute(input, dims)\n--\n\nA view of input with the dims reordered.");

  // ---- transpose / swapaxes / swapdims (dim0/dim1, also axis0/axis1)
  for (const char* name : {"transpose", "swapaxes", "swapdims"}) {
    cls.def(
        name,
        [name](const Tensor& self, py::handle d0, py::handle d1, py::handle a0, py::handle a1) {
          return swap_dims(self, d0, d1, a0, a1, name);
        },
        py::arg("dim0") = py::none(), py::arg("dim1") = py::none(), py::kw_only(),
        py::arg("axis0") = py::none(), py::arg("axis1") = py::none(),
        (std::string(name) + "($self, dim0, dim1)\n--\n\n"
                             "A view with dims dim0 and dim1 swapped (negative dims count from "
                             "the end; axis0=/axis1= are aliases).")
            .c_str());
    m.def(
        name,
        [name](const Tensor& input, py::handle d0, py::handle d1, py::handle a0, py::handle a1) {
          return swap_dims(input, d0, d1, a0, a1, name);
        },
        py::arg("input"), py::arg("dim0") = py::none(), py::arg("dim1") = py::none(), py::kw_only(),
        py::arg("axis0") = py::none(), py::arg("axis1") = py::none(),
        (std::string(name) + "(input, dim0, dim1)\n--\n\n"
                             "A view of input with dims dim0 and dim1 swapped.")
            .c_str());
  }

  // ---- flatten / unsqueeze / t / movedim
  cls.def("flatten", &flatten_dims, py::arg("start_dim") = 0, py::arg("end_dim") = -1,
          "flatten($self, start_dim=0, end_dim=-1)\n--\n\n"
          "Merges dims start_dim..end_dim into one (a view where the strides allow).");
  m.def("flatten", &flatten_dims, py::arg("input"), py::arg("start_dim") = 0,
        py::arg("end_dim") = -1,
        "flatten(input, start_dim=0, end_dim=-1)\n--\n\n"
        "Merges dims start_dim..end_dim of input into one (a view where the strides allow).");
  auto unsqueeze = [](const Tensor& x, py::handle dim) {
    return expand_dims(x, int_arg(dim, "unsqueeze", "dim"));
  };
  cls.def("unsqueeze", unsqueeze, py::arg("dim"),
          "unsqueeze($self, dim)\n--\n\nA view with a size-1 dim inserted at dim.");
  m.def("unsqueeze", unsqueeze, py::arg("input"), py::arg("dim"),
        "unsqueeze(input, dim)\n--\n\nA view of input with a size-1 dim inserted at dim.");
  cls.def("t", &transpose_2d,
          "t($self)\n--\n\n"
          "Transposes a 2-D tensor (a view); 0-D and 1-D tensors come back as they are.");
  m.def("t", &transpose_2d, py::arg("input"),
        "t(input)\n--\n\n"
        "Transposes a 2-D tensor (a view); 0-D and 1-D tensors come back as they are.");
  auto movedim = [](const Tensor& x, py::handle source, py::handle destination) {
    return moveaxis(x, to_shape(source, "movedim"), to_shape(destination, "movedim"));
  };
  for (const char* name : {"movedim", "moveaxis"})
    cls.def(name, movedim, py::arg("source"), py::arg("destination"),
            (std::string(name) +
             "($self, source, destination)\n--\n\n"
             "A view with the dims at source (an int or a sequence) moved to destination.")
                .c_str());
  m.def("movedim", movedim, py::arg("input"), py::arg("source"), py::arg("destination"),
        "movedim(input, source, destination)\n--\n\n"
        "A view of input with the dims at source moved to destination.");

  // ---- squeeze / expand / flip (torch's method forms)
  cls.def("squeeze", &squeeze_torch, py::arg("dim") = py::none(), py::kw_only(),
          py::arg("axis") = py::none(),
          "squeeze($self, dim=None, *, axis=None)\n--\n\n"
          "A view without size-1 dims: all of them when dim is None, else those of dim (an int\n"
          "or a tuple) that have size 1 (others stay, as in PyTorch).");
  cls.def(
      "expand",
      [](const Tensor& self, const py::args& sizes, py::handle size, py::handle implicit) {
        (void)implicit;
        return expand_sizes(self, to_shape(varargs("expand", "size", sizes, size), "expand"));
      },
      py::kw_only(), py::arg("size") = py::none(), py::arg("implicit") = false,
      "expand($self, *sizes)\n--\n\n"
      "A broadcast view with sizes (varargs, one sequence, or size=); -1 keeps a dim, new\n"
      "dims may be added in front.");
  cls.def(
      "flip",
      [](const Tensor& self, const py::args& dims, py::handle kw) {
        py::object d = varargs("flip", "dims", dims, kw);
        if (py::isinstance<py::tuple>(d) && py::len(d) == 0) return flip_all(self);
        return flip(self, to_shape(d, "flip"));
      },
      py::kw_only(), py::arg("dims") = py::none(),
      "flip($self, *dims)\n--\n\n"
      "A view with the order of elements reversed along dims (varargs, one sequence, or\n"
      "dims=; every dim when none is given).");

  // ---- view_as / reshape_as / expand_as
  auto other_shape = [](py::handle other, const char* op) {
    if (!py::isinstance<Tensor>(other))
      throw py::type_error(std::string(op) + ": argument 1 must be a tensor, got " +
                           py::type::handle_of(other).attr("__name__").cast<std::string>());
    return other.cast<const Tensor&>().shape();
  };
  cls.def(
      "view_as",
      [other_shape](const Tensor& self, py::handle other) {
        return reshape(self, other_shape(other, "view_as"), 0);
      },
      py::arg("other"), "view_as($self, other)\n--\n\nself.view(other.shape).");
  cls.def(
      "reshape_as",
      [other_shape](const Tensor& self, py::handle other) {
        return reshape(self, other_shape(other, "reshape_as"), -1);
      },
      py::arg("other"), "reshape_as($self, other)\n--\n\nself.reshape(other.shape).");
  cls.def(
      "expand_as",
      [other_shape](const Tensor& self, py::handle other) {
        return expand_sizes(self, other_shape(other, "expand_as"));
      },
      py::arg("other"), "expand_as($self, other)\n--\n\nself.expand(other.shape).");

  // ---- narrow / select / unbind / split / chunk (methods and functions)
  cls.def("narrow", &narrow_dim, py::arg("dim"), py::arg("start"), py::arg("length"),
          "narrow($self, dim, start, length)\n--\n\n"
          "The view self[start:start+length] along dim (a negative start counts from the end).");
  m.def("narrow", &narrow_dim, py::arg("input"), py::arg("dim"), py::arg("start"),
        py::arg("length"),
        "narrow(input, dim, start, length)\n--\n\n"
        "The view input[start:start+length] along dim (a negative start counts from the end).");
  cls.def("select", &select_dim, py::arg("dim"), py::arg("index"),
          "select($self, dim, index)\n--\n\nThe view self[..., index, ...] at dim (that dim "
          "removed).");
  m.def("select", &select_dim, py::arg("input"), py::arg("dim"), py::arg("index"),
        "select(input, dim, index)\n--\n\nThe view input[..., index, ...] at dim (that dim "
        "removed).");
  cls.def("unbind", &unbind_dim, py::arg("dim") = 0,
          "unbind($self, dim=0)\n--\n\nThe slices of self along dim (views without that dim).");
  m.def("unbind", &unbind_dim, py::arg("input"), py::arg("dim") = 0,
        "unbind(input, dim=0)\n--\n\nThe slices of input along dim (views without that dim).");
  const char* split_doc =
      "Views along dim: pieces of split_size (the last may be smaller), or of the listed\n"
      "sizes (which must add up to the dim's size).";
  cls.def(
      "split",
      [](const Tensor& self, py::handle sizes, py::handle dim, py::handle split_size) {
        if (!split_size.is_none()) {
          if (!sizes.is_none())
            throw py::type_error("split() got multiple values for argument 'split_size'");
          sizes = split_size;
        }
        if (sizes.is_none())
          throw py::type_error("split() missing required argument 'split_size_or_sections'");
        return split_dim(self, sizes, dim);
      },
      py::arg("split_size_or_sections") = py::none(), py::arg("dim") = 0, py::kw_only(),
      py::arg("split_size") = py::none(),
      (std::string("split($self, split_size_or_sections, dim=0)\n--\n\n") + split_doc).c_str());
  m.def("split", &split_dim, py::arg("tensor"), py::arg("split_size_or_sections"),
        py::arg("dim") = 0,
        (std::string("split(tensor, split_size_or_sections, dim=0)\n--\n\n") + split_doc).c_str());
  const char* chunk_doc =
      "Up to chunks views along dim, each ceil(size / chunks) long (the last may be shorter;\n"
      "there may be fewer chunks than asked, as in torch).";
  cls.def("chunk", &chunk_dim, py::arg("chunks"), py::arg("dim") = 0,
          (std::string("chunk($self, chunks, dim=0)\n--\n\n") + chunk_doc).c_str());
  m.def("chunk", &chunk_dim, py::arg("input"), py::arg("chunks"), py::arg("dim") = 0,
        (std::string("chunk(input, chunks, dim=0)\n--\n\n") + chunk_doc).c_str());

  // ---- x.repeat / x.tile
  cls.def(
      "repeat",
      [](const Tensor& self, const py::args& sizes, py::handle repeats) {
        const Shape reps =
            int_list(varargs("repeat", "repeats", sizes, repeats), "repeat", "sizes");
        if (reps.size() < self.ndim())
          throw RuntimeError(
              str("repeat: number of dimensions of repeat dims can not be smaller "
                  "than number of dimensions of tensor (",
                  reps.size(), " < ", self.ndim(), ")"));
        for (int64_t r : reps)
          if (r < 0) throw RuntimeError(str("repeat: repeats can not be negative, got ", r));
        return tile(self, reps);
      },
      py::kw_only(), py::arg("repeats") = py::none(),
      "repeat($self, *sizes)\n--\n\n"
      "Tiles self sizes[i] times along dim i (NumPy's tile); there must be at least self.ndim\n"
      "sizes (extra ones add leading dims).");
  cls.def(
      "tile",
      [](const Tensor& self, const py::args& reps, py::handle dims) {
        return tile(self, int_list(varargs("tile", "dims", reps, dims), "tile", "reps"));
      },
      py::kw_only(), py::arg("dims") = py::none(),
      "tile($self, *reps)\n--\n\n"
      "NumPy's tile: self repeated reps[i] times along dim i; fewer reps than dims are padded\n"
      "with leading 1s.");
}

}  // namespace ts::python
