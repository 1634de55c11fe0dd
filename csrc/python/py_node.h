// A node whose backward is Python code (tessera.autograd.Function subclasses).
#pragma once
#include <pybind11/pybind11.h>

#include "autograd/function.h"

namespace ts::autograd {

// Holds a Python object and drops it under the GIL (nodes die on any thread).
struct PyRef {
  explicit PyRef(pybind11::object o) : obj(std::move(o)) {}
  ~PyRef() {
    pybind11::gil_scoped_acquire g;
    obj = pybind11::object();
  }
  pybind11::object obj;
};

struct PyFunctionNode : Node {
  std::string cls_name;             // the Function subclass
  std::string node_name;            // what name() reports (torch: "<cls>Backward")
  std::shared_ptr<PyRef> backward;  // callable(ctx, saved_tuple, *grads) -> tuple of grads
  std::shared_ptr<PyRef> ctx;
  std::vector<SavedTensor> saved;
  std::vector<InputMeta> inputs;
  std::vector<bool> tensor_input;  // per forward argument: was it a tensor
  bool released = false;

  std::string name() const override { return node_name; }
  variable_list apply(variable_list&& grads) override;
  void release_variables() override;
};

}  // namespace ts::autograd
