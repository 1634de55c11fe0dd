// Bindings of the fused optimizer steps (ops/optim_step.h); tessera/optim/{sgd,adam}.py call
// them once per param group.
#include <pybind11/stl.h>

#include "ops/foreach.h"
#include "ops/optim_step.h"
#include "python/convert.h"
#include "python/input_arg.h"

namespace ts::python {

namespace {

// ---- torch._foreach_* (Note [foreach lists]): PyTorch's ops over lists of tensors, public as
// tessera._foreach_add_ and so on (the EMA / Polyak updates of training scripts). Each applies
// the Tensor method of its name to every element, so argument forms, dtype rules, in-place
// checks and autograd are the single-tensor op's; the in-place forms return self's list, the
// others a tuple of results.
std::vector<py::object> tensor_list(py::handle h, const char* op, const char* what) {
  if (!py::isinstance<py::list>(h) && !py::isinstance<py::tuple>(h))
    throw py::type_error(str(op, "(): argument '", what,
                             "' must be a list or tuple of tensors, not ", type_name(h)));
  std::vector<py::object> out;
  for (py::handle x : h) {
    if (!py::isinstance<Tensor>(x))
      throw py::type_error(str(op, "(): argument '", what,
                               "' must be a list of tensors, got an element of type ",
                               type_name(x)));
    out.push_back(py::reinterpret_borrow<py::object>(x));
  }
  if (out.empty() && std::string(what) == "self")
    throw RuntimeError(str(op, ": Tensor list must have at least one tensor."));
  return out;
}

// The i-th operand: from a list or tuple (of tensors or numbers, one per tensor of self), else
// the one number or tensor given for all.
struct PerItem {
  py::object all;
  std::vector<py::object> items;
  py::object operator[](size_t i) const { return items.empty() ? all : items[i]; }
};

PerItem per_item(py::handle other, size_t n, const char* op) {
  PerItem p{py::reinterpret_borrow<py::object>(other), {}};
  if (!py::isinstance<py::list>(other) && !py::isinstance<py::tuple>(other)) return p;
  for (py::handle x : other) p.items.push_back(py::reinterpret_borrow<py::object>(x));
  if (p.items.size() != n) {
    const bool tensors = !p.items.empty() && py::isinstance<Tensor>(p.items[0]);
    throw RuntimeError(tensors ? str(op, ": Tensor lists must have the same number of tensors, "
                                     "got ", n, " and ", p.items.size())
                               : str(op, ": Tensor list must have same number of elements as "
                                     "scalar list (", n, " tensors, ", p.items.size(),
                                     " scalars)"));
  }
  if (p.items.empty()) p.items.push_back(p.all);  // n == 0: never read
  return p;
}

// A per-tensor scalar list given as a 1-D tensor (addcmul's `scalars`): its numbers.
PerItem scalar_items(py::handle value, size_t n, const char* op) {
  if (py::isinstance<Tensor>(value) && value.cast<const Tensor&>().ndim() == 1) {
    py::list nums = value.attr("tolist")();
    return per_item(nums, n, op);
  }
  return per_item(value, n, op);
}

py::object results(std::vector<py::object>& self, std::vector<py::object> out, bool inplace) {
  if (inplace) {
    py::list l;
    for (auto& x : self) l.append(x);
    return std::move(l);
  }
  py::tuple t(out.size());
  for (size_t i = 0; i < out.size(); ++i) t[i] = out[i];
  return std::move(t);
}

void def_foreach(py::module_& f) {
  std::vector<std::string> names;
  auto def = [&](const std::string& name, auto fn, auto... extra) {
    f.def(name.c_str(), fn, extra...);
    names.push_back(name);
  };
  // self (op) other: a list of tensors or numbers, or one number / tensor; add/sub take alpha=
  for (const char* base : {"add", "sub", "mul", "div", "pow", "clamp_min", "clamp_max"}) {
    for (const bool inplace : {false, true}) {
      const std::string name = std::string("_foreach_") + base + (inplace ? "_" : "");
      const std::string method = std::string(base) + (inplace ? "_" : "");
      def(name,
          [name, method, inplace](py::handle self, py::handle other, py::kwargs kw) {
            auto xs = tensor_list(self, name.c_str(), "self");
            const PerItem o = per_item(other, xs.size(), name.c_str());
            std::vector<py::object> out;
            for (size_t i = 0; i < xs.size(); ++i)
              out.push_back(xs[i].attr(method.c_str())(o[i], **kw));
            return results(xs, std::move(out), inplace);
          },
          py::arg("self"), py::arg("other"),
          "torch._foreach_<op>(self, other, *, alpha=1): the Tensor method on each tensor.");
    }
  }
  for (const char* base : {"sqrt", "rsqrt", "exp", "log", "log1p", "expm1", "neg", "abs",
                           "sign", "reciprocal", "sigmoid", "tanh", "sin", "cos", "floor",
                           "ceil", "round", "trunc", "frac", "erf", "zero"}) {
    for (const bool inplace : {false, true}) {
      if (std::string(base) == "zero" && !inplace) continue;
      const std::string name = std::string("_foreach_") + base + (inplace ? "_" : "");
      const std::string method = std::string(base) + (inplace ? "_" : "");
      def(name,
          [name, method, inplace](py::handle self) {
            auto xs = tensor_list(self, name.c_str(), "self");
            std::vector<py::object> out;
            for (auto& x : xs) out.push_back(x.attr(method.c_str())());
            return results(xs, std::move(out), inplace);
          },
          py::arg("self"), "torch._foreach_<op>(self): the Tensor method on each tensor.");
    }
  }
  for (const bool inplace : {false, true}) {
    const std::string lerp = inplace ? "_foreach_lerp_" : "_foreach_lerp";
    def(lerp,
        [lerp, inplace](py::handle self, py::handle ends, py::handle weight) {
          auto xs = tensor_list(self, lerp.c_str(), "self");
          auto es = tensor_list(ends, lerp.c_str(), "tensors1");
          const PerItem e = per_item(ends, xs.size(), lerp.c_str());
          const PerItem w = per_item(weight, xs.size(), lerp.c_str());
          std::vector<py::object> out;
          for (size_t i = 0; i < xs.size(); ++i)
            out.push_back(xs[i].attr(inplace ? "lerp_" : "lerp")(e[i], w[i]));
          return results(xs, std::move(out), inplace);
        },
        py::arg("self"), py::arg("tensors1"), py::arg("weight"),
        "torch._foreach_lerp(self, tensors1, weight): self[i].lerp(tensors1[i], weight) "
        "(weight a number, a list of them, or a list of tensors).");
    for (const char* base : {"addcmul", "addcdiv"}) {
      const std::string name = std::string("_foreach_") + base + (inplace ? "_" : "");
      const std::string method = std::string(base) + (inplace ? "_" : "");
      def(name,
          [name, method, inplace](py::handle self, py::handle t1, py::handle t2,
                                  py::handle value) {
            auto xs = tensor_list(self, name.c_str(), "self");
            tensor_list(t1, name.c_str(), "tensor1");
            tensor_list(t2, name.c_str(), "tensor2");
            const PerItem a = per_item(t1, xs.size(), name.c_str());
            const PerItem b = per_item(t2, xs.size(), name.c_str());
            const PerItem v = scalar_items(value, xs.size(), name.c_str());
            std::vector<py::object> out;
            for (size_t i = 0; i < xs.size(); ++i)
              out.push_back(xs[i].attr(method.c_str())(a[i], b[i], py::arg("value") = v[i]));
            return results(xs, std::move(out), inplace);
          },
          py::arg("self"), py::arg("tensor1"), py::arg("tensor2"), py::arg("value") = 1,
          "torch._foreach_addcmul / addcdiv(self, tensor1, tensor2, value=1): value a number, "
          "a list of them or a 1-D tensor of them.");
    }
  }
  def("_foreach_copy_",
      [](py::handle self, py::handle src, bool non_blocking) {
        auto xs = tensor_list(self, "_foreach_copy_", "self");
        tensor_list(src, "_foreach_copy_", "src");
        const PerItem s = per_item(src, xs.size(), "_foreach_copy_");
        for (size_t i = 0; i < xs.size(); ++i)
          xs[i].attr("copy_")(s[i], py::arg("non_blocking") = non_blocking);
        return results(xs, {}, true);
      },
      py::arg("self"), py::arg("src"), py::arg("non_blocking") = false,
      "torch._foreach_copy_(self, src, non_blocking=False): self[i].copy_(src[i]).");
  def("_foreach_norm",
      [](py::handle self, py::handle ord, py::handle dtype) {
        auto xs = tensor_list(self, "_foreach_norm", "self");
        std::vector<py::object> out;
        for (auto& x : xs) {
          py::object v = dtype.is_none() ? x : x.attr("to")(dtype);
          out.push_back(v.attr("norm")(ord));
        }
        return results(xs, std::move(out), false);
      },
      py::arg("self"), py::arg("ord") = 2, py::arg("dtype") = py::none(),
      "torch._foreach_norm(self, ord=2, dtype=None): each tensor's vector norm (0-d tensors).");
  py::list all;
  for (auto& n : names) all.append(n);
  f.attr("__all__") = all;
}

}  // namespace

void init_optim(py::module_& m) {
  py::module_ f = m.def_submodule("_foreach", "torch._foreach_* (public in tessera/__init__.py)");
  def_foreach(f);
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
