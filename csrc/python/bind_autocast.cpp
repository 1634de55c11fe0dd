// Autocast state (ts.autocast's C++ side) and _autocast_cast, the entry hook of the Python
// ops on the cast lists (Note [Autocast] in autograd/autocast.cpp).
#include <pybind11/detail/exception_translation.h>

#include <cstring>
#include <unordered_set>

#include "autograd/autocast.h"
#include "python/convert.h"

namespace ts::python {

namespace {

DeviceType autocast_device(const std::string& name) {
  if (name == "cpu") return DeviceType::CPU;
  if (name == "cuda") return DeviceType::CUDA;
  throw py::value_error("autocast: unsupported device_type '" + name +
                        "' (expected 'cpu' or 'cuda')");
}

PyTypeObject* g_tensor_type = nullptr;
// Code objects of tessera's thin Python wrappers (Tensor methods forwarding to a namespace
// function): the nesting check looks through them to their caller.
std::unordered_set<PyObject*>* g_transparent = nullptr;

// Modules whose functions implement ops (rather than use them, as nn.modules or user code
// do): tessera's private modules and nn.functional, linalg, fft. The PyTorch-style layer
// (tessera._torch_compat*) is thin wrappers over ops and autocasts like user code: ts.sum(x)
// reaches the namespace's sum through it.
bool is_op_module(const char* name) {
  if (std::strncmp(name, "tessera.", 8) != 0) return false;
  const char* rest = name + 8;
  if (std::strncmp(rest, "_torch_compat", 13) == 0) return false;
  return rest[0] == '_' || std::strncmp(rest, "nn.functional", 13) == 0 ||
         std::strncmp(rest, "linalg", 6) == 0 || std::strncmp(rest, "fft", 3) == 0;
}

// autocast::NestedFn: whether the op being entered was called from an op module.
bool nested_call(bool from_python_hook) {
  PyFrameObject* f = PyEval_GetFrame();  // borrowed: the frame calling into C++
  if (!f) return false;
  Py_INCREF(f);
  auto up = [](PyFrameObject* frame) {
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference or null
    Py_DECREF(frame);
    return back;
  };
  if (from_python_hook) f = up(f);  // the op's own frame -> its caller
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    const bool transparent = g_transparent->count(reinterpret_cast<PyObject*>(code)) > 0;
    Py_DECREF(code);
    if (!transparent) break;
    f = up(f);
  }
  if (!f) return false;
  PyObject* globals = PyFrame_GetGlobals(f);
  Py_DECREF(f);
  PyObject* name = globals ? PyDict_GetItemString(globals, "__name__") : nullptr;
  const char* s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  const bool nested = s && is_op_module(s);
  Py_XDECREF(globals);
  if (!s) PyErr_Clear();
  return nested;
}

// The args after the policy, unchanged: one object for one argument, else a tuple.
PyObject* pass_through(PyObject* const* args, Py_ssize_t n) {
  if (n == 1) {
    Py_INCREF(args[0]);
    return args[0];
  }
  PyObject* out = PyTuple_New(n);
  if (!out) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(out, i, args[i]);
  }
  return out;
}

PyObject* cast_slow(uint8_t packed, PyObject* const* args, Py_ssize_t n) {
  std::vector<Tensor> tensors(n);
  std::vector<Tensor*> ptrs;
  ptrs.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!PyObject_TypeCheck(args[i], g_tensor_type)) continue;
    tensors[i] = py::handle(args[i]).cast<Tensor>();
    ptrs.push_back(&tensors[i]);
  }
  std::vector<const TensorImpl*> before(n, nullptr);
  for (Py_ssize_t i = 0; i < n; ++i) before[i] = tensors[i].impl();
  autocast::cast_args(packed, ptrs.data(), static_cast<int>(ptrs.size()),
                      /*from_python_hook=*/true);
  std::vector<py::object> outs(n);
  for (Py_ssize_t i = 0; i < n; ++i)
    outs[i] = tensors[i].impl() != before[i] ? py::cast(tensors[i])
                                             : py::reinterpret_borrow<py::object>(args[i]);
  if (n == 1) return outs[0].release().ptr();
  py::tuple t(n);
  for (Py_ssize_t i = 0; i < n; ++i) t[i] = std::move(outs[i]);
  return t.release().ptr();
}

// _autocast_cast(policy, *args): args with the policy applied (non-tensors and None pass
// through). A raw METH_FASTCALL function: when autocast is off in this thread it costs one
// thread-local load beyond the call itself.
PyObject* autocast_cast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError, "_autocast_cast: expected a policy and at least one argument");
    return nullptr;
  }
  if (!autocast::active()) return pass_through(args + 1, nargs - 1);
  const long packed = PyLong_AsLong(args[0]);
  if (packed == -1 && PyErr_Occurred()) return nullptr;
  try {
    return cast_slow(static_cast<uint8_t>(packed), args + 1, nargs - 1);
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyMethodDef g_cast_def = {
    "_autocast_cast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(autocast_cast)),
    METH_FASTCALL, "_autocast_cast(policy, *args): the autocast entry hook of an op."};

}  // namespace

void init_autocast(py::module_& m) {
  g_tensor_type = reinterpret_cast<PyTypeObject*>(m.attr("Tensor").ptr());
  g_transparent = new std::unordered_set<PyObject*>();  // lives as long as the module
  autocast::set_nested_fn(&nested_call);
  m.def(
      "_autocast_transparent",
      [](py::args fns) {
        for (py::handle fn : fns) {
          py::object code = py::getattr(fn, "__code__");
          g_transparent->insert(code.release().ptr());  // kept alive: the set owns a reference
        }
      },
      "Registers thin Python wrappers the autocast nesting check looks through.");
  PyObject* fn = PyCFunction_NewEx(&g_cast_def, nullptr, m.attr("__name__").ptr());
  if (!fn) throw py::error_already_set();
  m.add_object("_autocast_cast", py::reinterpret_steal<py::object>(fn));
  // Packed policies (autocast::pack(cpu, cuda)) for the Python hooks.
  using autocast::Policy;
  py::dict policies;
  for (auto [cpu, cpu_name] : {std::pair{Policy::None, "NONE"},
                               {Policy::Lower, "LOWER"},
                               {Policy::Fp32, "FP32"},
                               {Policy::Promote, "PROMOTE"}})
    for (auto [cuda, cuda_name] : {std::pair{Policy::None, "NONE"},
                                   {Policy::Lower, "LOWER"},
                                   {Policy::Fp32, "FP32"},
                                   {Policy::Promote, "PROMOTE"}})
      policies[py::str(std::string(cpu_name) + "_" + cuda_name)] = autocast::pack(cpu, cuda);
  m.attr("_autocast_policies") = policies;

  m.def("_autocast_active", &autocast::active);
  m.def(
      "_autocast_is_nested_call", [] { return nested_call(false); },
      "Whether the calling Python code is one of tessera's op modules (for tests).");
  m.def("_autocast_is_enabled",
        [](const std::string& dev) { return autocast::is_enabled(autocast_device(dev)); });
  m.def("_autocast_set_enabled", [](const std::string& dev, bool enabled) {
    autocast::set_enabled(autocast_device(dev), enabled);
  });
  m.def("_autocast_get_dtype",
        [](const std::string& dev) { return dtype_object(autocast::dtype(autocast_device(dev))); });
  m.def("_autocast_set_dtype", [](const std::string& dev, py::handle dtype) {
    autocast::set_dtype(autocast_device(dev), to_dtype(dtype));
  });
  m.def("_autocast_is_cache_enabled", &autocast::cache_enabled);
  m.def("_autocast_set_cache_enabled", &autocast::set_cache_enabled);
  m.def("_autocast_increment_nesting", &autocast::increment_nesting);
  m.def("_autocast_decrement_nesting", &autocast::decrement_nesting);
  m.def("_autocast_clear_cache", &autocast::clear_cache);
}

}  // namespace ts::python
