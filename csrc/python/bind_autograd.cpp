// Autograd from Python: requires_grad/grad/grad_fn/hooks on Tensor, the engine entry points,
// grad mode, and the node behind tessera.autograd.Function.
#include "autograd/engine.h"
#include "autograd/view_writes.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "python/convert.h"
#include "python/input_arg.h"
#include "python/out_arg.h"
#include "python/py_node.h"

namespace ts::autograd {

variable_list PyFunctionNode::apply(variable_list&& grads) {
  py::gil_scoped_acquire g;
  py::tuple saved_t(saved.size());
  auto self = shared_from_this();
  for (size_t i = 0; i < saved.size(); ++i) {
    Tensor t = saved[i].unpack(node_name.c_str(), self);
    saved_t[i] = t.defined() ? py::cast(t) : py::none();
  }
  // Undefined gradients go to Python as None: ctx.set_materialize_grads decides there
  // whether backward sees zeros (the default) or None.
  py::tuple gs(out_meta.size());
  for (size_t i = 0; i < out_meta.size(); ++i)
    gs[i] = i < grads.size() && grads[i].defined() ? py::cast(grads[i]) : py::none();
  py::object r = backward->obj(ctx->obj, saved_t, *gs);
  py::tuple rt = py::isinstance<py::tuple>(r) ? r.cast<py::tuple>() : py::make_tuple(r);
  // As in PyTorch: one gradient per forward argument; extra trailing Nones are allowed.
  bool extra_grads = false;
  for (size_t i = next_edges.size(); i < rt.size(); ++i)
    extra_grads = extra_grads || !rt[i].is_none();
  if (rt.size() < next_edges.size() || extra_grads)
    throw RuntimeError(str("function ", name(),
                           " returned an incorrect number of gradients (expected ",
                           next_edges.size(), ", got ", rt.size(), ")"));
  variable_list out(next_edges.size());
  for (size_t i = 0; i < next_edges.size(); ++i) {
    if (rt[i].is_none()) continue;
    if (i < tensor_input.size() && !tensor_input[i])
      throw RuntimeError(str("function ", name(), " returned a gradient different than None at ",
                             "position ", i + 1, ", but the corresponding forward input was not ",
                             "a Tensor"));
    if (!next_edges[i].valid()) continue;
    if (!py::isinstance<Tensor>(rt[i]))
      throw TypeError(
          str(cls_name, ".backward must return tensors or None, got ",
              py::str(py::type::handle_of(rt[i]).attr("__name__")).cast<std::string>()));
    const Tensor gi = rt[i].cast<Tensor>();
    // As PyTorch: a gradient may be broadcast against its input (it is summed back to the
    // input's shape), any other shape is the Function's bug.
    if (gi.shape() != inputs[i].shape) {
      bool expandable = gi.ndim() >= static_cast<int64_t>(inputs[i].shape.size());
      const int64_t lead = gi.ndim() - static_cast<int64_t>(inputs[i].shape.size());
      for (int64_t d = 0; expandable && d < static_cast<int64_t>(inputs[i].shape.size()); ++d)
        expandable = inputs[i].shape[d] == 1 || inputs[i].shape[d] == gi.dim(lead + d);
      if (!expandable)
        throw RuntimeError(str("function ", name(), " returned an invalid gradient at index ", i,
                               " - got ", shape_str(gi.shape()),
                               " but expected shape compatible with ", shape_str(inputs[i].shape)));
    }
    out[i] = reduce_grad_to_input(gi, inputs[i]);
  }
  return out;
}

void PyFunctionNode::release_variables() {
  for (SavedTensor& s : saved) s.reset();
}

}  // namespace ts::autograd

namespace ts::python {

using namespace ts::autograd;

namespace {

std::shared_ptr<GradHook> make_hook(py::function fn) {
  auto ref = std::make_shared<PyRef>(std::move(fn));
  return std::make_shared<GradHook>([ref](const Tensor& g) -> Tensor {
    py::gil_scoped_acquire gil;
    py::object r = ref->obj(g);
    if (r.is_none()) return Tensor();
    return tensor_or_throw(r, "hook", "the value a tensor hook returns");
  });
}

variable_list tensors_of(const py::sequence& seq) {
  variable_list v;
  for (py::handle h : seq)
    v.push_back(h.is_none() ? Tensor() : tensor_or_throw(h, "autograd", "each entry"));
  return v;
}

// Removes `hook` from one of t's hook lists, if t is still alive (the handle holds no ref).
using HookList = std::vector<std::shared_ptr<GradHook>>;
std::function<void()> meta_hook_remover(const Tensor& t, HookList AutogradMeta::*list,
                                        std::shared_ptr<GradHook> hook) {
  std::weak_ptr<TensorImpl> weak = t.impl_ptr();
  return [weak, list, hook]() {
    auto impl = weak.lock();
    if (!impl || !impl->autograd) return;
    HookList& hs = (*impl->autograd).*list;
    for (auto it = hs.begin(); it != hs.end(); ++it)
      if (*it == hook) {
        hs.erase(it);
        break;
      }
  };
}

py::tuple tuple_of(const variable_list& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i].defined() ? py::cast(v[i]) : py::none();
  return t;
}

// A node hook's result: None keeps the gradients; else a sequence of `expected` tensors/None.
variable_list node_hook_result(const py::object& r, size_t expected, const std::string& what) {
  if (r.is_none()) return {};
  py::sequence seq = r.cast<py::sequence>();
  if (seq.size() != expected)
    throw RuntimeError(str(what, ": hook has returned an incorrect number of values (got ",
                           seq.size(), ", but expected ", expected, ")"));
  return tensors_of(seq);
}

// Removes `hook` from the node's list `hooks`, if the node is still alive.
template <class Hook>
py::cpp_function node_hook_remover(const std::shared_ptr<Node>& node,
                                   std::vector<std::shared_ptr<Hook>> Node::*hooks,
                                   std::shared_ptr<Hook> hook) {
  std::weak_ptr<Node> weak = node;
  return py::cpp_function([weak, hooks, hook]() {
    if (auto n = weak.lock()) {
      auto& hs = (*n).*hooks;
      for (auto it = hs.begin(); it != hs.end(); ++it)
        if (*it == hook) {
          hs.erase(it);
          break;
        }
    }
  });
}

py::object node_object(const std::shared_ptr<Node>& n) { return n ? py::cast(n) : py::none(); }

}  // namespace

void init_autograd(py::module_& m) {
  py::class_<Node, std::shared_ptr<Node>>(m, "Node",
                                          "A recorded op in the autograd graph (x.grad_fn).")
      .def("name", &Node::name)
      .def_property_readonly("next_functions",
                             [](const Node& n) {
                               py::tuple t(n.next_edges.size());
                               for (size_t i = 0; i < n.next_edges.size(); ++i)
                                 t[i] = py::make_tuple(node_object(n.next_edges[i].fn),
                                                       n.next_edges[i].input_nr);
                               return t;
                             })
      .def_property_readonly(
          "variable",
          [](const Node& n) -> py::object {
            if (auto* acc = dynamic_cast<const AccumulateGrad*>(&n)) return py::cast(acc->variable);
            throw py::attribute_error("variable: only AccumulateGrad nodes have a variable");
          })
      .def(
          "register_prehook",
          [](const std::shared_ptr<Node>& n, py::function fn) {
            auto ref = std::make_shared<PyRef>(std::move(fn));
            auto hook = std::make_shared<NodePreHook>([ref](const variable_list& gout) {
              py::gil_scoped_acquire gil;
              return node_hook_result(ref->obj(tuple_of(gout)), gout.size(), "register_prehook");
            });
            n->node_pre_hooks.push_back(hook);
            return node_hook_remover(n, &Node::node_pre_hooks, hook);
          },
          py::arg("fn"))
      .def(
          "register_hook",
          [](const std::shared_ptr<Node>& n, py::function fn) {
            auto ref = std::make_shared<PyRef>(std::move(fn));
            auto hook = std::make_shared<NodePostHook>(
                [ref](const variable_list& gin, const variable_list& gout) {
                  py::gil_scoped_acquire gil;
                  return node_hook_result(ref->obj(tuple_of(gin), tuple_of(gout)), gin.size(),
                                          "register_hook");
                });
            n->node_post_hooks.push_back(hook);
            return node_hook_remover(n, &Node::node_post_hooks, hook);
          },
          py::arg("fn"))
      .def("__repr__", [](const Node& n) { return "<" + n.name() + " object>"; });

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def_property(
         "requires_grad", [](const Tensor& t) { return requires_grad(t); },
         [](const Tensor& t, py::handle v) {
           set_requires_grad(t, bool_arg(v, "requires_grad", "requires_grad"));
         })
      .def(
          "requires_grad_",
          [](py::object self, bool v) {
            set_requires_grad(tensor_or_throw(self, "requires_grad_", "self"), v);
            return self;
          },
          py::arg("requires_grad") = true)
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            const AutogradMeta* mt = get_meta(t);
            return mt && mt->grad.defined() ? py::cast(mt->grad) : py::none();
          },
          [](const Tensor& t, py::object g) {
            if (g.is_none()) {
              if (AutogradMeta* mt = get_meta(t)) mt->grad = Tensor();
              return;
            }
            const Tensor& gt = tensor_or_throw(g, "grad", "the assigned gradient");
            TS_CHECK(gt.shape() == t.shape(), ValueError, "grad: assigned gradient of shape ",
                     shape_str(gt.shape()), " does not match the tensor's shape ",
                     shape_str(t.shape()));
            TS_CHECK(gt.dtype() == t.dtype(), TypeError, "grad: assigned gradient has dtype ",
                     dtype_name(gt.dtype()), " but the tensor is ", dtype_name(t.dtype()));
            ensure_meta(t).grad = gt;
          })
      .def_property_readonly("grad_fn", [](const Tensor& t) { return node_object(grad_fn(t)); })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return is_leaf(t); })
      .def_property_readonly("retains_grad",
                             [](const Tensor& t) {
                               const AutogradMeta* mt = get_meta(t);
                               return mt && mt->retains_grad;
                             })
      .def("retain_grad",
           [](const Tensor& t) {
             TS_CHECK(requires_grad(t), RuntimeError,
                      "retain_grad: can't retain_grad on Tensor that has requires_grad=False");
             if (is_leaf(t)) return;  // leaves keep .grad anyway
             AutogradMeta& mt = ensure_meta(t);
             if (mt.retains_grad) return;
             mt.retains_grad = true;
             std::weak_ptr<TensorImpl> weak = t.impl_ptr();
             auto hook = std::make_shared<GradHook>([weak](const Tensor& g) -> Tensor {
               if (auto impl = weak.lock()) {
                 AutogradMeta& m2 = ensure_meta(Tensor(impl));
                 m2.grad = m2.grad.defined() ? add(m2.grad, g) : clone(g);
               }
               return Tensor();
             });
             mt.retain_hook = hook;
             mt.grad_fn->retain_hooks.emplace_back(mt.output_nr, hook);
           })
      .def(
          "register_hook",
          [](const Tensor& t, py::function fn) {
            TS_CHECK(
                requires_grad(t), RuntimeError,
                "register_hook: cannot register a hook on a tensor that doesn't require gradient");
            auto hook = make_hook(std::move(fn));
            AutogradMeta& mt = ensure_meta(t);
            std::function<void()> remove;
            if (mt.grad_fn) {
              std::weak_ptr<Node> node = mt.grad_fn;
              mt.grad_fn->pre_hooks.emplace_back(mt.output_nr, hook);
              remove = [node, hook]() {
                if (auto n = node.lock())
                  for (auto it = n->pre_hooks.begin(); it != n->pre_hooks.end(); ++it)
                    if (it->second == hook) {
                      n->pre_hooks.erase(it);
                      break;
                    }
              };
            } else {
              mt.leaf_hooks.push_back(hook);
              remove = meta_hook_remover(t, &AutogradMeta::leaf_hooks, hook);
            }
            return py::cpp_function([remove]() { remove(); });
          },
          py::arg("hook"))
      .def(
          "register_post_accumulate_grad_hook",
          [](const Tensor& t, py::function fn) {
            TS_CHECK(requires_grad(t), RuntimeError,
                     "register_post_accumulate_grad_hook: cannot register a hook on a tensor that "
                     "doesn't require gradient");
            TS_CHECK(is_leaf(t), RuntimeError,
                     "register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
                     "registered on non-leaf tensors");
            auto hook = make_hook(std::move(fn));
            ensure_meta(t).post_accumulate_hooks.push_back(hook);
            return py::cpp_function(
                meta_hook_remover(t, &AutogradMeta::post_accumulate_hooks, hook));
          },
          py::arg("hook"))
      .def("detach", [](const Tensor& t) { return detach(t); })
      .def("detach_",
           [](py::object self) {
             const Tensor& t = tensor_or_throw(self, "detach_", "self");
             if (AutogradMeta* mt = get_meta(t)) {
               TS_CHECK(!mt->view_base.defined(), RuntimeError,
                        "detach_: Can't detach views in-place. Use detach() instead");
               mt->grad_fn.reset();
               mt->requires_grad = false;
             }
             return self;
           })
      // Identity of the TensorImpl: Python wrappers of one tensor (e.g. two reads of .grad)
      // share it, so the Python layer can hand back the same object as torch does.
      .def_property_readonly("_impl_id",
                             [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); })
      // torch's `t.data = src` (Variable::set_data): t keeps its identity and autograd state
      // but takes src's storage and geometry, so a Parameter converted by Module.to() stays the
      // object an optimizer holds.
      // (The callable size object cached in the instance dict, Note [callable size], describes
      // the old geometry: it is dropped.)
      .def("_set_data", [](py::handle self_obj, const Tensor& src) {
        const Tensor& self = tensor_or_throw(self_obj, "_set_data", "self");
        forget_geometry(self_obj);
        TS_CHECK(!src.is_wrapped_number(), TypeError, "_set_data: source must be a tensor");
        TensorImpl* dst = self.impl();
        const TensorImpl* s = src.impl();
        const bool same_meta = dst->shape == s->shape && dst->dtype == s->dtype &&
                               dst->storage->device == s->storage->device;
        dst->storage = s->storage;
        dst->shape = s->shape;
        dst->strides = s->strides;
        dst->offset = s->offset;
        dst->dtype = s->dtype;
        dst->is_view = false;
        dst->wrapped_number = false;
        dst->refresh();
        // An AccumulateGrad made for the old shape/dtype/device would check grads against it.
        if (AutogradMeta* mt = get_meta(self); mt && !same_meta) mt->grad_accumulator.reset();
      });

  m.def("is_grad_enabled", &grad_enabled);
  m.def("_set_grad_enabled", &set_grad_enabled);
  m.def(
      "_check_view_write",
      [](const Tensor& x, bool value_requires_grad, const std::string& op) {
        autograd::check_view_write(x, value_requires_grad, op.c_str());
      },
      "_check_view_write(x, value_requires_grad, op)\n\nRuntimeError naming op when writing "
      "into x, a view, cannot be recorded (a view of a leaf that requires grad, ...).");
  m.def("is_anomaly_enabled", &anomaly_enabled);
  m.def("_set_anomaly_enabled", &set_anomaly_enabled);

  m.def("_run_backward",
        [](py::sequence roots, py::sequence grads, py::sequence inputs, bool keep_graph,
           bool create_graph, bool accumulate, bool allow_unused) {
          variable_list r = tensors_of(roots), g = tensors_of(grads), in = tensors_of(inputs);
          BackwardOptions o{keep_graph, create_graph, accumulate, allow_unused};
          variable_list out;
          {
            py::gil_scoped_release release;
            out = run_backward(r, g, in, o);
          }
          py::list res;
          for (const Tensor& t : out) res.append(t.defined() ? py::cast(t) : py::none());
          return res;
        });

  // saved_tensors_hooks: pack(tensor) -> any object; unpack(object) -> tensor.
  m.def("_push_saved_tensors_hooks", [](py::function pack, py::function unpack) {
    auto pack_ref = std::make_shared<PyRef>(std::move(pack));
    auto unpack_ref = std::make_shared<PyRef>(std::move(unpack));
    auto hooks = std::make_shared<SavedTensorHooks>();
    hooks->pack = [pack_ref](const Tensor& t) -> std::shared_ptr<void> {
      py::gil_scoped_acquire gil;
      return std::make_shared<PyRef>(pack_ref->obj(t));
    };
    hooks->unpack = [unpack_ref](const std::shared_ptr<void>& packed) -> Tensor {
      py::gil_scoped_acquire gil;
      py::object r = unpack_ref->obj(static_cast<PyRef*>(packed.get())->obj);
      if (!py::isinstance<Tensor>(r))
        throw TypeError(
            str("saved_tensors_hooks: Output of saved tensor unpack_hook expected to be a "
                "Tensor but got result of type ",
                py::str(py::type::handle_of(r).attr("__name__")).cast<std::string>()));
      return r.cast<Tensor>();
    };
    push_saved_tensors_hooks(std::move(hooks));
  });
  m.def("_pop_saved_tensors_hooks", &pop_saved_tensors_hooks);
  m.def("_set_saved_tensors_hooks_disabled", &set_saved_tensors_hooks_disabled);
  m.def("_saved_tensors_hooks_disabled", &saved_tensors_hooks_disabled);

  m.def("_make_function_node",
        [](const std::string& name, const std::string& node_name, py::object backward,
           py::object ctx, py::sequence inputs, py::sequence outputs, py::sequence to_save,
           py::sequence non_differentiable) {
          auto node = std::make_shared<PyFunctionNode>();
          node->cls_name = name;
          node->node_name = node_name;
          node->backward = std::make_shared<PyRef>(backward);
          node->ctx = std::make_shared<PyRef>(ctx);
          for (py::handle h : inputs) {
            node->tensor_input.push_back(!h.is_none());
            if (h.is_none()) {
              node->next_edges.push_back({});
              node->inputs.push_back({});
              continue;
            }
            const Tensor& t = tensor_or_throw(h, "Function.apply", "each tensor input");
            node->next_edges.push_back(gradient_edge(t));
            node->inputs.push_back({t.shape(), t.dtype(), t.device()});
          }
          std::vector<const TensorImpl*> outs;
          uint32_t nr = 0;
          for (py::handle h : outputs) {
            const Tensor& t = tensor_or_throw(h, "Function.forward", "each output");
            node->out_meta.push_back({t.shape(), t.dtype(), t.device()});
            bool nondiff = false;
            for (py::handle nd : non_differentiable) nondiff = nondiff || nd.is(h);
            if (!nondiff && is_inexact(t.dtype())) set_history(t, node, nr);
            outs.push_back(t.impl());
            ++nr;
          }
          for (py::handle h : to_save) {
            if (h.is_none()) {
              node->saved.emplace_back();
              continue;
            }
            const Tensor& t = tensor_or_throw(h, "save_for_backward", "each saved value");
            bool is_out = false;
            for (const TensorImpl* o : outs) is_out = is_out || o == t.impl();
            node->saved.emplace_back(t, is_out);
          }
          return std::static_pointer_cast<Node>(node);
        });
}

}  // namespace ts::python
