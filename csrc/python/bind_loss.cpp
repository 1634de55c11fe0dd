// Bindings of the losses (ops/nn/loss.h). tessera.nn.functional's loss functions are these
// entry points themselves (F.mse_loss is _C.mse_loss): PyTorch's signatures, readable by
// inspect.signature (Note [Readable signatures]), parsed here once -- the legacy
// size_average/reduce pair and the reduction string -- with the checks, autocast and autograd
// in the ops.
#include <pybind11/stl.h>

#include "core/error.h"
#include "ops/nn/loss.h"
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
}

}  // namespace ts::python
