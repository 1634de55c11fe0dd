#include "ops/nn/rnn_cell.h"

#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/nn/activation.h"
#include "ops/nn/activation_pointwise.h"
#include "ops/nn/linear.h"
#include "ops/views.h"

namespace ts::nn {

namespace {

// input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh split into k gates along the last axis.
std::vector<Tensor> gates(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                          const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, int64_t k,
                          const char* op, bool summed) {
  TS_CHECK(
      w_ih.ndim() == 2 && w_hh.ndim() == 2 && w_ih.dim(0) % k == 0 && w_hh.dim(0) == w_ih.dim(0),
      ValueError, op, ": expected weights w_ih (", k, "*hidden, input) and w_hh (", k,
      "*hidden, hidden), got shapes ", shape_str(w_ih.shape()), " and ", shape_str(w_hh.shape()));
  const Tensor gi = linear(input, w_ih, b_ih), gh = linear(hx, w_hh, b_hh);
  const int64_t h = w_ih.dim(0) / k;
  const Shape sizes(k, h);
  if (summed) return split_with_sizes(add(gi, gh), gi.ndim() - 1, sizes);
  std::vector<Tensor> out = split_with_sizes(gi, gi.ndim() - 1, sizes);
  for (Tensor& t : split_with_sizes(gh, gh.ndim() - 1, sizes)) out.push_back(t);
  return out;
}

Tensor tanh(const Tensor& x) { return unary_op(tanh_def, x); }

}  // namespace

std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& h, const Tensor& c,
                                    const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                    const Tensor& b_hh) {
  const std::vector<Tensor> g = gates(input, h, w_ih, w_hh, b_ih, b_hh, 4, "lstm_cell", true);
  const Tensor c_new = add(multiply(sigmoid(g[1]), c), multiply(sigmoid(g[0]), tanh(g[2])));
  return {multiply(sigmoid(g[3]), tanh(c_new)), c_new};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  const std::vector<Tensor> g = gates(input, hx, w_ih, w_hh, b_ih, b_hh, 3, "gru_cell", false);
  const Tensor r = sigmoid(add(g[0], g[3]));
  const Tensor z = sigmoid(add(g[1], g[4]));
  const Tensor n = tanh(add(g[2], multiply(r, g[5])));
  // (1 - z) n + z h = n + z (h - n)
  return add(n, multiply(z, subtract(hx, n)));
}

Tensor rnn_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh, bool relu) {
  const char* op = relu ? "rnn_relu_cell" : "rnn_tanh_cell";
  const Tensor s = gates(input, hx, w_ih, w_hh, b_ih, b_hh, 1, op, true)[0];
  return relu ? nn::relu(s) : tanh(s);
}

}  // namespace ts::nn
