// Helpers that bind an ElementwiseDef as a namespace function and as Tensor operators.
#pragma once
#include "autograd/record.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "python/convert.h"
#include "python/out_arg.h"

namespace ts::python {

inline py::object not_implemented() {
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

// The in-place methods take `self` as a Python object so they return it (no new wrapper).
inline const Tensor& self_of(py::handle self, const char* op) {
  return tensor_or_throw(self, op, "self");
}

// x.<name>_(...) of an op composed of several (Note [torch in-place]): f(self, or a copy of
// self while autograd records for self or an operand in `others`) written into self, `op` (the
// method) naming it in errors.
template <class F>
py::object write_back(py::object self, const char* op, F&& f,
                      std::initializer_list<const Tensor*> others = {}) {
  const Tensor& x = self_of(self, op);
  autograd::check_inplace(x, op);
  assign_inplace_result(op, x, f(inplace_source(x, others)));
  return self;
}

// PyTorch's alpha= (a Python number, or a one-element tensor).
inline Scalar alpha_of(py::handle h, const char* op) {
  Scalar s;
  if (!PyBool_Check(h.ptr()) && to_scalar(h, s)) return s;
  if (PyBool_Check(h.ptr())) return Scalar::from_bool(h.ptr() == Py_True);
  if (py::isinstance<Tensor>(h)) {
    const Tensor& t = h.cast<const Tensor&>();
    if (t.numel() == 1) return item(t);
  }
  throw TypeError(str(op, ": alpha must be a number, got ",
                      py::type::handle_of(h).attr("__name__").cast<std::string>(),
                      "; hint: pass alpha=2 or alpha=0.5"));
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using InplaceFn = void (*)(const Tensor&, const Tensor&);

// Both operands of a namespace function; the standard wants at least one to be an array.
inline std::pair<Tensor, Tensor> binary_operands(py::handle a, py::handle b, const char* op) {
  Tensor ta = operand_or_throw(a, op), tb = operand_or_throw(b, op);
  if (ta.is_wrapped_number() && tb.is_wrapped_number())
    throw py::type_error(std::string(op) +
                         ": expected at least one tensor operand, got two Python numbers");
  return {std::move(ta), std::move(tb)};
}

// ts.name(x1, x2): both may be tensors or Python numbers (at least one a tensor).
inline void def_binary_function(py::module_& m, const ElementwiseDef& def, const char* doc) {
  const ElementwiseDef* d = &def;
  m.def(
      def.name,
      [d](py::handle a, py::handle b) {
        auto [ta, tb] = binary_operands(a, b, d->name);
        return binary_op(*d, ta, tb);
      },
      py::arg("x1"), py::arg("x2"), py::pos_only(), doc);
}

inline void def_unary_function(py::module_& m, const ElementwiseDef& def, const char* doc) {
  const ElementwiseDef* d = &def;
  m.def(
      def.name, [d](py::handle x) { return unary_op(*d, operand_or_throw(x, d->name)); },
      py::arg("x"), py::pos_only(), doc);
}

// Tensor.__op__, __rop__ and __iop__ (each optional) through plain functions; an operand
// that can't be one gives NotImplemented so Python tries the other side.
template <class Cls, class Fn, class IFn>
void def_binary_operator_with(Cls& cls, const char* name, const char* rname, const char* iname,
                              Fn fn, IFn ifn) {
  if (name)
    cls.def(name, [fn](const Tensor& self, py::handle other) -> py::object {
      Tensor o;
      if (!to_operand(other, o)) return not_implemented();
      return py::cast(fn(self, o));
    });
  if (rname)
    cls.def(rname, [fn](const Tensor& self, py::handle other) -> py::object {
      Tensor o;
      if (!to_operand(other, o)) return not_implemented();
      return py::cast(fn(o, self));
    });
  if (iname)
    cls.def(iname, [ifn](py::object self, py::handle other) -> py::object {
      Tensor o;
      if (!to_operand(other, o)) return not_implemented();
      ifn(self.cast<const Tensor&>(), o);
      return self;
    });
}

// Tensor.__op__, __rop__ and (when `iname` is given) __iop__ of an elementwise op.
template <class Cls>
void def_binary_operator(Cls& cls, const char* name, const char* rname, const char* iname,
                         const ElementwiseDef& def) {
  const ElementwiseDef* d = &def;
  def_binary_operator_with(
      cls, name, rname, iname,
      [d](const Tensor& a, const Tensor& b) { return binary_op(*d, a, b); },
      [d](const Tensor& a, const Tensor& b) { binary_op_(*d, a, b); });
}

template <class Cls>
void def_unary_operator(Cls& cls, const char* name, const ElementwiseDef& def) {
  const ElementwiseDef* d = &def;
  cls.def(name, [d](const Tensor& self) { return unary_op(*d, self); });
}

}  // namespace ts::python
