#include "python/function_method.h"

#include <structmember.h>

namespace ts::python {

namespace {

struct FunctionMethod {
  PyObject_HEAD PyObject* fn;
  vectorcallfunc vectorcall;
};

PyObject* fm_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return PyObject_Vectorcall(reinterpret_cast<FunctionMethod*>(self)->fn, args, nargsf, kwnames);
}

PyObject* fm_get(PyObject* self, PyObject* obj, PyObject*) {
  PyObject* fn = reinterpret_cast<FunctionMethod*>(self)->fn;
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(fn);
    return fn;
  }
  return PyMethod_New(fn, obj);
}

void fm_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<FunctionMethod*>(self)->fn);
  PyTypeObject* tp = Py_TYPE(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

PyMemberDef fm_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(FunctionMethod, vectorcall), READONLY, nullptr},
    {"__func__", T_OBJECT, offsetof(FunctionMethod, fn), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

// method: the type of a Tensor method's own function (method_descriptor below)
PyTypeObject* make_type(bool method) {
  PyType_Slot slots[] = {
      {Py_tp_descr_get, reinterpret_cast<void*>(&fm_get)},
      {Py_tp_dealloc, reinterpret_cast<void*>(&fm_dealloc)},
      {Py_tp_call, reinterpret_cast<void*>(&PyVectorcall_Call)},
      {Py_tp_members, fm_members},
      {Py_tp_doc, const_cast<char*>(method ? "A Tensor method's function, called without "
                                             "making a bound method."
                                           : "A tessera function bound as a Tensor "
                                             "method (Tensor.f is the function f).")},
      {0, nullptr}};
  PyType_Spec spec{
      method ? "tessera._C.tensor_method" : "tessera._C.function_method", sizeof(FunctionMethod), 0,
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL, slots};
  PyObject* t = PyType_FromSpec(&spec);
  if (t == nullptr) throw py::error_already_set();
  return reinterpret_cast<PyTypeObject*>(t);
}

py::object descriptor(PyTypeObject* tp, py::handle fn) {
  auto* self = PyObject_New(FunctionMethod, tp);
  if (self == nullptr) throw py::error_already_set();
  self->fn = fn.inc_ref().ptr();
  self->vectorcall = &fm_vectorcall;
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(self));
}

}  // namespace

py::object function_method(py::handle fn) {
  static PyTypeObject* type = make_type(false);
  return descriptor(type, fn);
}

py::object method_descriptor(py::handle fn) {
  static PyTypeObject* type = make_type(true);
  return descriptor(type, fn);
}

PyObject* descriptor_function(PyObject* descr) {
  static PyTypeObject* function_type = Py_TYPE(function_method(py::none()).ptr());
  static PyTypeObject* method_type = Py_TYPE(method_descriptor(py::none()).ptr());
  PyTypeObject* tp = Py_TYPE(descr);
  return tp == function_type || tp == method_type ? reinterpret_cast<FunctionMethod*>(descr)->fn
                                                  : nullptr;
}

void bind_functions_as_methods(py::module_& m, std::initializer_list<const char*> names) {
  py::object cls = m.attr("Tensor");
  for (const char* name : names) cls.attr(name) = function_method(m.attr(name));
}

}  // namespace ts::python
