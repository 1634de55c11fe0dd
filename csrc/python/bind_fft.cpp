// Bindings for the fft extension (submodule _C._fft): these are ts.fft's functions themselves
// (python/tessera/fft.py only re-exports them), with every argument form parsed here, once.
// Note [fft torch forms]: the standard's signatures take x positionally and the rest by keyword
// (fft(x, /, *, n=None, axis=-1, norm="backward")); torch's put n/s, dim and norm positionally
// after the input (fft(input, n=None, dim=-1, norm=None)) and name the input `input`. One
// signature holds both: x positional-only (or input=), then n/s, the axis and norm positionally
// or by keyword, with the other convention's axis name (dim= / axes=) as a keyword alias.
#include "autograd/meta.h"
#include "ops/default_dtype.h"
#include "ops/fft.h"
#include "python/convert.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

namespace {

using Fn1 = Tensor (*)(const Tensor&, std::optional<int64_t>, int64_t, FftNorm);
using FnN = Tensor (*)(const Tensor&, std::optional<Shape>, std::optional<Shape>, FftNorm);

// norm: "backward" (also None, as PyTorch), "ortho" or "forward".
FftNorm norm_arg(py::handle h, const char* op) {
  if (h.is_none()) return FftNorm::Backward;
  if (!py::isinstance<py::str>(h))
    throw py::type_error(std::string(op) + ": norm must be a str, got " + type_name(h));
  return parse_fft_norm(h.cast<std::string>(), op);
}

std::optional<Shape> shape_arg(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return to_shape(h, op);
}

// One of the standard's axis name and torch's dim; a TypeError when both are given (the
// standard's default axis=-1 of the 1-D transforms counts as not given).
py::handle axis_alias(py::handle axis, py::handle dim, const char* op, bool one_d) {
  if (dim.is_none()) return axis;
  const bool axis_given =
      !axis.is_none() && !(one_d && PyLong_Check(axis.ptr()) && !PyBool_Check(axis.ptr()) &&
                           axis.cast<int64_t>() == -1);
  if (axis_given)
    throw py::type_error(std::string(op) + ": pass either axis/axes= or dim=, not both");
  return dim;
}

std::string sig(const char* name, const char* params, const char* doc) {
  return std::string(name) + "(" + params + ")\n--\n\n" + doc;
}

constexpr const char* k1dParams =
    "x, /, n=None, axis=-1, norm='backward', *, dim=None, input=None, out=None";
constexpr const char* kNdParams =
    "x, /, s=None, dim=None, norm='backward', *, axes=None, input=None, out=None";
constexpr const char* kFormsDoc =
    "\n\nnorm: 'backward' (default, also None: no scaling forward, 1/n inverse), 'ortho'\n"
    "(1/sqrt(n) both ways) or 'forward' (1/n forward). torch's forms too: input=, positional\n"
    "n/s, dim and norm (fft(x, 8, 0, 'ortho')), dim= for axis=/axes=. Integer and bool inputs\n"
    "are promoted to the default floating dtype, as in PyTorch.";

// A 1-D (fn1) or n-D (fnn) transform: x, n/s, the positional axis (the standard's axis of the
// 1-D ones, torch's dim of the n-D ones), norm, then the other name of the axis by keyword.
void def_transform(py::module_& f, const char* name, Fn1 fn1, FnN fnn, const char* doc) {
  const bool one_d = fn1 != nullptr;
  f.def(
      name,
      [fn1, fnn, name](py::handle x, py::handle size, py::handle axis, py::handle norm,
                       py::handle alias, py::handle input, py::handle out) {
        const Tensor t = input_arg(x, input, name);
        const FftNorm nm = norm_arg(norm, name);
        if (!fn1)
          return with_out(name,
                          py::cast(fnn(t, shape_arg(size, name),
                                       shape_arg(axis_alias(alias, axis, name, false), name), nm)),
                          out, OutDtype::Cast);
        const std::optional<int64_t> len =
            size.is_none() ? std::nullopt : std::optional<int64_t>(int_arg(size, name, "n"));
        const py::handle ax = axis_alias(axis, alias, name, true);
        return with_out(name,
                        py::cast(fn1(t, len, ax.is_none() ? -1 : int_arg(ax, name, "axis"), nm)),
                        out, OutDtype::Cast);
      },
      py::arg("x") = missing(), py::pos_only(), py::arg(one_d ? "n" : "s") = py::none(),
      one_d ? (py::arg("axis") = -1) : (py::arg("dim") = py::none()), py::arg("norm") = py::none(),
      py::kw_only(), py::arg(one_d ? "dim" : "axes") = py::none(), py::arg("input") = missing(),
      py::arg("out") = py::none(),
      sig(name, one_d ? k1dParams : kNdParams, (std::string(doc) + kFormsDoc).c_str()).c_str());
}

// torch's fft2 family: the n-D transform over two dims (default the last two).
void def_2d(py::module_& f, const char* name, FnN fn, const char* nd_name) {
  const std::string doc = std::string(nd_name) + " over the two dims `dim` (default the last " +
                          "two), as torch.fft." + name + ".";
  f.def(
      name,
      [fn, name](py::handle input, py::handle s, py::handle dim, py::handle norm, py::handle out) {
        return with_out(name,
                        py::cast(fn(operand_or_throw(input, name), shape_arg(s, name),
                                    shape_arg(dim, name), norm_arg(norm, name))),
                        out, OutDtype::Cast);
      },
      py::arg("input"), py::arg("s") = py::none(), py::arg("dim") = py::make_tuple(-2, -1),
      py::arg("norm") = py::none(), py::kw_only(), py::arg("out") = py::none(),
      sig(name, "input, s=None, dim=(-2, -1), norm=None, *, out=None", doc.c_str()).c_str());
}

using FreqFn = Tensor (*)(int64_t, double, DType, Device);

void def_freq(py::module_& f, const char* name, FreqFn fn, const char* doc) {
  f.def(
      name,
      [fn, name](py::handle n, py::handle d, py::handle dtype, py::handle device,
                 py::handle requires_grad, py::handle /*layout*/) {
        if (PyBool_Check(d.ptr()) || !(PyFloat_Check(d.ptr()) || PyIndex_Check(d.ptr())))
          throw py::type_error(std::string(name) + ": d must be a number, got " + type_name(d));
        const DType dt = dtype.is_none() ? default_float_dtype() : to_dtype(dtype);
        const double spacing = PyFloat_AsDouble(d.ptr());
        if (spacing == -1.0 && PyErr_Occurred()) throw py::error_already_set();
        Tensor out = fn(int_arg(n, name, "n"), spacing, dt, creation_device(device));
        if (PyObject_IsTrue(requires_grad.ptr())) autograd::set_requires_grad(out, true);
        return out;
      },
      py::arg("n"), py::pos_only(), py::arg("d") = 1.0, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("layout") = py::none(),
      sig(name, "n, /, d=1.0, *, dtype=None, device=None, requires_grad=False, layout=None", doc)
          .c_str());
}

using ShiftFn = Tensor (*)(const Tensor&, std::optional<Shape>);

void def_shift(py::module_& f, const char* name, ShiftFn fn, const char* doc) {
  f.def(
      name,
      [fn, name](py::handle x, py::handle dim, py::handle axes, py::handle input) {
        const Tensor t = input_arg(x, input, name);
        return fn(t, shape_arg(axis_alias(axes, dim, name, false), name));
      },
      py::arg("x") = missing(), py::pos_only(), py::arg("dim") = py::none(), py::kw_only(),
      py::arg("axes") = py::none(), py::arg("input") = missing(),
      sig(name, "x, /, dim=None, *, axes=None, input=None", doc).c_str());
}

}  // namespace

void init_fft(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  py::module_ f = m.def_submodule("_fft", "ts.fft's functions (python/tessera/fft.py)");
  const struct {
    const char* name;
    Fn1 fn1;
    FnN fnn;
    const char* doc;
  } transforms[] = {
      {"fft", &fft, nullptr,
       "1-D discrete Fourier transform along `axis`: X[k] = sum_j x[j] exp(-2 pi i jk/n).\n"
       "x (..., m, ...) -> complex (..., n, ...); `n` crops or zero-pads the input (default m)."},
      {"ifft", &ifft, nullptr,
       "1-D inverse transform: x[j] = (1/n) sum_k X[k] exp(2 pi i jk/n) (norm='backward')."},
      {"rfft", &rfft, nullptr,
       "Transform of a real input: the n//2 + 1 non-negative frequency bins.\n"
       "real (..., m, ...) -> complex (..., n//2 + 1, ...); complex input raises TypeError."},
      {"irfft", &irfft, nullptr,
       "Inverse of rfft: complex (..., m, ...) -> real (..., n, ...), n defaults to 2*(m-1).\n"
       "The imaginary parts of bin 0 (and of bin n/2 for even n) are ignored, as in NumPy."},
      {"hfft", &hfft, nullptr,
       "Transform of a Hermitian-symmetric signal given by its first half: a real output of\n"
       "length n (default 2*(m-1)); hfft(x, n) == irfft(conj(x), n) * n for norm='backward'."},
      {"ihfft", &ihfft, nullptr,
       "Inverse of hfft: real (..., m, ...) -> complex (..., n//2 + 1, ...)."},
      {"fftn", nullptr, &fftn,
       "n-D transform over `axes` (default: all, or the last len(s)); s[i] (or -1 to keep the\n"
       "input's) is the length along axes[i]."},
      {"ifftn", nullptr, &ifftn, "n-D inverse transform over `axes` (see fftn)."},
      {"rfftn", nullptr, &rfftn,
       "n-D transform of a real input: rfft over the last of `axes`, then fft over the others;\n"
       "the last transformed axis has s[-1]//2 + 1 entries."},
      {"irfftn", nullptr, &irfftn,
       "Inverse of rfftn; the last transformed axis gets s[-1] entries (default 2*(m-1))."},
  };
  for (const auto& e : transforms) def_transform(f, e.name, e.fn1, e.fnn, e.doc);
  def_2d(f, "fft2", &fftn, "fftn");
  def_2d(f, "ifft2", &ifftn, "ifftn");
  def_2d(f, "rfft2", &rfftn, "rfftn");
  def_2d(f, "irfft2", &irfftn, "irfftn");
  def_freq(f, "fftfreq", &fftfreq,
           "Sample frequencies [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d*n), shape (n,).\n\n"
           "dtype defaults to the default real floating dtype (float32, or\n"
           "ts.set_default_dtype's); torch's positional d, requires_grad= and layout= are\n"
           "accepted. fftfreq(0) is empty, as torch's.");
  def_freq(f, "rfftfreq", &rfftfreq,
           "Sample frequencies [0, 1, ..., n//2] / (d*n) of rfft, shape (n//2 + 1,);\n"
           "rfftfreq(0) is [nan], as torch's.");
  def_shift(f, "fftshift", &fftshift,
            "Moves the zero-frequency bin to the centre: a roll by n//2 along `axes` (default\n"
            "all); torch's positional dim, dim= and input= too.");
  def_shift(f, "ifftshift", &ifftshift,
            "Inverse of fftshift: a roll by -(n//2) along `axes` (default all).");
}

}  // namespace ts::python
