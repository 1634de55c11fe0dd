// The autograd graph: a Node per recorded op, Edges to the nodes that produced its inputs,
// SavedTensors checked against the storage's version counter, and AccumulateGrad for leaves.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts::autograd {

struct Node;
using variable_list = std::vector<Tensor>;
// A hook sees a gradient and may return a replacement (an undefined Tensor keeps it).
using GradHook = std::function<Tensor(const Tensor&)>;
// Node hooks (grad_fn.register_prehook / register_hook) see all of a node's gradients; an
// empty result keeps them. A pre-hook gets the gradients w.r.t. the node's outputs; a post
// hook gets (gradients w.r.t. its inputs, w.r.t. its outputs) and may replace the first.
using NodePreHook = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using NodePostHook =
    std::function<std::vector<Tensor>(const std::vector<Tensor>&, const std::vector<Tensor>&)>;

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// What backward needs to know about a forward input to shape its gradient.
struct InputMeta {
  Shape shape;
  DType dtype = DType::Float32;
  Device device;
};

uint64_t next_sequence_nr();

struct Node : std::enable_shared_from_this<Node> {
  Node() : sequence_nr(next_sequence_nr()) {}
  // Frees the graph behind it iteratively (Note [Iterative graph teardown] in node.cpp).
  virtual ~Node();
  virtual std::string name() const = 0;
  // Gradients w.r.t. this node's forward outputs -> gradients w.r.t. its forward inputs.
  virtual variable_list apply(variable_list&& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  std::vector<Edge> next_edges;     // one per forward input (invalid: needs no grad)
  std::vector<InputMeta> out_meta;  // one per forward output (for zero-filling)
  std::vector<std::pair<uint32_t, std::shared_ptr<GradHook>>> pre_hooks;  // tensor hooks
  // retain_grad()'s hooks: run after every tensor hook, so .grad sees what they made of the
  // gradient (PyTorch's order, whatever order they were registered in).
  std::vector<std::pair<uint32_t, std::shared_ptr<GradHook>>> retain_hooks;
  std::vector<std::shared_ptr<NodePreHook>> node_pre_hooks;
  std::vector<std::shared_ptr<NodePostHook>> node_post_hooks;
  uint64_t sequence_nr;
  std::string creation_site;  // filled in anomaly mode: where the forward op ran
};

// saved_tensors_hooks (thread-local stack): while a pair is pushed, every tensor saved for
// backward is handed to `pack` and only the packed object is kept; `unpack` gives it back.
struct SavedTensorHooks {
  std::function<std::shared_ptr<void>(const Tensor&)> pack;
  std::function<Tensor(const std::shared_ptr<void>&)> unpack;
};
void push_saved_tensors_hooks(std::shared_ptr<const SavedTensorHooks> hooks);
void pop_saved_tensors_hooks();
// A non-empty message makes saving a tensor raise it (disable_saved_tensors_hooks).
void set_saved_tensors_hooks_disabled(const std::string& message);
const std::string& saved_tensors_hooks_disabled();

// A tensor saved for backward. Inputs are kept as they are; outputs are kept as a detached
// alias plus a weak reference to their node (no reference cycle), re-attached on unpack so
// double backward still sees their history. The version is checked on unpack.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t, bool is_output);
  Tensor unpack(const char* op, const std::shared_ptr<Node>& owner) const;
  void reset() {
    data_ = Tensor();
    packed_.reset();
    hooks_.reset();
    released_ = true;
  }
  bool defined() const { return data_.defined() || packed_ != nullptr; }
  // Before an in-place write into `a`: a saved input sharing a's storage is replaced by a
  // copy that keeps its history, so the write does not invalidate it (PyTorch's original_self).
  void preserve_if_aliases(const Tensor& a);
  bool released() const { return released_; }

 private:
  Tensor data_;
  std::shared_ptr<void> packed_;  // with saved_tensors_hooks: what pack returned (data_ unset)
  std::shared_ptr<const SavedTensorHooks> hooks_;
  uint64_t version_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
  uint32_t output_nr_ = 0;
};

// Sink for a leaf's gradient: runs the leaf's hooks and accumulates into .grad.
struct AccumulateGrad : Node {
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override;
  Tensor variable;
};

}  // namespace ts::autograd
