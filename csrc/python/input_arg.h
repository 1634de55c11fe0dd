// torch's call forms shared by the family bindings: the input given positionally or as
// input= (Note [fft torch forms], Note [linalg torch forms]), and out= refused.
#pragma once
#include <string>

#include "python/convert.h"

namespace ts::python {

// The default of a first parameter that input= may give instead: tells "not given" from None.
inline py::handle missing() {
  static py::object* m = new py::object(py::module_::import("builtins").attr("object")());
  return *m;
}

// x positionally (or by its own keyword), or torch's input=; exactly one of them.
inline Tensor input_arg(py::handle x, py::handle input, const char* op) {
  const bool has_x = !x.is(missing()), has_input = !input.is(missing());
  if (has_x && has_input)
    throw py::type_error(std::string(op) + "() got multiple values for argument 'input'");
  if (!has_x && !has_input)
    throw py::type_error(std::string(op) + "() missing required argument 'input' (pos 1)");
  return operand_or_throw(has_x ? x : input, op);
}

inline void no_out(py::handle out, const char* op) {
  if (!out.is_none()) throw py::type_error(std::string(op) + ": out= is not supported");
}

inline std::string type_name(py::handle h) {
  return py::type::handle_of(h).attr("__name__").cast<std::string>();
}

}  // namespace ts::python
