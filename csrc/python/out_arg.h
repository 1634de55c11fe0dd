// PyTorch's out= in the bindings: the core's write_out (Note [out= rules] in ops/out_arg.cpp)
// plus what only the Python object knows (its cached geometry), returning out itself.
#pragma once
#include <vector>

#include "core/error.h"
#include "ops/out_arg.h"
#include "python/convert.h"
#include "python/input_arg.h"

namespace ts::python {

// Drops what a tensor's Python object caches about its geometry (the callable size, Note
// [callable size]) once the core changed its shape in place (resize_, out=, _set_data).
void forget_geometry(py::handle t);  // bind_tensor_protocols.cpp

// r written into the tensor `out` (write_out's rules), which is returned.
inline py::object write_out_py(const char* op, py::handle out, const Tensor& r,
                               OutDtype rule = OutDtype::Cast,
                               const std::vector<const Tensor*>& inputs = {}) {
  if (write_out(op, tensor_or_throw(out, op, "out"), r, rule, inputs)) forget_geometry(out);
  return py::reinterpret_borrow<py::object>(out);
}

// The result, or `out` holding it when out= is given.
inline py::object result_or_out(const char* op, Tensor r, py::handle out,
                                OutDtype rule = OutDtype::Cast,
                                const std::vector<const Tensor*>& inputs = {}) {
  if (out.is_none()) return py::cast(std::move(r));
  return write_out_py(op, out, r, rule, inputs);
}

// The result, or torch's out= holding it: a tensor, or a tuple of tensors (one per part of a
// tuple result, which is then rebuilt from them: a named tuple stays one); out in the result's
// dtype (linalg, fft, ...).
inline py::object with_out(const char* op, py::object result, py::handle out,
                           OutDtype rule = OutDtype::Exact) {
  if (out.is_none()) return result;
  if (!py::isinstance<py::tuple>(result))
    return write_out_py(op, out, result.cast<const Tensor&>(), rule);
  const py::tuple parts = result;
  if (!(py::isinstance<py::tuple>(out) || py::isinstance<py::list>(out)) ||
      py::len(out) != parts.size())
    throw py::type_error(str(op, "(): argument 'out' must be a tuple of ", parts.size(),
                             " tensors, not ", type_name(out)));
  py::list outs;
  for (size_t i = 0; i < parts.size(); ++i) {
    const py::object o = py::reinterpret_borrow<py::sequence>(out)[i];
    write_out_py(op, o, parts[i].cast<const Tensor&>(), rule);
    outs.append(o);
  }
  return py::hasattr(result, "_fields") ? py::type::of(result)(*outs) : py::tuple(outs);
}

// out= of a factory (zeros, arange, randn, ...): checked as every out= (check_out), then
// resized to `shape` silently, as PyTorch's factories do; the factory fills it.
inline const Tensor& factory_out(const char* op, py::handle out, const Shape& shape,
                                 Device device) {
  const Tensor& o = tensor_or_throw(out, op, "out");
  check_out(op, o, device);
  if (o.shape() != shape) {
    resize_(o, shape, op);
    forget_geometry(out);
  }
  return o;
}

}  // namespace ts::python
