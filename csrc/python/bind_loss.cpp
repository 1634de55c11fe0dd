// Bindings of the losses (ops/nn/loss.h). tessera.nn.functional's loss functions are these
// entry points themselves (F.mse_loss is _C.mse_loss): PyTorch's signatures, readable by
// inspect.signature (Note [Readable signatures]), parsed here once -- the legacy
// size_average/reduce pair and the reduction string -- with the checks, autocast and autograd
// in the ops.
#include <pybind11/stl.h>

#include "core/error.h"
#include "ops/copy.h"
#include "ops/nn/loss.h"
#include "ops/views.h"
#include "python/convert.h"

namespace ts::python {
namespace {

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

// PyTorch's deprecated size_average/reduce pair: when either is given it replaces `reduction`
// (torch's _Reduction.legacy_get_string, with its deprecation warning): reduce=False gives
// 'none', else size_average=False 'sum', else 'mean'.
// stacklevel: the warning's, counted from the Python frame that called into C++ (1).
std::string legacy_reduction(py::handle size_average, py::handle reduce,
                             const std::string& reduction, int stacklevel = 1) {
  if (size_average.is_none() && reduce.is_none()) return reduction;
  if (py::isinstance<py::str>(size_average) || py::isinstance<py::str>(reduce))
    // A mode string in a legacy slot: a call written for the old (reduction-first) order,
    // which torch would silently read as 'mean'.
    throw py::type_error("size_average and reduce take bools (deprecated), got " +
                         py::repr(size_average).cast<std::string>() + " and " +
                         py::repr(reduce).cast<std::string>() +
                         "; pass the mode as reduction=... (torch's argument order)");
  auto truth = [](py::handle h) {
    if (h.is_none()) return true;
    const int t = PyObject_IsTrue(h.ptr());
    if (t < 0) throw py::error_already_set();
    return t != 0;
  };
  const bool sa = truth(size_average), rd = truth(reduce);
  const std::string ret = sa && rd ? "mean" : rd ? "sum" : "none";
  const std::string msg =
      "size_average and reduce args will be deprecated, please use reduction='" + ret +
      "' instead.";
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), stacklevel) < 0) throw py::error_already_set();
  return ret;
}

// PyTorch's warning when a pointwise regression loss (mse, l1, smooth_l1, huber) gets a
// target whose shape differs from the input's: the op broadcasts them, which is rarely what
// was meant (a (N, 1) prediction against a (N,) target gives an (N, N) loss). Raised at the
// Python frame that called the loss, as torch's stacklevel=2 inside F.mse_loss.
void warn_target_size(const Tensor& input, const Tensor& target) {
  if (input.shape() == target.shape()) return;
  const std::string msg = "Using a target size " + shape_str(target.shape()) +
                          " that is different to the input size " + shape_str(input.shape()) +
                          ". This will likely lead to incorrect results due to broadcasting. "
                          "Please ensure they have the same size.";
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw py::error_already_set();
}

// The reduction of a loss: the legacy pair when either is given, else `reduction`, a string
// (anything else is not a valid value: ValueError, as torch's _Reduction.get_enum). kl_div
// alone also takes 'batchmean' (*batchmean set).
nn::Reduction reduction_of(py::handle size_average, py::handle reduce, py::handle reduction,
                           const char* op, bool* batchmean = nullptr) {
  if (!size_average.is_none() || !reduce.is_none())
    return nn::parse_reduction(legacy_reduction(size_average, reduce, "mean"), op);
  if (!py::isinstance<py::str>(reduction))
    throw ValueError(str(op, ": ", py::repr(reduction).cast<std::string>(),
                         " is not a valid value for reduction ('mean', 'sum' or 'none')"));
  const std::string r = reduction.cast<std::string>();
  if (batchmean && r == "batchmean") {
    *batchmean = true;
    return nn::Reduction::Sum;
  }
  return nn::parse_reduction(r, op);
}

// torch's top-level losses (torch.kl_div, ...) take the reduction as its enum: 0 'none',
// 1 'mean', 2 'sum'; a name is accepted too.
nn::Reduction enum_reduction(py::handle r, const char* op) {
  if (py::isinstance<py::str>(r)) return nn::parse_reduction(r.cast<std::string>(), op);
  if (!py::isinstance<py::bool_>(r) && PyIndex_Check(r.ptr())) {
    py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(r.ptr()));
    if (!idx) throw py::error_already_set();
    const int64_t v = py::cast<int64_t>(idx);
    if (v == 0) return nn::Reduction::None;
    if (v == 1) return nn::Reduction::Mean;
    if (v == 2) return nn::Reduction::Sum;
  }
  throw ValueError(str(op, ": ", py::repr(r).cast<std::string>(),
                       " is not a valid value for reduction (0 'none', 1 'mean', 2 'sum')"));
}

// gaussian_nll_loss's var: a tensor, or a float (input's shape).
Tensor variance_of(const Tensor& input, py::handle var) {
  if (py::isinstance<Tensor>(var)) return var.cast<Tensor>();
  TS_CHECK(!py::isinstance<py::bool_>(var) &&
               (py::isinstance<py::float_>(var) || py::isinstance<py::int_>(var)),
           TypeError, "gaussian_nll_loss(): argument 'var' must be Tensor or float, not ",
           Py_TYPE(var.ptr())->tp_name);
  const double v = var.cast<double>();
  TS_CHECK(v >= 0, ValueError, "gaussian_nll_loss: var has negative entry/entries (var = ", v, ")");
  return broadcast_to(
      to_device(scalar_tensor(Scalar::from_double(v), input.dtype()), input.device()),
      input.shape());
}

// ctc_loss's lengths in the int-list form: a list or tuple of ints (PyTorch's IntArrayRef; a
// bool, a float or a bare int is a TypeError there too).
std::vector<int64_t> int_list(py::handle h, const char* what) {
  TS_CHECK(py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h), TypeError,
           "ctc_loss: ", what, " must be a Tensor or a list/tuple of ints, got ",
           Py_TYPE(h.ptr())->tp_name);
  std::vector<int64_t> out;
  for (py::handle v : h) {
    TS_CHECK(!PyBool_Check(v.ptr()) && PyIndex_Check(v.ptr()), TypeError, "ctc_loss: ", what,
             " must be integers (a Tensor or a list/tuple of ints), got an element of type ",
             Py_TYPE(v.ptr())->tp_name);
    out.push_back(py::cast<int64_t>(v.attr("__index__")()));
  }
  return out;
}

// ctc_loss in either of PyTorch's forms: both lengths Tensors, or both int lists/tuples.
Tensor ctc_loss_of(const Tensor& log_probs, const Tensor& targets, py::handle input_lengths,
                   py::handle target_lengths, int64_t blank, nn::Reduction r, bool zero_infinity) {
  const bool ti = py::isinstance<Tensor>(input_lengths),
             tt = py::isinstance<Tensor>(target_lengths);
  if (ti && tt)
    return nn::ctc_loss(log_probs, targets, input_lengths.cast<Tensor>(),
                        target_lengths.cast<Tensor>(), blank, r, zero_infinity);
  TS_CHECK(!ti && !tt, TypeError,
           "ctc_loss: input_lengths and target_lengths must both be Tensors or both be "
           "lists/tuples of ints (PyTorch's two forms), got ",
           Py_TYPE(input_lengths.ptr())->tp_name, " and ", Py_TYPE(target_lengths.ptr())->tp_name);
  return nn::ctc_loss(log_probs, targets, int_list(input_lengths, "input_lengths"),
                      int_list(target_lengths, "target_lengths"), blank, r, zero_infinity);
}

}  // namespace

void init_loss(py::module_& m) {
  py::options text_signature;
  text_signature.disable_function_signatures();
  const py::object None = py::none();
  m.def(
      "cross_entropy",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         py::handle size_average, int64_t ignore_index, py::handle reduce,
         const std::string& reduction, double label_smoothing) {
        const std::string r = legacy_reduction(size_average, reduce, reduction);
        return nn::cross_entropy(input, target, opt(weight), ignore_index,
                                 nn::parse_reduction(r, "cross_entropy"), label_smoothing);
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("size_average") = py::none(), py::arg("ignore_index") = -100,
      py::arg("reduce") = py::none(), py::arg("reduction") = "mean",
      py::arg("label_smoothing") = 0.0,
      "cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, "
      "reduce=None, reduction='mean', label_smoothing=0.0)\n--\n\n"
      "log_softmax over dim 1 (dim 0 for unbatched (C,) input) + NLL with class indices\n"
      "(N, ...), or the cross entropy with class probabilities (input's shape) when target is\n"
      "floating; PyTorch's formulas for weight (C,), ignore_index and label_smoothing (the\n"
      "legacy size_average/reduce replace reduction, with PyTorch's warning). The C++ op\n"
      "csrc/ops/nn/loss.h: one fused kernel for class indices, gradients of every order.");
  m.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         py::handle size_average, int64_t ignore_index, py::handle reduce,
         const std::string& reduction) {
        const std::string r = legacy_reduction(size_average, reduce, reduction);
        return nn::nll_loss(input, target, opt(weight), ignore_index,
                            nn::parse_reduction(r, "nll_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("size_average") = py::none(), py::arg("ignore_index") = -100,
      py::arg("reduce") = py::none(), py::arg("reduction") = "mean",
      "nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, "
      "reduce=None, reduction='mean')\n--\n\n"
      "-input[n, target[n]] * weight[target[n]] over (N, C, ...) log-probabilities and (N, ...)\n"
      "class indices; 'mean' divides by the summed weights of the non-ignored targets (the C++\n"
      "op csrc/ops/nn/loss.h).");

  // PyTorch's deprecated pair for the losses still written in Python.
  m.def("_legacy_reduction", &legacy_reduction, py::arg("size_average"), py::arg("reduce"),
        py::arg("reduction"), py::arg("stacklevel") = 2,
        "the reduction PyTorch's deprecated size_average/reduce give (with its warning, "
        "stacklevel frames up from the Python caller)");
  for (bool l1 : {false, true})
    m.def(
        l1 ? "l1_loss" : "mse_loss",
        [l1](const Tensor& input, const Tensor& target, py::handle size_average, py::handle reduce,
             py::handle reduction, const std::optional<Tensor>& weight) {
          const char* op = l1 ? "l1_loss" : "mse_loss";
          warn_target_size(input, target);
          const nn::Reduction r = reduction_of(size_average, reduce, reduction, op);
          return l1 ? nn::l1_loss(input, target, r, opt(weight))
                    : nn::mse_loss(input, target, r, opt(weight));
        },
        py::arg("input"), py::arg("target"), py::arg("size_average") = None,
        py::arg("reduce") = None, py::arg("reduction") = "mean", py::arg("weight") = None,
        l1 ? "l1_loss(input, target, size_average=None, reduce=None, reduction='mean', "
             "weight=None)\n--\n\n"
             "|input - target| (broadcast), reduced by reduction ('mean', 'sum' or 'none'; the\n"
             "legacy size_average/reduce replace it, with PyTorch's warning). weight (input's\n"
             "shape) scales each element and 'mean' then divides by its sum (the C++ op\n"
             "csrc/ops/nn/loss.h)."
           : "mse_loss(input, target, size_average=None, reduce=None, reduction='mean', "
             "weight=None)\n--\n\n"
             "(input - target)^2 (broadcast), reduced by reduction ('mean', 'sum' or 'none';\n"
             "the legacy size_average/reduce replace it, with PyTorch's warning). weight\n"
             "(input's shape) scales each element and 'mean' then divides by its sum (the C++\n"
             "op csrc/ops/nn/loss.h).");
  m.def(
      "smooth_l1_loss",
      [](const Tensor& input, const Tensor& target, py::handle size_average, py::handle reduce,
         py::handle reduction, double beta) {
        warn_target_size(input, target);
        return nn::smooth_l1_loss(
            input, target, reduction_of(size_average, reduce, reduction, "smooth_l1_loss"), beta);
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = None, py::arg("reduce") = None,
      py::arg("reduction") = "mean", py::arg("beta") = 1.0,
      "smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', "
      "beta=1.0)\n--\n\n"
      "0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta, d = input - target (L1 when\n"
      "beta == 0; a negative beta is a ValueError), reduced by reduction (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "huber_loss",
      [](const Tensor& input, const Tensor& target, py::handle reduction, double delta,
         const std::optional<Tensor>& weight) {
        warn_target_size(input, target);
        return nn::huber_loss(input, target,
                              reduction_of(py::none(), py::none(), reduction, "huber_loss"), delta,
                              opt(weight));
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean", py::arg("delta") = 1.0,
      py::arg("weight") = None,
      "huber_loss(input, target, reduction='mean', delta=1.0, weight=None)\n--\n\n"
      "0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = input - target (delta > 0),\n"
      "reduced by reduction; weight (input's shape) scales each element, 'mean' still over the\n"
      "element count as in PyTorch (the C++ op csrc/ops/nn/loss.h).");
  m.def(
      "binary_cross_entropy",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         py::handle size_average, py::handle reduce, py::handle reduction) {
        return nn::binary_cross_entropy(
            input, target, opt(weight),
            reduction_of(size_average, reduce, reduction, "binary_cross_entropy"));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = None, py::arg("size_average") = None,
      py::arg("reduce") = None, py::arg("reduction") = "mean",
      "binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, "
      "reduction='mean')\n--\n\n"
      "-weight (y log p + (1 - y) log(1 - p)) for probabilities p = input and targets y of its\n"
      "shape, each log clamped at -100 as in PyTorch, with PyTorch's derivative (finite at\n"
      "p in {0, 1}); refused under CUDA autocast (the C++ op csrc/ops/nn/loss.h).");
  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         py::handle size_average, py::handle reduce, py::handle reduction,
         const std::optional<Tensor>& pos_weight) {
        return nn::binary_cross_entropy_with_logits(
            input, target, opt(weight),
            reduction_of(size_average, reduce, reduction, "binary_cross_entropy_with_logits"),
            opt(pos_weight));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = None, py::arg("size_average") = None,
      py::arg("reduce") = None, py::arg("reduction") = "mean", py::arg("pos_weight") = None,
      "binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, "
      "reduce=None, reduction='mean', pos_weight=None)\n--\n\n"
      "weight ((1 - y) x + (1 + (pos_weight - 1) y) log(1 + exp(-x))) for logits x = input and\n"
      "targets y of its shape, evaluated stably; weight and pos_weight broadcast (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "soft_margin_loss",
      [](const Tensor& input, const Tensor& target, py::handle size_average, py::handle reduce,
         py::handle reduction) {
        return nn::soft_margin_loss(
            input, target, reduction_of(size_average, reduce, reduction, "soft_margin_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = None, py::arg("reduce") = None,
      py::arg("reduction") = "mean",
      "soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean')\n--\n\n"
      "log(1 + exp(-target * input)) in input's shape (target broadcasts to it), reduced by\n"
      "reduction (the C++ op csrc/ops/nn/loss.h).");
  m.def(
      "margin_ranking_loss",
      [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
         py::handle size_average, py::handle reduce, py::handle reduction) {
        return nn::margin_ranking_loss(
            input1, input2, target, margin,
            reduction_of(size_average, reduce, reduction, "margin_ranking_loss"));
      },
      py::arg("input1"), py::arg("input2"), py::arg("target"), py::arg("margin") = 0.0,
      py::arg("size_average") = None, py::arg("reduce") = None, py::arg("reduction") = "mean",
      "margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, "
      "reduction='mean')\n--\n\n"
      "max(0, -target * (input1 - input2) + margin); the three tensors have one rank and\n"
      "broadcast (the C++ op csrc/ops/nn/loss.h).");
  m.def(
      "hinge_embedding_loss",
      [](const Tensor& input, const Tensor& target, double margin, py::handle size_average,
         py::handle reduce, py::handle reduction) {
        return nn::hinge_embedding_loss(
            input, target, margin,
            reduction_of(size_average, reduce, reduction, "hinge_embedding_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("margin") = 1.0, py::arg("size_average") = None,
      py::arg("reduce") = None, py::arg("reduction") = "mean",
      "hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, "
      "reduction='mean')\n--\n\n"
      "input where target == 1, max(0, margin - input) where target == -1 (both terms for\n"
      "other targets, as PyTorch computes it); input and target broadcast (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "kl_div",
      [](const Tensor& input, const Tensor& target, py::handle size_average, py::handle reduce,
         py::handle reduction, bool log_target) {
        bool batchmean = false;
        const nn::Reduction r = reduction_of(size_average, reduce, reduction, "kl_div", &batchmean);
        return nn::kl_div(input, target, r, batchmean, log_target);
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = None, py::arg("reduce") = None,
      py::arg("reduction") = "mean", py::arg("log_target") = false,
      "kl_div(input, target, size_average=None, reduce=None, reduction='mean', "
      "log_target=False)\n--\n\n"
      "target (log target - input) pointwise, input holding log-probabilities (target too when\n"
      "log_target); reduction 'batchmean' divides the sum by the batch size (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "poisson_nll_loss",
      [](const Tensor& input, const Tensor& target, bool log_input, bool full,
         py::handle size_average, double eps, py::handle reduce, py::handle reduction) {
        return nn::poisson_nll_loss(
            input, target, log_input, full, eps,
            reduction_of(size_average, reduce, reduction, "poisson_nll_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("log_input") = true, py::arg("full") = false,
      py::arg("size_average") = None, py::arg("eps") = 1e-8, py::arg("reduce") = None,
      py::arg("reduction") = "mean",
      "poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, "
      "eps=1e-08, reduce=None, reduction='mean')\n--\n\n"
      "exp(x) - y x (log_input) or x - y log(x + eps); full adds the Stirling term\n"
      "y log y - y + 0.5 log(2 pi y) where y > 1. Input and target broadcast (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "gaussian_nll_loss",
      [](const Tensor& input, const Tensor& target, py::handle var, bool full, double eps,
         py::handle reduction) {
        // torch's own wording for a bad name ("... is not valid")
        if (py::isinstance<py::str>(reduction)) {
          const std::string rs = reduction.cast<std::string>();
          TS_CHECK(rs == "none" || rs == "mean" || rs == "sum", ValueError,
                   "gaussian_nll_loss: ", rs,
                   " is not valid (reduction must be 'mean', 'sum' or 'none')");
        }
        const nn::Reduction r =
            reduction_of(py::none(), py::none(), reduction, "gaussian_nll_loss");
        return nn::gaussian_nll_loss(input, target, variance_of(input, var), full, eps, r);
      },
      py::arg("input"), py::arg("target"), py::arg("var"), py::arg("full") = false,
      py::arg("eps") = 1e-6, py::arg("reduction") = "mean",
      "gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction='mean')\n--\n\n"
      "0.5 (log max(var, eps) + (x - y)^2 / max(var, eps)) (+ 0.5 log 2 pi when full). var\n"
      "(>= 0) has input's shape, or lacks its last axis, or has size 1 on one axis, or is a\n"
      "float; the eps clamp passes gradients through unchanged, as PyTorch's (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "cosine_embedding_loss",
      [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
         py::handle size_average, py::handle reduce, py::handle reduction) {
        return nn::cosine_embedding_loss(
            input1, input2, target, margin,
            reduction_of(size_average, reduce, reduction, "cosine_embedding_loss"));
      },
      py::arg("input1"), py::arg("input2"), py::arg("target"), py::arg("margin") = 0.0,
      py::arg("size_average") = None, py::arg("reduce") = None, py::arg("reduction") = "mean",
      "cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, "
      "reduce=None, reduction='mean')\n--\n\n"
      "1 - cos(x1, x2) where target == 1, max(0, cos - margin) where target == -1, 0\n"
      "elsewhere; inputs (N, D) with target (N,), or (D,) with a 0-d target (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "multilabel_soft_margin_loss",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         py::handle size_average, py::handle reduce, py::handle reduction) {
        return nn::multilabel_soft_margin_loss(
            input, target, opt(weight),
            reduction_of(size_average, reduce, reduction, "multilabel_soft_margin_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = None, py::arg("size_average") = None,
      py::arg("reduce") = None, py::arg("reduction") = "mean",
      "multilabel_soft_margin_loss(input, target, weight=None, size_average=None, "
      "reduce=None, reduction='mean')\n--\n\n"
      "Per-class logistic loss -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) (times weight),\n"
      "averaged over the last (class) axis (the C++ op csrc/ops/nn/loss.h).");
  m.def(
      "multilabel_margin_loss",
      [](const Tensor& input, const Tensor& target, py::handle size_average, py::handle reduce,
         py::handle reduction) {
        return nn::multilabel_margin_loss(
            input, target, reduction_of(size_average, reduce, reduction, "multilabel_margin_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = None, py::arg("reduce") = None,
      py::arg("reduction") = "mean",
      "multilabel_margin_loss(input, target, size_average=None, reduce=None, "
      "reduction='mean')\n--\n\n"
      "Sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C;\n"
      "the integer target (input's shape, (N, C) or (C,)) lists each sample's classes, ended\n"
      "by the first -1 (the C++ op csrc/ops/nn/loss.h).");
  m.def(
      "multi_margin_loss",
      [](const Tensor& input, const Tensor& target, double p, double margin,
         const std::optional<Tensor>& weight, py::handle size_average, py::handle reduce,
         py::handle reduction) {
        return nn::multi_margin_loss(
            input, target, p, margin, opt(weight),
            reduction_of(size_average, reduce, reduction, "multi_margin_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("p") = 1, py::arg("margin") = 1.0,
      py::arg("weight") = None, py::arg("size_average") = None, py::arg("reduce") = None,
      py::arg("reduction") = "mean",
      "multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, "
      "reduce=None, reduction='mean')\n--\n\n"
      "Multi-class hinge: sum over i != y of w[y] max(0, margin - x[y] + x[i])^p / C, p in\n"
      "{1, 2}; input (N, C) with target (N,), or (C,) with a 0-d or (1,) target (the C++ op\n"
      "csrc/ops/nn/loss.h).");
  m.def(
      "triplet_margin_loss",
      [](const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
         double p, double eps, bool swap, py::handle size_average, py::handle reduce,
         py::handle reduction) {
        return nn::triplet_margin_loss(
            anchor, positive, negative, margin, p, eps, swap,
            reduction_of(size_average, reduce, reduction, "triplet_margin_loss"));
      },
      py::arg("anchor"), py::arg("positive"), py::arg("negative"), py::arg("margin") = 1.0,
      py::arg("p") = 2.0, py::arg("eps") = 1e-6, py::arg("swap") = false,
      py::arg("size_average") = None, py::arg("reduce") = None, py::arg("reduction") = "mean",
      "triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, "
      "size_average=None, reduce=None, reduction='mean')\n--\n\n"
      "max(0, margin + d(a, p) - d(a, n)), d the p-norm distance over the last axis\n"
      "(pairwise_distance, eps added to the difference); swap uses min(d(a, n), d(p, n))\n"
      "(the C++ op csrc/ops/nn/loss.h).");
  m.def(
      "pairwise_distance",
      [](const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
        return nn::pairwise_distance(x1, x2, p, eps, keepdim);
      },
      py::arg("x1"), py::arg("x2"), py::arg("p") = 2.0, py::arg("eps") = 1e-6,
      py::arg("keepdim") = false,
      "pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False)\n--\n\n"
      "The p-norm of x1 - x2 + eps over the last axis (broadcasting): (..., D) -> (...), as\n"
      "torch.nn.functional.pairwise_distance; the same op triplet_margin_loss uses.");
  m.def(
      "triplet_margin_with_distance_loss",
      [](const Tensor& anchor, const Tensor& positive, const Tensor& negative,
         py::handle distance_function, double margin, bool swap, py::handle reduction) {
        const char* op = "triplet_margin_with_distance_loss";
        const nn::Reduction r = reduction_of(py::none(), py::none(), reduction, op);
        TS_CHECK(margin > 0, ValueError, op, ": margin must be greater than 0, got ", margin);
        nn::check_triplet_ranks(anchor, positive, negative, op);
        auto dist = [&](const Tensor& a, const Tensor& b) {
          if (distance_function.is_none()) return nn::pairwise_distance(a, b, 2.0, 1e-6, false);
          py::object d = distance_function(a, b);
          TS_CHECK(py::isinstance<Tensor>(d), TypeError, op,
                   ": distance_function must return a Tensor, got ", Py_TYPE(d.ptr())->tp_name);
          return d.cast<Tensor>();
        };
        return nn::triplet_loss_from_distances(dist(anchor, positive), dist(anchor, negative),
                                               swap ? dist(positive, negative) : Tensor(), margin,
                                               r);
      },
      py::arg("anchor"), py::arg("positive"), py::arg("negative"), py::kw_only(),
      py::arg("distance_function") = None, py::arg("margin") = 1.0, py::arg("swap") = false,
      py::arg("reduction") = "mean",
      "triplet_margin_with_distance_loss(anchor, positive, negative, *, "
      "distance_function=None, margin=1.0, swap=False, reduction='mean')\n--\n\n"
      "The triplet loss max(0, margin + d(a, p) - d(a, n)) with any distance function\n"
      "(default: pairwise_distance); swap uses min(d(a, n), d(p, n)) (the C++ op\n"
      "csrc/ops/nn/loss.h).");

  m.def(
      "ctc_loss",
      [](const Tensor& log_probs, const Tensor& targets, py::handle input_lengths,
         py::handle target_lengths, int64_t blank, py::handle reduction, bool zero_infinity) {
        return ctc_loss_of(log_probs, targets, input_lengths, target_lengths, blank,
                           reduction_of(py::none(), py::none(), reduction, "ctc_loss"),
                           zero_infinity);
      },
      py::arg("log_probs"), py::arg("targets"), py::arg("input_lengths"), py::arg("target_lengths"),
      py::arg("blank") = 0, py::arg("reduction") = "mean", py::arg("zero_infinity") = false,
      "ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', "
      "zero_infinity=False)\n--\n\n"
      "Connectionist temporal classification loss: -log of the total probability of every\n"
      "alignment of each target (blanks around and between labels, repeats merged).\n"
      "log_probs (T, N, C) or unbatched (T, C): float32/float64 log-probabilities over C\n"
      "classes incl. blank; targets padded (N, S) or 1-D concatenated (sum(target_lengths));\n"
      "input_lengths/target_lengths (N,) as integer Tensors or lists/tuples of ints. 'mean'\n"
      "divides each loss by its target length (at least 1), then averages over the batch;\n"
      "zero_infinity zeroes the infinite losses of impossible alignments and their gradients.\n"
      "PyTorch's gradient (its double backward is not implemented, as in PyTorch). The C++ op\n"
      "csrc/ops/nn/loss_ctc.cpp; device tensors run the CPU kernel on host copies.");

  // torch's top-level losses (torch.kl_div, ...): the reduction as its enum (0 none, 1 mean,
  // 2 sum); ts.<name> is these (python/tessera/_nn_ops.py).
  py::module_ t =
      m.def_submodule("_torch_nn", "torch's top-level nn ops (python/tessera/_nn_ops.py)");
  t.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& pos_weight, py::handle reduction) {
        const char* op = "binary_cross_entropy_with_logits";
        return nn::binary_cross_entropy_with_logits(input, target, opt(weight),
                                                    enum_reduction(reduction, op), opt(pos_weight));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = None, py::arg("pos_weight") = None,
      py::arg("reduction") = 1,
      "binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, "
      "reduction=1)\n--\n\n"
      "torch.binary_cross_entropy_with_logits: F.binary_cross_entropy_with_logits with the\n"
      "reduction as torch's enum (0 none, 1 mean, 2 sum).");
  t.def(
      "kl_div",
      [](const Tensor& input, const Tensor& target, py::handle reduction, bool log_target) {
        return nn::kl_div(input, target, enum_reduction(reduction, "kl_div"), false, log_target);
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = 1, py::kw_only(),
      py::arg("log_target") = false,
      "kl_div(input, target, reduction=1, *, log_target=False)\n--\n\n"
      "torch.kl_div: F.kl_div with the reduction as torch's enum (0 none, 1 mean, 2 sum).");
  t.def(
      "margin_ranking_loss",
      [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
         py::handle reduction) {
        return nn::margin_ranking_loss(input1, input2, target, margin,
                                       enum_reduction(reduction, "margin_ranking_loss"));
      },
      py::arg("input1"), py::arg("input2"), py::arg("target"), py::arg("margin") = 0.0,
      py::arg("reduction") = 1,
      "margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1)\n--\n\n"
      "torch.margin_ranking_loss: F.margin_ranking_loss with the reduction as torch's enum.");
  t.def(
      "hinge_embedding_loss",
      [](const Tensor& input, const Tensor& target, double margin, py::handle reduction) {
        return nn::hinge_embedding_loss(input, target, margin,
                                        enum_reduction(reduction, "hinge_embedding_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("margin") = 1.0, py::arg("reduction") = 1,
      "hinge_embedding_loss(input, target, margin=1.0, reduction=1)\n--\n\n"
      "torch.hinge_embedding_loss: F.hinge_embedding_loss with the reduction as torch's enum.");
  t.def(
      "cosine_embedding_loss",
      [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
         py::handle reduction) {
        return nn::cosine_embedding_loss(input1, input2, target, margin,
                                         enum_reduction(reduction, "cosine_embedding_loss"));
      },
      py::arg("input1"), py::arg("input2"), py::arg("target"), py::arg("margin") = 0.0,
      py::arg("reduction") = 1,
      "cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1)\n--\n\n"
      "torch.cosine_embedding_loss: F.cosine_embedding_loss with the reduction as torch's enum.");
  t.def(
      "triplet_margin_loss",
      [](const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
         double p, double eps, bool swap, py::handle reduction) {
        return nn::triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                       enum_reduction(reduction, "triplet_margin_loss"));
      },
      py::arg("anchor"), py::arg("positive"), py::arg("negative"), py::arg("margin") = 1.0,
      py::arg("p") = 2.0, py::arg("eps") = 1e-6, py::arg("swap") = false, py::arg("reduction") = 1,
      "triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, "
      "reduction=1)\n--\n\n"
      "torch.triplet_margin_loss: F.triplet_margin_loss with the reduction as torch's enum.");
  t.def(
      "poisson_nll_loss",
      [](const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
         py::handle reduction) {
        return nn::poisson_nll_loss(input, target, log_input, full, eps,
                                    enum_reduction(reduction, "poisson_nll_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("log_input"), py::arg("full"), py::arg("eps"),
      py::arg("reduction"),
      "poisson_nll_loss(input, target, log_input, full, eps, reduction)\n--\n\n"
      "torch.poisson_nll_loss: F.poisson_nll_loss with every argument given and the reduction\n"
      "as torch's enum (0 none, 1 mean, 2 sum).");
  t.def(
      "ctc_loss",
      [](const Tensor& log_probs, const Tensor& targets, py::handle input_lengths,
         py::handle target_lengths, int64_t blank, py::handle reduction, bool zero_infinity) {
        return ctc_loss_of(log_probs, targets, input_lengths, target_lengths, blank,
                           enum_reduction(reduction, "ctc_loss"), zero_infinity);
      },
      py::arg("log_probs"), py::arg("targets"), py::arg("input_lengths"), py::arg("target_lengths"),
      py::arg("blank") = 0, py::arg("reduction") = 0, py::arg("zero_infinity") = false,
      "ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, "
      "zero_infinity=False)\n--\n\n"
      "torch.ctc_loss: F.ctc_loss with the reduction as torch's enum (0 none, 1 mean, 2 sum;\n"
      "torch 2.13's torch.ctc_loss reduces nothing when reduction is left out).");
}

}  // namespace ts::python
