#include "autograd/node.h"

#include <atomic>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/memory_format.h"

namespace ts::autograd {

uint64_t next_sequence_nr() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

// Note [Iterative graph teardown]: a chain of n ops is n Nodes, each owning the next through
// next_edges, so letting shared_ptr free it recursively needs n nested destructor frames and
// overflows the C stack near 10^5 nodes. Like PyTorch's deleteNode, the outermost ~Node of a
// thread moves its edges' nodes onto a thread-local list and frees them one at a time; a ~Node
// that runs while that loop is active (a nested one) only adds its own edges to the list.
// Saved tensors of a node are freed before ~Node's body (derived members go first), but they
// hold the nodes their edges hold too, so that frees nothing deeper than one level.
namespace {
thread_local std::vector<std::shared_ptr<Node>>* t_teardown = nullptr;
}  // namespace

Node::~Node() {
  if (t_teardown) {
    for (Edge& e : next_edges)
      if (e.fn) t_teardown->push_back(std::move(e.fn));
    return;
  }
  std::vector<std::shared_ptr<Node>> pending;
  for (Edge& e : next_edges)
    if (e.fn) pending.push_back(std::move(e.fn));
  if (pending.empty()) return;
  t_teardown = &pending;
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    n.reset();  // may run ~Node, which appends to `pending`
  }
  t_teardown = nullptr;
}

namespace {
thread_local std::vector<std::shared_ptr<const SavedTensorHooks>> t_saved_hooks;
thread_local std::string t_saved_hooks_disabled;
}  // namespace

void push_saved_tensors_hooks(std::shared_ptr<const SavedTensorHooks> hooks) {
  if (!t_saved_hooks_disabled.empty()) throw RuntimeError(t_saved_hooks_disabled);
  t_saved_hooks.push_back(std::move(hooks));
}
void pop_saved_tensors_hooks() {
  if (!t_saved_hooks.empty()) t_saved_hooks.pop_back();
}
void set_saved_tensors_hooks_disabled(const std::string& message) {
  t_saved_hooks_disabled = message;
}
const std::string& saved_tensors_hooks_disabled() { return t_saved_hooks_disabled; }

SavedTensor::SavedTensor(const Tensor& t, bool is_output)
    : version_(t.version()), is_output_(is_output), requires_grad_(requires_grad(t)) {
  if (!t_saved_hooks.empty() && t.defined()) {
    // Like torch: the innermost pair packs; the unpacked tensor is not version-checked.
    hooks_ = t_saved_hooks.back();
    // Ops inside pack save tensors without hooks (else pack would recurse into itself).
    std::vector<std::shared_ptr<const SavedTensorHooks>> paused;
    paused.swap(t_saved_hooks);
    struct Restore {
      std::vector<std::shared_ptr<const SavedTensorHooks>>& p;
      ~Restore() { t_saved_hooks.swap(p); }
    } restore{paused};
    packed_ = hooks_->pack(is_output ? detach(t) : t);
    if (const AutogradMeta* m = get_meta(t)) output_nr_ = m->output_nr;
    return;
  }
  if (!is_output) {
    data_ = t;
    return;
  }
  data_ = detach(t);
  if (const AutogradMeta* m = get_meta(t)) output_nr_ = m->output_nr;
}

void SavedTensor::preserve_if_aliases(const Tensor& a) {
  if (!data_.defined() || is_output_ || data_.storage() != a.storage()) return;
  const Edge history = gradient_edge(data_);
  Tensor copy = clone(data_);
  if (history.valid()) set_history(copy, history.fn, history.input_nr);
  data_ = copy;
  version_ = copy.version();
}

Tensor SavedTensor::unpack(const char* op, const std::shared_ptr<Node>& owner) const {
  if (released_)
    throw RuntimeError(str(
        "backward: Trying to backward through the graph a second time (or directly access saved ",
        "tensors after they have already been freed); the saved values of ", op,
        " were released by the first backward. Hint: pass retain_graph=True to the first "
        "backward() or autograd.grad() call"));
  if (hooks_) {
    Tensor u = hooks_->unpack(packed_);
    if (!is_output_ || !requires_grad_ || !owner) return u;
    Tensor t = detach(u);
    set_history(t, owner, output_nr_);
    return t;
  }
  if (!data_.defined()) return data_;
  if (data_.version() != version_)
    throw RuntimeError(str(
        "backward: one of the variables needed for gradient computation has been modified by an ",
        "inplace operation (the gradient of ", op,
        "; it was modified by an in-place operation): a ", dtype_name(data_.dtype()),
        " tensor of shape ", shape_str(data_.shape()), " is at version ", data_.version(),
        "; expected version ", version_,
        ". Hint: use an out-of-place op or clone() the tensor before changing it"));
  if (is_output_ && requires_grad_ && owner) {
    // Re-attach the output to its node so double backward sees its history.
    Tensor t = detach(data_);
    set_history(t, owner, output_nr_);
    return t;
  }
  return data_;
}

namespace {

// Note [Gradient layout contract] (PyTorch's AccumulateGrad): a leaf whose strides are dense
// and non-overlapping (contiguous, channels-last, any permutation of a contiguous array) gets
// a .grad with its own strides, so a channels-last weight or input has a channels-last
// gradient (and the optimizers walk both as flat arrays, Note [Optimizer layouts]); any other
// leaf gets a contiguous .grad.
bool obeys_layout_contract(const Tensor& g, const Tensor& v) {
  if (!is_non_overlapping_and_dense(v)) return g.is_contiguous();
  if (!same_strides(g, v)) return false;
  for (int64_t d = 0; d < g.ndim(); ++d)
    if (g.dim(d) == 1 && g.strides()[d] == 0) return false;  // a broadcast view, not owned
  return true;
}

}  // namespace

AccumulateGrad::AccumulateGrad(Tensor v) : variable(std::move(v)) {
  out_meta.push_back({variable.shape(), variable.dtype(), variable.device()});
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = grads.empty() ? Tensor() : grads[0];
  AutogradMeta& m = ensure_meta(variable);
  for (const auto& hook : m.leaf_hooks) {
    if (!g.defined()) break;
    Tensor r = (*hook)(g);
    if (r.defined()) g = r;
  }
  if (!g.defined()) return {};
  if (!m.grad.defined()) {
    // Keep the incoming tensor when nobody else holds it and no graph is being built;
    // else store a copy so later in-place accumulation cannot change someone else's tensor.
    const bool stealable = !grad_enabled() && g.impl_ptr().use_count() <= 2 &&
                           g.storage().use_count() == 1 && obeys_layout_contract(g, variable);
    // With create_graph the stored .grad is a differentiable copy, never an alias of a
    // tensor that others hold (another leaf's .grad, the caller's grad_outputs).
    m.grad = grad_enabled() ? clone_op(g) : (stealable ? g : copy_in_layout_of(g, variable, true));
  } else if (grad_enabled() || requires_grad(m.grad)) {
    m.grad = add(m.grad, g);  // out of place: the sum joins the graph (create_graph=True)
  } else {
    binary_op_(kAdd, m.grad, g);  // in place, like PyTorch: views of .grad see the update
  }
  // Copied: a hook may remove itself (or register another) while running.
  const auto post_hooks = m.post_accumulate_hooks;
  for (const auto& hook : post_hooks) (*hook)(variable);
  return {};
}

}  // namespace ts::autograd
