// Bindings for the statistical/utility area: reductions, cumulative ops, diff, where.
// Every reduction parses all of its argument forms here, once, for the namespace function and
// the Tensor method alike (issue 17, docs/design.md "Argument forms in the bindings"): the
// standard's axis=/keepdims=/correction=, PyTorch's positional dim, keepdim, dim=, unbiased=,
// dtype=, and PyTorch's (values, indices) named tuples. Note [torch reductions vs the standard]:
// ts.max/ts.min/ts.var/ts.std called the standard's way (axis=, or no dim) keep the standard's
// meaning (values only; correction 0); a torch-style call (positional or keyword dim, and for
// var/std unbiased=/keepdim=) and the Tensor methods follow PyTorch: x.max(dim) returns
// (values, indices), x.var() is unbiased.
#include <pybind11/stl.h>

#include "autograd/autocast.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/cumulative.h"
#include "ops/elementwise_defs.h"
#include "ops/math.h"
#include "ops/order_stats.h"
#include "ops/reduce.h"
#include "ops/statistics.h"
#include "ops/where.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

namespace {

using autocast::pack;
using autocast::Policy;

Axes to_axes(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return to_shape(h, op);
}

std::optional<DType> to_opt_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

bool is_int_like(py::handle h) {
  if (PyLong_CheckExact(h.ptr())) return true;  // the common case, without the type checks
  return !PyBool_Check(h.ptr()) && (PyLong_Check(h.ptr()) || py::hasattr(h, "__index__")) &&
         !py::isinstance<py::tuple>(h) && !py::isinstance<py::list>(h) &&
         !py::isinstance<Tensor>(h);
}

int64_t to_dim(py::handle h, const std::string& op) {
  if (!is_int_like(h))
    throw py::type_error(op + ": dim must be an int, got " +
                         std::string(py::str(py::type::handle_of(h).attr("__name__"))));
  return index_value(h, op.c_str(), "dim");
}

std::optional<int64_t> to_opt_axis(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return to_dim(h, op);
}

bool truth(py::handle h) {
  const int t = PyObject_IsTrue(h.ptr());
  if (t < 0) throw py::error_already_set();
  return t != 0;
}

// torch's out= of a (values, indices) result: a pair of tensors.
py::sequence out_pair(py::handle out, const char* op) {
  if (!(py::isinstance<py::tuple>(out) || py::isinstance<py::list>(out)) || py::len(out) != 2)
    throw py::type_error(
        str(op, "(): argument 'out' must be a tuple of 2 tensors, not ", type_name(out)));
  return py::reinterpret_borrow<py::sequence>(out);
}

// One of an alias pair (the standard's name, PyTorch's): a TypeError when both are given.
py::handle alias(const std::string& op, py::handle dim, py::handle axis) {
  if (dim.is_none()) return axis;
  if (!axis.is_none()) throw py::type_error(op + ": got both axis= and its alias dim=; pass one");
  return dim;
}

bool keep_alias(const std::string& op, py::handle keepdim, py::handle keepdims) {
  if (keepdim.is_none()) return !keepdims.is_none() && truth(keepdims);
  if (!keepdims.is_none() && truth(keepdims))
    throw py::type_error(op + ": got both keepdims= and its alias keepdim=; pass one");
  return truth(keepdim);
}

// PyTorch's dims: None or an empty sequence mean all dims; a 0-d tensor takes dim 0 / -1.
Axes torch_axes(py::handle h, int64_t ndim, const char* op) {
  if (h.is_none()) return std::nullopt;
  Shape dims = to_shape(h, op);
  if (dims.empty()) return std::nullopt;
  if (ndim != 0) return dims;
  for (int64_t d : dims) normalize_axis(d, 1, op);
  return std::nullopt;
}

}  // namespace

// torch.return_types: named tuples made once (values, indices), (min, max).
py::object return_type(const char* name) {
  static py::dict* types = new py::dict();  // leaked: lives as long as the module
  py::str key(name);
  if (!types->contains(key)) {
    const bool mm = std::string(name) == "aminmax";
    (*types)[key] = py::module_::import("collections")
                        .attr("namedtuple")(name,
                                            mm ? py::tuple(py::make_tuple("min", "max"))
                                               : py::tuple(py::make_tuple("values", "indices")),
                                            py::arg("module") = "tessera");
  }
  return (*types)[key];
}

namespace {

py::object pair(const char* name, const std::pair<Tensor, Tensor>& vi) {
  return return_type(name)(vi.first, vi.second);
}

// ---- sum, prod, mean, all, any, count_nonzero, argmax, argmin: one form for both conventions
enum class Kind { Sum, Prod, Mean, All, Any, CountNonzero, Argmax, Argmin };

py::object reduce_py(Kind kind, const char* op, py::handle x_, py::handle dim, py::handle keepdim,
                     py::handle axis, py::handle dtype, py::handle keepdims, py::handle out) {
  Tensor x = operand_or_throw(x_, op);
  const py::handle ax = alias(op, dim, axis);
  const bool keep = keep_alias(op, keepdim, keepdims);
  const auto done = [&](Tensor r, OutDtype rule) {
    return result_or_out(op, std::move(r), out, rule);
  };
  if (kind == Kind::Argmax || kind == Kind::Argmin)
    return done((kind == Kind::Argmax ? argmax : argmin)(x, to_opt_axis(ax, op), keep),
                OutDtype::Exact);
  const Axes axes = to_axes(ax, op);
  std::optional<DType> dt = to_opt_dtype(dtype);
  // Note [out= rules]: sum, prod and mean compute in out's dtype (mean only in an inexact one)
  if (!out.is_none() && (kind == Kind::Sum || kind == Kind::Prod || kind == Kind::Mean)) {
    const Tensor& o = tensor_or_throw(out, op, "out");
    if (kind != Kind::Mean || dt || is_inexact(o.dtype())) dt = out_compute_dtype(op, dt, o);
  }
  switch (kind) {
    case Kind::Sum:
      return done(sum(x, axes, keep, dt), OutDtype::Exact);  // (the op applies its autocast row)
    case Kind::Prod:
      return done(prod(x, axes, keep, dt), OutDtype::Exact);  // (the op applies its autocast row)
    case Kind::Mean:
      if (dt) {
        if (!is_inexact(*dt))
          throw RuntimeError(
              std::string("mean(): could not infer output dtype. Optional dtype ") +
              "must be either a floating point or complex dtype. Got: " + dtype_name(*dt));
        if (x.dtype() != *dt) x = astype_op(x, *dt, true);
      }
      return done(mean(x, axes, keep), OutDtype::Cast);
    case Kind::All:
      return done(all(x, axes, keep), OutDtype::Exact);
    case Kind::Any:
      return done(any(x, axes, keep), OutDtype::Exact);
    default:
      if (!out.is_none())
        throw py::type_error(
            "count_nonzero(): out= is not supported (torch.count_nonzero has "
            "none); hint: use the returned tensor");
      return py::cast(count_nonzero(x, axes, keep));
  }
}

// ---- max / min: the standard's values, PyTorch's (values, indices) and elementwise forms
py::object extreme_py(bool largest, bool method, py::handle x_, py::handle dim, py::handle keepdim,
                      py::handle axis, py::handle keepdims, py::handle other, py::handle out) {
  const char* op = largest ? "max" : "min";
  const Tensor x = operand_or_throw(x_, op);
  const auto elementwise = [&](py::handle y) {
    const Tensor yt = operand_or_throw(y, op);
    return result_or_out(op, binary_op(largest ? maximum_def : minimum_def, x, yt), out,
                         OutDtype::Cast, {&x, &yt});
  };
  if (!other.is_none()) {  // torch's max(input, other=): the elementwise extreme
    if (!dim.is_none()) throw py::type_error(std::string(op) + "() got both dim and other");
    return elementwise(other);
  }
  if (!dim.is_none() && py::isinstance<Tensor>(dim)) return elementwise(dim);  // torch.max(a, b)
  const bool torch_form = !dim.is_none() || (method && !axis.is_none());
  const py::handle ax = alias(op, dim, axis);
  const bool keep = keep_alias(op, keepdim, keepdims);
  if (torch_form && is_int_like(ax)) {
    const int64_t d = to_dim(ax, op);
    const auto vi = largest ? max_with_indices(x, d, keep) : min_with_indices(x, d, keep);
    if (out.is_none()) return pair(op, vi);
    const py::sequence o = out_pair(out, op);
    write_out_py(op, o[0], vi.first, OutDtype::Exact);
    write_out_py(op, o[1], vi.second, OutDtype::Exact);
    return return_type(op)(o[0], o[1]);
  }
  const Axes axes = to_axes(ax, op);
  return result_or_out(op, largest ? max(x, axes, keep) : min(x, axes, keep), out);
}

// ---- var / std: correction 0 the standard's way, unbiased PyTorch's way
py::object moments_py(bool is_std, bool method, py::handle x_, py::handle dim, py::handle unbiased,
                      py::handle keepdim, py::handle axis, py::handle correction,
                      py::handle keepdims, py::handle out) {
  const char* op = is_std ? "std" : "var";
  const Tensor x = operand_or_throw(x_, op);
  const bool torch_form =
      method || !dim.is_none() ||
      ((!unbiased.is_none() || !keepdim.is_none()) && axis.is_none() && keepdims.is_none());
  double corr = 0;
  Axes axes;
  if (torch_form) {
    if (PyBool_Check(dim.ptr())) {  // var(input, unbiased)
      if (!unbiased.is_none())
        throw py::type_error(std::string(op) + ": got unbiased both positionally and as a keyword");
      unbiased = dim;
      dim = py::none();
    }
    if (!unbiased.is_none() && !correction.is_none())
      throw RuntimeError(std::string(op) + ": cannot specify both unbiased and correction");
    corr = !correction.is_none() ? real_arg(correction, op, "correction")
           : unbiased.is_none()  ? 1.0
                                 : (truth(unbiased) ? 1.0 : 0.0);
    axes = torch_axes(alias(op, dim, axis), x.ndim(), op);
  } else {
    if (!unbiased.is_none())  // only with axis=/keepdims=: the standard's call has no unbiased
      throw py::type_error(std::string(op) + ": unbiased= is PyTorch's keyword; pass " +
                           "correction= with axis= (or dim= with unbiased=)");
    corr = correction.is_none() ? 0.0 : real_arg(correction, op, "correction");
    axes = to_axes(axis, op);
  }
  const bool keep = keep_alias(op, keepdim, keepdims);
  return result_or_out(op, is_std ? ts::std(x, axes, corr, keep) : var(x, axes, corr, keep), out);
}

// ---- cumulative_sum / cumsum, cumulative_prod / cumprod
py::object scan_py(bool is_sum, const char* op, py::handle x_, py::handle dim, py::handle axis,
                   py::handle dtype, bool include_initial, py::handle out) {
  Tensor x = operand_or_throw(x_, op);
  std::optional<DType> dt = to_opt_dtype(dtype);
  if (!out.is_none()) dt = out_compute_dtype(op, dt, tensor_or_throw(out, op, "out"));
  const std::optional<int64_t> ax = to_opt_axis(alias(op, dim, axis), op);
  return result_or_out(op, (is_sum ? cumulative_sum : cumulative_prod)(x, ax, dt, include_initial),
                       out, OutDtype::Exact, {&x});
}

// ---- PyTorch's amax / amin / aminmax, median / nanmedian, kthvalue, nansum / nanmean: their
// input must be a Tensor (no Python numbers), as in PyTorch.
const Tensor& input_tensor(py::handle h, const char* op) {
  if (!py::isinstance<Tensor>(h))
    throw py::type_error(std::string(op) + ": argument 1 must be a tensor, got " +
                         py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>());
  return h.cast<const Tensor&>();
}

Tensor amax_py(bool largest, py::handle x_, py::handle dim, bool keepdim) {
  const char* op = largest ? "amax" : "amin";
  const Tensor& x = input_tensor(x_, op);
  const Axes axes = torch_axes(dim, x.ndim(), op);
  return largest ? amax(x, axes, keepdim) : amin(x, axes, keepdim);
}

py::object aminmax_py(py::handle x_, py::handle dim, bool keepdim) {
  const Tensor& x = input_tensor(x_, "aminmax");
  Axes axes;
  if (!dim.is_none() && x.ndim() != 0) axes = Shape{to_dim(dim, "aminmax")};
  if (!dim.is_none() && x.ndim() == 0) normalize_axis(to_dim(dim, "aminmax"), 1, "aminmax");
  const bool empty =
      x.numel() == 0 && (!axes || x.dim(normalize_axis((*axes)[0], x.ndim(), "aminmax")) == 0);
  if (empty)
    throw RuntimeError(
        "aminmax: cannot compute aminmax over an empty dimension as the "
        "operation has no identity (input shape " +
        shape_str(x.shape()) + ")");
  return return_type("aminmax")(amin(x, axes, keepdim), amax(x, axes, keepdim));
}

py::object median_py(bool ignore_nan, py::handle x_, py::handle dim, bool keepdim) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  const Tensor& x = input_tensor(x_, op);
  if (dim.is_none()) return py::cast(median_all(x, ignore_nan));
  return pair(op, median_with_indices(x, to_dim(dim, op), keepdim, ignore_nan));
}

// ---- logsumexp, cummax / cummin, mode, quantile / nanquantile (ops/statistics.h), var_mean /
// std_mean
Tensor logsumexp_py(py::handle x_, py::handle dim, bool keepdim) {
  Tensor x = input_tensor(x_, "logsumexp");
  return logsumexp(x, torch_axes(dim, x.ndim(), "logsumexp"), keepdim);
}

Tensor quantile_py(bool ignore_nan, py::handle x_, py::handle q, py::handle dim, bool keepdim,
                   const std::string& interpolation) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  const Tensor& x = input_tensor(x_, op);
  Tensor qt;
  if (py::isinstance<Tensor>(q)) {
    qt = q.cast<Tensor>();
  } else if (PyFloat_Check(q.ptr()) || (PyLong_Check(q.ptr()) && !PyBool_Check(q.ptr()))) {
    qt = to_device(scalar_tensor(Scalar::from_double(py::cast<double>(q)), x.dtype()), x.device());
  } else {
    throw py::type_error(std::string(op) + ": q must be a float or a Tensor, got " +
                         py::str(py::type::handle_of(q).attr("__name__")).cast<std::string>() +
                         "; pass a list of quantiles as a 1-D tensor");
  }
  return quantile(x, qt, to_opt_axis(dim, op), keepdim, interpolation, ignore_nan);
}

py::tuple moments_mean_py(bool is_std, py::handle x_, py::handle dim, py::handle unbiased,
                          bool keepdim, py::handle correction) {
  const char* op = is_std ? "std_mean" : "var_mean";
  const Tensor& x = input_tensor(x_, op);
  const Tensor m = moments_py(is_std, true, x_, dim, unbiased, py::bool_(keepdim), py::none(),
                              correction, py::none(), py::none())
                       .cast<Tensor>();
  const py::handle d = PyBool_Check(dim.ptr()) ? py::handle(py::none()) : dim;  // (x, unbiased)
  return py::make_tuple(m, mean(x, torch_axes(d, x.ndim(), op), keepdim));
}

using AxesFn = Tensor (*)(const Tensor&, const Axes&, bool);
using DTypeFn = Tensor (*)(const Tensor&, const Axes&, bool, std::optional<DType>);
using VarFn = Tensor (*)(const Tensor&, const Axes&, double, bool);
using ArgFn = Tensor (*)(const Tensor&, std::optional<int64_t>, bool);
using ScanFn = Tensor (*)(const Tensor&, std::optional<int64_t>, std::optional<DType>, bool);

// The private positional entry points internal Python code calls (_C._max(x, axes, keepdims)).
void def_axes(py::module_& m, const char* name, const char* op, AxesFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, bool keepdims) {
    return fn(operand_or_throw(x, op), to_axes(axis, op), keepdims);
  });
}

void def_with_dtype(py::module_& m, const char* name, const char* op, DTypeFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, bool keepdims, py::handle dtype) {
    return fn(operand_or_throw(x, op), to_axes(axis, op), keepdims, to_opt_dtype(dtype));
  });
}

void def_var(py::module_& m, const char* name, const char* op, VarFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, double correction, bool keepdims) {
    return fn(operand_or_throw(x, op), to_axes(axis, op), correction, keepdims);
  });
}

void def_arg(py::module_& m, const char* name, const char* op, ArgFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, bool keepdims) {
    return fn(operand_or_throw(x, op), to_opt_axis(axis, op), keepdims);
  });
}

void def_scan(py::module_& m, const char* name, const char* op, ScanFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, py::handle dtype, bool include_initial) {
    return fn(operand_or_throw(x, op), to_opt_axis(axis, op), to_opt_dtype(dtype), include_initial);
  });
}

// nansum / nanmean: NaN read as absent (nansum: as 0; nanmean: not counted).
Tensor nan_reduce_py(bool is_mean, py::handle x_, py::handle dim, bool keepdim, py::handle dtype) {
  const char* op = is_mean ? "nanmean" : "nansum";
  Tensor x = input_tensor(x_, op);
  const std::optional<DType> dt = to_opt_dtype(dtype);
  const Axes axes = torch_axes(dim, x.ndim(), op);
  const Tensor zero = wrap_scalar(Scalar::from_int(0));
  if (!is_mean) {
    // (sum applies its autocast row)
    if (is_floating(x.dtype())) x = where(unary_op(isnan_def, x), zero, x);
    return sum(x, axes, keepdim, dt);
  }
  if (!is_floating(x.dtype()))
    throw RuntimeError(std::string("nanmean: expected a floating point tensor as input, got ") +
                       dtype_name(x.dtype()));
  if (dt && *dt != x.dtype()) x = astype_op(x, *dt, true);
  const Tensor valid = unary_op(logical_not_def, unary_op(isnan_def, x));
  return divide(sum(where(valid, x, zero), axes, keepdim, std::nullopt),
                sum(valid, axes, keepdim, std::nullopt));
}

std::string sig(const char* name, bool method, const char* params) {
  return std::string(name) + (method ? "($self, " : "(") + params + ")\n--\n\n";
}

constexpr const char* kReduceParams =
    "x, /, dim=None, keepdim=None, *, axis=None, dtype=None, keepdims=False, out=None";
constexpr const char* kNoDtypeParams =
    "x, /, dim=None, keepdim=None, *, axis=None, keepdims=False, out=None";

struct ReduceEntry {
  const char* name;
  Kind kind;
  bool has_dtype;
  const char* doc;
};

const ReduceEntry kReductions[] = {
    {"sum", Kind::Sum, true,
     "Sum over axis (all axes when None). Default result dtype: bool and signed ints -> int64,\n"
     "unsigned ints -> uint64, floats and complex keep theirs; dtype= casts the input first and\n"
     "accumulates in it. The sum over no elements is 0. PyTorch's forms too: a positional dim\n"
     "(int or tuple) and keepdim, or dim=/keepdim= (one of each alias pair)."},
    {"prod", Kind::Prod, true,
     "Product over axis; dtype rules as for sum. The product over no elements is 1.\n"
     "PyTorch's forms too: positional dim and keepdim, dim=/keepdim=."},
    {"mean", Kind::Mean, true,
     "Arithmetic mean over axis. Floating and complex inputs keep their dtype (float16 /\n"
     "bfloat16 accumulate in float32); integer and bool inputs are averaged in float32. The\n"
     "mean over no elements is NaN. dtype= (PyTorch's) casts the input to that floating or\n"
     "complex dtype first; an integer or bool dtype raises RuntimeError like torch."},
    {"all", Kind::All, false,
     "True where every element along axis is nonzero (True over no elements); bool result."},
    {"any", Kind::Any, false,
     "True where some element along axis is nonzero (False over no elements); bool result."},
    {"count_nonzero", Kind::CountNonzero, false,
     "Number of nonzero elements along axis (positional too: torch's count_nonzero(x, dim)),\n"
     "as int64."},
    {"argmax", Kind::Argmax, false,
     "Index (int64) of the first maximum along axis (one int); over the flattened tensor when\n"
     "axis is None. The first NaN counts as the maximum. Empty axes raise ValueError."},
    {"argmin", Kind::Argmin, false,
     "Index (int64) of the first minimum along axis (the first NaN wins)."},
};

constexpr const char* kExtremeDoc =
    "The {0} over axis (all axes when None). The standard's call (no dim, or axis=) returns\n"
    "the values; PyTorch's (positional dim or dim=, and every call of the Tensor method with\n"
    "one int dim) returns the named tuple (values, indices) of the first {0} along dim, whose\n"
    "values carry the gradient to that element. {0}(x, other) and other= give the\n"
    "elementwise {0}imum. NaN propagates; empty reductions raise.";

constexpr const char* kMomentsDoc =
    "The {0} over axis: the standard's call (axis=, correction=; default correction 0)\n"
    "or PyTorch's (positional dim, dim=, unbiased=, keepdim=; default unbiased, correction 1).\n"
    "The Tensor method always follows PyTorch. Real floating input keeps its dtype; integers\n"
    "and bool compute in float32; N - correction <= 0 gives inf or NaN.";

std::string fmt(const char* text, const char* what) {
  std::string s(text), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "{0}") == 0) {
      out += what;
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

namespace {
// A twin's parameters (Note [Keyword fast path]): the required x, then ones defaulting to None.
std::vector<std::pair<const char*, py::object>> x_then_nones(
    std::initializer_list<const char*> names) {
  std::vector<std::pair<const char*, py::object>> out{{"x", py::object()}};
  for (const char* n : names) out.emplace_back(n, py::none());
  return out;
}
}  // namespace

// arg_errors.cpp: Note [Keyword fast path]
void def_keyword_twin(py::module_& m, const char* name, py::cpp_function twin,
                      const std::vector<std::pair<const char*, py::object>>& params,
                      size_t first_keyword, size_t max_positional, bool refuses = false);

void init_reduction(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));

  for (const ReduceEntry& e : kReductions) {
    const Kind kind = e.kind;
    const char* name = e.name;
    const std::string doc = e.doc;
    const char* params = e.has_dtype ? kReduceParams : kNoDtypeParams;
    auto fn = [kind, name](py::handle x, py::handle dim, py::handle keepdim, py::handle axis,
                           py::handle dtype, py::handle keepdims, py::handle out) {
      return reduce_py(kind, name, x, dim, keepdim, axis, dtype, keepdims, out);
    };
    if (e.has_dtype) {
      m.def(name, fn, py::arg("x"), py::pos_only(), py::arg("dim") = py::none(),
            py::arg("keepdim") = py::none(), py::kw_only(), py::arg("axis") = py::none(),
            py::arg("dtype") = py::none(), py::arg("keepdims") = py::none(),
            py::arg("out") = py::none(), (sig(name, false, params) + doc).c_str());
      def_keyword_twin(m, name, py::cpp_function(fn, py::name(name)),
                       x_then_nones({"dim", "keepdim", "axis", "dtype", "keepdims", "out"}), 1, 3);
      cls.def(name, fn, py::arg("dim") = py::none(), py::arg("keepdim") = py::none(), py::kw_only(),
              py::arg("axis") = py::none(), py::arg("dtype") = py::none(),
              py::arg("keepdims") = py::none(), py::arg("out") = py::none(),
              (sig(name, true, params + 3) + doc).c_str());
    } else {
      auto fn2 = [fn](py::handle x, py::handle dim, py::handle keepdim, py::handle axis,
                      py::handle keepdims, py::handle out) {
        return fn(x, dim, keepdim, axis, py::none(), keepdims, out);
      };
      m.def(name, fn2, py::arg("x"), py::pos_only(), py::arg("dim") = py::none(),
            py::arg("keepdim") = py::none(), py::kw_only(), py::arg("axis") = py::none(),
            py::arg("keepdims") = py::none(), py::arg("out") = py::none(),
            (sig(name, false, params) + doc).c_str());
      def_keyword_twin(m, name, py::cpp_function(fn2, py::name(name)),
                       x_then_nones({"dim", "keepdim", "axis", "keepdims", "out"}), 1, 3);
      cls.def(name, fn2, py::arg("dim") = py::none(), py::arg("keepdim") = py::none(),
              py::kw_only(), py::arg("axis") = py::none(), py::arg("keepdims") = py::none(),
              py::arg("out") = py::none(), (sig(name, true, params + 3) + doc).c_str());
    }
  }

  for (const bool largest : {true, false}) {
    const char* name = largest ? "max" : "min";
    const std::string doc = fmt(kExtremeDoc, largest ? "max" : "min");
    constexpr const char* params =
        "x, /, dim=None, keepdim=None, *, axis=None, keepdims=False, other=None, out=None";
    for (const bool method : {false, true}) {
      auto fn = [largest, method](py::handle x, py::handle dim, py::handle keepdim, py::handle axis,
                                  py::handle keepdims, py::handle other, py::handle out) {
        return extreme_py(largest, method, x, dim, keepdim, axis, keepdims, other, out);
      };
      const std::string text = sig(name, method, method ? params + 3 : params) + doc;
      if (method)
        cls.def(name, fn, py::arg("dim") = py::none(), py::arg("keepdim") = py::none(),
                py::kw_only(), py::arg("axis") = py::none(), py::arg("keepdims") = py::none(),
                py::arg("other") = py::none(), py::arg("out") = py::none(), text.c_str());
      else
        m.def(name, fn, py::arg("x"), py::pos_only(), py::arg("dim") = py::none(),
              py::arg("keepdim") = py::none(), py::kw_only(), py::arg("axis") = py::none(),
              py::arg("keepdims") = py::none(), py::arg("other") = py::none(),
              py::arg("out") = py::none(), text.c_str());
      if (!method)
        def_keyword_twin(m, name, py::cpp_function(fn, py::name(name)),
                         x_then_nones({"dim", "keepdim", "axis", "keepdims", "other", "out"}), 1,
                         3);
    }
  }

  for (const bool is_std : {false, true}) {
    const char* name = is_std ? "std" : "var";
    const std::string doc = fmt(kMomentsDoc, is_std ? "standard deviation" : "variance");
    constexpr const char* params =
        "x, /, dim=None, unbiased=None, keepdim=None, *, axis=None, correction=None, "
        "keepdims=False, out=None";
    for (const bool method : {false, true}) {
      auto fn = [is_std, method](py::handle x, py::handle dim, py::handle unbiased,
                                 py::handle keepdim, py::handle axis, py::handle correction,
                                 py::handle keepdims, py::handle out) {
        return moments_py(is_std, method, x, dim, unbiased, keepdim, axis, correction, keepdims,
                          out);
      };
      const std::string text = sig(name, method, method ? params + 3 : params) + doc;
      if (method)
        cls.def(name, fn, py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
                py::arg("keepdim") = py::none(), py::kw_only(), py::arg("axis") = py::none(),
                py::arg("correction") = py::none(), py::arg("keepdims") = py::none(),
                py::arg("out") = py::none(), text.c_str());
      else
        m.def(name, fn, py::arg("x"), py::pos_only(), py::arg("dim") = py::none(),
              py::arg("unbiased") = py::none(), py::arg("keepdim") = py::none(), py::kw_only(),
              py::arg("axis") = py::none(), py::arg("correction") = py::none(),
              py::arg("keepdims") = py::none(), py::arg("out") = py::none(), text.c_str());
      if (!method)
        def_keyword_twin(
            m, name, py::cpp_function(fn, py::name(name)),
            x_then_nones({"dim", "unbiased", "keepdim", "axis", "correction", "keepdims", "out"}),
            1, 4);
    }
  }

  struct Scan {
    const char* name;
    bool is_sum;
    bool method;
    const char* doc;
  };
  constexpr const char* kSumScanDoc =
      "Running sums along axis (required unless x is 1-D; PyTorch's positional dim or dim=).\n"
      "With include_initial=True the result starts with 0 and is one longer along axis.\n"
      "Dtype rules as sum.";
  constexpr const char* kProdScanDoc =
      "Running products along axis (identity 1 first with include_initial=True).";
  const Scan scans[] = {{"cumulative_sum", true, false, kSumScanDoc},
                        {"cumulative_prod", false, false, kProdScanDoc},
                        {"cumsum", true, true, kSumScanDoc},
                        {"cumprod", false, true, kProdScanDoc}};
  constexpr const char* kScanParams =
      "x, /, dim=None, *, axis=None, dtype=None, include_initial=False, out=None";
  for (const Scan& s : scans) {
    const bool is_sum = s.is_sum;
    const char* name = s.name;
    auto fn = [is_sum, name](py::handle x, py::handle dim, py::handle axis, py::handle dtype,
                             bool include_initial, py::handle out) {
      return scan_py(is_sum, name, x, dim, axis, dtype, include_initial, out);
    };
    m.def(name, fn, py::arg("x"), py::pos_only(), py::arg("dim") = py::none(), py::kw_only(),
          py::arg("axis") = py::none(), py::arg("dtype") = py::none(),
          py::arg("include_initial") = false, py::arg("out") = py::none(),
          (sig(name, false, kScanParams) + s.doc).c_str());
    if (s.method)
      cls.def(name, fn, py::arg("dim") = py::none(), py::kw_only(), py::arg("axis") = py::none(),
              py::arg("dtype") = py::none(), py::arg("include_initial") = false,
              py::arg("out") = py::none(), (sig(name, true, kScanParams + 3) + s.doc).c_str());
  }

  for (const bool largest : {true, false}) {
    const char* name = largest ? "amax" : "amin";
    const std::string text =
        std::string(name) + "(input, dim=(), keepdim=False)\n--\n\n" +
        fmt("The {0} over dim (all dims when () or None); values only. The gradient is shared\n"
            "evenly by the tied extrema (PyTorch's rule).",
            largest ? "maximum" : "minimum");
    auto fn = [largest](py::handle x, py::handle dim, bool keepdim) {
      return amax_py(largest, x, dim, keepdim);
    };
    m.def(name, fn, py::arg("input"), py::arg("dim") = py::tuple(), py::arg("keepdim") = false,
          text.c_str());
    cls.def(name, fn, py::arg("dim") = py::tuple(), py::arg("keepdim") = false,
            (std::string(name) + "($self, dim=(), keepdim=False)\n--\n\n" +
             text.substr(text.find("--\n\n") + 4))
                .c_str());
  }
  for (const bool is_mean : {false, true}) {
    const char* name = is_mean ? "nanmean" : "nansum";
    const std::string doc = is_mean ? "Mean of the non-NaN elements over dim (NaN where there are "
                                      "none). Floating input only."
                                    : "Sum over dim treating NaN as 0.";
    auto fn = [is_mean](py::handle x, py::handle dim, bool keepdim, py::handle dtype) {
      return nan_reduce_py(is_mean, x, dim, keepdim, dtype);
    };
    m.def(name, fn, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
          py::kw_only(), py::arg("dtype") = py::none(),
          (std::string(name) + "(input, dim=None, keepdim=False, *, dtype=None)\n--\n\n" + doc)
              .c_str());
    cls.def(name, fn, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
            py::arg("dtype") = py::none(),
            (std::string(name) + "($self, dim=None, keepdim=False, *, dtype=None)\n--\n\n" + doc)
                .c_str());
  }
  {
    const char* doc = "(min, max) over dim (all elements when None), as a named tuple.";
    m.def("aminmax", &aminmax_py, py::arg("input"), py::kw_only(), py::arg("dim") = py::none(),
          py::arg("keepdim") = false,
          (std::string("aminmax(input, *, dim=None, keepdim=False)\n--\n\n") + doc).c_str());
    cls.def("aminmax", &aminmax_py, py::kw_only(), py::arg("dim") = py::none(),
            py::arg("keepdim") = false,
            (std::string("aminmax($self, *, dim=None, keepdim=False)\n--\n\n") + doc).c_str());
  }
  for (const bool ignore_nan : {false, true}) {
    const char* name = ignore_nan ? "nanmedian" : "median";
    const std::string doc =
        ignore_nan ? "median ignoring NaN (NaN only where a slice is all NaN)."
                   : "The lower median: of all elements when dim is None (values only; the\n"
                     "gradient shared by the elements equal to it), else the named tuple\n"
                     "(values, indices) along dim. NaN propagates.";
    auto fn = [ignore_nan](py::handle x, py::handle dim, bool keepdim) {
      return median_py(ignore_nan, x, dim, keepdim);
    };
    m.def(name, fn, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
          (std::string(name) + "(input, dim=None, keepdim=False)\n--\n\n" + doc).c_str());
    cls.def(name, fn, py::arg("dim") = py::none(), py::arg("keepdim") = false,
            (std::string(name) + "($self, dim=None, keepdim=False)\n--\n\n" + doc).c_str());
  }
  {
    const char* doc =
        "The named tuple (values, indices) of the k-th smallest element (k counts from 1)\n"
        "along dim.";
    auto fn = [](py::handle x, int64_t k, int64_t dim, bool keepdim) {
      return pair("kthvalue", kthvalue(input_tensor(x, "kthvalue"), k, dim, keepdim));
    };
    m.def("kthvalue", fn, py::arg("input"), py::arg("k"), py::arg("dim") = -1,
          py::arg("keepdim") = false,
          (std::string("kthvalue(input, k, dim=-1, keepdim=False)\n--\n\n") + doc).c_str());
    cls.def("kthvalue", fn, py::arg("k"), py::arg("dim") = -1, py::arg("keepdim") = false,
            (std::string("kthvalue($self, k, dim=-1, keepdim=False)\n--\n\n") + doc).c_str());
  }
  {
    const char* doc =
        "log(sum(exp(input))) over dim (all dims when None or ()), computed stably (shifted by\n"
        "the max); integer input gives float32.";
    m.def("logsumexp", &logsumexp_py, py::arg("input"), py::arg("dim") = py::none(),
          py::arg("keepdim") = false,
          (std::string("logsumexp(input, dim=None, keepdim=False)\n--\n\n") + doc).c_str());
  }
  for (const bool larger : {true, false}) {
    const char* name = larger ? "cummax" : "cummin";
    const std::string doc =
        std::string("The named tuple (values, indices) of the running ") +
        (larger ? "maximum" : "minimum") +
        " along dim: indices\nof the last occurrence of the extreme so far. NaN propagates.";
    m.def(
        name,
        [larger, name](py::handle x, int64_t dim) {
          const Tensor& t = input_tensor(x, name);
          return pair(name, larger ? cummax(t, dim) : cummin(t, dim));
        },
        py::arg("input"), py::arg("dim"),
        (std::string(name) + "(input, dim)\n--\n\n" + doc).c_str());
  }
  m.def(
      "mode",
      [](py::handle x, int64_t dim, bool keepdim) {
        return pair("mode", ts::mode(input_tensor(x, "mode"), dim, keepdim));
      },
      py::arg("input"), py::arg("dim") = -1, py::arg("keepdim") = false,
      "mode(input, dim=-1, keepdim=False)\n--\n\n"
      "The named tuple (values, indices): the most frequent value along dim (the smallest on\n"
      "ties) and the index of its last occurrence.");
  for (const bool ignore_nan : {false, true}) {
    const char* name = ignore_nan ? "nanquantile" : "quantile";
    const std::string doc =
        ignore_nan
            ? "quantile ignoring NaN (NaN only where a slice is all NaN)."
            : "The q-th quantiles (q a float or a 0-d / 1-D tensor of input's dtype, in [0, 1];\n"
              "a 1-D q adds a leading dim) along dim, of the flattened input when None.\n"
              "interpolation: 'linear', 'lower', 'higher', 'midpoint' or 'nearest'. NaN\n"
              "propagates. float32 / float64 input only.";
    m.def(
        name,
        [ignore_nan](py::handle x, py::handle q, py::handle dim, bool keepdim,
                     const std::string& interpolation) {
          return quantile_py(ignore_nan, x, q, dim, keepdim, interpolation);
        },
        py::arg("input"), py::arg("q"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
        py::kw_only(), py::arg("interpolation") = "linear",
        (std::string(name) +
         "(input, q, dim=None, keepdim=False, *, interpolation='linear')\n--\n\n" + doc)
            .c_str());
  }
  for (const bool is_std : {false, true}) {
    const char* name = is_std ? "std_mean" : "var_mean";
    const std::string doc =
        std::string("The tuple (") + (is_std ? "std" : "var") +
        ", mean) over dim (all dims when None), with PyTorch's\nrules: unbiased (correction=1) "
        "unless told otherwise; var_mean(input, unbiased) reads\nthe bool as unbiased.";
    m.def(
        name,
        [is_std](py::handle x, py::handle dim, py::handle unbiased, bool keepdim,
                 py::handle correction) {
          return moments_mean_py(is_std, x, dim, unbiased, keepdim, correction);
        },
        py::arg("input"), py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
        py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none(),
        (std::string(name) +
         "(input, dim=None, unbiased=None, keepdim=False, *, correction=None)\n--\n\n" + doc)
            .c_str());
  }
  m.def(
      "diff",
      [](py::handle x, int64_t n, py::handle dim, py::handle prepend, py::handle append,
         py::handle axis) {
        const py::handle ax = alias("diff", dim, axis);
        const Tensor& xt = input_tensor(x, "diff");
        Tensor pre, app;
        if (!prepend.is_none()) pre = operand_or_throw(prepend, "diff");
        if (!append.is_none()) app = operand_or_throw(append, "diff");
        return diff(xt, ax.is_none() ? -1 : to_dim(ax, "diff"), n, pre.defined() ? &pre : nullptr,
                    app.defined() ? &app : nullptr);
      },
      py::arg("input"), py::arg("n") = 1, py::arg("dim") = py::none(),
      py::arg("prepend") = py::none(), py::arg("append") = py::none(), py::kw_only(),
      py::arg("axis") = py::none(),
      "diff(input, n=1, dim=None, prepend=None, append=None, *, axis=None)\n--\n\n"
      "n-th forward difference input[i+1] - input[i] along dim (default -1; the standard's\n"
      "axis= is its alias), after joining prepend and append (tensors matching input outside\n"
      "dim, or scalars, which are weak: they take input's dtype kind) to input along it. The\n"
      "result is n shorter along dim; booleans give input[i+1] != input[i] (NumPy). n=0\n"
      "returns input unchanged (prepend/append ignored, like NumPy).");
  m.def(
      "logcumsumexp",
      [](py::handle x, int64_t dim) { return logcumsumexp(input_tensor(x, "logcumsumexp"), dim); },
      py::arg("input"), py::arg("dim"),
      "logcumsumexp(input, dim)\n--\n\n"
      "log(cumsum(exp(input))) along dim, computed stably (shifted by the max of each slice).");
  m.def(
      "msort", [](py::handle x) { return msort(input_tensor(x, "msort")); }, py::arg("input"),
      "msort(input)\n--\n\ninput sorted along dim 0 (values only).");
  m.def(
      "bucketize",
      [](py::handle x, py::handle boundaries, bool out_int32, bool right) {
        return bucketize(operand_or_throw(x, "bucketize"), input_tensor(boundaries, "bucketize"),
                         out_int32, right);
      },
      py::arg("input"), py::arg("boundaries"), py::kw_only(), py::arg("out_int32") = false,
      py::arg("right") = false,
      "bucketize(input, boundaries, *, out_int32=False, right=False)\n--\n\n"
      "The bucket index of each input value (a tensor or a number) among the sorted 1-D\n"
      "boundaries: with right=False the i such that boundaries[i-1] < x <= boundaries[i],\n"
      "with right=True boundaries[i-1] <= x < boundaries[i]. int64, or int32 with out_int32.");
  m.def(
      "bincount",
      [](py::handle x, py::handle weights, int64_t minlength) {
        const Tensor& t = input_tensor(x, "bincount");
        if (weights.is_none()) return bincount(t, nullptr, minlength);
        return bincount(t, &input_tensor(weights, "bincount"), minlength);
      },
      py::arg("input"), py::arg("weights") = py::none(), py::arg("minlength") = 0,
      "bincount(input, weights=None, minlength=0)\n--\n\n"
      "Counts of each value 0..max(input) (at least minlength of them) of a 1-D non-negative\n"
      "integer tensor: int64, or with weights (input's shape) their sums, in weights' dtype\n"
      "when float32/float64 (else float64).");
  m.def(
      "histc",
      [](py::handle x, int64_t bins, double min, double max) {
        return histc(input_tensor(x, "histc"), bins, min, max);
      },
      py::arg("input"), py::arg("bins") = 100, py::arg("min") = 0, py::arg("max") = 0,
      "histc(input, bins=100, min=0, max=0)\n--\n\n"
      "Histogram of bins equal-width bins over [min, max] (the data's range when both are\n"
      "equal); values outside are ignored. The result has input's (floating) dtype.");
  m.def(
      "cov",
      [](py::handle x, int64_t correction, py::handle fweights, py::handle aweights) {
        Tensor fw, aw;
        if (!fweights.is_none()) fw = input_tensor(fweights, "cov");
        if (!aweights.is_none()) aw = input_tensor(aweights, "cov");
        return cov(input_tensor(x, "cov"), correction, fw.defined() ? &fw : nullptr,
                   aw.defined() ? &aw : nullptr);
      },
      py::arg("input"), py::kw_only(), py::arg("correction") = 1, py::arg("fweights") = py::none(),
      py::arg("aweights") = py::none(),
      "cov(input, *, correction=1, fweights=None, aweights=None)\n--\n\n"
      "Covariance of the rows (variables) of a 1-D or 2-D input whose columns are\n"
      "observations (differentiable; fweights/aweights weight the observations).");
  m.def(
      "corrcoef", [](py::handle x) { return corrcoef(input_tensor(x, "corrcoef")); },
      py::arg("input"),
      "corrcoef(input)\n--\n\n"
      "Pearson correlation coefficients of the rows of input (clipped to [-1, 1]).");
  for (const bool cumulative : {false, true}) {
    const char* name = cumulative ? "cumulative_trapezoid" : "trapezoid";
    const std::string doc =
        std::string(name) + "(y, x=None, *, dx=None, dim=-1)\n--\n\n" +
        (cumulative ? "The running trapezoidal integral along dim (one fewer element than y "
                      "there)."
                    : "The trapezoidal rule along dim: with sample points x or constant "
                      "spacing dx\n(default 1); integers give a float result.");
    m.def(
        name,
        [cumulative](const Tensor& y, py::handle x, std::optional<double> dx, int64_t dim) {
          const char* op = cumulative ? "cumulative_trapezoid" : "trapezoid";
          Tensor xt;
          if (!x.is_none()) xt = operand_or_throw(x, op);
          const Tensor* xp = xt.defined() ? &xt : nullptr;
          return cumulative ? cumulative_trapezoid(y, xp, dx, dim) : trapezoid(y, xp, dx, dim);
        },
        py::arg("y"), py::arg("x") = py::none(), py::kw_only(), py::arg("dx") = py::none(),
        py::arg("dim") = -1, doc.c_str());
  }
  m.attr("trapz") = m.attr("trapezoid");  // torch's alias
  bind_functions_as_methods(
      m, {"cov", "corrcoef", "bincount", "histc", "logsumexp", "cummax", "cummin", "mode",
          "quantile", "nanquantile", "diff", "logcumsumexp", "msort"});
  def_with_dtype(m, "_sum", "sum", &sum);
  def_with_dtype(m, "_prod", "prod", &prod);
  def_axes(m, "_mean", "mean", &mean);
  def_var(m, "_var", "var", &var);
  def_var(m, "_std", "std", &ts::std);
  def_axes(m, "_max", "max", &max);
  def_axes(m, "_min", "min", &min);
  def_axes(m, "_all", "all", &all);
  def_axes(m, "_any", "any", &any);
  def_axes(m, "_count_nonzero", "count_nonzero", &count_nonzero);
  def_arg(m, "_argmax", "argmax", &argmax);
  def_arg(m, "_argmin", "argmin", &argmin);
  def_scan(m, "_cumulative_sum", "cumulative_sum", &cumulative_sum);
  def_scan(m, "_cumulative_prod", "cumulative_prod", &cumulative_prod);
  m.def("_return_type", &return_type, py::arg("name"),
        "_return_type(name)\n--\n\nThe named tuple class of torch.return_types.<name>.");
  // (where, with torch's one-argument form and keywords: bind_index_forms.cpp)
}

}  // namespace ts::python
