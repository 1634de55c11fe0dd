// Helpers that bind an ElementwiseDef as a namespace function and as Tensor operators.
#pragma once
#include "ops/elementwise.h"
#include "python/convert.h"

namespace ts::python {

inline py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// ts.name(x1, x2): both may be tensors or Python numbers (at least one a tensor).
inline void def_binary_function(py::module_& m, const ElementwiseDef& def, const char* doc) {
  const ElementwiseDef* d = &def;
  m.def(def.name, [d](py::handle a, py::handle b) {
    return binary_op(*d, operand_or_throw(a, d->name), operand_or_throw(b, d->name));
  }, py::arg("x1"), py::arg("x2"), py::pos_only(), doc);
}

inline void def_unary_function(py::module_& m, const ElementwiseDef& def, const char* doc) {
  const ElementwiseDef* d = &def;
  m.def(def.name, [d](py::handle x) { return unary_op(*d, operand_or_throw(x, d->name)); },
        py::arg("x"), py::pos_only(), doc);
}

// Tensor.__op__, __rop__ and (when `iname` is given) __iop__.
template <class Cls>
void def_binary_operator(Cls& cls, const char* name, const char* rname, const char* iname,
                         const ElementwiseDef& def) {
  const ElementwiseDef* d = &def;
  cls.def(name, [d](const Tensor& self, py::handle other) -> py::object {
    Tensor o;
    if (!to_operand(other, o)) return not_implemented();
    return py::cast(binary_op(*d, self, o));
  });
  if (rname)
    cls.def(rname, [d](const Tensor& self, py::handle other) -> py::object {
      Tensor o;
      if (!to_operand(other, o)) return not_implemented();
      return py::cast(binary_op(*d, o, self));
    });
  if (iname)
    cls.def(iname, [d](py::object self, py::handle other) -> py::object {
      Tensor o;
      if (!to_operand(other, o)) return not_implemented();
      binary_op_(*d, self.cast<const Tensor&>(), o);
      return self;
    });
}

template <class Cls>
void def_unary_operator(Cls& cls, const char* name, const ElementwiseDef& def) {
  const ElementwiseDef* d = &def;
  cls.def(name, [d](const Tensor& self) { return unary_op(*d, self); });
}

}  // namespace ts::python
