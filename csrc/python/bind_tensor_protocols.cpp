// Tensor's Python protocols and PyTorch's attribute-style details as C++ methods (issue 17): the
// callable x.size (Note [callable size]), the writable x.real / x.imag views, NumPy interop
// (x.numpy(), __array__, tolist, __iter__), __contains__ / __format__, the per-element Python
// callbacks apply_ / map_ / map2_, x.clone(memory_format=) and ts.clone / ts.detach, pinned
// memory and record_stream, conj_physical_, and torch's queries that are constant here (layout,
// names, sparse_dim, is_conj, ...). Printing (__repr__ / __str__) and the storage objects stay
// Python (python/tessera/_tensor.py), as PyTorch's are.
#include <unistd.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "autograd/record.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/math.h"
#include "ops/memory_format.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/elementwise_binding.h"
#include "python/input_arg.h"
#include "python/int_arg.h"

namespace ts::python {

void forget_geometry(py::handle t) {
  if (PyObject** d = _PyObject_GetDictPtr(t.ptr()); d && *d)
    if (PyDict_DelItemString(*d, "_ts_size") != 0) PyErr_Clear();
}

py::object tensor_item(const Tensor& t);  // bind_tensor.cpp

namespace {

// The instance dict of `o` (made when it has none yet).
py::dict dict_of(py::handle o) {
  PyObject* d = PyObject_GenericGetDict(o.ptr(), nullptr);
  if (d == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::dict>(d);
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (int64_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

const py::object& legacy(const char* name) {  // tessera._torch_legacy.<name>, imported once
  static auto* cache = new std::map<std::string, py::object>();
  auto it = cache->find(name);
  if (it == cache->end())
    it = cache->emplace(name, py::module_::import("tessera._torch_legacy").attr(name)).first;
  return it->second;
}

// Note [callable size]: the array API makes x.size an int property (the element count),
// PyTorch makes it a method x.size(dim=None). x.size here is an int subclass (_Size) that is
// also callable: x.size == 6 and isinstance(x.size, int) hold, x.size() returns the shape as
// tessera.Size and x.size(1) / x.size(-1) / x.size(dim=1) one extent. The object is made once
// per tensor and kept in its __dict__ as "_ts_size" (Tensor._set_data, which changes the
// shape, drops it); it keeps the shape in its own __dict__ ("_shape", and "_torch_size" once
// called).
py::object& size_type() {
  static auto* t = new py::object();
  return *t;
}

py::object size_get(py::handle self) {
  const Tensor& x = tensor_or_throw(self, "size", "self");
  py::dict d = dict_of(self);
  if (PyObject* s = PyDict_GetItemString(d.ptr(), "_ts_size"))
    return py::reinterpret_borrow<py::object>(s);
  py::object s = size_type()(py::int_(x.numel()));
  dict_of(s)["_shape"] = shape_tuple(x.shape());
  d["_ts_size"] = s;
  return s;
}

py::object size_call(py::handle size, const py::args& args, const py::kwargs& kwargs) {
  py::handle dim = args.size() == 1 ? args[0] : py::handle(py::none());
  const bool kw_dim = kwargs.contains("dim");
  if (args.size() + kwargs.size() > 1 || (kwargs.size() == 1 && !kw_dim))
    throw py::type_error(str("size(): expected at most one argument, dim (an int), got ",
                             args.size(), " positional and keywords ",
                             py::repr(py::list(kwargs.attr("keys")())).cast<std::string>()));
  if (kw_dim) dim = kwargs["dim"];
  py::dict d = dict_of(size);
  py::tuple shape = d["_shape"];
  if (dim.is_none()) {
    if (PyObject* t = PyDict_GetItemString(d.ptr(), "_torch_size"))
      return py::reinterpret_borrow<py::object>(t);
    py::object t = legacy("Size")(shape);
    d["_torch_size"] = t;
    return t;
  }
  const auto n = static_cast<int64_t>(shape.size());
  if (n == 0)
    throw IndexError(str("size: dimension specified as ", py::repr(dim).cast<std::string>(),
                         " but tensor has no dimensions"));
  return shape[dim_index(dim, "size", n)];
}

// The fast paths (Note [callable size]): x.size and x.size() / x.size(int) of a cached size
// object are raw CPython calls (no pybind11 dispatch); everything else, errors included, goes
// through size_get / size_call above.
py::object& slow_size_get() {
  static auto* f = new py::object(py::cpp_function(&size_get));
  return *f;
}
py::object& slow_size_call() {
  static auto* f = new py::object(py::cpp_function(&size_call));
  return *f;
}
PyObject* interned(const char* s) { return PyUnicode_InternFromString(s); }

PyObject* size_get_raw(PyObject* self, void*) {
  static PyObject* key = interned("_ts_size");
  PyObject** dp = _PyObject_GetDictPtr(self);
  if (dp != nullptr && *dp != nullptr) {
    if (PyObject* s = PyDict_GetItemWithError(*dp, key)) return Py_NewRef(s);
    if (PyErr_Occurred()) return nullptr;
  }
  return PyObject_CallOneArg(slow_size_get().ptr(), self);
}

PyObject* size_call_raw(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  static PyObject* k_shape = interned("_shape");
  static PyObject* k_torch = interned("_torch_size");
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject** dp = _PyObject_GetDictPtr(self);
  if (kwnames == nullptr && nargs <= 1 && dp != nullptr && *dp != nullptr) {
    if (nargs == 0) {
      if (PyObject* t = PyDict_GetItemWithError(*dp, k_torch)) return Py_NewRef(t);
    } else if (PyLong_CheckExact(args[0])) {
      PyObject* shape = PyDict_GetItemWithError(*dp, k_shape);
      if (shape != nullptr && PyTuple_CheckExact(shape)) {
        const Py_ssize_t n = PyTuple_GET_SIZE(shape);
        int overflow = 0;
        long long d = PyLong_AsLongLongAndOverflow(args[0], &overflow);
        if (!overflow && n > 0 && d >= -n && d < n)
          return Py_NewRef(PyTuple_GET_ITEM(shape, d < 0 ? d + n : d));
      }
    }
    if (PyErr_Occurred()) return nullptr;
  }
  // the slow path: (size, *args, **kwargs)
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  std::vector<PyObject*> all(static_cast<size_t>(nargs + nkw + 1));
  all[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) all[static_cast<size_t>(i + 1)] = args[i];
  return PyObject_Vectorcall(slow_size_call().ptr(), all.data(), static_cast<size_t>(nargs + 1),
                             kwnames);
}

PyObject* size_call_meth(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  return size_call_raw(self, args, static_cast<size_t>(nargs), kwnames);
}

PyMethodDef g_size_call_def = {
    "__call__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&size_call_meth)),
    METH_FASTCALL | METH_KEYWORDS,
    "size(dim=None) -> tessera.Size | int\n\nThe shape, or the extent of `dim` (negative counts "
    "from the end)."};
PyGetSetDef g_size_getset = {
    "size", &size_get_raw, nullptr,
    "Number of elements (array API), callable like torch: x.size() is the shape, x.size(d) one "
    "extent (Note [callable size]).",
    nullptr};

void make_size_type(py::module_& m) {
  py::dict ns;
  ns["__module__"] = "tessera";
  ns["__doc__"] =
      "The element count (an int) that can also be called like torch's Tensor.size: size() "
      "is the shape (tessera.Size), size(dim) one extent (Note [callable size]).";
  py::object cls = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
      "_Size",
      py::make_tuple(py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyLong_Type))),
      ns);
  cls.attr("__call__") = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &g_size_call_def));
  cls.attr("__reduce__") = py::cpp_function(
      [](py::handle s) {
        return py::make_tuple(
            py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyLong_Type)),
            py::make_tuple(py::reinterpret_steal<py::object>(
                PyLong_FromLongLong(PyLong_AsLongLong(s.ptr())))));
      },
      py::name("__reduce__"), py::is_method(cls), "Pickles as a plain int.");
  size_type() = cls;
  m.attr("_Size") = cls;
}

// ---- x.real / x.imag: views of a complex tensor's parts, writable (PyTorch's and NumPy's)
py::object part(py::handle self, int which) {
  const char* name = which == 0 ? "real" : "imag";
  const Tensor& x = tensor_or_throw(self, name, "self");
  if (is_complex(x.dtype())) return py::cast(select(view_as_real(x), x.ndim(), which));
  if (which == 0) return py::reinterpret_borrow<py::object>(self);
  throw RuntimeError(str("imag is not implemented for tensors with non-complex dtypes (got ",
                         dtype_name(x.dtype()), "); hint: ts.imag(x) gives zeros for real x"));
}

void set_part(py::handle self, py::handle value, int which) {
  part(self, which).attr("__setitem__")(py::ellipsis(), value);
}

// ---- NumPy interop
py::object numpy_of(const Tensor& t) { return to_numpy(py::cast(t), t); }

py::object array_method(py::handle self, py::handle dtype, py::handle copy) {
  const Tensor& x = tensor_or_throw(self, "__array__", "self");
  if (!dtype.is_none()) {
    py::object want = py::module_::import("numpy").attr("dtype")(dtype);
    std::optional<DType> target;
    try {
      target = to_dtype(want);
    } catch (py::type_error&) {  // a NumPy-only dtype (e.g. float128): NumPy converts
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
    }
    if (!target || *target != x.dtype()) {
      if (copy.ptr() == Py_False)
        throw ValueError(str("__array__: copy=False but converting ", dtype_name(x.dtype()), " to ",
                             py::str(want).cast<std::string>(), " needs a copy"));
      if (target) return numpy_of(astype(x, *target, true));  // needs no NumPy bfloat16
      return to_numpy(self, x).attr("astype")(want);
    }
  }
  py::object a = to_numpy(self, x);
  return PyObject_IsTrue(copy.ptr()) == 1 ? a.attr("copy")() : a;
}

// The values as host memory NumPy can hold: on the CPU, bfloat16 as float32.
Tensor host_values(const Tensor& x) {
  const Tensor c = x.device().is_cpu() ? x : to_device(x, Device{});
  return c.dtype() == DType::BFloat16 ? astype(c, DType::Float32, true) : c;
}

// ---- apply_ / map_ / map2_: a Python callable per element (CPU; slow, as in torch)
py::object per_element(py::handle self, const char* op, const std::vector<Tensor>& others,
                       const py::function& fn) {
  const Tensor& x = tensor_or_throw(self, op, "self");
  TS_CHECK(x.device().is_cpu(), TypeError, op, " is only implemented on CPU tensors (got ",
           x.device().str(), "); hint: call x.cpu() first");
  if (autograd::requires_grad(x))
    throw RuntimeError(str("Can't call ", op,
                           "() on Variable that requires grad. Use var.detach().", op,
                           "() instead."));
  std::vector<py::list> cols;
  auto flat_values = [&](const Tensor& t) {
    const Tensor b = broadcast_to(t, x.shape());
    return py::list(
        numpy_of(host_values(reshape(contiguous(b), Shape{x.numel()}))).attr("tolist")());
  };
  cols.push_back(flat_values(x));
  for (const Tensor& o : others) cols.push_back(flat_values(o));
  py::list out(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) {
    py::tuple args(cols.size());
    for (size_t j = 0; j < cols.size(); ++j) args[j] = cols[j][i];
    out[i] = fn(*args);
  }
  if (x.numel() == 0) return py::reinterpret_borrow<py::object>(self);
  const Tensor vals = py::module_::import("tessera").attr("asarray")(out).cast<Tensor>();
  const autograd::GradModeGuard no_grad(false);
  copy_(x, reshape(astype(vals, x.dtype(), false), x.shape()));
  return py::reinterpret_borrow<py::object>(self);
}

Tensor other_operand(py::handle h, const char* op) { return operand_or_throw(h, op); }

// A memory_format= argument: a tessera memory format object (never a name), or None.
std::optional<MemoryFormat> format_arg(py::handle fmt, const char* op) {
  if (fmt.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(fmt) || !py::hasattr(fmt, "name"))
    throw py::type_error(str(op, "(): memory_format must be a tessera memory format ",
                             "(ts.preserve_format, ts.contiguous_format, ts.channels_last...), "
                             "got ",
                             type_name(fmt)));
  return memory_format_of(fmt, op);
}

py::object with_format(const Tensor& t, py::handle fmt, const char* op) {
  const std::optional<MemoryFormat> f = format_arg(fmt, op);
  return py::cast(f ? to_memory_format(t, *f, op) : t);
}

// x.clone(memory_format=fmt) / ts.clone: one copy, straight into the layout fmt asks (None:
// preserve_format, as torch).
Tensor clone_in_format(const Tensor& x, py::handle fmt) {
  return clone_op(x, format_arg(fmt, "clone").value_or(MemoryFormat::Preserve));
}

py::object falsy(py::handle) { return py::bool_(false); }
bool false_method(const Tensor&) { return false; }
py::handle itself(py::handle self, const char* name) {
  if (!py::isinstance<Tensor>(self))
    throw py::type_error(str("descriptor '", name, "' for 'Tensor' objects doesn't apply to a '",
                             type_name(self), "' object"));
  return self;
}

}  // namespace

void init_tensor_protocols(py::module_& m) {
  make_size_type(m);
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.attr("size") = py::reinterpret_steal<py::object>(
      PyDescr_NewGetSet(reinterpret_cast<PyTypeObject*>(cls.ptr()), &g_size_getset));
  cls.def_property(
         "real", [](py::handle self) { return part(self, 0); },
         [](py::handle self, py::handle v) { set_part(self, v, 0); },
         "The real part: a writable view for complex tensors (x itself for real ones), as in "
         "PyTorch and NumPy.")
      .def_property(
          "imag", [](py::handle self) { return part(self, 1); },
          [](py::handle self, py::handle v) { set_part(self, v, 1); },
          "The imaginary part: a writable view for complex tensors (complex only, as PyTorch).")
      .def(
          "numpy",
          [](py::handle self, bool force) {
            const Tensor& x = tensor_or_throw(self, "numpy", "self");
            if (force && !x.device().is_cpu()) return numpy_of(to_device(x, Device{}));
            py::object a = to_numpy(self, x);
            return force ? a.attr("copy")() : a;
          },
          py::kw_only(), py::arg("force") = false,
          "A NumPy array sharing this tensor's memory (CPU only); force=True returns a copy "
          "(PyTorch's spelling). bfloat16 needs the ml_dtypes package.")
      .def("__array__", &array_method, py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
           "NumPy 2's __array__ protocol: an ndarray sharing this CPU tensor's memory. dtype: "
           "convert to this NumPy dtype (a copy when it differs). copy: None copies only when "
           "needed, True always copies, False never copies and raises ValueError when it would "
           "have to.")
      .def(
          "tolist",
          [](const Tensor& x) {
            try {
              return numpy_of(host_values(x)).attr("tolist")();
            } catch (py::error_already_set& e) {
              if (!e.matches(PyExc_MemoryError)) throw;
              // NumPy's list building raised a bare MemoryError (no message)
              PyErr_SetString(PyExc_MemoryError,
                              str("tolist: out of memory building nested lists of ", x.numel(),
                                  " Python numbers (shape ", shape_str(x.shape()),
                                  "); hint: convert a slice, or use x.numpy()")
                                  .c_str());
              throw py::error_already_set();
            }
          },
          "The values as (nested lists of) Python numbers; a 0-d tensor gives one number.")
      .def(
          "__iter__",
          [](py::handle self) {
            const Tensor& x = tensor_or_throw(self, "__iter__", "self");
            TS_CHECK(x.ndim() > 0, TypeError, "iteration over a 0-d tensor");
            py::list rows(x.dim(0));
            // (x[i] through __getitem__, as the Python version did: a tracer that wraps it,
            // tessera.onnx's, sees the rows)
            py::object getitem = self.attr("__getitem__");
            for (int64_t i = 0; i < x.dim(0); ++i) rows[i] = getitem(i);
            return py::iter(rows);
          },
          "Iterates over the first dim (views x[0], x[1], ...).")
      .def(
          "__contains__",
          [](const Tensor& x, py::handle element) {
            if (!py::isinstance<Tensor>(element) && !PyLong_Check(element.ptr()) &&
                !PyFloat_Check(element.ptr()) && !PyComplex_Check(element.ptr()))
              throw RuntimeError(
                  str("Tensor.__contains__ only supports Tensor or scalar, but "
                      "you passed in a ",
                      type_name(element), "."));
            const Tensor eq = binary_op(equal_def, x, other_operand(element, "__contains__"));
            return item(any(eq, Axes{}, false)).i != 0;
          },
          py::arg("element"),
          "`v in x`: whether any element of x equals v (a number, or a tensor broadcast "
          "against x), torch's and NumPy's rule.")
      .def(
          "__format__",
          [](py::handle self, py::handle spec) {
            const Tensor& x = tensor_or_throw(self, "__format__", "self");
            if (x.ndim() == 0)
              return py::str(py::module_::import("builtins").attr("format")(tensor_item(x), spec));
            return py::str(
                py::module_::import("builtins").attr("object").attr("__format__")(self, spec));
          },
          py::arg("format_spec"),
          "f\"{loss:.4f}\": a 0-d tensor formats as its Python value (torch's rule); others "
          "only with an empty spec (their str).")
      .def(
          "apply_",
          [](py::handle self, const py::function& callable) {
            return per_element(self, "apply_", {}, callable);
          },
          py::arg("callable"),
          "Applies a Python function to each element in place (CPU only, slow; as torch). "
          "Returns self.")
      .def(
          "map_",
          [](py::handle self, py::handle tensor, const py::function& callable) {
            return per_element(self, "map_", {other_operand(tensor, "map_")}, callable);
          },
          py::arg("tensor"), py::arg("callable"),
          "self[i] = callable(self[i], tensor[i]) for each element, tensor broadcast to self "
          "(CPU only, slow; as torch). Returns self.")
      .def(
          "map2_",
          [](py::handle self, py::handle x, py::handle y, const py::function& callable) {
            return per_element(self, "map2_",
                               {other_operand(x, "map2_"), other_operand(y, "map2_")}, callable);
          },
          py::arg("x"), py::arg("y"), py::arg("callable"),
          "self[i] = callable(self[i], x[i], y[i]) for each element (CPU only). Returns self.")
      .def(
          "clone", [](const Tensor& t, py::handle fmt) { return clone_in_format(t, fmt); },
          py::kw_only(), py::arg("memory_format") = py::none(),
          "A copy in new memory (differentiable), laid out as memory_format asks: by default "
          "ts.preserve_format (a dense input's strides, as torch), or ts.contiguous_format, "
          "ts.channels_last, ...")
      .def(
          "conj_physical_",
          [](py::object self) {
            const char* op = "conj_physical_";
            const Tensor& x = self_of(self, op);
            if (!is_complex(x.dtype())) return self;
            autograd::check_inplace(x, op);
            assign_inplace_result(op, x, conj(x));
            return self;
          },
          "Conjugates a complex tensor in place (a real one is left as it is). Returns self.")
      .def(
          "pin_memory", [](const Tensor& x) { return pin_memory(x); },
          "A copy of this CPU tensor in page-locked memory (fast, asynchronous copies to the "
          "GPU).")
      .def(
          "is_pinned", [](const Tensor& x) { return is_pinned(x); },
          "Whether this tensor's memory is page-locked (pin_memory).")
      .def(
          "record_stream",
          [](py::handle self, py::handle stream) {
            const char* op = "record_stream";
            if (py::isinstance<Tensor>(stream))
              throw py::type_error(str(op,
                                       ": argument 1 cannot be a tensor; expected a "
                                       "ts.cuda.Stream"));
            if (!py::hasattr(stream, "cuda_stream"))
              throw py::type_error(str(op, ": argument 1 has an unsupported type ",
                                       type_name(stream), "; expected a ts.cuda.Stream"));
            py::module_::import("tessera._C")
                .attr("_cuda")
                .attr("record_stream")(self, stream.attr("cuda_stream"));
          },
          py::arg("stream"),
          "Marks this tensor's memory as used by `stream` too: the allocator will not reuse it "
          "until that stream's queued work is done.")
      .def(
          "astype",
          [](const Tensor& x, py::handle dtype, bool copy) {
            return astype_op(x, to_dtype(dtype), copy);
          },
          py::arg("dtype"), py::pos_only(), py::kw_only(), py::arg("copy") = true,
          "The array API's astype: this tensor as `dtype` (differentiable); copy=False "
          "returns its memory when the dtype is already `dtype`.")
      .def(
          "module_load",
          [](py::handle self, py::handle other, bool assign) -> py::object {
            const Tensor& x = tensor_or_throw(self, "module_load", "self");
            if (assign) return other.attr("detach")();
            // (recorded as torch's self.copy_(other): a leaf that requires grad refuses it
            // outside no_grad, where load_state_dict calls it)
            self.attr("__setitem__")(py::ellipsis(), other);
            return py::cast(autograd::detach(x));
          },
          py::arg("other"), py::arg("assign") = false,
          "How load_state_dict turns `other` into this tensor's new value: other detached "
          "(`assign`) or copied into self (torch.Tensor.module_load).")
      .def_property_readonly(
          "layout", [](py::handle) { return legacy("strided"); }, "Always tessera.strided.")
      .def_property_readonly(
          "name", [](py::handle) { return py::none(); }, "None (tessera has no named tensors).")
      .def_property_readonly("volatile", &falsy,
                             "Removed in torch (always False); kept for old code.")
      .def("dense_dim", &Tensor::ndim, "The number of dense dims: ndim (tensors are strided).")
      .def(
          "sparse_dim", [](const Tensor&) { return 0; }, "0 (tensors are strided).")
      .def(
          "to_dense",
          [](py::handle self, py::handle dtype, py::handle /*masked_grad*/) -> py::object {
            const Tensor& x = tensor_or_throw(self, "to_dense", "self");
            if (dtype.is_none()) return py::reinterpret_borrow<py::object>(self);
            return py::cast(astype_op(x, to_dtype(dtype), true));
          },
          py::arg("dtype") = py::none(), py::kw_only(), py::arg("masked_grad") = py::none(),
          "This tensor (strided tensors are dense); with dtype, converted to it.")
      .def("is_inference", &false_method, "False (tessera has no inference tensors).")
      .def("is_conj", &false_method, "False (conjugation is never lazy here).")
      .def("is_neg", &false_method, "False (negation is never lazy here).")
      .def(
          "is_shared",
          [](py::handle self) {
            if (!py::isinstance<Tensor>(self))  // (a method descriptor's check)
              throw TypeError(
                  str("is_shared(): descriptor requires a 'tessera.Tensor' object "
                      "but received '",
                      type_name(self), "'"));
            const Storage& s = *py::cast<const Tensor&>(self).storage();
            return !s.device.is_cpu() || s.shared_fd >= 0;
          },
          "True once share_memory_() moved the storage into shared memory (always for CUDA, "
          "as torch).")
      .def(
          "resolve_conj", [](py::handle self) { return itself(self, "resolve_conj"); },
          "This tensor (conjugation is never lazy here).")
      .def(
          "resolve_neg", [](py::handle self) { return itself(self, "resolve_neg"); },
          "This tensor (negation is never lazy here).")
      .def(
          "share_memory_",
          [](py::handle self) {
            py::cast<const Tensor&>(itself(self, "share_memory_")).storage()->share_memory();
            return self;
          },
          "Moves the storage into shared memory (every view sees it; a no-op once shared and "
          "for CUDA tensors, as torch); returns self (Note [Shared memory]).")
      .def(
          "_share_fd",
          [](const Tensor& x) {
            x.storage()->share_memory();
            return py::make_tuple(x.storage()->shared_fd, x.storage()->nbytes);
          },
          "(fd, nbytes) of the shared-memory file behind the storage, sharing it first "
          "(tessera.multiprocessing's reductions).");
  m.def(
      "_tensor_from_shared_fd",
      [](int fd, int64_t nbytes, py::handle dtype, py::handle shape, py::handle strides,
         int64_t offset) {
        TS_CHECK(fd >= 0, ValueError, "_tensor_from_shared_fd: expected a file descriptor, got ",
                 fd);
        Strides st;
        Shape sh;
        DType dt;
        try {  // the fd is ours from here on: closed on any error
          for (py::handle e : strides) st.push_back(int_arg(e, "_tensor_from_shared_fd", "stride"));
          TS_CHECK(offset >= 0, ValueError, "_tensor_from_shared_fd: negative offset ", offset);
          sh = to_shape(shape, "_tensor_from_shared_fd");
          TS_CHECK(sh.size() == st.size(), ValueError, "_tensor_from_shared_fd: shape ",
                   shape_str(sh), " and ", st.size(), " strides differ in length");
          dt = to_dtype(dtype);
        } catch (...) {
          close(fd);
          throw;
        }
        return Tensor::view_of(Storage::from_shared_fd(fd, nbytes), sh, st, offset, dt);
      },
      py::arg("fd"), py::arg("nbytes"), py::arg("dtype"), py::arg("shape"), py::arg("strides"),
      py::arg("offset"),
      "A tensor over the shared-memory file `fd` (taking ownership of it), as sent by "
      "tessera.multiprocessing (Note [Shared memory]).");
  for (const char* name :
       {"is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mkldnn", "is_mps", "is_xla",
        "is_xpu", "is_vulkan", "is_ipu", "is_nested", "is_mtia", "is_maia"})
    cls.def_property_readonly(name, &falsy, "False (tessera tensors are dense and strided).");

  m.def(
      "clone",
      [](py::handle input, py::handle memory_format) {
        return clone_in_format(tensor_or_throw(input, "clone", "input"), memory_format);
      },
      py::arg("input"), py::kw_only(), py::arg("memory_format") = py::none(),
      "clone(input, *, memory_format=None)\n--\n\n"
      "A copy of input (differentiable), laid out as memory_format asks (torch).");
  m.def(
      "detach",
      [](py::handle input) { return autograd::detach(tensor_or_throw(input, "detach", "input")); },
      py::arg("input"),
      "detach(input)\n--\n\ninput without autograd history (shares memory; torch.detach).");
  m.def(
      "_apply_memory_format",
      [](const char* op, const Tensor& t, py::handle fmt) { return with_format(t, fmt, op); },
      "t laid out as torch's memory format `fmt` asks (the values unchanged; t itself for None "
      "and preserve_format).");
}

}  // namespace ts::python
