// torch's call forms shared by the family bindings: the input given positionally or as
// input= (Note [fft torch forms], Note [linalg torch forms]), and out= refused.
#pragma once
#include <string>

#include "python/convert.h"

namespace ts::python {

// The default of a parameter whose absence differs from None (an alias such as input= or A=
// may give it instead, or its absence selects another form): Ellipsis, which no parameter
// takes as a value, and which a text signature can spell (`dim=...`), so the signature shows
// the real default (Note [Text signatures from the records]).
inline py::handle missing() { return py::ellipsis(); }

// x positionally (or by its own keyword), or torch's input=; exactly one of them.
inline Tensor input_arg(py::handle x, py::handle input, const char* op) {
  const bool has_x = !x.is(missing()), has_input = !input.is(missing());
  if (has_x && has_input)
    throw py::type_error(std::string(op) + "() got multiple values for argument 'input'");
  if (!has_x && !has_input)
    throw py::type_error(std::string(op) + "() missing required argument 'input' (pos 1)");
  return operand_or_throw(has_x ? x : input, op);
}

// The first argument of a torch.linalg function: x positionally, or by one of torch's names
// (A=, input=); exactly one of them.
inline Tensor first_arg(py::handle x, py::handle A, py::handle input, const char* op) {
  const int given = !x.is(missing()) + !A.is(missing()) + !input.is(missing());
  if (given > 1) throw py::type_error(std::string(op) + "() got multiple values for argument 'A'");
  if (given == 0)
    throw py::type_error(std::string(op) + "() missing required argument 'A' (pos 1)");
  return operand_or_throw(!x.is(missing()) ? x : !A.is(missing()) ? A : input, op);
}

inline void no_out(py::handle out, const char* op) {
  if (!out.is_none()) throw py::type_error(std::string(op) + ": out= is not supported");
}

inline std::string type_name(py::handle h) {
  return py::type::handle_of(h).attr("__name__").cast<std::string>();
}

// A bool argument: a Python (or NumPy) bool; TypeError otherwise, as torch.
inline bool bool_arg(py::handle h, const char* op, const char* name) {
  if (!PyBool_Check(h.ptr()) && type_name(h) != "bool_")
    throw py::type_error(std::string(op) + "(): argument '" + name + "' must be bool, not " +
                         type_name(h));
  const int t = PyObject_IsTrue(h.ptr());
  if (t < 0) throw py::error_already_set();
  return t != 0;
}

}  // namespace ts::python
