// The samplers of ts / ts.random / Tensor in every argument form (issue 17), parsed here once:
// torch's normal (Tensor/Tensor, Tensor/float, float/Tensor, float/float/size) with NumPy's
// size= on top, bernoulli (a probability tensor, torch's bernoulli(input, p), NumPy's
// bernoulli(p, size)), multinomial, poisson, binomial; ts.random's exponential, permutation,
// shuffle and choice (the _C._random submodule); and Tensor's in-place fills uniform_,
// normal_, bernoulli_, random_, exponential_, geometric_, cauchy_, log_normal_. The ops are in
// csrc/ops/random.cpp and random_samplers.cpp.
#include <cmath>

#include "autograd/meta.h"
#include "autograd/record.h"
#include "autograd/record_random.h"
#include "core/error.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/default_dtype.h"
#include "ops/random_samplers.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"
#include "python/random_args.h"

namespace ts::python {
namespace {

// The result of a sampler given out=: written into out (resized to the result's shape and
// cast to its dtype, as torch), which is returned; else the result itself.
py::object place_out(const Tensor& r, py::handle out, const char* op) {
  if (out.is_none()) return py::cast(r);
  const DType dt = tensor_or_throw(out, op, "out").dtype();  // torch draws in out's dtype
  return write_out_py(op, out, astype(r, dt, false), OutDtype::Exact);
}

// t cast to dtype= and moved to device= where they are given (ts.random's NumPy-style forms).
Tensor placed(Tensor t, py::handle dtype, py::handle device) {
  if (!dtype.is_none()) t = astype(t, to_dtype(dtype), false);
  if (!device.is_none() && to_device(device) != t.device()) t = to_device(t, to_device(device));
  return t;
}

py::object with_grad(py::object r, bool requires_grad) {
  if (requires_grad) autograd::set_requires_grad(r.cast<const Tensor&>(), true);
  return r;
}

// A mean/std argument: a tensor as it is, a number as a weak 0-d tensor.
Tensor param(py::handle h, const char* name) {
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  return wrap_scalar(Scalar::from_double(real_arg(h, "normal", name)));
}

py::object normal_py(py::handle mean, py::handle std, py::handle size, py::handle generator,
                     py::handle out, py::handle dtype, py::handle layout, py::handle device,
                     bool requires_grad, py::handle pin_memory) {
  const char* op = "normal";
  (void)layout;
  (void)pin_memory;
  Generator& g = generator_arg(generator, op);
  if (py::isinstance<Tensor>(mean) || py::isinstance<Tensor>(std)) {
    const Tensor m = param(mean, "mean"), s = param(std, "std");
    const DType dt = !dtype.is_none()               ? to_dtype(dtype)
                     : py::isinstance<Tensor>(mean) ? m.dtype()
                                                    : s.dtype();
    Tensor r = placed(normal(m, s, size_arg(size, op), dt, g), py::none(), device);
    return with_grad(place_out(r, out, op), requires_grad);
  }
  const double mu = real_arg(mean, op, "mean"), sigma = real_arg(std, op, "std");
  Tensor t = destination(size_arg(size, op), dtype, default_float_dtype(), device, out, op);
  TS_CHECK(is_floating(t.dtype()), TypeError, op, ": expected a floating-point dtype, got ",
           dtype_name(t.dtype()), "; hint: pass dtype=ts.float32 or ts.float64");
  normal_(t, mu, sigma, g);
  return with_grad(out.is_none() ? py::cast(t) : py::reinterpret_borrow<py::object>(out),
                   requires_grad);
}

py::object bernoulli_py(py::handle input, py::handle p, py::handle size, py::handle generator,
                        py::handle out, py::handle dtype, py::handle device) {
  const char* op = "bernoulli";
  Generator& g = generator_arg(generator, op);
  if (py::isinstance<Tensor>(input)) {
    const Tensor& x = input.cast<const Tensor&>();
    if (PyFloat_Check(p.ptr()) || (!p.is_none() && !PyLong_Check(p.ptr()) &&
                                   py::hasattr(p, "__float__") && !py::hasattr(p, "__len__"))) {
      // torch.bernoulli(input, p): probability p in input's shape, dtype and device
      const DType dt = dtype.is_none() ? x.dtype() : to_dtype(dtype);
      Tensor r = bernoulli(real_arg(p, op, "p"), x.shape(), DType::Float32, dt, x.device(), g);
      autograd::record_missing("BernoulliBackward1", {x}, {r});
      return place_out(placed(r, py::none(), device), out, op);
    }
    if (!p.is_none() && !size.is_none())
      throw TypeError("bernoulli() got multiple values for argument 'size'");
    const Shape shape = size_arg(size.is_none() ? p : size, op);
    const DType dt = dtype.is_none() ? x.dtype() : to_dtype(dtype);
    return place_out(placed(bernoulli(x, shape, dt, g), py::none(), device), out, op);
  }
  if (!p.is_none() && !size.is_none())
    throw TypeError("bernoulli() got multiple values for argument 'size'");
  const Shape shape = size_arg(size.is_none() ? p : size, op);
  const DType dt = dtype.is_none() ? DType::Float32 : to_dtype(dtype);
  Tensor r =
      bernoulli(real_arg(input, op, "p"), shape, DType::Float64, dt, creation_device(device), g);
  return place_out(r, out, op);
}

py::object multinomial_py(py::handle input, py::handle num_samples, bool replacement,
                          py::handle generator, py::handle out, py::handle dtype,
                          py::handle device) {
  const char* op = "multinomial";
  Generator& g = generator_arg(generator, op);
  const Tensor probs = operand_or_throw(input, op);
  Tensor r = multinomial(probs, int_arg(num_samples, op, "num_samples"), replacement, g);
  return place_out(placed(r, dtype, device), out, op);
}

const Tensor& tensor_input(py::handle h, const char* op, const char* name) {
  if (!py::isinstance<Tensor>(h))
    throw TypeError(str(op, "(): argument '", name, "' must be a tensor, not ", type_name(h)));
  return h.cast<const Tensor&>();
}

// ---- ts.random's NumPy-style functions
py::object exponential_py(py::handle scale, py::handle size, py::handle lambd, py::handle dtype,
                          py::handle device, py::handle generator) {
  const char* op = "exponential";
  Generator& g = generator_arg(generator, op);
  double sc = real_arg(scale, op, "scale");
  if (!lambd.is_none()) {
    const double l = real_arg(lambd, op, "lambd");
    TS_CHECK(l > 0, ValueError, op, ": lambd must be positive, got ", l);
    sc = 1.0 / l;
  }
  return py::cast(exponential(sc, size_arg(size, op),
                              dtype.is_none() ? default_float_dtype() : to_dtype(dtype),
                              creation_device(device), g));
}

bool is_int_like(py::handle h) {
  return !py::isinstance<Tensor>(h) && PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr());
}

py::object permutation_py(py::handle x, py::handle dtype, py::handle device, py::handle generator) {
  const char* op = "permutation";
  Generator& g = generator_arg(generator, op);
  if (is_int_like(x))
    return py::cast(randperm(int_arg(x, op, "x"), dtype.is_none() ? DType::Int64 : to_dtype(dtype),
                             creation_device(device), g));
  const Tensor t = operand_or_throw(x, op);
  TS_CHECK(t.ndim() > 0, ValueError, op,
           ": x must be an int or have at least 1 dimension, got a 0-d tensor");
  if (!dtype.is_none()) to_dtype(dtype);  // a bad dtype raises before drawing
  if (!device.is_none()) to_device(device);
  return py::cast(
      placed(take_rows(t, randperm(t.dim(0), DType::Int64, Device(), g)), dtype, device));
}

void shuffle_py(py::handle x, py::handle generator) {
  Generator& g = generator_arg(generator, "shuffle");
  if (!py::isinstance<Tensor>(x))
    throw TypeError(str("shuffle: expected a tessera Tensor, got ", type_name(x)));
  shuffle_(x.cast<const Tensor&>(), g);
}

py::object choice_py(py::handle a, py::handle size, bool replace, py::handle p, py::handle dtype,
                     py::handle device, py::handle generator) {
  const char* op = "choice";
  Generator& g = generator_arg(generator, op);
  const Tensor pool = is_int_like(a)
                          ? arange(Scalar::from_int(0), Scalar::from_int(int_arg(a, op, "a")),
                                   Scalar::from_int(1), DType::Int64, Device())
                          : operand_or_throw(a, op);
  TS_CHECK(pool.ndim() == 1, ValueError, op, ": a must be 1-D or an int, got shape ",
           shape_str(pool.shape()));
  const int64_t n = pool.dim(0);
  const Shape shape = size_arg(size, op);
  const int64_t k = numel_of(shape);
  TS_CHECK(n > 0 || k == 0, ValueError, op,
           ": cannot take a non-empty sample from an empty population");
  Tensor probs;
  if (!p.is_none()) {
    probs = contiguous(astype(operand_or_throw(p, op), DType::Float64, false));
    TS_CHECK(probs.shape() == Shape{n}, ValueError, op, ": p must have shape (", n, ",), got ",
             shape_str(probs.shape()));
    const Tensor h = probs.device().is_cpu() ? probs : to_device(probs, Device());
    double total = 0;
    bool negative = false;
    for (int64_t i = 0; i < n; ++i) {
      negative |= h.data<double>()[i] < 0;
      total += h.data<double>()[i];
    }
    TS_CHECK(!negative && std::fabs(total - 1.0) <= 1e-8, ValueError, op,
             ": probabilities must be non-negative and sum to 1");
  }
  TS_CHECK(replace || k <= n, ValueError, op, ": cannot take ", k, " samples from ", n,
           " without replacement");
  Tensor idx;
  if (k == 0)
    idx = Tensor::empty(Shape{0}, DType::Int64, Device());
  else if (probs.defined())
    idx = multinomial(probs, k, replace, g);
  else if (replace)
    idx = randint(0, n, Shape{k}, DType::Int64, Device(), g);
  else
    idx = slice(randperm(n, DType::Int64, Device(), g), 0, 0, k, 1);
  return py::cast(placed(reshape(take_rows(pool, contiguous(idx)), shape), dtype, device));
}

// ---- Tensor's in-place fills (each returns self)
const Tensor& self_of(py::handle self, const char* op) {
  if (!py::isinstance<Tensor>(self))
    throw py::type_error(str("descriptor '", op, "' for 'Tensor' objects doesn't apply to a '",
                             type_name(self), "' object"));
  return self.cast<const Tensor&>();
}

std::optional<int64_t> opt_int(py::handle h, const char* op, const char* name) {
  if (h.is_none()) return std::nullopt;
  return int_arg(h, op, name);
}

}  // namespace

void init_random_samplers(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  const auto none = py::none();
  m.def("normal", &normal_py, py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("size") = none,
        py::kw_only(), py::arg("generator") = none, py::arg("out") = none, py::arg("dtype") = none,
        py::arg("layout") = none, py::arg("device") = none, py::arg("requires_grad") = false,
        py::arg("pin_memory") = false,
        "normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, "
        "layout=None, device=None, requires_grad=False, pin_memory=False)\n--\n\n"
        "Normal numbers. Numbers mean/std: shape `size` (the default float dtype unless dtype).\n"
        "A tensor mean and/or std (torch's forms): broadcast together and with `size`, in\n"
        "mean's dtype (std's when mean is a number); gradients are zero, as PyTorch's.");
  m.def("bernoulli", &bernoulli_py, py::arg("input"), py::arg("p") = none, py::arg("size") = none,
        py::kw_only(), py::arg("generator") = none, py::arg("out") = none, py::arg("dtype") = none,
        py::arg("device") = none,
        "bernoulli(input, p=None, size=None, *, generator=None, out=None, dtype=None, "
        "device=None)\n--\n\n"
        "1 with probability p else 0. input a tensor of probabilities (floating, in [0, 1]):\n"
        "its shape broadcast with size, its dtype. torch's bernoulli(input, p) (a float p):\n"
        "probability p in input's shape and dtype. NumPy's bernoulli(p, size): a number p,\n"
        "shape size, float32.");
  m.def("multinomial", &multinomial_py, py::arg("input"), py::arg("num_samples"),
        py::arg("replacement") = false, py::kw_only(), py::arg("generator") = none,
        py::arg("out") = none, py::arg("dtype") = none, py::arg("device") = none,
        "multinomial(input, num_samples, replacement=False, *, generator=None, out=None, "
        "dtype=None, device=None)\n--\n\n"
        "For each row of input ((n,) or (R, n) non-negative weights, not necessarily\n"
        "normalized), num_samples category indices (int64 unless dtype), drawn without\n"
        "replacement unless replacement.");
  m.def(
      "poisson",
      [](py::handle input, py::handle generator) {
        Generator& g = generator_arg(generator, "poisson");
        return poisson(tensor_input(input, "poisson", "input"), g);
      },
      py::arg("input"), py::arg("generator") = none,
      "poisson(input, generator=None)\n--\n\n"
      "Poisson(rate) for each element of the floating rate tensor input (its dtype; zero\n"
      "gradient, as PyTorch's).");
  m.def(
      "binomial",
      [](py::handle count, py::handle prob, py::handle generator) {
        Generator& g = generator_arg(generator, "binomial");
        return binomial(tensor_input(count, "binomial", "count"),
                        tensor_input(prob, "binomial", "prob"), g);
      },
      py::arg("count"), py::arg("prob"), py::arg("generator") = none,
      "binomial(count, prob, generator=None)\n--\n\n"
      "Binomial(count, prob) elementwise over their broadcast (count's floating dtype).");
  m.def(
      "_standard_gamma",
      [](py::handle alpha, py::handle generator) {
        Generator& g = generator_arg(generator, "_standard_gamma");
        return standard_gamma(tensor_input(alpha, "_standard_gamma", "alpha"), g);
      },
      py::arg("input"), py::arg("generator") = none,
      "_standard_gamma(input, generator=None)\n--\n\n"
      "Gamma(input, 1) for each element of the floating concentration tensor input (its\n"
      "dtype), with the reparameterized gradient w.r.t. input (torch's _standard_gamma).");
  m.def(
      "_standard_gamma_grad",
      [](py::handle alpha, py::handle x) {
        return standard_gamma_grad(tensor_input(alpha, "_standard_gamma_grad", "self"),
                                   tensor_input(x, "_standard_gamma_grad", "output"));
      },
      py::arg("self"), py::arg("output"),
      "_standard_gamma_grad(self, output)\n--\n\n"
      "d output / d self for Gamma(self, 1) samples output (torch's _standard_gamma_grad).");
  bind_functions_as_methods(m, {"bernoulli", "multinomial"});

  py::module_ r = m.def_submodule("_random", "ts.random's functions (python/tessera/random.py)");
  r.def("exponential", &exponential_py, py::arg("scale") = 1.0, py::arg("size") = none,
        py::kw_only(), py::arg("lambd") = none, py::arg("dtype") = none, py::arg("device") = none,
        py::arg("generator") = none,
        "exponential(scale=1.0, size=None, *, lambd=None, dtype=None, device=None, "
        "generator=None)\n--\n\n"
        "Exponential numbers with mean scale (NumPy) or rate lambd (PyTorch): -log1p(-u) *\n"
        "scale with u uniform in [0, 1), so every value is finite.");
  r.def("permutation", &permutation_py, py::arg("x"), py::kw_only(), py::arg("dtype") = none,
        py::arg("device") = none, py::arg("generator") = none,
        "permutation(x, *, dtype=None, device=None, generator=None)\n--\n\n"
        "A permutation of range(x) for an int, else a copy of x shuffled along axis 0.");
  r.def("shuffle", &shuffle_py, py::arg("x"), py::kw_only(), py::arg("generator") = none,
        "shuffle(x, *, generator=None)\n--\n\nShuffles the tensor x in place along axis 0.");
  r.def("choice", &choice_py, py::arg("a"), py::arg("size") = none, py::arg("replace") = true,
        py::arg("p") = none, py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
        py::arg("generator") = none,
        "choice(a, size=None, replace=True, p=None, *, dtype=None, device=None, "
        "generator=None)\n--\n\n"
        "NumPy's choice: samples of a 1-D tensor (or of range(a) for an int), with or without\n"
        "replacement, uniform or with probabilities p (which must sum to 1).");

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "uniform_",
      [](py::object self, py::handle from, py::handle to, py::handle generator) {
        const char* op = "uniform_";
        const Tensor& x = self_of(self, op);
        Generator& g = generator_arg(generator, op);
        const double lo = real_arg(from, op, "from"), hi = real_arg(to, op, "to");
        autograd::record_random_fill(autograd::RandomGrad::Uniform, x, op);
        uniform_(x, lo, hi, g);
        return self;
      },
      py::arg("from") = 0.0, py::arg("to") = 1.0, py::kw_only(), py::arg("generator") = none,
      "uniform_($self, /, from=0.0, to=1.0, *, generator=None)\n--\n\n"
      "Fills self in place with uniform numbers in [from, to); returns self.");
  cls.def(
      "normal_",
      [](py::object self, py::handle mean, py::handle std, py::handle generator) {
        const char* op = "normal_";
        const Tensor& x = self_of(self, op);
        Generator& g = generator_arg(generator, op);
        const double mu = real_arg(mean, op, "mean"), sigma = real_arg(std, op, "std");
        autograd::record_random_fill(autograd::RandomGrad::Normal, x, op);
        normal_(x, mu, sigma, g);
        return self;
      },
      py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(), py::arg("generator") = none,
      "normal_($self, /, mean=0.0, std=1.0, *, generator=None)\n--\n\n"
      "Fills self in place with normal numbers; returns self.");
  cls.def(
      "bernoulli_",
      [](py::object self, py::handle p, py::handle generator) {
        const char* op = "bernoulli_";
        const Tensor& x = self_of(self, op);
        Generator& g = generator_arg(generator, op);
        if (py::isinstance<Tensor>(p))
          bernoulli_(x, autograd::detach(p.cast<const Tensor&>()), g);
        else
          bernoulli_(x, real_arg(p, op, "p"), g);
        return self;
      },
      py::arg("p") = 0.5, py::kw_only(), py::arg("generator") = none,
      "bernoulli_($self, /, p=0.5, *, generator=None)\n--\n\n"
      "Fills self with 0/1 draws of probability p (a number or a tensor broadcast to self).");
  cls.def(
      "random_",
      [](py::object self, py::handle from, py::handle to, py::handle generator) {
        const char* op = "random_";
        const Tensor& x = self_of(self, op);
        Generator& g = generator_arg(generator, op);
        random_(x, opt_int(from, op, "from"), opt_int(to, op, "to"), g);
        return self;
      },
      py::arg("from_") = none, py::arg("to") = none, py::kw_only(), py::arg("generator") = none,
      "random_($self, /, from_=None, to=None, *, generator=None)\n--\n\n"
      "Fills self with integers uniform in [from, to); one bound: [0, from); none: [0, 2**(\n"
      "mantissa + 1)) for floats, [0, max] for integers.");
  cls.def(
      "exponential_",
      [](py::object self, py::handle lambd, py::handle generator) {
        const char* op = "exponential_";
        const Tensor& x = self_of(self, op);
        exponential_(x, real_arg(lambd, op, "lambd"), generator_arg(generator, op));
        return self;
      },
      py::arg("lambd") = 1.0, py::kw_only(), py::arg("generator") = none,
      "exponential_($self, /, lambd=1.0, *, generator=None)\n--\n\n"
      "Fills self with exponential draws of rate lambd; returns self.");
  cls.def(
      "geometric_",
      [](py::object self, py::handle p, py::handle generator) {
        const char* op = "geometric_";
        const Tensor& x = self_of(self, op);
        geometric_(x, real_arg(p, op, "p"), generator_arg(generator, op));
        return self;
      },
      py::arg("p"), py::kw_only(), py::arg("generator") = none,
      "geometric_($self, /, p, *, generator=None)\n--\n\n"
      "Fills self with the number of Bernoulli(p) trials up to the first success (>= 1).");
  cls.def(
      "cauchy_",
      [](py::object self, py::handle median, py::handle sigma, py::handle generator) {
        const char* op = "cauchy_";
        const Tensor& x = self_of(self, op);
        cauchy_(x, real_arg(median, op, "median"), real_arg(sigma, op, "sigma"),
                generator_arg(generator, op));
        return self;
      },
      py::arg("median") = 0.0, py::arg("sigma") = 1.0, py::kw_only(), py::arg("generator") = none,
      "cauchy_($self, /, median=0.0, sigma=1.0, *, generator=None)\n--\n\n"
      "Fills self with Cauchy draws; returns self.");
  cls.def(
      "log_normal_",
      [](py::object self, py::handle mean, py::handle std, py::handle generator) {
        const char* op = "log_normal_";
        const Tensor& x = self_of(self, op);
        log_normal_(x, real_arg(mean, op, "mean"), real_arg(std, op, "std"),
                    generator_arg(generator, op));
        return self;
      },
      py::arg("mean") = 1.0, py::arg("std") = 2.0, py::kw_only(), py::arg("generator") = none,
      "log_normal_($self, /, mean=1.0, std=2.0, *, generator=None)\n--\n\n"
      "Fills self with exp(N(mean, std)) draws; returns self.");
}

}  // namespace ts::python
