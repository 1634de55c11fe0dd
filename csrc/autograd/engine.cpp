#include "autograd/engine.h"

#include <cmath>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"

namespace ts::autograd {

namespace {

struct NodeState {
  int dependencies = 0;
  variable_list buffer;  // gradients w.r.t. the node's forward outputs, summed as they arrive
  bool needed = true;    // on a path to something we want (a capture or a leaf to fill)
};

struct ReadyOrder {  // later-created nodes first, so a node runs after all its consumers
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
};

void accumulate(variable_list& buffer, size_t pos, const Tensor& g) {
  if (buffer.size() <= pos) buffer.resize(pos + 1);
  if (!g.defined()) return;
  buffer[pos] = buffer[pos].defined() ? add(buffer[pos], g) : g;
}

// Counts, for every node reachable from the roots, how many edges point at it.
void count_dependencies(const std::vector<Node*>& roots,
                        std::unordered_map<Node*, NodeState>& state, std::vector<Node*>& order) {
  // Roots may repeat (several outputs of one node): each node is walked once.
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  for (Node* r : roots)
    if (seen.insert(r).second) stack.push_back(r);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    state[n];
    for (const Edge& e : n->next_edges) {
      if (!e.valid()) continue;
      state[e.fn.get()].dependencies++;
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }
}

// A node is needed when it leads to a capture target (grad()) or to a leaf to fill.
void mark_needed(const std::vector<Node*>& order, std::unordered_map<Node*, NodeState>& state,
                 const std::unordered_set<Node*>& targets) {
  for (auto& kv : state) kv.second.needed = targets.count(kv.first) > 0;
  // `order` is a DFS pre-order; iterate to a fixed point (graphs are DAGs, so this ends).
  bool changed = true;
  while (changed) {
    changed = false;
    for (Node* n : order) {
      NodeState& s = state[n];
      if (s.needed) continue;
      for (const Edge& e : n->next_edges)
        if (e.valid() && state[e.fn.get()].needed) {
          s.needed = true;
          changed = true;
          break;
        }
    }
  }
}

// Like PyTorch's anomaly mode: NaN only (an inf gradient can be legitimate, e.g. sqrt at 0).
void check_finite(const Node& n, const variable_list& grads) {
  for (size_t k = 0; k < grads.size(); ++k) {
    const Tensor& g = grads[k];
    if (!g.defined() || !is_inexact(g.dtype())) continue;
    // Checked on the host: a device gradient is copied over first.
    const Tensor h = g.device().is_cpu() ? g : to_device(g, Device{}, false);
    Tensor c =
        contiguous(astype(h, is_complex(h.dtype()) ? DType::Complex128 : DType::Float64, false));
    const int64_t count = is_complex(g.dtype()) ? 2 * c.numel() : c.numel();
    const double* p = reinterpret_cast<const double*>(c.data_ptr());
    for (int64_t i = 0; i < count; ++i)
      if (std::isnan(p[i]))
        throw RuntimeError(str(
            "detect_anomaly: Function '", n.name(), "' returned nan values in its ", k, "th output",
            n.creation_site.empty() ? "" : "; the forward op was called at:\n", n.creation_site));
  }
}

void run_tensor_hooks(const std::vector<std::pair<uint32_t, std::shared_ptr<GradHook>>>& hooks,
                      variable_list& buffer) {
  for (auto& [nr, hook] : hooks) {
    if (nr >= buffer.size() || !buffer[nr].defined()) continue;
    Tensor r = (*hook)(buffer[nr]);
    if (r.defined()) buffer[nr] = r;
  }
}

void run_pre_hooks(Node& n, variable_list& buffer) {
  run_tensor_hooks(n.pre_hooks, buffer);
  run_tensor_hooks(n.retain_hooks, buffer);
  const auto node_hooks = n.node_pre_hooks;  // copied: a hook may remove itself
  for (const auto& hook : node_hooks) {
    variable_list r = (*hook)(buffer);
    if (!r.empty()) buffer = std::move(r);
  }
}

// The hooks registered on the leaf behind `n`, when n is a leaf's AccumulateGrad.
Tensor run_leaf_hooks(Node& n, Tensor g) {
  auto* acc = dynamic_cast<AccumulateGrad*>(&n);
  if (acc == nullptr) return g;
  const AutogradMeta* m = get_meta(acc->variable);
  if (m == nullptr) return g;
  const auto hooks = m->leaf_hooks;  // copied: a hook may remove itself
  for (const auto& hook : hooks) {
    Tensor r = (*hook)(g);
    if (r.defined()) g = r;
  }
  return g;
}

// Runs `n` and then its post hooks, which see the gradients it was given.
variable_list apply_with_post_hooks(Node& n, variable_list&& grads) {
  if (n.node_post_hooks.empty()) return n.apply(std::move(grads));
  const variable_list grad_outputs = grads;
  variable_list grad_inputs = n.apply(std::move(grads));
  grad_inputs.resize(n.next_edges.size());
  const auto hooks = n.node_post_hooks;
  for (const auto& hook : hooks) {
    variable_list r = (*hook)(grad_inputs, grad_outputs);
    if (!r.empty()) grad_inputs = std::move(r);
  }
  return grad_inputs;
}

}  // namespace

variable_list run_backward(const variable_list& roots, const variable_list& root_grads,
                           const variable_list& inputs, const BackwardOptions& opts) {
  GradModeGuard grad_mode(opts.create_graph);
  std::vector<Edge> root_edges;
  for (const Tensor& r : roots) {
    Edge e = gradient_edge(r);
    if (!e.valid())
      throw RuntimeError(
          "backward: element 0 of tensors does not require grad and does not have a grad_fn; "
          "hint: create the inputs with requires_grad=True (and not under no_grad())");
    root_edges.push_back(e);
  }
  std::vector<Node*> root_nodes;
  for (const Edge& e : root_edges) root_nodes.push_back(e.fn.get());

  std::unordered_map<Node*, NodeState> state;
  std::vector<Node*> order;
  count_dependencies(root_nodes, state, order);

  // Capture targets: (node, input_nr) of each requested input.
  std::vector<Edge> input_edges;
  std::unordered_set<Node*> targets;
  for (const Tensor& t : inputs) {
    Edge e = gradient_edge(t);
    if (!e.valid())
      throw RuntimeError(
          "grad: One of the differentiated Tensors does not require grad; hint: set "
          "requires_grad=True on it");
    input_edges.push_back(e);
    targets.insert(e.fn.get());
  }
  if (!inputs.empty()) mark_needed(order, state, targets);
  variable_list captured(inputs.size());

  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (size_t i = 0; i < root_edges.size(); ++i)
    accumulate(state[root_nodes[i]].buffer, root_edges[i].input_nr, root_grads[i]);
  for (Node* n : root_nodes)
    if (state[n].dependencies == 0) {
      state[n].dependencies = -1;  // queued once
      ready.push(n);
    }

  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    NodeState& s = state[n];
    variable_list grads = std::move(s.buffer);
    grads.resize(std::max(grads.size(), n->out_meta.size()));
    run_pre_hooks(*n, grads);
    for (size_t i = 0; i < input_edges.size(); ++i)
      if (input_edges[i].fn.get() == n) {
        const uint32_t nr = input_edges[i].input_nr;
        if (nr < grads.size() && grads[nr].defined()) {
          Tensor g = grads[nr];
          // backward() runs a leaf's hooks in its AccumulateGrad; grad() never runs leaves.
          if (!opts.accumulate) g = run_leaf_hooks(*n, g);
          captured[i] = captured[i].defined() ? add(captured[i], g) : g;
        }
      }
    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    // backward(): run every needed node. grad(): run a node only when it leads to a
    // target further up (targets themselves were captured above; leaves never run).
    bool execute = s.needed;
    if (!opts.accumulate) {
      execute = false;
      for (const Edge& e : n->next_edges)
        execute = execute || (e.valid() && state[e.fn.get()].needed);
    }
    variable_list outs;
    if (execute && any) {
      outs = apply_with_post_hooks(*n, std::move(grads));
      if (anomaly_enabled()) check_finite(*n, outs);
    }
    if (!opts.keep_graph) n->release_variables();
    for (size_t i = 0; i < n->next_edges.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.valid()) continue;
      NodeState& ns = state[e.fn.get()];
      if (i < outs.size()) accumulate(ns.buffer, e.input_nr, outs[i]);
      if (--ns.dependencies == 0) ready.push(e.fn.get());
    }
  }

  if (!opts.accumulate)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!captured[i].defined() && !opts.allow_unused)
        throw RuntimeError(str("grad: The differentiated Tensor at index ", i,
                               " appears to not have been used in the graph. Set "
                               "allow_unused=True if this is the desired behavior."));
  return captured;
}

}  // namespace ts::autograd
