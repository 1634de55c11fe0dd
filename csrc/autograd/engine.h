// The backward engine: walks the graph from the roots in reverse creation order, sums the
// gradients arriving at each node, applies the node, and hands the results to the next ones.
#pragma once
#include <vector>

#include "autograd/node.h"

namespace ts::autograd {

struct BackwardOptions {
  bool keep_graph = false;    // retain_graph
  bool create_graph = false;  // record the backward pass itself (double backward)
  bool accumulate = true;     // backward(): into .grad; grad(): return the gradients instead
  bool allow_unused = false;
};

// roots[i] receives root_grads[i]. With accumulate=false, returns the gradients flowing into
// each of `inputs` (undefined when unused and allow_unused); .grad fields are left alone.
// With accumulate=true and non-empty `inputs`, only those leaves accumulate.
variable_list run_backward(const variable_list& roots, const variable_list& root_grads,
                           const variable_list& inputs, const BackwardOptions& opts);

}  // namespace ts::autograd
