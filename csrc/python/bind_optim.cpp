// Bindings of the fused optimizer steps (ops/optim_step.h); tessera/optim/{sgd,adam}.py call
// them once per param group.
#include <pybind11/stl.h>

#include "ops/foreach.h"
#include "ops/optim_step.h"
#include "python/convert.h"

namespace ts::python {

void init_optim(py::module_& m) {
  m.def("_foreach_norm", &foreach_norm, py::arg("tensors"),
        "_foreach_norm(tensors) -> Tensor\n\nThe 2-norm of each tensor (float32/float64, one "
        "dtype and device) as a 1-D tensor: torch._foreach_norm(tensors, 2) stacked. Used by "
        "nn.utils.clip_grad_norm_; records no gradient.");
  m.def(
      "_sgd_step_",
      [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         const std::vector<std::optional<Tensor>>& bufs, double lr, double momentum,
         double dampening, double weight_decay, bool nesterov, bool maximize) {
        return sgd_step_(params, grads, bufs,
                         SgdHyper{lr, momentum, dampening, weight_decay, nesterov, maximize});
      },
      "SGD update of every param in place; returns the momentum buffers (created where None)");
  m.def(
      "_adam_step_",
      [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
         const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps, double lr,
         double beta1, double beta2, double eps, double weight_decay, bool amsgrad, bool maximize,
         bool decoupled) {
        adam_step_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                   AdamHyper{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled});
      },
      "Adam/AdamW update of every param and its moments in place; increments the steps");
}

}  // namespace ts::python
