// The sampling functions of ts / ts.random in every argument form (issue 17), parsed here once:
// rand / randn (torch's varargs sizes, one sequence, size=), uniform (NumPy's low, high, size),
// randint (torch's randint(high, size) and randint(low, high, size), NumPy's
// randint(low, high=None, size=None)), randperm; generator= (a tessera.random.Generator),
// dtype=, device=, requires_grad=, and torch's out= (resized to the size, as torch; a dtype=
// that differs from out's raises), layout=, pin_memory=. The other samplers are in
// bind_random_samplers.cpp; tessera/random.py keeps the Generator class and the state functions.
#include "autograd/meta.h"
#include "core/error.h"
#include "ops/default_dtype.h"
#include "ops/random.h"
#include "python/convert.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"
#include "python/random_args.h"

namespace ts::python {

// generator=: None (the default generator), a ts.random.Generator or ts.Generator.
Generator& generator_arg(py::handle g, const char* op) {
  if (g.is_none()) return default_generator();
  if (py::isinstance<Generator>(g)) return g.cast<Generator&>();
  throw TypeError(std::string(op) + ": generator must be a tessera.random.Generator, got " +
                  type_name(g));
}

// A size: None (0-d), an int, or a sequence of ints.
Shape size_arg(py::handle size, const char* op) {
  return size.is_none() ? Shape{} : to_shape(size, op);
}

namespace {

// rand/randn's size: varargs ints, one int or sequence, or size=; none at all is 0-d.
Shape sizes_arg(const py::args& args, py::handle size, const char* op) {
  if (!size.is_none()) {
    if (args.size() > 0)
      throw TypeError(std::string(op) + "() got multiple values for argument 'size'");
    return to_shape(size, op);
  }
  if (args.size() == 1) return to_shape(args[0], op);
  Shape s;
  for (py::handle a : args) s.push_back(int_arg(a, op, "size"));
  return s;
}

void check_options(py::handle layout, py::handle pin_memory, const char* op) {
  if (!layout.is_none() && !(py::hasattr(layout, "name") &&
                             py::str(layout.attr("name")).cast<std::string>() == "strided"))
    throw NotImplementedError(std::string(op) + ": layout=" + py::repr(layout).cast<std::string>() +
                              " is not supported (tessera tensors are strided)");
  if (PyObject_IsTrue(pin_memory.ptr()) == 1)
    throw NotImplementedError(std::string(op) +
                              ": pin_memory=True is not supported here; call x.pin_memory() on "
                              "the result");
}

}  // namespace

// The tensor a sampler fills: out (its dtype unless dtype= is given, which must then match;
// resized to shape as torch does) or a new one on the device asked for.
Tensor destination(const Shape& shape, py::handle dtype, DType fallback, py::handle device,
                   py::handle out, const char* op) {
  try {
    if (out.is_none())
      return Tensor::empty(shape, dtype.is_none() ? fallback : to_dtype(dtype),
                           creation_device(device));
    const Tensor& o = tensor_or_throw(out, op, "out");
    if (!dtype.is_none() && to_dtype(dtype) != o.dtype())
      throw RuntimeError(std::string(op) + ": dtype " + dtype_name(to_dtype(dtype)) +
                         " does not match the dtype of out (" + dtype_name(o.dtype()) +
                         "); hint: leave dtype out to use out's");
    if (!device.is_none() && to_device(device) != o.device())
      throw RuntimeError(std::string(op) + ": device " + to_device(device).str() +
                         " does not match the device of out (" + o.device().str() + ")");
    return factory_out(op, out, shape, o.device());
  } catch (const ValueError& e) {
    if (std::string(e.what()).rfind(op, 0) == 0) throw;
    throw ValueError(std::string(op) + ": " + e.what());
  }
}

namespace {

Tensor floating(Tensor t, py::handle dtype, const char* op) {
  if (!is_floating(t.dtype()))
    throw TypeError(std::string(op) + ": expected a floating-point dtype, got " +
                    dtype_name(t.dtype()) + "; hint: pass dtype=ts.float32 or ts.float64" +
                    (std::string(op) == "uniform" ? "" : " (or a complex dtype)"));
  (void)dtype;
  return t;
}

py::object finish(py::handle out, const Tensor& t, bool requires_grad) {
  if (out.is_none()) t.reset_version();  // a fresh draw starts at version 0, as torch's
  if (requires_grad) autograd::set_requires_grad(t, true);
  return out.is_none() ? py::cast(t) : py::reinterpret_borrow<py::object>(out);
}

// rand / randn
py::object sample(bool normal, const py::args& args, py::handle size, py::handle generator,
                  py::handle out, py::handle dtype, py::handle layout, py::handle device,
                  bool requires_grad, py::handle pin_memory) {
  const char* op = normal ? "randn" : "rand";
  check_options(layout, pin_memory, op);
  const Shape shape = sizes_arg(args, size, op);
  Generator& g = generator_arg(generator, op);
  Tensor t = destination(shape, dtype, default_float_dtype(), device, out, op);
  if (!is_complex(t.dtype())) t = floating(t, dtype, op);
  standard_fill_(t, normal, g);
  return finish(out, t, requires_grad);
}

}  // namespace

void init_random_forms(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  const auto none = py::none();
  for (const bool normal : {false, true}) {
    const char* name = normal ? "randn" : "rand";
    const std::string doc =
        std::string(name) +
        "(*size, generator=None, out=None, dtype=None, layout=None, device=None, "
        "requires_grad=False, pin_memory=False)\n--\n\n" +
        (normal ? "Standard normal numbers (Box-Muller on Philox outputs)"
                : "Uniform numbers in [0, 1)") +
        " of the given size (varargs ints, one int or sequence, or size=; none: 0-d). The\n"
        "dtype defaults to the default float dtype; out= is resized to the size as torch.";
    m.def(
        name,
        [normal](const py::args& args, py::handle size, py::handle generator, py::handle out,
                 py::handle dtype, py::handle layout, py::handle device, bool requires_grad,
                 py::handle pin_memory) {
          return sample(normal, args, size, generator, out, dtype, layout, device, requires_grad,
                        pin_memory);
        },
        py::arg("size") = none, py::arg("generator") = none, py::arg("out") = none,
        py::arg("dtype") = none, py::arg("layout") = none, py::arg("device") = none,
        py::arg("requires_grad") = false, py::arg("pin_memory") = false, doc.c_str());
  }
  m.def(
      "uniform",
      [](py::handle low, py::handle high, py::handle size, py::handle dtype, py::handle device,
         py::handle generator) {
        Generator& g = generator_arg(generator, "uniform");
        Tensor t = floating(destination(size_arg(size, "uniform"), dtype, default_float_dtype(),
                                        device, py::none(), "uniform"),
                            dtype, "uniform");
        uniform_(t, real_arg(low, "uniform", "low"), real_arg(high, "uniform", "high"), g);
        return t;
      },
      py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("size") = none, py::kw_only(),
      py::arg("dtype") = none, py::arg("device") = none, py::arg("generator") = none,
      "uniform(low=0.0, high=1.0, size=None, *, dtype=None, device=None, generator=None)\n--\n\n"
      "Uniform numbers in [low, high) of shape size (NumPy's argument order).");
  m.def(
      "randint",
      [](py::handle low, py::handle high, py::handle size, py::handle dtype, py::handle device,
         py::handle generator, py::handle out, py::handle layout, py::handle pin_memory) {
        const char* op = "randint";
        check_options(layout, pin_memory, op);
        int64_t lo = 0, hi = 0;
        if (low.is_none()) {
          if (high.is_none())
            throw TypeError("randint() missing 1 required positional argument: 'high'");
          hi = int_arg(high, op, "high");
        } else if (high.is_none()) {  // randint(high)
          hi = int_arg(low, op, "high");
        } else if (!PyIndex_Check(high.ptr())) {  // torch: randint(high, size)
          if (!size.is_none()) throw TypeError("randint() got multiple values for argument 'size'");
          hi = int_arg(low, op, "high");
          size = high;
        } else {
          lo = int_arg(low, op, "low");
          hi = int_arg(high, op, "high");
        }
        Generator& g = generator_arg(generator, op);
        const Shape shape = size_arg(size, op);
        if (out.is_none()) {
          try {
            return py::cast(randint(lo, hi, shape, dtype.is_none() ? DType::Int64 : to_dtype(dtype),
                                    creation_device(device), g));
          } catch (const ValueError& e) {
            if (std::string(e.what()).rfind(op, 0) == 0) throw;
            throw ValueError(std::string(op) + ": " + e.what());
          }
        }
        Tensor dst = destination(shape, dtype, DType::Int64, device, out, op);
        Tensor vals = randint(lo, hi, shape, dst.dtype(), dst.device(), g);
        py::cast(dst).attr("copy_")(vals);
        return py::reinterpret_borrow<py::object>(out);
      },
      py::arg("low") = none, py::arg("high") = none, py::arg("size") = none, py::kw_only(),
      py::arg("dtype") = none, py::arg("device") = none, py::arg("generator") = none,
      py::arg("out") = none, py::arg("layout") = none, py::arg("pin_memory") = false,
      "randint(low=None, high=None, size=None, *, dtype=None, device=None, generator=None, "
      "out=None, layout=None, pin_memory=False)\n--\n\n"
      "Uniform integers in [low, high) (default dtype int64). randint(high, size=...), torch's\n"
      "randint(high, (shape,)) and randint(high=, size=) draw from [0, high).");
  m.def(
      "randperm",
      [](py::handle n, py::handle dtype, py::handle device, py::handle generator, py::handle out,
         bool requires_grad, py::handle layout, py::handle pin_memory) {
        const char* op = "randperm";
        check_options(layout, pin_memory, op);
        const int64_t count = int_arg(n, op, "n");
        Generator& g = generator_arg(generator, op);
        if (out.is_none())
          return finish(out,
                        randperm(count, dtype.is_none() ? DType::Int64 : to_dtype(dtype),
                                 creation_device(device), g),
                        requires_grad);
        Tensor dst = destination(Shape{count}, dtype, DType::Int64, device, out, op);
        py::cast(dst).attr("copy_")(randperm(count, dst.dtype(), dst.device(), g));
        return finish(out, dst, requires_grad);
      },
      py::arg("n"), py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
      py::arg("generator") = none, py::arg("out") = none, py::arg("requires_grad") = false,
      py::arg("layout") = none, py::arg("pin_memory") = false,
      "randperm(n, *, dtype=None, device=None, generator=None, out=None, requires_grad=False, "
      "layout=None, pin_memory=False)\n--\n\n"
      "A uniform random permutation of 0..n-1 (default dtype int64).");
}

}  // namespace ts::python
