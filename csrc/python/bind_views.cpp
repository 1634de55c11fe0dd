// PyTorch's view methods and their function forms (x.permute / ts.permute, transpose /
// swapaxes / swapdims, flatten, unsqueeze, squeeze, expand, flip, movedim / moveaxis, t,
// view_as / reshape_as / expand_as), each one lambda bound as the method and, where torch has
// one, as the namespace function: every argument form (varargs dims, one sequence, torch's
// keyword names, negative dims) is parsed here, once (issue 17, docs/design.md "Argument forms
// in the bindings").
#include <algorithm>

#include "autograd/function.h"
#include "autograd/view_writes.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/manipulation.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

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
  if (length < 0 || length > n - start)  // not start + length: that can overflow int64
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

// reshape's copy= (None, True, False; NumPy's bool_ too) as reshape()'s mode: -1, 1, 0.
int copy_mode(py::handle copy) {
  if (copy.is_none()) return -1;
  if (copy.ptr() == Py_True || copy.ptr() == Py_False) return copy.ptr() == Py_True ? 1 : 0;
  static const py::handle np_bool =
      py::object(py::module_::import("numpy").attr("bool_")).release();
  if (py::isinstance(copy, np_bool)) return py::cast<bool>(copy) ? 1 : 0;
  throw py::type_error(str("reshape: copy must be True, False or None, got ",
                           py::type::handle_of(copy).attr("__name__").cast<std::string>(), " (",
                           py::repr(copy).cast<std::string>(), ")"));
}

Tensor diagonal_dims(const Tensor& x, py::handle offset, py::handle dim1, py::handle dim2) {
  if (x.ndim() < 2)
    throw RuntimeError(
        str("diagonal: expected a tensor with at least 2 dimensions, got ", x.ndim()));
  const int64_t a = dim_index(dim1, "diagonal", x.ndim());
  const int64_t b = dim_index(dim2, "diagonal", x.ndim());
  if (a == b)
    throw RuntimeError(str("diagonal: diagonal dimensions cannot be identical ",
                           py::str(dim1).cast<std::string>(), ", ",
                           py::str(dim2).cast<std::string>()));
  return diagonal(x, int_arg(offset, "diagonal", "offset"), a, b);
}

bool is_index_dtype(DType dt) {
  return dt == DType::Int64 || dt == DType::Int32 || dt == DType::Int16 || dt == DType::Int8 ||
         dt == DType::UInt8;
}

// torch.tensor_split (NumPy's array_split) as views: n sections (the first size % n one
// longer) or the pieces between the listed indices (clamped to the dim, as slicing does).
py::tuple tensor_split_dim(const Tensor& x, py::handle sections_or_indices, py::handle dim,
                           const char* op = "tensor_split") {
  check_nd(x, op);
  const int64_t d = dim_index(dim, op, x.ndim());
  const int64_t n = x.shape()[d];
  py::object ios = py::reinterpret_borrow<py::object>(sections_or_indices);
  if (py::isinstance<Tensor>(ios)) {
    const Tensor& t = ios.cast<const Tensor&>();
    if (t.ndim() > 1 || !is_index_dtype(t.dtype()))
      throw RuntimeError(str(op, ": indices_or_sections must be a 0-d or 1-d integer tensor, got ",
                             dtype_name(t.dtype()), " of ", t.ndim(), " dims"));
    ios = t.ndim() == 0 ? ios.attr("item")() : ios.attr("tolist")();
  }
  std::vector<Tensor> out;
  auto clamp = [n](int64_t i) { return std::min(std::max(i < 0 ? i + n : i, int64_t{0}), n); };
  if (PyList_Check(ios.ptr()) || PyTuple_Check(ios.ptr())) {
    int64_t start = 0;
    for (py::handle h : ios) {
      const int64_t stop = clamp(int_arg(h, op, "indices"));
      out.push_back(slice(x, d, start, std::max(start, stop), 1));
      start = stop;
    }
    out.push_back(slice(x, d, start, std::max(start, n), 1));
    return to_tuple(out);
  }
  const int64_t sections = int_arg(ios, op, "sections");
  if (sections <= 0)
    throw RuntimeError(str(op, ": number of sections must be larger than 0, got ", sections));
  if (sections > std::max(n, kMaxEmptyPieces))  // each piece is a Python object
    throw ValueError(str(op, ": ", sections, " sections for a dimension of size ", n,
                         "; at most max(size, ", kMaxEmptyPieces, ") pieces can be returned"));
  const int64_t q = n / sections, r = n % sections;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t size = q + (i < r ? 1 : 0);
    out.push_back(slice(x, d, start, start + size, 1));
    start += size;
  }
  return to_tuple(out);
}

// hsplit / vsplit / dsplit: tensor_split along `dim` of an at least min_nd-D tensor; an int
// must divide the dim's size evenly.
py::tuple even_split(const Tensor& x, py::handle sections, const char* op, int64_t dim,
                     int64_t min_nd) {
  if (x.ndim() < min_nd)
    throw RuntimeError(str(op, ": requires a tensor with at least ", min_nd,
                           " dimension(s), but got a tensor with ", x.ndim(), " dimensions"));
  if (PyLong_Check(sections.ptr())) {
    const int64_t s = py::cast<int64_t>(sections);
    if (s == 0 || x.shape()[dim] % s)
      throw RuntimeError(str(op, ": attempted to split along dimension ", dim,
                             ", but the size of the dimension ", x.shape()[dim],
                             " is not divisible by the split_size ", s));
  }
  return tensor_split_dim(x, sections, py::int_(dim), op);
}

Tensor swap_two(const Tensor& x, int64_t a, int64_t b) {
  Shape perm(x.ndim());
  for (int64_t i = 0; i < x.ndim(); ++i) perm[(i)] = i;
  std::swap(perm[(a)], perm[(b)]);
  return permute_dims(x, perm);
}

// torch.rot90: k quarter turns in the plane of dims, from the first dim toward the second.
Tensor rot90_dims(const Tensor& x, py::handle k_h, py::handle dims_h) {
  const Shape dims = to_shape(dims_h, "rot90");
  if (dims.size() != 2)
    throw RuntimeError(
        str("rot90: expected total rotation dims == 2, but got dims = ", dims.size()));
  if (x.ndim() < 2)
    throw RuntimeError(str("rot90: expected total dims >= 2, but got total dims = ", x.ndim()));
  const int64_t a = dim_index(py::int_(dims[0]), "rot90", x.ndim());
  const int64_t b = dim_index(py::int_(dims[1]), "rot90", x.ndim());
  if (a == b)
    throw RuntimeError(str("rot90: expected rotation dims to be different, got ", a, " and ", b));
  const int64_t k = ((int_arg(k_h, "rot90", "k") % 4) + 4) % 4;
  if (k == 1) return swap_two(flip(x, Shape{b}), a, b);
  if (k == 2) return flip(x, Shape{a, b});
  if (k == 3) return flip(swap_two(x, a, b), Shape{b});
  return x;
}

// torch.unflatten: dim split into sizes (one of them may be -1).
Tensor unflatten_dim(const Tensor& x, py::handle dim, py::handle sizes_h) {
  const int64_t d = dim_index(dim, "unflatten", x.ndim());
  Shape sizes = to_shape(sizes_h, "unflatten");
  if (sizes.empty()) throw RuntimeError("unflatten: sizes must be non-empty");
  const int64_t n = x.ndim() ? x.shape()[d] : 1;
  int64_t known = 1, unknown = 0;
  for (int64_t s : sizes) {
    if (s == -1)
      ++unknown;
    else
      known *= s;
  }
  const bool fits = unknown == 0 ? known == n : unknown == 1 && known != 0 && n % known == 0;
  if (!fits)
    throw RuntimeError(str("unflatten: provided sizes ", shape_str(sizes),
                           " don't multiply up to the size of dim ",
                           py::str(dim).cast<std::string>(), " (", n, ") in the input tensor"));
  for (int64_t& s : sizes)
    if (s == -1) s = n / known;
  Shape out(x.shape().begin(), x.shape().begin() + d);
  for (int64_t s : sizes) out.push_back(s);
  for (int64_t i = d + 1; i < x.ndim(); ++i) out.push_back(x.shape()[i]);
  return reshape(x, out, -1);
}

py::tuple split_sizes_dim(const Tensor& x, py::handle sizes_h, py::handle dim) {
  check_nd(x, "split_with_sizes");
  const int64_t d = dim_index(dim, "split_with_sizes", x.ndim());
  const Shape sizes = to_shape(sizes_h, "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != x.shape()[d]) {
    std::string list = "[";
    for (int64_t i = 0; i < sizes.size(); ++i) list += (i ? ", " : "") + std::to_string(sizes[i]);
    throw RuntimeError(str("split_with_sizes expects split_sizes to sum exactly to ", x.shape()[d],
                           " (input tensor's size at dimension ", py::str(dim).cast<std::string>(),
                           "), but got split_sizes=", list, "]"));
  }
  return to_tuple(split_with_sizes(x, d, sizes));
}

// torch's x.unfold(dimension, size, step): every size-long window along dimension, step apart,
// as a new last dim: a strided view when autograd does not record, else the windows stacked
// (each a differentiable slice).
Tensor unfold_dim(const Tensor& x, py::handle dimension, py::handle size_h, py::handle step_h) {
  const int64_t nd = x.ndim();
  const int64_t d = dim_index(dimension, "unfold", nd);
  const int64_t n = nd ? x.shape()[d] : 1;
  const int64_t size = int_arg(size_h, "unfold", "size");
  const int64_t step = int_arg(step_h, "unfold", "step");
  if (size < 0 || size > n)
    throw RuntimeError(
        str("unfold: maximum size for tensor at dimension ", d, " is ", n, " but size is ", size));
  if (step <= 0) throw RuntimeError(str("unfold: step is ", step, " but must be > 0"));
  const int64_t count = (n - size) / step + 1;
  if (nd == 0) return reshape(x, Shape{size}, -1);
  if (autograd::needs_grad({&x})) {
    std::vector<Tensor> wins;
    for (int64_t i = 0; i < count; ++i) wins.push_back(slice(x, d, i * step, i * step + size, 1));
    if (wins.empty()) {
      Shape shape = x.shape();
      shape[d] = 0;
      shape.push_back(size);
      return reshape(slice(x, d, 0, 0, 1), shape, -1);
    }
    return moveaxis(stack(wins, d), Shape{d + 1}, Shape{nd});
  }
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape[d] = count;
  shape.push_back(size);
  strides.push_back(strides[d]);
  strides[d] *= step;
  return x.as_strided(shape, strides, x.offset());
}

// torch.as_strided: a view of input's storage with the given size, strides (in elements) and
// offset (input's own when None); it must stay inside the storage. Differentiable for any
// input layout (Note [as_strided's gradient], csrc/autograd/view_writes.cpp).
Tensor as_strided_of(const Tensor& input, py::handle size_h, py::handle stride_h,
                     py::handle offset_h) {
  const Shape size = to_shape(size_h, "as_strided"), stride = to_shape(stride_h, "as_strided");
  if (size.size() != stride.size())
    throw RuntimeError(str("as_strided: mismatch in length of strides and shape (", stride.size(),
                           " vs ", size.size(), ")"));
  for (int64_t i = 0; i < size.size(); ++i)
    if (size[i] < 0 || stride[i] < 0)
      throw RuntimeError("as_strided: negative sizes or strides are not supported");
  const int64_t offset =
      offset_h.is_none() ? input.offset() : int_arg(offset_h, "as_strided", "storage_offset");
  if (offset < 0) throw RuntimeError(str("as_strided: Negative storage offset ", offset));
  check_in_storage(size, stride, offset, input.itemsize(), input.storage()->nbytes, "as_strided");
  Tensor v = input.as_strided(size, stride, offset);
  autograd::record_as_strided(input, v);
  return v;
}
// torch.diag_embed: matrices (in dims dim1, dim2 of the result) whose offset diagonal holds
// input's last dim, zeros elsewhere; made of differentiable ops (where, concat, permute).
Tensor diag_embed_dims(const Tensor& input, int64_t offset, py::handle dim1, py::handle dim2) {
  const Tensor x = input.ndim() ? input : reshape(input, Shape{1}, -1);
  const int64_t nd = input.ndim() + 1;
  const int64_t a = dim_index(dim1, "diag_embed", nd), b = dim_index(dim2, "diag_embed", nd);
  if (a == b)
    throw RuntimeError(str("diag_embed: diagonal dimensions cannot be identical ",
                           py::str(dim1).cast<std::string>(), ", ",
                           py::str(dim2).cast<std::string>()));
  const int64_t n = x.shape()[x.ndim() - 1], k = std::abs(offset), m = n + k;
  // (..., n, n) with x[..., i] at [i, i]
  Tensor out = where(eye(n, n, 0, DType::Bool, x.device()), expand_dims(x, x.ndim()),
                     scalar_tensor(Scalar::from_int(0), x.dtype()));
  if (k > 0) {  // the n x n block k columns right of (offset > 0) or rows below the corner
    const Shape lead(x.shape().begin(), x.shape().begin() + (x.ndim() - 1));
    auto zeros = [&](int64_t rows, int64_t cols) {
      Shape s = lead;
      s.push_back(rows);
      s.push_back(cols);
      Tensor z = Tensor::empty(s, x.dtype(), x.device());
      fill_(z, Scalar::from_int(0));
      return z;
    };
    if (offset > 0)
      out = concat({concat({zeros(n, k), out}, nd - 1), zeros(k, m)}, nd - 2);
    else
      out = concat({concat({zeros(k, n), out}, nd - 2), zeros(m, k)}, nd - 1);
  }
  // out's last two dims are (dim1, dim2): move them into place
  Shape order;
  for (int64_t i = 0; i < nd; ++i)
    if (i != a && i != b) order.push_back(i);
  order.push_back(a);
  order.push_back(b);
  Shape perm(nd);
  for (int64_t src = 0; src < nd; ++src) perm[order[src]] = src;
  return permute_dims(out, perm);
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
  // ts.movedim / ts.moveaxis, also the methods (Tensor.movedim is ts.movedim)
  for (const char* name : {"movedim", "moveaxis"})
    m.def(
        name,
        [name](const Tensor& input, py::handle source, py::handle destination) {
          return moveaxis(input, to_shape(source, name), to_shape(destination, name));
        },
        py::arg("input"), py::arg("source"), py::arg("destination"),
        (std::string(name) +
         "(input, source, destination)\n--\n\n"
         "A view of input with the dims at source (an int or a sequence) moved to destination.")
            .c_str());

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

  cls.def("unfold", &unfold_dim, py::arg("dimension"), py::arg("size"), py::arg("step"),
          "unfold($self, dimension, size, step)\n--\n\n"
          "Every size-long window along dimension, step apart, as a new last dim (a view when\n"
          "autograd does not record, else the windows stacked).");

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
        return view(self, other_shape(other, "view_as"), "view_as");
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

  // ---- the namespace's view functions (the standard's signatures with torch's names); those
  // torch has as methods too are the same objects (Tensor.diagonal is ts.diagonal)
  m.def(
      "reshape",
      [](const Tensor& x, py::handle shape, py::handle copy) {
        return reshape(x, to_shape(shape, "reshape"), copy_mode(copy));
      },
      py::arg("x"), py::pos_only(), py::arg("shape"), py::kw_only(), py::arg("copy") = py::none(),
      "reshape(x, /, shape, *, copy=None)\n--\n\n"
      "A view with `shape` when the strides allow (copy=None/False), else a copy; copy=True\n"
      "always copies, copy=False raises where a view is impossible. One -1 is inferred.");
  m.def(
      "squeeze",
      [](const Tensor& x, py::handle axis, py::handle dim) {
        if (axis.ptr() != Py_Ellipsis && !dim.is_none())
          throw py::type_error(
              "squeeze() got multiple values for argument 'axis' (also given "
              "as 'dim')");
        // the standard's call names the axis; torch's (no axis, or dim=) is the method's
        if (axis.ptr() == Py_Ellipsis) return squeeze_torch(x, dim, py::none());
        if (axis.is_none())  // as torch.squeeze(x, None)
          throw py::type_error(
              "squeeze(): argument 'dim' must be int or tuple of ints, not NoneType");
        return squeeze(x, to_shape(axis, "squeeze"));
      },
      py::arg("x"), py::pos_only(), py::arg("axis") = py::ellipsis(), py::kw_only(),
      py::arg("dim") = py::none(),
      "squeeze(x, /, axis=None, *, dim=None)\n--\n\n"
      "A view without the named size-1 axes (an int or a tuple; ValueError when a named axis\n"
      "is not size 1, as the standard asks). PyTorch's calls, torch.squeeze(x) and\n"
      "torch.squeeze(x, dim=d), are the method x.squeeze(d): every size-1 dim, or those of dim\n"
      "that have size 1.");
  m.def(
      "broadcast_to",
      [](const Tensor& input, py::handle shape, py::handle size) {
        return broadcast_to(input,
                            to_shape(alias(shape, size, "broadcast_to", "shape"), "broadcast_to"));
      },
      py::arg("input"), py::arg("shape") = py::none(), py::kw_only(), py::arg("size") = py::none(),
      "broadcast_to(input, shape)\n--\n\n"
      "A read-through view of input broadcast to shape (stride 0 on broadcast dims); size=\n"
      "is PyTorch's name for shape.");
  m.def("diagonal", &diagonal_dims, py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = 0,
        py::arg("dim2") = 1,
        "diagonal(input, offset=0, dim1=0, dim2=1)\n--\n\n"
        "The diagonal (a view) of the (dim1, dim2) planes, as a new last dim; offset > 0 is\n"
        "above the main diagonal.");
  m.def(
      "trace",
      [](const Tensor& input) {
        if (input.ndim() != 2)
          throw RuntimeError(
              str("trace: expected a matrix, but got tensor with dim ", input.ndim()));
        return sum(diagonal(input, 0, 0, 1), std::nullopt, false, std::nullopt);
      },
      py::arg("input"),
      "trace(input)\n--\n\n"
      "Sum of the main diagonal of a 2-D tensor (integer input sums to int64).");
  m.def(
      "tensor_split",
      [](const Tensor& input, py::handle ios, py::handle dim, py::handle sections,
         py::handle indices, py::handle tensor_ios) {
        for (py::handle alt : {sections, indices, tensor_ios}) {
          if (alt.is_none()) continue;
          if (!ios.is_none())
            throw py::type_error(
                "tensor_split() got multiple values for argument 'indices_or_sections'");
          ios = alt;
        }
        if (ios.is_none())
          throw py::type_error("tensor_split() missing required argument 'indices_or_sections'");
        return tensor_split_dim(input, ios, dim);
      },
      py::arg("input"), py::arg("indices_or_sections") = py::none(), py::arg("dim") = 0,
      py::kw_only(), py::arg("sections") = py::none(), py::arg("indices") = py::none(),
      py::arg("tensor_indices_or_sections") = py::none(),
      "tensor_split(input, indices_or_sections, dim=0)\n--\n\n"
      "NumPy's array_split as views: an int n gives n pieces (the first size % n one longer);\n"
      "a list of indices gives the pieces between those split points. sections=, indices=\n"
      "and tensor_indices_or_sections= are torch's names.");
  // hsplit (dim 1, dim 0 of 1-D input) / vsplit (dim 0) / dsplit (dim 2)
  struct EvenSplit {
    const char* name;
    int64_t dim, min_nd;
  };
  for (const EvenSplit e :
       {EvenSplit{"hsplit", 1, 1}, EvenSplit{"vsplit", 0, 2}, EvenSplit{"dsplit", 2, 3}})
    m.def(
        e.name,
        [e](const Tensor& input, py::handle sections) {
          const int64_t dim = e.min_nd == 1 && input.ndim() == 1 ? 0 : e.dim;
          return even_split(input, sections, e.name, dim, e.min_nd);
        },
        py::arg("input"), py::arg("sections"),
        str(e.name, "(input, sections)\n--\n\ntensor_split along dim ", e.dim,
            e.min_nd == 1 ? " (dim 0 for 1-D input)" : "", " of an at least ", e.min_nd,
            "-D tensor; an int must divide the size evenly.")
            .c_str());
  m.def(
      "fliplr",
      [](const Tensor& input) {
        if (input.ndim() < 2) throw RuntimeError("fliplr: input must be >= 2-d");
        return flip(input, Shape{1});
      },
      py::arg("input"), "fliplr(input)\n--\n\nReverses dim 1 (input must be at least 2-D).");
  m.def(
      "flipud",
      [](const Tensor& input) {
        if (input.ndim() < 1) throw RuntimeError("flipud: input must be >= 1-d");
        return flip(input, Shape{0});
      },
      py::arg("input"), "flipud(input)\n--\n\nReverses dim 0 (input must be at least 1-D).");
  m.def("rot90", &rot90_dims, py::arg("input"), py::arg("k") = 1,
        py::arg("dims") = py::make_tuple(0, 1),
        "rot90(input, k=1, dims=(0, 1))\n--\n\n"
        "Rotates by 90 degrees k times in the plane of dims (from the first toward the second).");
  m.def(
      "ravel", [](const Tensor& input) { return reshape(input, Shape{-1}, -1); }, py::arg("input"),
      "ravel(input)\n--\n\nThe flattened input (a view when possible).");
  m.def("unflatten", &unflatten_dim, py::arg("input"), py::arg("dim"), py::arg("sizes"),
        "unflatten(input, dim, sizes)\n--\n\nSplits dim `dim` into sizes (one may be -1).");
  m.def(
      "narrow_copy",
      [](const Tensor& input, py::handle dim, py::handle start, py::handle length) {
        return clone_op(narrow_dim(input, dim, start, length));
      },
      py::arg("input"), py::arg("dim"), py::arg("start"), py::arg("length"),
      "narrow_copy(input, dim, start, length)\n--\n\nA copy of input.narrow(dim, start, length).");
  m.def("split_with_sizes", &split_sizes_dim, py::arg("input"), py::arg("split_sizes"),
        py::arg("dim") = 0,
        "split_with_sizes(input, split_sizes, dim=0)\n--\n\n"
        "Views of input along dim of the listed sizes (which must add up to the dim's size).");
  m.def(
      "diag_embed",
      [](const Tensor& input, py::handle offset, py::handle dim1, py::handle dim2) {
        return diag_embed_dims(input, int_arg(offset, "diag_embed", "offset"), dim1, dim2);
      },
      py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = -2, py::arg("dim2") = -1,
      "diag_embed(input, offset=0, dim1=-2, dim2=-1)\n--\n\n"
      "Matrices whose offset diagonal (in dims dim1, dim2 of the result) holds the last dim\n"
      "of input; zeros elsewhere.");
  m.def(
      "diag",
      [](const Tensor& input, py::handle diagonal_h) {
        const int64_t k = int_arg(diagonal_h, "diag", "diagonal");
        if (input.ndim() == 1) return diag_embed_dims(input, k, py::int_(-2), py::int_(-1));
        if (input.ndim() == 2) return clone_op(diagonal(input, k, 0, 1));
        throw RuntimeError(str("diag: expected a 1-D or 2-D tensor, got ", input.ndim(), "-D"));
      },
      py::arg("input"), py::arg("diagonal") = 0,
      "diag(input, diagonal=0)\n--\n\n"
      "1-D input: the square matrix with input on diagonal `diagonal`; 2-D input: a copy of\n"
      "that diagonal as a 1-D tensor.");
  m.def(
      "diagflat",
      [](const Tensor& input, py::handle offset) {
        return diag_embed_dims(reshape(input, Shape{-1}, -1), int_arg(offset, "diagflat", "offset"),
                               py::int_(-2), py::int_(-1));
      },
      py::arg("input"), py::arg("offset") = 0,
      "diagflat(input, offset=0)\n--\n\nThe flattened input on diagonal offset of a square "
      "matrix.");
  m.def("as_strided", &as_strided_of, py::arg("input"), py::arg("size"), py::arg("stride"),
        py::arg("storage_offset") = py::none(),
        "as_strided(input, size, stride, storage_offset=None)\n--\n\n"
        "A view of input's storage with the given size, strides (in elements) and offset\n"
        "(input's own offset when None). Differentiable for any input layout, as torch.");
  bind_functions_as_methods(
      m, {"movedim",          "moveaxis",   "broadcast_to", "diagonal",   "trace",
          "tensor_split",     "hsplit",     "vsplit",       "dsplit",     "fliplr",
          "flipud",           "rot90",      "ravel",        "unflatten",  "narrow_copy",
          "split_with_sizes", "as_strided", "diag",         "diag_embed", "diagflat"});
}

}  // namespace ts::python
