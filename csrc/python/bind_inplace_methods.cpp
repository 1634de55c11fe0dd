// Tensor's in-place methods x.<op>_(...) that are an op followed by a write (x.acosh_(),
// x.hypot_(y), x.clamp_(lo, hi), ...), and the ones that are not (fill_, zero_, copy_,
// float_power_), with PyTorch's elementwise aliases as methods (x.arccos is x.acos).
//
// Note [torch in-place]: every in-place method computes its out-of-place result and writes
// it into self with PyTorch's rules (assign_inplace_result, csrc/ops/elementwise.cpp):
//   * a leaf that requires grad raises RuntimeError while grad mode is on (check_inplace);
//   * the result dtype must be castable to self's under torch's canCast (no float -> int, no
//     complex -> real, nothing but bool -> bool): TypeError naming the method;
//   * the result shape must be self's (an operand cannot broadcast self bigger): ValueError;
//   * self takes the result's autograd history (rebase_history: CopySlices for a view, whose
//     base's gradient is rebased), or, when only self requires grad, the write is recorded as
//     x[...] = r; the version counter is bumped by the copy. lerp_, addcmul_, addcdiv_ and the
//     scaled products instead write with their no-grad path and record one node of their own,
//     as PyTorch's (autograd/record_inplace.h), under the same rules.
// Every method calls its op in C++ with its own name ("clamp_"), so an error is raised once, by
// the op, naming the method. The elementwise ops (ElementwiseDef) and the ones made of them
// (clamp_, lerp_, addcmul_, addcdiv_, the special functions, addmm_ with beta 1: their
// families' bindings) write straight into self when nothing records (Note [In-place without a
// temporary]). The ones composed of several ops compute the op on self (on a copy of self while
// autograd records, so no formula that saved self sees the overwritten values: inplace_source)
// and write the result in (write_back).
#include <string_view>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "autograd/record.h"
#include "core/scalar_range.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/cumulative.h"
#include "ops/indexing_advanced.h"
#include "ops/math.h"
#include "ops/nn/activation_pointwise.h"
#include "ops/pointwise_composite.h"
#include "ops/pointwise_torch.h"
#include "ops/rounding.h"
#include "ops/statistics_torch.h"
#include "ops/tensor_convert.h"
#include "ops/views.h"
#include "python/elementwise_binding.h"
#include "python/function_method.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

using Cls = py::class_<Tensor>;

struct Def {
  const char* name;
  const ElementwiseDef* def;
};

// x.<name>_() of the unary elementwise ops, the aliases under their own names.
const Def kUnaryInplace[] = {
    {"abs_", &abs_def},
    {"absolute_", &abs_def},
    {"acos_", &acos_def},
    {"arccos_", &acos_def},
    {"acosh_", &acosh_def},
    {"arccosh_", &acosh_def},
    {"asin_", &asin_def},
    {"arcsin_", &asin_def},
    {"asinh_", &asinh_def},
    {"arcsinh_", &asinh_def},
    {"atan_", &atan_def},
    {"arctan_", &atan_def},
    {"atanh_", &atanh_def},
    {"arctanh_", &atanh_def},
    {"cos_", &cos_def},
    {"cosh_", &cosh_def},
    {"sin_", &sin_def},
    {"sinh_", &sinh_def},
    {"tan_", &tan_def},
    {"tanh_", &tanh_def},
    {"exp_", &exp_def},
    {"expm1_", &expm1_def},
    {"log_", &log_def},
    {"log10_", &log10_def},
    {"log1p_", &log1p_def},
    {"log2_", &log2_def},
    {"sqrt_", &sqrt_def},
    {"ceil_", &ceil_def},
    {"floor_", &floor_def},
    {"trunc_", &trunc_def},
    {"fix_", &trunc_def},
    {"sign_", &sign_def},
    {"reciprocal_", &reciprocal_def},
    {"neg_", &kNegative},
    {"negative_", &kNegative},
    {"logical_not_", &logical_not_def},
    {"bitwise_not_", &bitwise_invert_def},
};

// x.<name>_(other) of the binary elementwise ops.
const Def kBinaryInplace[] = {
    {"atan2_", &atan2_def},
    {"arctan2_", &atan2_def},
    {"hypot_", &hypot_def},
    {"copysign_", &copysign_def},
    {"nextafter_", &nextafter_def},
    {"bitwise_and_", &bitwise_and_def},
    {"bitwise_or_", &bitwise_or_def},
    {"bitwise_xor_", &bitwise_xor_def},
    {"bitwise_left_shift_", &bitwise_left_shift_def},
    {"bitwise_right_shift_", &bitwise_right_shift_def},
    {"logical_and_", &logical_and_def},
    {"logical_or_", &logical_or_def},
    {"logical_xor_", &logical_xor_def},
    {"gcd_", &gcd_def},
    {"lcm_", &lcm_def},
    {"floor_divide_", &floor_divide_def},
    {"remainder_", &remainder_def},
    {"eq_", &equal_def},
    {"ne_", &not_equal_def},
    {"not_equal_", &not_equal_def},
    {"lt_", &less_def},
    {"less_", &less_def},
    {"le_", &less_equal_def},
    {"less_equal_", &less_equal_def},
    {"gt_", &greater_def},
    {"greater_", &greater_def},
    {"ge_", &greater_equal_def},
    {"greater_equal_", &greater_equal_def},
};

// x.<name>_() of PyTorch's unary functions composed of several ops: f(self, or a copy of self
// while autograd records) written into self (Note [torch in-place]), errors naming the method.
Tensor relu_of(const Tensor& x) { return nn::relu(x, false, "relu_"); }
Tensor frac_of(const Tensor& x) { return frac(x, "frac_"); }
const std::pair<const char*, Tensor (*)(const Tensor&)> kComposedUnary[] = {
    {"rsqrt_", &rsqrt},         {"exp2_", &exp2},       {"frac_", &frac_of},
    {"deg2rad_", &deg2rad},     {"rad2deg_", &rad2deg}, {"sgn_", &sgn},
    {"sigmoid_", &nn::sigmoid}, {"relu_", &relu_of},    {"square_", &square_torch},
};
// ... and of the binary ones, x.<name>_(other).
const std::pair<const char*, Tensor (*)(const Tensor&, const Tensor&)> kComposedBinary[] = {
    {"fmod_", &fmod},
    {"ldexp_", &ldexp},
};

// PyTorch's elementwise methods bound here out of place (the standard's functions of
// bind_elementwise.cpp as Tensor methods).
const Def kUnaryMethods[] = {
    {"acosh", &acosh_def},
    {"asinh", &asinh_def},
    {"atanh", &atanh_def},
    {"positive", &positive_def},
    {"bitwise_not", &bitwise_invert_def},
};
const Def kBinaryMethods[] = {
    {"hypot", &hypot_def},
    {"copysign", &copysign_def},
    {"nextafter", &nextafter_def},
    {"logaddexp", &logaddexp_def},
    {"bitwise_left_shift", &bitwise_left_shift_def},
    {"bitwise_right_shift", &bitwise_right_shift_def},
};

// PyTorch's aliases: Tensor.<alias> is the same method object as Tensor.<target> (their
// signatures are torch's same), set once every binding is final (alias_tensor_methods).
const std::pair<const char*, const char*> kAliases[] = {
    {"absolute", "abs"},
    {"arccos", "acos"},
    {"arccosh", "acosh"},
    {"arcsin", "asin"},
    {"arcsinh", "asinh"},
    {"arctan", "atan"},
    {"arctan2", "atan2"},
    {"arctanh", "atanh"},
    {"greater", "gt"},
    {"greater_equal", "ge"},
    {"less", "lt"},
    {"less_equal", "le"},
    {"not_equal", "ne"},
    {"unsafe_split", "split"},
    {"unsafe_chunk", "chunk"},
    {"unsafe_split_with_sizes", "split_with_sizes"},
};

// x.fill_(value) / x.zero_(): a number, or a 0-d tensor (differentiable with respect to it).
void fill_method(const Tensor& x, py::handle value, const char* op) {
  autograd::check_inplace(x, op);
  Scalar s;
  if (py::isinstance<Tensor>(value)) {
    const Tensor& v = value.cast<const Tensor&>();
    if (v.ndim() != 0)
      throw RuntimeError(str(op, ": only supports a 0-dimension value tensor, but got tensor with ",
                             v.ndim(), " dimensions"));
    if (autograd::grad_enabled() && (autograd::requires_grad(x) || autograd::requires_grad(v))) {
      const Tensor r = astype_op(to_device_op(v, x.device(), false, op), x.dtype(), false);
      overwrite_inplace(op, x, broadcast_to(r, x.shape()));
      return;
    }
    s = item(v);
  } else if (PyUnicode_Check(value.ptr()) || !to_scalar(value, s)) {
    throw TypeError(str(op, ": value must be a number or a 0-d tensor, got ",
                        py::type::handle_of(value).attr("__name__").cast<std::string>()));
  }
  if (s.kind == ScalarKind::Complex && !is_complex(x.dtype()))
    throw RuntimeError(
        str(op, ": cannot fill a ", dtype_name(x.dtype()), " tensor with a complex value"));
  check_scalar_fits(s, x.dtype(), op);
  if (autograd::grad_enabled() && autograd::requires_grad(x)) {
    // recorded as x[...] = value: the overwritten values get no gradient
    Tensor v = Tensor::empty({}, x.dtype(), x.device());
    fill_(v, s);
    overwrite_inplace(op, x, broadcast_to(v, x.shape()));
    return;
  }
  fill_(x, s);
}

// x.copy_(src, non_blocking=False): src (a tensor or a number) broadcast to self's shape, cast to
// self's dtype (a complex src into a real self keeps the real part, as torch), from any device;
// differentiable with respect to src.
void copy_method(const Tensor& x, py::handle src_h, bool non_blocking) {
  const char* op = "copy_";
  autograd::check_inplace(x, op);
  // (x.copy_(x) is a no-op PyTorch allows on an expanded x)
  if (!(py::isinstance<Tensor>(src_h) && src_h.cast<const Tensor&>().impl() == x.impl()))
    check_no_internal_overlap(x, op);
  Tensor src;  // a Tensor, or a Python number (torch takes one too: x.copy_(1.5) fills)
  Scalar number;
  if (py::isinstance<Tensor>(src_h))
    src = src_h.cast<Tensor>();
  else if (PyUnicode_Check(src_h.ptr()) || !to_scalar(src_h, number) || !to_operand(src_h, src))
    throw py::type_error(str("copy_(): argument 'other' (position 1) must be Tensor, not ",
                             py::type::handle_of(src_h).attr("__name__").cast<std::string>()));
  if (src.device() != x.device()) src = to_device_op(src, x.device(), non_blocking, op);
  if (src.shape() != x.shape()) {
    const int64_t lead = x.ndim() - src.ndim();
    bool ok = lead >= 0;
    for (int64_t i = 0; ok && i < src.ndim(); ++i)
      ok = src.dim(i) == 1 || src.dim(i) == x.dim(lead + i);
    if (!ok)
      throw ValueError(str("copy_: the src tensor of shape ", shape_str(src.shape()),
                           " must be broadcastable to the self tensor of shape ",
                           shape_str(x.shape())));
    src = broadcast_to(src, x.shape());
  }
  if (src.dtype() != x.dtype()) {
    if (is_complex(src.dtype()) && !is_complex(x.dtype())) src = real(src);
    src = astype_op(src, x.dtype(), true);
  }
  overwrite_inplace(op, x, src);
}

std::string inplace_doc(const char* name) {
  std::string base(name);
  base.pop_back();
  return "In-place " + base + " (torch.Tensor." + name + "); returns self.";
}

void def_elementwise_inplace(Cls& cls) {
  for (const Def& u : kUnaryInplace) {
    const Def d = u;
    cls.def(
        d.name,
        [d](py::object self) {
          unary_op_(*d.def, self_of(self, d.name), d.name);
          return self;
        },
        inplace_doc(d.name).c_str());
  }
  for (const Def& b : kBinaryInplace) {
    const Def d = b;
    cls.def(
        d.name,
        [d](py::object self, py::handle other) {
          binary_op_(*d.def, self_of(self, d.name), operand_or_throw(other, d.name), d.name);
          return self;
        },
        py::arg("other"), inplace_doc(d.name).c_str());
  }
  cls.def(
      "pow_",
      [](py::object self, py::handle exponent) {
        const Tensor& x = self_of(self, "pow_");
        autograd::check_inplace(x, "pow_");
        pow_(x, operand_or_throw(exponent, "pow_"));
        return self;
      },
      py::arg("exponent"), "self **= exponent; returns self.");
  for (const auto& [name, fn] : kComposedUnary) {
    const char* op = name;
    const auto f = fn;
    cls.def(
        op, [op, f](py::object self) { return write_back(self, op, f); }, inplace_doc(op).c_str());
  }
  for (const auto& [name, fn] : kComposedBinary) {
    const char* op = name;
    const auto f = fn;
    cls.def(
        op,
        [op, f](py::object self, py::handle other) {
          // ldexp's other is a tensor, as torch's
          const Tensor o = std::string_view(op) == "ldexp_" ? tensor_or_throw(other, op, "other")
                                                            : operand_or_throw(other, op);
          return write_back(self, op, [&](const Tensor& x) { return f(x, o); }, {&o});
        },
        py::arg("other"), inplace_doc(op).c_str());
  }
}

// The in-place methods of the other ops composed of several: the op's result written into self
// (write_back), its arguments parsed here with the method's name.
void def_written_back(Cls& cls) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  for (const bool upper : {false, true}) {
    const char* op = upper ? "triu_" : "tril_";
    cls.def(
        op,
        [op, upper](py::object self, py::handle diagonal) {
          const int64_t k = int_arg(diagonal, op, "diagonal");
          return write_back(
              self, op, [&](const Tensor& x) { return upper ? triu(x, k, op) : tril(x, k, op); });
        },
        py::arg("diagonal") = 0,
        str(op, "($self, /, diagonal=0)\n--\n\nIn-place ", upper ? "triu" : "tril",
            "; returns self.")
            .c_str());
  }
  for (const bool is_sum : {true, false}) {
    const char* op = is_sum ? "cumsum_" : "cumprod_";
    cls.def(
        op,
        [op, is_sum](py::object self, py::handle dim, py::handle dtype) {
          const int64_t d = int_arg(dim, op, "dim");
          const std::optional<DType> dt =
              dtype.is_none() ? std::nullopt : std::optional<DType>(to_dtype(dtype));
          return write_back(self, op, [&](const Tensor& x) {
            const int64_t ax = normalize_axis(d, std::max<int64_t>(x.ndim(), 1), op);
            return (is_sum ? cumulative_sum : cumulative_prod)(x, ax, dt, false);
          });
        },
        py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none(),
        str(op, "($self, /, dim, *, dtype=None)\n--\n\nIn-place ", is_sum ? "cumsum" : "cumprod",
            "; returns self.")
            .c_str());
  }
  cls.def(
      "index_fill_",
      [](py::object self, py::handle dim, py::handle index, py::handle value) {
        const char* op = "index_fill_";
        const int64_t d = int_arg(dim, op, "dim");
        const Tensor i = operand_or_throw(index, op), v = operand_or_throw(value, op);
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        warn_expanded_write(x, op);
        assign_inplace_result(op, x, index_fill(inplace_source(x, {&v}), d, i, v), true);
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("value"),
      "index_fill_($self, /, dim, index, value)\n--\n\nIn-place index_fill; returns self.");
  cls.def(
      "index_copy_",
      [](py::object self, py::handle dim, py::handle index, py::handle source) {
        const char* op = "index_copy_";
        const int64_t d = int_arg(dim, op, "dim");
        const Tensor i = operand_or_throw(index, op);
        const Tensor& src = tensor_or_throw(source, op, "source");
        return write_back(self, op, [&](const Tensor& x) { return index_copy(x, d, i, src); },
                          {&src});
      },
      py::arg("dim"), py::arg("index"), py::arg("source"),
      "index_copy_($self, /, dim, index, source)\n--\n\nIn-place index_copy; returns self.");
  cls.def(
      "renorm_",
      [](py::object self, double p, int64_t dim, double maxnorm) {
        return write_back(self, "renorm_",
                          [&](const Tensor& x) { return renorm(x, p, dim, maxnorm); });
      },
      py::arg("p"), py::arg("dim"), py::arg("maxnorm"),
      "renorm_($self, /, p, dim, maxnorm)\n--\n\nIn-place renorm; returns self.");
  cls.def(
      "float_power_",
      [](py::object self, py::handle exponent) {
        const char* op = "float_power_";
        const Tensor& x = self_of(self, op);
        const Tensor e = operand_or_throw(exponent, op);
        const DType want =
            is_complex(x.dtype()) || is_complex(e.dtype()) ? DType::Complex128 : DType::Float64;
        if (x.dtype() != want)
          throw TypeError(str(op, ": the base given to float_power_ has dtype ",
                              dtype_name(x.dtype()), " but the operation's result requires dtype ",
                              dtype_name(want)));
        return write_back(self, op, [&](const Tensor& s) { return float_power(s, e); }, {&e});
      },
      py::arg("exponent"),
      "float_power_($self, /, exponent)\n--\n\nIn-place float_power: self must already be "
      "float64 (complex128), as in torch.");
}

void def_fill_copy(Cls& cls) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  cls.def(
      "fill_",
      [](py::object self, py::handle value) {
        fill_method(self_of(self, "fill_"), value, "fill_");
        return self;
      },
      py::arg("value"),
      "fill_($self, /, value)\n--\n\nFills self with `value` (a number or a 0-d tensor); "
      "returns self.");
  cls.def(
      "zero_",
      [](py::object self) {
        fill_method(self_of(self, "zero_"), py::int_(0), "zero_");
        return self;
      },
      "zero_($self, /)\n--\n\nFills self with zeros; returns self.");
  cls.def(
      "copy_",
      [](py::object self, py::handle src, bool non_blocking) {
        copy_method(self_of(self, "copy_"), src, non_blocking);
        return self;
      },
      py::arg("src"), py::arg("non_blocking") = false,
      "copy_($self, /, src, non_blocking=False)\n--\n\n"
      "Copies `src` (broadcast to self's shape, cast to self's dtype, from any device) into "
      "self; returns self. Differentiable with respect to src.");
}

void def_torch_methods(py::module_& m, Cls& cls) {
  for (const Def& u : kUnaryMethods) {
    const ElementwiseDef* d = u.def;
    cls.def(u.name, [d](const Tensor& t) { return unary_op(*d, t); });
  }
  for (const Def& b : kBinaryMethods) {
    const ElementwiseDef* d = b.def;
    cls.def(
        b.name,
        [d](const Tensor& t, py::handle o) {
          return binary_op(*d, t, operand_or_throw(o, d->name));
        },
        py::arg("other"));
  }
  // torch.Tensor.sigmoid / hardshrink / prelu / matrix_exp are the functions themselves
  bind_functions_as_methods(m, {"sigmoid", "hardshrink", "prelu"});
  py::setattr(cls, "matrix_exp", function_method(m.attr("_linalg").attr("matrix_exp")));
  py::setattr(cls, "orgqr", function_method(m.attr("_linalg").attr("householder_product")));
  cls.def(
      "is_distributed", [](const Tensor&) { return false; },
      "False: tessera tensors are never distributed (torch.Tensor.is_distributed).");
}

}  // namespace

void init_inplace_methods(py::module_& m) {
  auto cls = py::reinterpret_borrow<Cls>(m.attr("Tensor"));
  def_elementwise_inplace(cls);
  def_written_back(cls);
  def_fill_copy(cls);
  def_torch_methods(m, cls);
}

// Tensor.<alias> is Tensor.<target> (the class dict's own entry, after install_arg_errors).
void alias_tensor_methods(py::module_& m) {
  py::handle cls = m.attr("Tensor");
  PyObject* dict = reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_dict;
  for (const auto& [alias, target] : kAliases) {
    PyObject* entry = PyDict_GetItemString(dict, target);
    if (entry == nullptr) throw RuntimeError(str("alias_tensor_methods: no Tensor.", target));
    if (PyObject_SetAttrString(cls.ptr(), alias, entry) != 0) throw py::error_already_set();
  }
}

}  // namespace ts::python
