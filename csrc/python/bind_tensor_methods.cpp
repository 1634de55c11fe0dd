// PyTorch's Tensor conversions and queries as C++ methods (issue 17): x.to / x.cpu / x.cuda,
// x.type / x.type_as and the dtype conversions (x.float(), x.long(), ...), x.stride(dim),
// x.element_size(), x.nelement(), x.storage_offset(), x.is_same_size(y), x.dim_order(),
// x.H / x.mH / x.adjoint(), ... Every argument form is parsed here, once; the ops are in
// csrc/ops/tensor_convert.cpp.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "core/checked_math.h"
#include "core/device_backend.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/memory_format.h"
#include "ops/out_arg.h"
#include "ops/tensor_convert.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

MemoryFormat memory_format_of(py::handle fmt, const char* op);  // bind_tensor.cpp

namespace {

py::tuple int_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (int64_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

// `out`, or the Python object `self` when the op returned x itself (x.to(x.dtype) is x).
py::object self_or(py::handle self, const Tensor& x, const Tensor& out) {
  return out.impl() == x.impl() ? py::reinterpret_borrow<py::object>(self) : py::cast(out);
}

// Tensor.float(3) through the class: PyTorch's descriptor TypeError.
const Tensor& self_tensor(py::handle self, const char* name) {
  if (!py::isinstance<Tensor>(self))
    throw py::type_error(str("descriptor '", name, "' for 'Tensor' objects doesn't apply to a '",
                             type_name(self), "' object"));
  return self.cast<const Tensor&>();
}

// A memory_format= argument (None: preserve_format); a channels-last format checks x's rank.
MemoryFormat memory_format_arg(const Tensor& x, py::handle fmt, const char* op) {
  if (fmt.is_none()) return MemoryFormat::Preserve;
  if (py::isinstance<py::str>(fmt) || !py::hasattr(fmt, "name"))
    throw py::type_error(str(op, "(): argument 'memory_format' must be a tessera memory format ",
                             "(ts.contiguous_format, ts.channels_last, ...), not ",
                             type_name(fmt)));
  const MemoryFormat f = memory_format_of(fmt, op);
  if (f == MemoryFormat::ChannelsLast || f == MemoryFormat::ChannelsLast3d)
    check_channels_last_rank(x, f, op);
  return f;
}

const Tensor& other_tensor(py::handle h, const char* op, const char* name) {
  if (!py::isinstance<Tensor>(h))
    throw py::type_error(
        str(op, "(): argument '", name, "' (position 1) must be Tensor, not ", type_name(h)));
  return h.cast<const Tensor&>();
}

bool is_device_like(py::handle a) {
  return py::isinstance<py::str>(a) || py::isinstance<Device>(a) ||
         (py::hasattr(a, "type") && py::hasattr(a, "index") && !py::isinstance<Tensor>(a));
}

// Note [x.to forms]: PyTorch's three signatures, (device=None, dtype=None, non_blocking=False,
// copy=False), (dtype, non_blocking=False, copy=False) and (tensor, non_blocking=False,
// copy=False), each with keyword-only memory_format. Leading positionals are read by kind (a
// Tensor gives its device and dtype, a str / Device its device, anything else a dtype); the
// positional bools after them are non_blocking then copy.
py::object to_method(py::handle self, const py::args& args, py::handle device, py::handle dtype,
                     py::handle non_blocking, py::handle copy, py::handle memory_format) {
  const Tensor& x = self_tensor(self, "to");
  std::optional<Device> dev;
  std::optional<DType> dt;
  bool nb = py::cast<bool>(non_blocking), cp = py::cast<bool>(copy);
  int bools = 0;
  for (py::handle a : args) {
    if (PyBool_Check(a.ptr())) {
      if (bools > 1)
        throw py::type_error("to() takes at most 2 positional bools (non_blocking, copy)");
      (bools++ == 0 ? nb : cp) = a.ptr() == Py_True;
    } else if (bools > 0) {
      throw py::type_error(
          str("to(): unexpected argument of type ", type_name(a),
              " after non_blocking; expected (device, dtype, non_blocking, copy)"));
    } else if (py::isinstance<Tensor>(a)) {
      const Tensor& o = a.cast<const Tensor&>();
      dev = o.device();
      dt = o.dtype();
    } else if (is_device_like(a)) {
      dev = to_device(a);
    } else {
      dt = to_dtype(a);
    }
  }
  if (!device.is_none()) dev = to_device(device);
  if (!dtype.is_none()) dt = to_dtype(dtype);
  return self_or(self, x, to_op(x, dev, dt, nb, cp, memory_format_arg(x, memory_format, "to")));
}

const char* legacy_type_name(DType d) {
  switch (d) {
    case DType::Float32:
      return "FloatTensor";
    case DType::Float64:
      return "DoubleTensor";
    case DType::Float16:
      return "HalfTensor";
    case DType::BFloat16:
      return "BFloat16Tensor";
    case DType::Int64:
      return "LongTensor";
    case DType::Int32:
      return "IntTensor";
    case DType::Int16:
      return "ShortTensor";
    case DType::Int8:
      return "CharTensor";
    case DType::UInt8:
      return "ByteTensor";
    case DType::Bool:
      return "BoolTensor";
    case DType::Complex64:
      return "ComplexFloatTensor";
    case DType::Complex128:
      return "ComplexDoubleTensor";
    default:
      return nullptr;
  }
}

// x.type(): 'tessera.FloatTensor' (PyTorch's legacy type names); x.type(dtype) / x.type(
// 'torch.DoubleTensor') this tensor as that dtype.
py::object type_method(py::handle self, py::handle dtype, bool /*non_blocking*/) {
  const Tensor& x = self_tensor(self, "type");
  if (dtype.is_none()) {
    const char* n = legacy_type_name(x.dtype());
    return py::str(str("tessera.", x.device().is_cpu() ? "" : "cuda.",
                       n ? std::string(n) : str(dtype_name(x.dtype()), "Tensor")));
  }
  std::optional<DType> d;
  // x.type(torch.FloatTensor): a legacy typed-tensor class names its dtype
  // (python/tessera/_torch_legacy.py)
  if (PyType_Check(dtype.ptr()) && py::hasattr(dtype, "_dtype_name"))
    return type_method(self, dtype.attr("_dtype_name"), false);
  if (py::isinstance<py::str>(dtype)) {
    std::string s = dtype.cast<std::string>();
    s = s.substr(s.rfind('.') == std::string::npos ? 0 : s.rfind('.') + 1);
    for (int i = 0; i < kNumDTypes && !d; ++i) {
      const char* n = legacy_type_name(static_cast<DType>(i));
      if (n && s == n) d = static_cast<DType>(i);
    }
  }
  const DType to = d ? *d : to_dtype(dtype);
  return self_or(self, x, astype_op(x, to, false));
}

py::object stride_method(const Tensor& x, py::handle dim) {
  if (dim.is_none()) return int_tuple(x.strides());
  if (x.ndim() == 0 && PyIndex_Check(dim.ptr()) && !PyBool_Check(dim.ptr()))
    throw IndexError(str("stride: dimension specified as ", py::str(dim).cast<std::string>(),
                         " but tensor has no dimensions"));
  return py::int_(x.strides()[dim_index(dim, "stride", x.ndim())]);
}

py::tuple dim_order(const Tensor& x) {
  Shape order(x.ndim());
  std::iota(order.begin(), order.end(), int64_t{0});
  const auto& st = x.strides();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return st[a] > st[b]; });
  return int_tuple(order);
}

Device cuda_device(py::handle device) {
  if (device.is_none())
    return Device{DeviceType::CUDA, static_cast<int16_t>(require_cuda("cuda").current_device())};
  if (PyIndex_Check(device.ptr()) && !PyBool_Check(device.ptr()))
    return Device{DeviceType::CUDA, static_cast<int16_t>(index_value(device, "cuda", "device"))};
  return to_device(device);
}

struct Conversion {
  const char* name;
  DType dtype;
};
constexpr Conversion kConversions[] = {
    {"float", DType::Float32},     {"double", DType::Float64},   {"half", DType::Float16},
    {"bfloat16", DType::BFloat16}, {"long", DType::Int64},       {"int", DType::Int32},
    {"short", DType::Int16},       {"char", DType::Int8},        {"byte", DType::UInt8},
    {"bool", DType::Bool},         {"cfloat", DType::Complex64}, {"cdouble", DType::Complex128}};

// ---- PyTorch's in-place metadata ops: resize_, set_ (and the legacy x.new)

// Makes `self` take `n`'s data (through Tensor._set_data, which also drops what the Python
// layer cached about the old geometry); refused while autograd records x, as in torch.
void check_rebind(const Tensor& x, const char* name) {
  if (!autograd::grad_enabled() || !autograd::requires_grad(x)) return;
  if (autograd::is_leaf(x))
    throw RuntimeError(str(name,
                           ": a leaf Variable that requires grad is being used in an "
                           "in-place operation; hint: wrap it in `with ts.no_grad():`"));
  throw RuntimeError(str(name,
                         ": tessera cannot change the shape of a tensor with autograd "
                         "history in place; hint: use the out-of-place ",
                         std::string(name, std::strlen(name) - 1), "()"));
}

py::object rebind(py::handle self, const Tensor& n) {
  self.attr("_set_data")(py::cast(n));
  return py::reinterpret_borrow<py::object>(self);
}

// The sizes of x.resize_(2, 3) / x.resize_((2, 3)) / x.new(2, 3): one sequence or the ints.
Shape varargs_sizes(const py::args& args, const char* op) {
  py::object seq = args;
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) seq = args[0];
  if (!py::isinstance<py::sequence>(seq) || py::isinstance<py::str>(seq))
    throw py::type_error(
        str(op, "(): argument 'size' must be a sequence of ints, not ", type_name(seq)));
  Shape s;
  for (py::handle e : seq) s.push_back(int_arg(e, op, "size"));
  return s;
}

// x.resize_(...) (Note [resize_]: ops/out_arg.h's resize_), refused while autograd records x.
py::object resize_to(py::handle self, const Shape& shape) {
  const Tensor& x = self_tensor(self, "resize_");
  check_rebind(x, "resize_");
  resize_(x, shape, "resize_");
  forget_geometry(self);
  return py::reinterpret_borrow<py::object>(self);
}

py::object set_method(py::handle self, py::handle source, py::handle storage_offset,
                      py::handle size, py::handle stride) {
  const Tensor& x = self_tensor(self, "set_");
  Tensor n;
  if (source.is_none()) {
    n = Tensor::empty(Shape{0}, x.dtype(), x.device());
  } else {
    const Tensor& src = other_tensor(source, "set_", "source");
    TS_CHECK(src.dtype() == x.dtype(), RuntimeError, "set_: Expected object of scalar type ",
             dtype_name(x.dtype()), " but got scalar type ", dtype_name(src.dtype()),
             " for argument 'source'; hint: convert it first with source.to(x.dtype)");
    if (size.is_none()) {
      n = src;
    } else {
      const Shape sh = to_shape(size, "set_");
      py::object st = stride.is_none() ? py::object(int_tuple(contiguous_strides(sh)))
                                       : py::reinterpret_borrow<py::object>(stride);
      n = py::cast<Tensor>(source.attr("as_strided")(int_tuple(sh), st, storage_offset));
    }
  }
  check_rebind(x, "set_");
  return rebind(self, n);
}

// Legacy x.new(): x.new() empty, x.new(2, 3) / x.new(torch.Size) uninitialized of that shape,
// x.new(data) a tensor of data; each with x's dtype and device (or device=).
py::object new_method(py::handle self, const py::args& args, py::handle device) {
  const Tensor& x = self_tensor(self, "new");
  const Device dev = device.is_none() ? x.device() : to_device(device);
  if (args.size() == 0) return py::cast(Tensor::empty(Shape{0}, x.dtype(), dev));
  const bool data = args.size() == 1 && !PyIndex_Check(args[0].ptr()) &&
                    !(py::isinstance<py::tuple>(args[0]) && type_name(args[0]) == "Size");
  if (data)
    return py::module_::import("tessera").attr("asarray")(
        args[0], py::arg("dtype") = dtype_object(x.dtype()), py::arg("device") = py::cast(dev));
  return py::cast(Tensor::empty(varargs_sizes(args, "new"), x.dtype(), dev));
}

}  // namespace

void init_tensor_methods(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def("to", &to_method, py::arg("device") = py::none(), py::arg("dtype") = py::none(),
          py::arg("non_blocking") = false, py::arg("copy") = false,
          py::arg("memory_format") = py::none(),
          "to(*args, device=None, dtype=None, non_blocking=False, copy=False, "
          "memory_format=None) -> Tensor\n\n"
          "This tensor on `device` and/or as `dtype`, PyTorch's forms: x.to(dtype), "
          "x.to(device, dtype), x.to(other) (other's device and dtype), each followed by "
          "non_blocking and copy. x itself when nothing changes and copy is False. "
          "non_blocking=True lets a copy from (or into) pinned memory run asynchronously: "
          "synchronize before reading the result. Differentiable (the gradient moves back).")
      .def(
          "cpu",
          [](py::handle self) {
            const Tensor& x = self_tensor(self, "cpu");
            return self_or(self, x, to_device_op(x, Device{}, false, "cpu"));
          },
          "This tensor on the CPU (itself when already there).")
      .def(
          "cuda",
          [](py::handle self, py::handle device, bool non_blocking, py::handle memory_format) {
            const Tensor& x = self_tensor(self, "cuda");
            const MemoryFormat fmt = memory_format_arg(x, memory_format, "cuda");
            Tensor out = to_device_op(x, cuda_device(device), non_blocking, "cuda");
            return self_or(self, x, to_memory_format(out, fmt, "cuda"));
          },
          py::arg("device") = py::none(), py::arg("non_blocking") = false, py::kw_only(),
          py::arg("memory_format") = py::none(),
          "This tensor on a CUDA device (default: the current one; an int is its index).")
      .def_property_readonly(
          "is_cuda", [](const Tensor& x) { return !x.device().is_cpu(); },
          "Whether the tensor lives on a CUDA device.")
      .def_property_readonly(
          "is_cpu", [](const Tensor& x) { return x.device().is_cpu(); },
          "Whether the tensor lives on the CPU.")
      .def("type", &type_method, py::arg("dtype") = py::none(), py::arg("non_blocking") = false,
           "type(dtype=None, non_blocking=False) -> str | Tensor\n\n"
           "With no dtype the legacy type name ('tessera.FloatTensor'); with a dtype or a type "
           "name ('torch.DoubleTensor') this tensor converted to it (itself when it already "
           "is).")
      .def(
          "type_as",
          [](py::handle self, py::handle other) {
            const Tensor& x = self_tensor(self, "type_as");
            return self_or(self, x,
                           astype_op(x, other_tensor(other, "type_as", "other").dtype(), false));
          },
          py::arg("other"), "This tensor converted to other's dtype (itself when it already is).")
      .def("stride", &stride_method, py::arg("dim") = py::none(),
           "x.stride() -> the strides in elements (a tuple), PyTorch's; x.stride(dim) -> one "
           "of them (negative dims count from the end).")
      .def("element_size", &Tensor::itemsize, "Bytes per element (the array API's itemsize).")
      .def("nelement", &Tensor::numel, "The number of elements (numel).")
      .def("ndimension", &Tensor::ndim, "The number of dimensions (ndim).")
      .def("storage_offset", &Tensor::offset,
           "Where the tensor starts in its storage, in elements.")
      .def(
          "is_same_size",
          [](const Tensor& x, py::handle other) {
            return x.shape() == other_tensor(other, "is_same_size", "other").shape();
          },
          py::arg("other"), "Whether other has this tensor's shape.")
      .def(
          "is_signed",
          [](const Tensor& x) { return !is_bool(x.dtype()) && !is_unsigned_int(x.dtype()); },
          "Whether the dtype is signed (false for bool and the unsigned integers).")
      .def(
          "get_device", [](const Tensor& x) { return x.device().is_cpu() ? -1 : x.device().index; },
          "-1 on the CPU, else the CUDA device's index.")
      .def("dim_order", &dim_order,
           "The dims from outermost to innermost in memory (by decreasing stride, stable).")
      .def(
          "is_set_to",
          [](const Tensor& x, py::handle other) {
            const Tensor& o = other_tensor(other, "is_set_to", "tensor");
            return x.storage() == o.storage() && x.offset() == o.offset() &&
                   x.shape() == o.shape() && x.strides() == o.strides();
          },
          py::arg("tensor"), "Whether tensor views the same storage with the same geometry.")
      .def(
          "const_data_ptr",
          [](const Tensor& x) { return reinterpret_cast<uintptr_t>(x.data_ptr()); },
          "The address of the first element (data_ptr).")
      .def(
          "adjoint", [](const Tensor& x) { return adjoint_op(x, "adjoint"); },
          "The conjugate transpose of the last two dims (a view for real tensors).")
      .def_property_readonly(
          "mH", [](const Tensor& x) { return adjoint_op(x, "mH"); },
          "The conjugate transpose of the last two dims (a view for real tensors).")
      .def_property_readonly(
          "H",
          [](py::handle self) {
            const Tensor& x = self_tensor(self, "H");
            return self_or(self, x, H_op(x));
          },
          "The conjugate transpose of a matrix (a 0-d tensor: its conjugate).");
  for (const Conversion& c : kConversions) {
    const DType d = c.dtype;
    cls.def(
        c.name,
        [d, name = c.name](py::handle self, py::handle memory_format) {
          const Tensor& x = self_tensor(self, name);
          return self_or(
              self, x,
              to_op(x, std::nullopt, d, false, false, memory_format_arg(x, memory_format, name)));
        },
        py::arg("memory_format") = py::none(),
        str("This tensor as ", dtype_name(d), " (itself when it already is).").c_str());
  }
  cls.def(
      "chalf",
      [](py::handle self, py::handle /*memory_format*/) -> Tensor {
        self_tensor(self, "chalf");
        throw TypeError(
            "chalf(): tessera has no complex32 (chalf) dtype; use x.to(ts.complex64) instead");
      },
      py::arg("memory_format") = py::none(),
      "chalf($self, /, memory_format=None)\n--\n\ntorch's x.chalf() converts to complex32, a "
      "dtype tessera does not have: raises TypeError (also a RuntimeError).");
  cls.def(
         "resize_",
         [](py::handle self, const py::args& sizes, py::handle /*memory_format*/) {
           return resize_to(self, varargs_sizes(sizes, "resize_"));
         },
         py::arg("memory_format") = py::none(),
         "resize_(*sizes, memory_format=None) -> Tensor\n\n"
         "Gives the tensor shape `sizes` (contiguous) in place; the first elements (row-major) "
         "are kept, new ones are uninitialized (Note [resize_]). Returns self.")
      .def(
          "resize_as_",
          [](py::handle self, py::handle other, py::handle /*memory_format*/) {
            return resize_to(self, other_tensor(other, "resize_as_", "the_template").shape());
          },
          py::arg("the_template"), py::arg("memory_format") = py::none(),
          "Resizes this tensor in place to the_template's shape (resize_). Returns self.")
      .def(
          "resize",
          [](py::handle self, const py::args& sizes) {
            const Shape sh = varargs_sizes(sizes, "resize");
            return resize_to(py::cast(clone_op(self_tensor(self, "resize"))), sh);
          },
          "A copy of this tensor resized to `sizes` (deprecated in torch; see resize_).")
      .def(
          "resize_as",
          [](py::handle self, py::handle other) {
            const Shape sh = other_tensor(other, "resize_as", "the_template").shape();
            return resize_to(py::cast(clone_op(self_tensor(self, "resize_as"))), sh);
          },
          py::arg("the_template"), "A copy of this tensor resized to the_template's shape.")
      .def("set_", &set_method, py::arg("source") = py::none(),
           py::arg("storage_offset") = py::none(), py::arg("size") = py::none(),
           py::arg("stride") = py::none(),
           "set_(source=None, storage_offset=None, size=None, stride=None) -> Tensor\n\n"
           "set_() empties the tensor; set_(source) makes it share source's memory and "
           "geometry; set_(source, storage_offset, size, stride) a strided view of source. "
           "Returns self.")
      .def(
          "conj_physical",
          [](py::handle self) {
            const Tensor& x = self_tensor(self, "conj_physical");
            return is_complex(x.dtype()) ? py::cast(conj(x))
                                         : py::reinterpret_borrow<py::object>(self);
          },
          "The conjugate in new memory for a complex tensor (differentiable); a real one is "
          "returned as it is, as in torch.")
      .def_property(
          "data", [](const Tensor& x) { return autograd::detach(x); },
          [](py::handle self, py::handle value) {
            const Tensor& x = self_tensor(self, "data");
            if (!py::isinstance<Tensor>(value))
              throw py::type_error(
                  str("Variable data has to be a tensor, but got ", type_name(value)));
            const DType d = value.cast<const Tensor&>().dtype();
            if (autograd::requires_grad(x) && !is_inexact(d))
              throw RuntimeError(
                  str("data: data set to a tensor that requires gradients must be "
                      "floating point or complex dtype, got ",
                      dtype_name(d)));
            self.attr("_set_data")(value);
          },
          "torch's .data: this tensor's values without autograd history (shares memory); "
          "x.data = y makes x take y's storage, shape and dtype, keeping its identity.")
      .def("new", &new_method, py::arg("device") = py::none(),
           "new(*args, device=None) -> Tensor\n\n"
           "Legacy constructor with this tensor's dtype and device: x.new() is empty, "
           "x.new(2, 3) or x.new(size) uninitialized, x.new(data) holds data.");
  // PyTorch's in-place metadata ops: x.t_() makes x the view x.t() (refused while autograd
  // records x, as resize_).
  // The text signatures are PyTorch's (the arguments go to the out-of-place view as given).
  static const std::pair<const char*, const char*> kInPlaceViews[] = {
      {"squeeze_", "(self, /, dim=None)"},
      {"unsqueeze_", "(self, /, dim)"},
      {"t_", "(self, /)"},
      {"transpose_", "(self, /, dim0, dim1)"},
      {"swapaxes_", "(self, /, axis0, axis1)"},
      {"swapdims_", "(self, /, dim0, dim1)"},
      {"as_strided_", "(self, /, size, stride, storage_offset=None)"}};
  for (const auto& [name, params] : kInPlaceViews) {
    const std::string base(name, std::strlen(name) - 1);
    cls.def(
        name,
        [name = name, base](py::handle self, const py::args& args, const py::kwargs& kwargs) {
          check_rebind(self_tensor(self, name), name);
          return rebind(self, self.attr(base.c_str())(*args, **kwargs).cast<Tensor>());
        },
        str(name, params, "\n--\n\nIn-place ", base, ": this tensor becomes self.", base,
            "(...) (a view of the same memory). Returns self.")
            .c_str());
  }
}

}  // namespace ts::python
