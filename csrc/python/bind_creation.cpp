// Bindings for the creation functions: each public function (zeros/ones/empty, full, the
// *_like functions, eye, tril/triu, scalar_tensor, the tensor queries) parses every argument
// form here, once (issue 17): the array API's (shape, dtype=, device=, k=) and PyTorch's
// (varargs sizes, size=, n=/m=, diagonal=, requires_grad=, layout=, pin_memory=,
// memory_format=, out=), with the default dtypes of Note [default dtype].
#include <pybind11/stl.h>

#include "autograd/meta.h"
#include "core/error.h"
#include "core/no_cuda_error.h"
#include "core/scalar_range.h"
#include "core/warning.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/default_dtype.h"
#include "ops/memory_format.h"
#include "ops/random.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

namespace {
[[noreturn]] void not_implemented(const std::string& msg) {
  PyErr_SetString(PyExc_NotImplementedError, msg.c_str());
  throw py::error_already_set();
}  // ts.set_default_dtype's (Note [default dtype])

std::string type_name_of(py::handle h) {
  return py::type::handle_of(h).attr("__name__").cast<std::string>();
}

// A size as int64: ValueError naming the op past the range (as the shape helpers say it).
int64_t size_value(py::handle h, const std::string& op) {
  PyObject* v = PyLong_Check(h.ptr()) ? h.inc_ref().ptr() : PyNumber_Index(h.ptr());
  if (!v) throw py::error_already_set();
  py::object owned = py::reinterpret_steal<py::object>(v);
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow)
    throw py::value_error(op + ": dimension " + py::str(owned).cast<std::string>() +
                          " is out of range for a 64-bit size");
  if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
  return n;
}

bool int_like(py::handle h) {
  return PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !py::isinstance<Tensor>(h));
}

// One shape argument: an int or a sequence of ints.
Shape one_shape(py::handle h, const std::string& op) {
  if (int_like(h)) return Shape{size_value(h, op)};
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {  // the common case, without iterators
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(h.ptr());
    PyObject** items = PySequence_Fast_ITEMS(h.ptr());
    Shape out;
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!int_like(items[i]))
        throw py::type_error(op + ": shape must be an int or a sequence of ints, got " +
                             py::repr(h).cast<std::string>());
      out.push_back(size_value(items[i], op));
    }
    return out;
  }
  if (py::isinstance<py::str>(h) || py::isinstance<py::bytes>(h) || !py::hasattr(h, "__iter__"))
    throw py::type_error(op + ": shape must be an int or a sequence of ints, got " +
                         type_name_of(h));
  Shape out;
  for (py::handle e : h) {
    if (!int_like(e))
      throw py::type_error(op + ": shape must be an int or a sequence of ints, got " +
                           py::repr(h).cast<std::string>());
    out.push_back(size_value(e, op));
  }
  return out;
}

// An argument given under one of two names (the standard's `slot`, torch's `alias`): slot
// takes alias's value; a TypeError with `both` when both are given.
void take_alias(py::handle& slot, py::handle alias, const char* both) {
  if (alias.is_none()) return;
  if (!slot.is_none()) throw TypeError(both);
  slot = alias;
}

// torch's layout=: strided (or None) is tessera's only layout; others raise.
void check_layout(const std::string& op, py::handle layout) {
  if (layout.is_none()) return;
  if (py::hasattr(layout, "name") && py::str(layout.attr("name")).cast<std::string>() == "strided")
    return;
  not_implemented(op + ": layout=" + py::repr(layout).cast<std::string>() +
                  " is not supported (tessera tensors are strided; pass layout=ts.strided "
                  "or leave it out)");
}

void check_pin_memory(const std::string& op, py::handle pin_memory) {
  if (!pin_memory.is_none() && PyObject_IsTrue(pin_memory.ptr()))
    not_implemented(op +
                    ": pin_memory=True is not supported here; call x.pin_memory() on "
                    "the result");
}

void check_no_out(const std::string& op, py::handle out) {
  if (!out.is_none())
    not_implemented(op + ": out= is not supported; use the returned tensor (or x.copy_(" + op +
                    "(...)))");
}

void check_torch_options(const std::string& op, py::handle layout, py::handle pin_memory,
                         py::handle out) {
  check_layout(op, layout);
  check_pin_memory(op, pin_memory);
  check_no_out(op, out);
}

// torch's out= on the creation functions: the result is computed in out's dtype (a dtype=
// given must be the same: RuntimeError as torch), then out is resized to the result's shape
// (Tensor.resize_) and filled; the call returns out itself.
struct OutArg {
  std::string op;
  py::handle out;
  py::object dtype_holder;
  OutArg(std::string name, py::handle out_arg, py::handle& dtype)
      : op(std::move(name)), out(out_arg) {
    if (out.is_none()) return;
    const Tensor& o = tensor_or_throw(out, op.c_str(), "out");
    if (!dtype.is_none() && to_dtype(dtype) != o.dtype())
      throw RuntimeError(op + ": dtype " + dtype_name(to_dtype(dtype)) +
                         " does not match the dtype of out (" + dtype_name(o.dtype()) +
                         "); hint: leave dtype out to use out's");
    dtype_holder = dtype_object(o.dtype());
    dtype = dtype_holder;
  }
  py::object finish(const Tensor& r) const {
    if (out.is_none()) return py::cast(r);
    const Tensor& o = out.cast<const Tensor&>();
    if (op == "arange" && o.numel() != r.numel() && o.numel() != 0)
      warn(str("The number of elements in the out tensor of shape ", shape_str(o.shape()), " is ",
               o.numel(), " which does not match the computed number of elements ", r.numel(),
               ". Note that this may occur as a result of rounding error. The out "
               "tensor will be resized to a tensor of shape ",
               shape_str(r.shape()), "."));
    copy_(factory_out(op.c_str(), out, r.shape(), r.device()), r, false);
    return py::reinterpret_borrow<py::object>(out);
  }
};

// f() with the op's name in front of the errors of the shape, dtype and device checks, which
// do not know it.
template <class F>
Tensor named(const std::string& op, F&& f) {
  try {
    return f();
  } catch (const ValueError& e) {
    throw ValueError(op + ": " + e.what());
  } catch (const CudaNotCompiledError& e) {
    throw CudaNotCompiledError(op + ": " + e.what());
  } catch (const RuntimeError& e) {
    throw RuntimeError(op + ": " + e.what());
  } catch (const TypeError& e) {
    throw TypeError(op + ": " + e.what());
  }
}

// A freshly created tensor made a leaf that requires grad when requires_grad= is true.
Tensor leaf(const Tensor& t, py::handle requires_grad) {
  t.reset_version();  // fresh: the fills that made it do not count (torch starts at 0)
  if (requires_grad && !requires_grad.is_none()) {
    const int on = PyObject_IsTrue(requires_grad.ptr());
    if (on < 0) throw py::error_already_set();
    if (on) autograd::set_requires_grad(t, true);
  }
  return t;
}

bool is_numpy_scalar(py::handle h) {
  static py::object* generic =
      new py::object(py::module_::import("numpy").attr("generic"));  // leaked: module lifetime
  return py::isinstance(h, *generic);
}

// A number argument (fill_value, start, stop, ...): a Python number, a NumPy scalar, a 0-d
// tensor, or an object with __index__ / __float__; TypeError naming the op otherwise.
Scalar number_arg(py::handle h, const std::string& op, const char* name) {
  Scalar s;
  if (py::isinstance<Tensor>(h)) {
    const Tensor& t = h.cast<const Tensor&>();
    if (t.numel() != 1)  // (item()'s error class, as before; torch: RuntimeError)
      throw ValueError(op + ": " + name + " must be a number or a one-element tensor, got a " +
                       "tensor of shape " + shape_str(t.shape()));
    return number_arg(h.attr("item")(), op, name);
  }
  if (is_numpy_scalar(h)) return number_arg(h.attr("item")(), op, name);
  if (to_scalar(h, s)) return s;
  if (PyIndex_Check(h.ptr())) {
    py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
    if (!v) throw py::error_already_set();
    return number_arg(v, op, name);
  }
  if (py::hasattr(h, "__float__"))
    return Scalar::from_double(py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(h))));
  throw TypeError(op + ": " + name + " must be a number, got " + type_name_of(h));
}

// The dtype PyTorch gives a tensor made from the Python number s: bool, int64 (uint64 past
// int64's range, as NumPy), the default float dtype, or its complex twin.
DType number_dtype(const Scalar& s) {
  switch (s.kind) {
    case ScalarKind::Bool:
      return DType::Bool;
    case ScalarKind::Int:
      return s.is_u64 ? DType::UInt64 : DType::Int64;
    case ScalarKind::Float:
      return default_float_dtype();
    default:
      return default_float_dtype() == DType::Float64 ? DType::Complex128 : DType::Complex64;
  }
}

DType dtype_or(py::handle dtype, DType fallback) {
  return dtype.is_none() ? fallback : to_dtype(dtype);
}

// full(shape, fill_value): the dtype from fill_value unless given.
py::object full_py(py::handle shape, py::handle fill_value, py::handle dtype, py::handle device,
                   py::handle requires_grad, py::handle size, py::handle out, py::handle layout,
                   py::handle pin_memory) {
  const std::string op = "full";
  check_layout(op, layout);
  check_pin_memory(op, pin_memory);
  const OutArg out_arg(op, out, dtype);
  take_alias(shape, size, "full: got the size both as shape and as size=");
  if (shape.is_none()) throw TypeError("full() missing required argument 'shape' (pos 1)");
  if (fill_value.is_none())
    throw TypeError("full() missing required argument 'fill_value' (pos 2)");
  const Shape sh = one_shape(shape, op);
  const Scalar s = number_arg(fill_value, op, "fill_value");
  // (torch reads a NumPy bool as a float, so the default float dtype; test_creation_bindings)
  const bool numpy_bool = s.kind == ScalarKind::Bool && is_numpy_scalar(fill_value);
  const DType dt = dtype_or(dtype, numpy_bool ? default_float_dtype() : number_dtype(s));
  check_scalar_fits(s, dt, "full");  // PyTorch's overflow rule (Note [Checked scalar writes])
  Tensor t = named(op, [&] { return Tensor::empty(sh, dt, creation_device(device)); });
  fill_(t, s);
  return out_arg.finish(leaf(t, requires_grad));
}

// zeros_like / ones_like / empty_like / full_like: input's shape, dtype and device unless
// given, laid out as memory_format asks (preserve_format: like input, e.g. a transpose).
Tensor like_py(const char* op_name, int fill, py::handle input, py::handle fill_value,
               py::handle dtype, py::handle device, py::handle requires_grad, py::handle layout,
               py::handle pin_memory, py::handle memory_format) {
  const std::string op = op_name;
  const Tensor& x = tensor_or_throw(input, op_name, "input");
  check_layout(op, layout);
  check_pin_memory(op, pin_memory);
  const DType dt = dtype_or(dtype, x.dtype());
  Scalar s = Scalar::from_int(fill);
  if (fill_value) {
    s = number_arg(fill_value, op, "fill_value");
    check_scalar_fits(s, dt, "full");
  }
  const MemoryFormat fmt =
      memory_format.is_none() ? MemoryFormat::Preserve : memory_format_of(memory_format, op_name);
  Tensor t = named(op, [&] {
    return empty_in_format(x, dt, device.is_none() ? x.device() : to_device(device), fmt, op_name);
  });
  if (fill_value || fill >= 0) fill_(t, s);
  return leaf(t, requires_grad);
}

// eye(n_rows, n_cols=None, /, *, k=0, ...) with torch's n= / m= names.
py::object eye_py(py::handle n_rows, py::handle n_cols, py::handle k, py::handle dtype,
                  py::handle device, py::handle requires_grad, py::handle n, py::handle m,
                  py::handle out, py::handle layout, py::handle pin_memory) {
  check_layout("eye", layout);
  check_pin_memory("eye", pin_memory);
  const OutArg out_arg("eye", out, dtype);
  take_alias(n_rows, n, "eye() got multiple values for argument 'n'");
  take_alias(n_cols, m, "eye() got multiple values for argument 'm'");
  if (n_rows.is_none()) throw TypeError("eye() missing required argument 'n_rows' (pos 1)");
  if (n_cols.is_none()) n_cols = n_rows;
  const DType dt = dtype_or(dtype, default_float_dtype());
  const int64_t rows = int_arg(n_rows, "eye", "n_rows");
  const int64_t cols = int_arg(n_cols, "eye", "n_cols");
  return out_arg.finish(
      leaf(eye(rows, cols, diagonal_offset_arg(k, "eye", "k", rows, cols), dt,
               creation_device(device)),
           requires_grad));
}

// tril/triu(input, diagonal=0, *, k=None): diagonal is PyTorch's name for the standard's k;
// k= given with a diagonal other than the default 0 is a conflict.
py::object band_py(bool upper, py::handle input, py::handle diagonal, py::handle k,
                   py::handle out) {
  const char* op = upper ? "triu" : "tril";
  const Tensor& x = tensor_or_throw(input, op, "input");
  const int64_t d = int_arg(diagonal, op, "diagonal");  // None is an error, as in torch
  if (!k.is_none() && d != 0)
    throw TypeError(std::string(op) + ": got the diagonal both as diagonal and as k=");
  const int64_t kk = k.is_none() ? d : int_arg(k, op, "k");
  return result_or_out(op, upper ? triu(x, kk) : tril(x, kk), out, OutDtype::Exact, {&x});
}

// rand_like / randn_like: input's shape, dtype and device unless given, drawn in input's
// layout (preserve_format: the numbers fill the storage in order) then laid out as
// memory_format asks; randint_like: [low, high) integers (one bound: [0, low)).
Tensor random_like_py(const char* op_name, int kind, py::handle input, py::handle low,
                      py::handle high, py::handle dtype, py::handle device,
                      py::handle requires_grad, py::handle memory_format, py::handle layout,
                      py::handle pin_memory) {
  const std::string op = op_name;
  const Tensor& x = tensor_or_throw(input, op_name, "input");
  check_layout(op, layout);
  check_pin_memory(op, pin_memory);
  const DType dt = dtype_or(dtype, x.dtype());
  if (py::isinstance<py::str>(memory_format))  // torch's: a memory format object, never a name
    throw TypeError(op +
                    "(): memory_format must be a tessera memory format (ts.preserve_format, "
                    "ts.contiguous_format, ts.channels_last...), got str");
  const MemoryFormat fmt =
      memory_format.is_none() ? MemoryFormat::Preserve : memory_format_of(memory_format, op_name);
  int64_t lo = 0, hi = 0;
  if (kind == 2) {  // randint_like
    hi = int_arg(low, op.c_str(), "low");
    if (!high.is_none()) {
      lo = hi;
      hi = int_arg(high, op.c_str(), "high");
    }
  } else if (!is_floating(dt) && !is_complex(dt)) {
    throw TypeError(op + ": expected a floating-point dtype, got " + dtype_name(dt) +
                    "; hint: pass a floating or complex dtype=");
  }
  // Drawn in storage order into the (dense) layout memory_format asks, as torch's
  // empty_like(x, memory_format=...).uniform_() fills it.
  Tensor t = named(op, [&] {
    const Device dev = device.is_none() ? x.device() : to_device(device);
    const Strides st = strides_in_format(x, fmt, op_name);
    Tensor flat = kind == 2 ? randint(lo, hi, Shape{x.numel()}, dt, dev, default_generator())
                            : Tensor::empty(Shape{x.numel()}, dt, dev);
    if (kind != 2) standard_fill_(flat, kind == 1, default_generator());
    return fresh_strided(flat, x.shape(), st);
  });
  return leaf(t, requires_grad);
}

// scalar_tensor(s): a 0-d tensor holding s, of the default float dtype unless given (torch).
Tensor scalar_tensor_py(py::handle s, py::handle dtype, py::handle device, py::handle requires_grad,
                        py::handle out, py::handle layout, py::handle pin_memory) {
  check_torch_options("scalar_tensor", layout, pin_memory, out);
  const Scalar v = number_arg(s, "scalar_tensor", "s");
  const DType dt = dtype_or(dtype, default_float_dtype());
  check_scalar_fits(v, dt, "scalar_tensor");
  Tensor t =
      named("scalar_tensor", [&] { return Tensor::empty(Shape{}, dt, creation_device(device)); });
  fill_(t, v);
  return leaf(t, requires_grad);
}

// empty_strided(size, stride): an uninitialized tensor with those element strides over fresh
// storage just large enough.
Tensor empty_strided_py(py::handle size, py::handle stride, py::handle dtype, py::handle device,
                        py::handle requires_grad, py::handle out, py::handle layout,
                        py::handle pin_memory) {
  const std::string op = "empty_strided";
  check_torch_options(op, layout, pin_memory, out);
  const Shape sh = one_shape(size, op);
  const Shape st = one_shape(stride, op);
  if (sh.size() != st.size())
    throw RuntimeError(op + ": mismatch in length of strides and shape (size " + shape_str(sh) +
                       ", stride " + shape_str(st) + ")");
  int64_t extent = 1;
  bool empty = false;
  for (int64_t d = 0; d < static_cast<int64_t>(sh.size()); ++d) {
    if (sh[d] < 0)
      throw RuntimeError(op + ": negative dimension " + std::to_string(sh[d]) + " in size " +
                         shape_str(sh));
    if (st[d] < 0)
      throw RuntimeError(op + ": Negative strides are not supported at the moment, got strides " +
                         shape_str(st));
    if (sh[d] == 0) empty = true;
    extent += (sh[d] - 1) * st[d];
  }
  const DType dt = dtype_or(dtype, default_float_dtype());
  Tensor t = named(op, [&] {
    return Tensor::empty(Shape{empty ? 0 : extent}, dt, creation_device(device))
        .as_strided(sh, st, 0);
  });
  return leaf(t, requires_grad);
}

// empty_permuted(size, physical_layout): an uninitialized tensor of size whose dims are laid
// out in memory in physical_layout's order (outermost first), as PyTorch's.
Tensor empty_permuted_py(py::handle size, py::handle physical_layout, py::handle dtype,
                         py::handle device, py::handle requires_grad, py::handle out,
                         py::handle layout, py::handle pin_memory) {
  const std::string op = "empty_permuted";
  check_torch_options(op, layout, pin_memory, out);
  const Shape sh = one_shape(size, op);
  const Shape perm = one_shape(physical_layout, op);
  const int64_t n = static_cast<int64_t>(sh.size());
  std::vector<bool> seen(n, false);
  bool ok = static_cast<int64_t>(perm.size()) == n;
  for (int64_t p : perm) {
    if (!ok || p < 0 || p >= n || seen[p]) {
      ok = false;
      break;
    }
    seen[p] = true;
  }
  if (!ok)
    throw RuntimeError(op + ": physical_layout must be a permutation of the dims, got " +
                       shape_str(perm) + " for size " + shape_str(sh));
  Shape physical(n);
  for (int64_t i = 0; i < n; ++i) physical[i] = sh[perm[i]];
  Strides st(n);
  int64_t acc = 1;
  for (int64_t i = n - 1; i >= 0; --i) {
    st[perm[i]] = acc;
    acc *= std::max<int64_t>(physical[i], 1);
  }
  const DType dt = dtype_or(dtype, default_float_dtype());
  Tensor t = named(op, [&] {
    const Tensor flat = Tensor::empty(physical, dt, creation_device(device));
    return flat.as_strided(sh, st, 0);
  });
  return leaf(t, requires_grad);
}

bool is_floating_point_py(py::handle input) {
  return is_floating(tensor_or_throw(input, "is_floating_point", "input").dtype());
}
bool is_complex_py(py::handle input) {
  return is_complex(tensor_or_throw(input, "is_complex", "input").dtype());
}
bool is_nonzero_py(py::handle input) {
  const Tensor& x = tensor_or_throw(input, "is_nonzero", "input");
  if (x.numel() != 1)
    throw RuntimeError("is_nonzero: a tensor with " + std::to_string(x.numel()) +
                       " elements is ambiguous; it needs exactly one element");
  const int t = PyObject_IsTrue(input.attr("item")().ptr());
  if (t < 0) throw py::error_already_set();
  return t != 0;
}
int64_t numel_py(py::handle input) { return tensor_or_throw(input, "numel", "input").numel(); }

// arange(start, /, stop=None, step=None) in the standard's forms (its signature, start
// positional-only) and torch's (end=, keyword start=/step=): one positional argument is the
// stop. torch's keyword start= arrives through **kwargs, so arange(start=2), which torch
// refuses, stays apart from arange(2). The dtype is int64 when every argument is an integer,
// else the default float dtype.
py::object arange_py(py::handle start, py::handle stop, py::handle step, py::handle dtype,
                     py::handle device, py::handle requires_grad, py::handle end, py::handle out,
                     py::handle layout, py::handle pin_memory, const py::kwargs& kwargs) {
  check_layout("arange", layout);
  check_pin_memory("arange", pin_memory);
  const OutArg out_arg("arange", out, dtype);
  py::object kw_start;
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first);
    if (key != "start")
      throw TypeError("arange() got an unexpected keyword argument '" + key + "'");
    kw_start = py::reinterpret_borrow<py::object>(item.second);
  }
  const bool positional_start = !start.is(missing());
  if (positional_start && kw_start)
    throw TypeError("arange() got multiple values for argument 'start'");
  const py::int_ zero(0);
  py::handle slots[3] = {positional_start ? start : py::handle(kw_start), stop, step};
  take_alias(slots[1], end, "arange: got both stop= and its alias end=");
  if (!positional_start) {  // torch: arange(end=4) counts from 0; arange(start=2) has no end
    if (slots[1].is_none())
      throw TypeError("arange() missing 1 required positional argument: \"end\"");
    if (!slots[0]) slots[0] = zero;
  }
  Scalar a = number_arg(slots[0], "arange", "start"), b, d = Scalar::from_int(1);
  if (slots[1].is_none()) {
    b = a;
    a = Scalar::from_int(0);
  } else {
    b = number_arg(slots[1], "arange", "stop");
  }
  if (!slots[2].is_none()) d = number_arg(slots[2], "arange", "step");
  if (a.kind == ScalarKind::Complex || b.kind == ScalarKind::Complex ||
      d.kind == ScalarKind::Complex)
    throw TypeError("arange: start, stop and step must be real numbers");
  const bool any_float =
      a.kind == ScalarKind::Float || b.kind == ScalarKind::Float || d.kind == ScalarKind::Float;
  const DType dt = dtype_or(dtype, any_float ? default_float_dtype() : DType::Int64);
  return out_arg.finish(leaf(arange(a, b, d, dt, creation_device(device)), requires_grad));
}

// linspace(start, stop, num) with torch's end= / steps= names: the default float dtype, or
// its complex twin when an end is complex.
py::object linspace_py(py::handle start, py::handle stop, py::handle num, py::handle dtype,
                       py::handle device, py::handle endpoint, py::handle requires_grad,
                       py::handle end, py::handle steps, py::handle out, py::handle layout,
                       py::handle pin_memory) {
  check_layout("linspace", layout);
  check_pin_memory("linspace", pin_memory);
  const OutArg out_arg("linspace", out, dtype);
  take_alias(stop, end, "linspace: got both stop= and its alias end=");
  take_alias(num, steps, "linspace: got both num= and its alias steps=");
  if (start.is_none() || stop.is_none() || num.is_none())
    throw TypeError(std::string("linspace() missing a required argument: ") +
                    (start.is_none()  ? "start"
                     : stop.is_none() ? "stop (end)"
                                      : "num (steps)"));
  const Scalar a = number_arg(start, "linspace", "start");
  const Scalar b = number_arg(stop, "linspace", "stop");
  const bool complex_end = a.kind == ScalarKind::Complex || b.kind == ScalarKind::Complex;
  const DType dt =
      dtype_or(dtype, complex_end ? number_dtype(Scalar::from_complex({})) : default_float_dtype());
  if (complex_end && is_integral(dt))
    throw TypeError("linspace: complex endpoints need a complex dtype, got " +
                    std::string(dtype_name(dt)));
  const auto ab = [](const Scalar& s) {
    return s.kind == ScalarKind::Complex ? s.c : std::complex<double>(s.to<double>(), 0.0);
  };
  const int e = PyObject_IsTrue(endpoint.ptr());
  if (e < 0) throw py::error_already_set();
  return out_arg.finish(leaf(
      linspace(ab(a), ab(b), int_arg(num, "linspace", "num"), dt, e != 0, creation_device(device)),
      requires_grad));
}

// logspace(start, end, steps, base=10.0): base ** linspace(start, end, steps) in double
// precision, of the default float dtype unless given.
py::object logspace_py(py::handle start, py::handle end, py::handle steps, py::handle base,
                       py::handle dtype, py::handle device, py::handle requires_grad,
                       py::handle out, py::handle layout, py::handle pin_memory) {
  check_layout("logspace", layout);
  check_pin_memory("logspace", pin_memory);
  const OutArg out_arg("logspace", out, dtype);
  const auto real = [](py::handle h, const char* name) {
    const Scalar s = number_arg(h, "logspace", name);
    if (s.kind == ScalarKind::Complex)
      throw TypeError(std::string("logspace: ") + name + " must be a real number");
    return s.to<double>();
  };
  const DType dt = dtype_or(dtype, default_float_dtype());
  return out_arg.finish(
      leaf(logspace(real(start, "start"), real(end, "end"), int_arg(steps, "logspace", "steps"),
                    real(base, "base"), dt, creation_device(device)),
           requires_grad));
}

// zeros/ones/empty in every form: the standard's one shape argument, torch's sizes as varargs,
// shape= / size=, dtype=, device=, requires_grad=; torch's layout/pin_memory/memory_format/out
// checked (memory_format is a no-op for a new contiguous tensor). With `like` (x.new_zeros),
// dtype and device default to like's.
py::object create(const char* op_name, int fill, const py::args& size, const py::kwargs& kw,
                  const Tensor* like = nullptr) {
  const std::string op = op_name;
  py::handle shape, dtype, device, requires_grad, out = py::none();
  for (auto item : kw) {
    const std::string k = py::str(item.first);
    py::handle v = item.second;
    if (k == "shape" || k == "size") {
      if (shape) throw py::type_error(op + ": got the size both as shape= and as size=");
      shape = v;
    } else if (k == "dtype") {
      dtype = v;
    } else if (k == "device") {
      device = v;
    } else if (k == "requires_grad") {
      requires_grad = v;
    } else if (k == "layout") {
      check_layout(op, v);
    } else if (k == "pin_memory") {
      check_pin_memory(op, v);
    } else if (k == "out") {
      out = v;
    } else if (k != "memory_format") {
      throw py::type_error(op + ": unexpected keyword argument '" + k + "'");
    }
  }
  Shape sh;
  if (shape) {
    if (size.size() > 0)
      throw py::type_error(op + ": got the size both positionally and as a keyword");
    sh = one_shape(shape, op);
  } else if (size.size() == 1) {
    sh = one_shape(size[0], op);
  } else if (size.size() == 0) {
    throw py::type_error(op + ": missing the size (e.g. " + op + "(2, 3) or " + op + "((2, 3)))");
  } else {
    for (py::handle n : size) {
      if (PyBool_Check(n.ptr()) || !int_like(n))
        throw py::type_error(op + ": sizes must be ints, got " + type_name_of(n));
      sh.push_back(size_value(n, op));
    }
  }
  if (!dtype) dtype = py::none();
  const OutArg out_arg(op, out, dtype);
  const bool no_dtype = dtype.is_none(), no_device = !device || device.is_none();
  const DType dt = !no_dtype ? to_dtype(dtype) : like ? like->dtype() : default_float_dtype();
  Tensor t = named(op, [&] {
    const Device dev =
        no_device && like ? like->device() : creation_device(device ? device : py::none());
    return Tensor::empty(sh, dt, dev);
  });
  if (fill >= 0) fill_(t, Scalar::from_int(fill));
  return out_arg.finish(leaf(t, requires_grad));
}

}  // namespace

void init_creation(py::module_& m) {
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    for (auto [name, fill] : {std::pair{"zeros", 0}, {"ones", 1}, {"empty", -1}}) {
      const std::string doc = std::string(name) +
                              "(shape, *, dtype=None, device=None, requires_grad=False)\n--\n\n" +
                              (fill < 0 ? std::string("An uninitialized tensor of shape")
                                        : "A tensor of shape filled with " + std::to_string(fill)) +
                              " (" + name + "((2, 3)), " + name +
                              "(2, 3), size=); dtype defaults to the default\n"
                              "float dtype (ts.set_default_dtype), device to the default device.";
      m.def(
          name,
          [name = std::string(name), fill](const py::args& size, const py::kwargs& kw) {
            return create(name.c_str(), fill, size, kw);
          },
          doc.c_str());
      // x.new_zeros / new_ones / new_empty: the same forms, dtype and device from x
      const std::string method = "new_" + std::string(name);
      const std::string mdoc =
          method +
          "(self, *size, dtype=None, device=None, requires_grad=False, layout=None, "
          "pin_memory=False)\n--\n\n" +
          (fill < 0 ? std::string("An uninitialized tensor of size")
                    : "A tensor of size filled with " + std::to_string(fill)) +
          " with this tensor's dtype and device (unless given).";
      py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"))
          .def(
              method.c_str(),
              [method, fill](const Tensor& self, const py::args& size, const py::kwargs& kw) {
                return create(method.c_str(), fill, size, kw, &self);
              },
              mdoc.c_str());
    }
  }
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  const auto none = py::none();
  m.def("full", &full_py, py::arg("shape") = none, py::arg("fill_value") = none, py::kw_only(),
        py::arg("dtype") = none, py::arg("device") = none, py::arg("requires_grad") = false,
        py::arg("size") = none, py::arg("out") = none, py::arg("layout") = none,
        py::arg("pin_memory") = false,
        "full(shape, fill_value, *, dtype=None, device=None, requires_grad=False, size=None, "
        "out=None, layout=None, pin_memory=False)\n--\n\n"
        "A tensor of shape (an int, a sequence, or torch's size=) filled with fill_value (a\n"
        "Python or NumPy number, or a 0-d tensor). The dtype comes from fill_value unless\n"
        "given: bool, int64, the default float dtype (ts.set_default_dtype) or its complex\n"
        "twin. A value that overflows the dtype raises RuntimeError like PyTorch.");
  struct Like {
    const char* name;
    int fill;  // -1: uninitialized, -2: fill_value
    const char* doc;
  };
  for (const Like& l :
       {Like{"empty_like", -1, "An uninitialized tensor"}, Like{"zeros_like", 0, "Zeros"},
        Like{"ones_like", 1, "Ones"}, Like{"full_like", -2, "fill_value"}}) {
    const bool has_value = l.fill == -2;
    const std::string doc =
        std::string(l.name) + "(input, " + (has_value ? "fill_value, " : "") +
        "*, dtype=None, device=None, requires_grad=False, memory_format=None, layout=None, "
        "pin_memory=False)\n--\n\n" +
        l.doc +
        " with input's shape, dtype and device unless given, laid out as memory_format asks\n"
        "(preserve_format, the default: like input when input is dense, e.g. a transpose;\n"
        "ts.contiguous_format; ts.channels_last)." +
        (has_value ? " A fill_value that overflows the dtype raises\nRuntimeError like PyTorch."
                   : "");
    if (has_value) {
      m.def(
          l.name,
          [](py::handle input, py::handle fill_value, py::handle dtype, py::handle device,
             py::handle requires_grad, py::handle memory_format, py::handle layout,
             py::handle pin_memory) {
            if (fill_value.is_none())
              throw TypeError("full_like() missing required argument 'fill_value' (pos 2)");
            return like_py("full_like", -2, input, fill_value, dtype, device, requires_grad, layout,
                           pin_memory, memory_format);
          },
          py::arg("input"), py::arg("fill_value") = none, py::kw_only(), py::arg("dtype") = none,
          py::arg("device") = none, py::arg("requires_grad") = false,
          py::arg("memory_format") = none, py::arg("layout") = none, py::arg("pin_memory") = false,
          doc.c_str());
    } else {
      m.def(
          l.name,
          [name = l.name, fill = l.fill](py::handle input, py::handle dtype, py::handle device,
                                         py::handle requires_grad, py::handle memory_format,
                                         py::handle layout, py::handle pin_memory) {
            return like_py(name, fill, input, py::handle(), dtype, device, requires_grad, layout,
                           pin_memory, memory_format);
          },
          py::arg("input"), py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
          py::arg("requires_grad") = false, py::arg("memory_format") = none,
          py::arg("layout") = none, py::arg("pin_memory") = false, doc.c_str());
    }
  }
  m.def("eye", &eye_py, py::arg("n_rows") = none, py::arg("n_cols") = none, py::pos_only(),
        py::kw_only(), py::arg("k") = 0, py::arg("dtype") = none, py::arg("device") = none,
        py::arg("requires_grad") = false, py::arg("n") = none, py::arg("m") = none,
        py::arg("out") = none, py::arg("layout") = none, py::arg("pin_memory") = false,
        "eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None, requires_grad=False, "
        "n=None, m=None, out=None, layout=None, pin_memory=False)\n--\n\n"
        "A (n_rows, n_cols) tensor with ones on the k-th diagonal (k > 0 above the main one)\n"
        "and zeros elsewhere; n_cols defaults to n_rows (torch's names: n=, m=), the dtype to\n"
        "the default float dtype.");
  for (const bool upper : {false, true}) {
    const char* name = upper ? "triu" : "tril";
    const std::string doc =
        std::string(name) + "(input, diagonal=0, *, k=None, out=None)\n--\n\n" +
        (upper ? "The upper" : "The lower") +
        " triangle of each matrix in input (..., M, N): elements with col - row " +
        (upper ? ">=" : "<=") +
        " k are kept,\nthe rest are zero. diagonal (positional or keyword) is PyTorch's name "
        "for k.";
    m.def(
        name,
        [upper](py::handle input, py::handle diagonal, py::handle k, py::handle out) {
          return band_py(upper, input, diagonal, k, out);
        },
        py::arg("input"), py::arg("diagonal") = 0, py::kw_only(), py::arg("k") = none,
        py::arg("out") = none, doc.c_str());
  }
  m.def("arange", &arange_py, py::arg("start") = missing(), py::pos_only(), py::arg("stop") = none,
        py::arg("step") = none, py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
        py::arg("requires_grad") = false, py::arg("end") = none, py::arg("out") = none,
        py::arg("layout") = none, py::arg("pin_memory") = false,
        "arange(start=..., /, stop=None, step=None, *, dtype=None, device=None, "
        "requires_grad=False, end=None, out=None, layout=None, pin_memory=False, **kwargs)\n--\n\n"
        "arange(stop), arange(start, stop), arange(start, stop, step); torch's keyword\n"
        "start= (with end=) comes through **kwargs, the only keyword it takes.\n\n"
        "Evenly spaced values in the half-open interval [start, stop): shape (n,) with\n"
        "n = max(0, ceil((stop - start) / step)) (NumPy's rule).\n\n"
        "Values are start + i * step computed in double precision, then cast. One argument\n"
        "means arange(0, start); torch's end= is stop (arange(end=n) counts from 0). The dtype\n"
        "defaults to int64 when every argument is an int and to the default float dtype when\n"
        "any is a float; float arguments with an integer dtype follow PyTorch\n"
        "(trunc(start) + i * trunc(step)).");
  m.def("linspace", &linspace_py, py::arg("start") = none, py::arg("stop") = none,
        py::arg("num") = none, py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
        py::arg("endpoint") = true, py::arg("requires_grad") = false, py::arg("end") = none,
        py::arg("steps") = none, py::arg("out") = none, py::arg("layout") = none,
        py::arg("pin_memory") = false,
        "linspace(start, stop, num, *, dtype=None, device=None, endpoint=True, "
        "requires_grad=False, end=None, steps=None, out=None, layout=None, pin_memory=False)"
        "\n--\n\n"
        "num evenly spaced values from start to stop (stop included when endpoint): shape\n"
        "(num,). torch's names end= and steps= are stop and num.\n\n"
        "Computed in double precision as start + i * (stop - start) / div (div = num - 1 with\n"
        "the endpoint, else num), the last element exactly stop when endpoint; then cast. The\n"
        "dtype defaults to the default float dtype, or its complex twin when start or stop is\n"
        "complex; integer dtypes follow PyTorch.");
  m.def("logspace", &logspace_py, py::arg("start"), py::arg("end"), py::arg("steps"),
        py::arg("base") = 10.0, py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
        py::arg("requires_grad") = false, py::arg("out") = none, py::arg("layout") = none,
        py::arg("pin_memory") = false,
        "logspace(start, end, steps, base=10.0, *, dtype=None, device=None, "
        "requires_grad=False, out=None, layout=None, pin_memory=False)\n--\n\n"
        "steps values base ** linspace(start, end, steps), computed in double precision (the\n"
        "default float dtype unless dtype is given).");
  for (const bool upper : {false, true}) {
    const char* name = upper ? "triu_indices" : "tril_indices";
    const std::string doc =
        std::string(name) + "(row, col, offset=0, *, dtype=None, device=None, layout=None)" +
        "\n--\n\n2 x N int64 (row, col) indices of the " + (upper ? "upper" : "lower") +
        " triangle of a row x col matrix (on and\n" + (upper ? "above" : "below") +
        " diagonal offset), in row-major order.";
    m.def(
        name,
        [upper, name](py::handle row, py::handle col, py::handle offset, py::handle dtype,
                      py::handle device, py::handle layout) {
          check_layout(name, layout);
          const auto arg = [name](py::handle h, const char* what) {
            try {
              return int_arg(h, name, what);
            } catch (const ValueError&) {
              throw ValueError(std::string(name) + ": " + what + "=" +
                               py::str(h).cast<std::string>() + " is out of range for int64");
            }
          };
          const int64_t r = arg(row, "row"), c = arg(col, "col"), o = arg(offset, "offset");
          const DType dt = dtype_or(dtype, DType::Int64);
          try {
            return tri_indices(r, c, o, upper, dt, creation_device(device));
          } catch (const std::bad_alloc&) {
            PyErr_SetString(PyExc_MemoryError,
                            (std::string(name) +
                             ": cannot allocate the output of shape (2, N) "
                             "for a " +
                             std::to_string(r) + " x " + std::to_string(c) + " matrix")
                                .c_str());
            throw py::error_already_set();
          }
        },
        py::arg("row"), py::arg("col"), py::arg("offset") = 0, py::kw_only(),
        py::arg("dtype") = none, py::arg("device") = none, py::arg("layout") = none, doc.c_str());
  }
  m.def(
      "meshgrid",
      [](const py::args& args, py::handle indexing) {
        const std::string ix =
            py::isinstance<py::str>(indexing) ? indexing.cast<std::string>() : "";
        if (ix != "xy" && ix != "ij")
          throw ValueError("meshgrid: indexing must be 'xy' or 'ij', got " +
                           py::repr(indexing).cast<std::string>());
        py::sequence items = args;
        if (args.size() == 1 && (PyList_Check(args[0].ptr()) || PyTuple_Check(args[0].ptr())))
          items = py::reinterpret_borrow<py::sequence>(args[0]);
        std::vector<Tensor> xs;
        for (size_t i = 0; i < items.size(); ++i) {
          if (!py::isinstance<Tensor>(items[i]))
            throw TypeError("meshgrid: argument " + std::to_string(i) + " must be a tensor, got " +
                            type_name_of(items[i]));
          xs.push_back(items[i].cast<Tensor>());
        }
        return py::cast(meshgrid(xs, ix == "xy"));
      },
      py::arg("indexing") = "xy",
      "meshgrid(*tensors, indexing='xy')\n--\n\n"
      "Coordinate grids from 1-D tensors x1 (N1,), x2 (N2,), ... (0-d ones count as 1-D of one\n"
      "element, as in PyTorch; one list of tensors works too): with indexing='xy' each result\n"
      "has shape (N2, N1, N3, ...), with 'ij' (N1, N2, N3, ...). The results are broadcast views\n"
      "of the inputs (writing to one writes to many elements).");
  m.def(
      "fill",
      [](py::handle input, py::handle value) {
        return like_py("fill", -2, input, value, py::none(), py::none(), py::none(), py::none(),
                       py::none(), py::none());
      },
      py::arg("input"), py::arg("value"),
      "fill(input, value)\n--\n\n"
      "A new tensor like input (shape, dtype, device, layout) filled with value (torch.fill).");
  py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"))
      .def(
          "new_full",
          [](const Tensor& self, py::handle size, py::handle fill_value, py::handle dtype,
             py::handle device, py::handle requires_grad, py::handle layout,
             py::handle pin_memory) {
            check_torch_options("new_full", layout, pin_memory, py::none());
            const Shape sh = one_shape(size, "new_full");
            const Scalar s = number_arg(fill_value, "new_full", "fill_value");
            const DType dt = dtype_or(dtype, self.dtype());
            check_scalar_fits(s, dt, "full");
            Tensor t = named("new_full", [&] {
              return Tensor::empty(sh, dt, device.is_none() ? self.device() : to_device(device));
            });
            fill_(t, s);
            return leaf(t, requires_grad);
          },
          py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = none,
          py::arg("device") = none, py::arg("requires_grad") = false, py::arg("layout") = none,
          py::arg("pin_memory") = false,
          "new_full($self, size, fill_value, *, dtype=None, device=None, requires_grad=False, "
          "layout=None, pin_memory=False)\n--\n\n"
          "A tensor of size filled with fill_value, with this tensor's dtype and device (unless "
          "given).")
      .def(
          "new_empty_strided",
          [](const Tensor& self, py::handle size, py::handle stride, py::handle dtype,
             py::handle device, py::handle requires_grad, py::handle layout,
             py::handle pin_memory) {
            return empty_strided_py(size, stride,
                                    dtype.is_none() ? dtype_object(self.dtype()) : dtype,
                                    device.is_none() ? py::cast(self.device()) : device,
                                    requires_grad, py::none(), layout, pin_memory);
          },
          py::arg("size"), py::arg("stride"), py::kw_only(), py::arg("dtype") = none,
          py::arg("device") = none, py::arg("requires_grad") = false, py::arg("layout") = none,
          py::arg("pin_memory") = false,
          "new_empty_strided($self, size, stride, *, dtype=None, device=None, "
          "requires_grad=False, layout=None, pin_memory=False)\n--\n\n"
          "An uninitialized tensor of size with the given strides (empty_strided), with this "
          "tensor's dtype and device (unless given).");
  struct R {
    const char* name;
    int kind;
    const char* doc;
  };
  for (const R& r : {R{"rand_like", 0, "Uniform [0, 1) numbers"},
                     R{"randn_like", 1, "Standard normal numbers"}}) {
    const std::string doc =
        std::string(r.name) +
        "(input, *, dtype=None, device=None, requires_grad=False, memory_format=None, "
        "layout=None, pin_memory=False)\n--\n\n" +
        r.doc + " with input's shape, dtype and device (unless given), laid out as\n" +
        "memory_format asks (preserve_format by default).";
    m.def(
        r.name,
        [r](py::handle input, py::handle dtype, py::handle device, py::handle requires_grad,
            py::handle memory_format, py::handle layout, py::handle pin_memory) {
          return random_like_py(r.name, r.kind, input, py::none(), py::none(), dtype, device,
                                requires_grad, memory_format, layout, pin_memory);
        },
        py::arg("input"), py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
        py::arg("requires_grad") = false, py::arg("memory_format") = none, py::arg("layout") = none,
        py::arg("pin_memory") = false, doc.c_str());
  }
  m.def(
      "randint_like",
      [](py::handle input, py::handle low, py::handle high, py::handle dtype, py::handle device,
         py::handle requires_grad, py::handle memory_format, py::handle layout,
         py::handle pin_memory) {
        if (low.is_none() && high.is_none())
          throw TypeError("randint_like() missing required argument 'high'");
        if (low.is_none()) std::swap(low, high);  // randint_like(x, high=5): [0, 5)
        return random_like_py("randint_like", 2, input, low, high, dtype, device, requires_grad,
                              memory_format, layout, pin_memory);
      },
      py::arg("input"), py::arg("low") = none, py::arg("high") = none, py::kw_only(),
      py::arg("dtype") = none, py::arg("device") = none, py::arg("requires_grad") = false,
      py::arg("memory_format") = none, py::arg("layout") = none, py::arg("pin_memory") = false,
      "Random integers in [low, high) with input's shape, dtype and device (unless given);\n"
      "one bound given (randint_like(x, 5) or randint_like(x, high=5)): [0, bound).");
  m.def("scalar_tensor", &scalar_tensor_py, py::arg("s"), py::kw_only(), py::arg("dtype") = none,
        py::arg("device") = none, py::arg("requires_grad") = false, py::arg("out") = none,
        py::arg("layout") = none, py::arg("pin_memory") = false,
        "scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, out=None, "
        "layout=None, pin_memory=False)\n--\n\n"
        "A 0-d tensor holding s (the default float dtype unless dtype is given, like torch).");
  for (const char* name : {"empty_strided", "empty_permuted"}) {
    const bool strided = std::string(name) == "empty_strided";
    const std::string second = strided ? "stride" : "physical_layout";
    const std::string doc =
        std::string(name) + "(size, " + second +
        ", *, dtype=None, device=None, requires_grad=False, out=None, layout=None, "
        "pin_memory=False)\n--\n\n" +
        (strided ? "An uninitialized tensor of size with those element strides over fresh "
                   "storage."
                 : "An uninitialized tensor of size whose dims lie in memory in "
                   "physical_layout's order\n(outermost first): (0, 2, 3, 1) is channels-last.");
    m.def(name, strided ? &empty_strided_py : &empty_permuted_py, py::arg("size"),
          py::arg(second.c_str()), py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
          py::arg("requires_grad") = false, py::arg("out") = none, py::arg("layout") = none,
          py::arg("pin_memory") = false, doc.c_str());
  }
  m.def(
      "is_tensor", [](py::handle obj) { return py::isinstance<Tensor>(obj); }, py::arg("obj"),
      "is_tensor(obj)\n--\n\nTrue when obj is a tessera Tensor.");
  m.def("numel", &numel_py, py::arg("input"),
        "numel(input)\n--\n\nThe number of elements of input.");
  m.def("is_floating_point", &is_floating_point_py, py::arg("input"),
        "is_floating_point(input)\n--\n\nTrue when input's dtype is a real floating-point one.");
  m.def("is_complex", &is_complex_py, py::arg("input"),
        "is_complex(input)\n--\n\nTrue when input's dtype is complex.");
  m.def("is_nonzero", &is_nonzero_py, py::arg("input"),
        "is_nonzero(input)\n--\n\nWhether the one element of input is nonzero (RuntimeError "
        "for other sizes).");
  bind_functions_as_methods(
      m, {"tril", "triu", "numel", "is_floating_point", "is_complex", "is_nonzero"});
}

}  // namespace ts::python
