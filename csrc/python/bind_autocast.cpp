// Autocast state (ts.autocast's C++ side), the policy table for Python (ops/autocast_policy.h)
// and _autocast_cast, the entry hook of the ops written in Python (Note [Autocast inside the
// ops] in ops/autocast_policy.cpp).
#include <pybind11/detail/exception_translation.h>

#include <cstring>
#include <unordered_set>

#include "autograd/autocast.h"
#include "ops/autocast_policy.h"
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

// _autocast_cast(op, *args): args with op's policy in the table applied (non-tensors and None
// pass through); _autocast_cast_dtype: the same for a call given an explicit dtype=. Raw
// METH_FASTCALL functions: when autocast is off in this thread they cost one thread-local
// load beyond the call itself.
PyObject* cast_hook(PyObject* const* args, Py_ssize_t nargs, bool explicit_dtype) {
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError,
                    "_autocast_cast: expected an op name and at least one argument");
    return nullptr;
  }
  if (!autocast::active()) return pass_through(args + 1, nargs - 1);
  Py_ssize_t len = 0;
  const char* op = PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8AndSize(args[0], &len) : nullptr;
  if (!op) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "_autocast_cast: op must be a str");
    return nullptr;
  }
  const std::optional<uint8_t> packed =
      autocast::find_policy(std::string_view(op, static_cast<size_t>(len)), explicit_dtype);
  if (!packed) {
    PyErr_Format(PyExc_KeyError, "_autocast_cast: '%s' is not in the autocast policy table", op);
    return nullptr;
  }
  try {
    return cast_slow(*packed, args + 1, nargs - 1);
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}
PyObject* autocast_cast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return cast_hook(args, nargs, false);
}
PyObject* autocast_cast_dtype(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return cast_hook(args, nargs, true);
}

PyMethodDef g_cast_def = {
    "_autocast_cast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(autocast_cast)),
    METH_FASTCALL,
    "_autocast_cast(op, *args): the autocast entry hook of an op written in Python."};
PyMethodDef g_cast_dtype_def = {
    "_autocast_cast_dtype",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(autocast_cast_dtype)),
    METH_FASTCALL, "_autocast_cast_dtype(op, *args): _autocast_cast for a call given dtype=."};

const char* policy_name(autocast::Policy p) {
  switch (p) {
    case autocast::Policy::Lower: return "lower";
    case autocast::Policy::Fp32: return "fp32";
    case autocast::Policy::Promote: return "promote";
    default: return "none";
  }
}

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
  for (PyMethodDef* def : {&g_cast_def, &g_cast_dtype_def}) {
    PyObject* fn = PyCFunction_NewEx(def, nullptr, m.attr("__name__").ptr());
    if (!fn) throw py::error_already_set();
    m.add_object(def->ml_name, py::reinterpret_steal<py::object>(fn));
  }
  m.def(
      "_autocast_policy_table",
      [] {
        py::dict table;
        for (const autocast::OpPolicy& e : autocast::kOpPolicies)
          table[py::str(std::string(e.op))] =
              py::make_tuple(policy_name(e.cpu), policy_name(e.cuda), e.opt_dtype);
        return table;
      },
      "The autocast policy table (ops/autocast_policy.h): op -> (cpu, cuda, opt_dtype), each "
      "policy 'lower', 'fp32', 'promote' or 'none'; opt_dtype: no CUDA cast when dtype= is "
      "given.");

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
