// _C._tensor_method(fn, name, checks): a Python function bound as a Tensor method that raises
// PyTorch's TypeErrors itself, before `fn` runs (Note [Tensor methods written in Python]).
//
// Note [Tensor methods written in Python]: most Tensor methods are pybind11 bindings, whose
// argument errors come from arg_errors.cpp. The ones written in Python are bound through this
// descriptor instead of as plain functions, so that:
//   - x.name(...) is an ordinary bound method (PyMethod_New, no extra Python frame);
//   - a parameter the function annotates ``Tensor`` (or ``Optional[Tensor]``) given anything
//     else raises "name(): argument 'other' (position 1) must be Tensor, not NoneType", as
//     PyTorch's parser does, instead of an AttributeError from inside the function;
//   - Tensor.name(not_a_tensor, ...) through the class raises torch's "descriptor 'name' for
//     'Tensor' objects doesn't apply to a 'int' object".
// `checks` is a tuple of (position, keyword, optional): position counts self as 0 (-1 for a
// keyword-only parameter). Errors are raised once, here; nothing re-classes them afterwards.
#include <cstring>
#include <string>
#include <vector>

#include "python/convert.h"
// after Python.h (via pybind11)
#include <structmember.h>

namespace ts::python {
namespace {

struct Check {
  Py_ssize_t position;  // self is 0; -1: keyword-only
  PyObject* keyword;    // owned str
  bool optional;
};

struct TensorMethod {
  PyObject_HEAD PyObject* fn;  // the Python function
  PyObject* name;              // str
  std::vector<Check>* checks;
  vectorcallfunc vectorcall;
};

PyTypeObject* g_tensor_type = nullptr;

const char* type_name_of(PyObject* o) { return Py_TYPE(o)->tp_name; }

const char* short_type_name(PyObject* o) {
  const char* n = type_name_of(o);
  const char* dot = strrchr(n, '.');
  return dot ? dot + 1 : n;
}

bool is_tensor(PyObject* o) { return PyObject_TypeCheck(o, g_tensor_type); }

PyObject* raise_not_tensor(TensorMethod* m, const Check& c, PyObject* got, bool by_keyword) {
  std::string where = "argument '" + std::string(PyUnicode_AsUTF8(c.keyword)) + "'";
  if (!by_keyword) where += " (position " + std::to_string(c.position) + ")";
  PyErr_Format(PyExc_TypeError, "%U(): %s must be Tensor%s, not %s", m->name, where.c_str(),
               c.optional ? " or None" : "", short_type_name(got));
  return nullptr;
}

PyObject* tensor_method_call(PyObject* self, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  auto* m = reinterpret_cast<TensorMethod*>(self);
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n == 0 || !is_tensor(args[0])) {
    PyErr_Format(PyExc_TypeError,
                 "descriptor '%U' for 'Tensor' objects doesn't apply to a '%s' "
                 "object",
                 m->name, n == 0 ? "nothing" : short_type_name(args[0]));
    return nullptr;
  }
  for (const Check& c : *m->checks) {
    PyObject* v = nullptr;
    bool by_keyword = false;
    if (c.position > 0 && c.position < n) {
      v = args[c.position];
    } else if (kwnames != nullptr) {
      const Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
      for (Py_ssize_t k = 0; k < nk; ++k) {
        PyObject* key = PyTuple_GET_ITEM(kwnames, k);
        if (key == c.keyword || PyUnicode_Compare(key, c.keyword) == 0) {
          v = args[n + k];
          by_keyword = true;
          break;
        }
      }
    }
    if (v != nullptr && !is_tensor(v) && !(c.optional && v == Py_None))
      return raise_not_tensor(m, c, v, by_keyword);
  }
  return PyObject_Vectorcall(m->fn, args, nargsf, kwnames);
}

PyObject* tensor_method_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

void tensor_method_dealloc(PyObject* self) {
  auto* m = reinterpret_cast<TensorMethod*>(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(m->fn);
  Py_CLEAR(m->name);
  if (m->checks) {
    for (Check& c : *m->checks) Py_CLEAR(c.keyword);
    delete m->checks;
    m->checks = nullptr;
  }
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

int tensor_method_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* m = reinterpret_cast<TensorMethod*>(self);
  Py_VISIT(m->fn);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

// Attributes not of the descriptor itself (__doc__, __module__, __annotations__, __code__,
// __defaults__, ...) are the function's, so help() and inspect see the function.
PyObject* tensor_method_getattro(PyObject* self, PyObject* name) {
  auto* m = reinterpret_cast<TensorMethod*>(self);
  const char* n = PyUnicode_AsUTF8(name);
  if (n != nullptr && (strcmp(n, "__doc__") == 0 || strcmp(n, "__module__") == 0))
    return PyObject_GetAttr(m->fn, name);
  PyObject* r = PyObject_GenericGetAttr(self, name);
  if (r != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(m->fn, name);
}

PyObject* tensor_method_repr(PyObject* self) {
  auto* m = reinterpret_cast<TensorMethod*>(self);
  return PyUnicode_FromFormat("<method '%U' of 'Tensor' objects>", m->name);
}

PyMemberDef tensor_method_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(TensorMethod, fn), READONLY, "the Python function"},
    {"__func__", T_OBJECT, offsetof(TensorMethod, fn), READONLY, "the Python function"},
    {"__name__", T_OBJECT, offsetof(TensorMethod, name), READONLY, "the method's name"},
    {"__qualname__", T_OBJECT, offsetof(TensorMethod, name), READONLY, "the method's name"},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(TensorMethod, vectorcall), READONLY, nullptr},
    {}};

PyTypeObject* g_method_type = nullptr;

PyType_Slot tensor_method_slots[] = {
    {Py_tp_doc,
     const_cast<char*>("A Tensor method written in Python (Note [Tensor methods written in "
                       "Python]).")},
    {Py_tp_dealloc, reinterpret_cast<void*>(tensor_method_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(tensor_method_traverse)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_descr_get, reinterpret_cast<void*>(tensor_method_get)},
    {Py_tp_getattro, reinterpret_cast<void*>(tensor_method_getattro)},
    {Py_tp_repr, reinterpret_cast<void*>(tensor_method_repr)},
    {Py_tp_members, tensor_method_members},
    {0, nullptr}};

PyType_Spec tensor_method_spec = {"tessera._C.TensorMethod", sizeof(TensorMethod), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                                      Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
                                  tensor_method_slots};

py::object make_tensor_method(py::function fn, py::str name, py::tuple checks) {
  auto* m = PyObject_GC_New(TensorMethod, g_method_type);
  if (m == nullptr) throw py::error_already_set();
  m->fn = fn.release().ptr();
  m->name = name.release().ptr();
  m->checks = new std::vector<Check>();
  m->vectorcall = tensor_method_call;
  py::object result = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(m));
  for (auto item : checks) {
    auto t = item.cast<py::tuple>();
    m->checks->push_back(
        {t[0].cast<Py_ssize_t>(), t[1].cast<py::str>().release().ptr(), t[2].cast<bool>()});
  }
  PyObject_GC_Track(reinterpret_cast<PyObject*>(m));
  return result;
}

}  // namespace

void init_tensor_method(py::module_& m) {
  g_tensor_type = reinterpret_cast<PyTypeObject*>(py::type::of<Tensor>().ptr());
  g_method_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&tensor_method_spec));
  if (g_method_type == nullptr) throw py::error_already_set();
  m.add_object("TensorMethod", py::handle(reinterpret_cast<PyObject*>(g_method_type)));
  m.def("_tensor_method", &make_tensor_method, py::arg("fn"), py::arg("name"),
        py::arg("checks") = py::tuple(),
        "A Python function as a Tensor method that checks its Tensor-annotated arguments "
        "(Note [Tensor methods written in Python]).");
}

}  // namespace ts::python
