// One step of PyTorch's recurrent cells (torch.lstm_cell, gru_cell, rnn_tanh_cell,
// rnn_relu_cell): compositions of recorded ops (linear, sigmoid, tanh, relu), whose formulas
// give the gradients of every order. input (B, in) or (in,), hidden (B, H) or (H,); w_ih
// (k H, in), w_hh (k H, H), biases (k H,) or undefined, k the number of gates.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace ts::nn {

// (h', c'): gates i, f, g, o; c' = sigmoid(f) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c').
std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& h, const Tensor& c,
                                    const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                    const Tensor& b_hh);
// h' with torch's gate order r, z, n: n = tanh(i_n + r (h_n)), h' = (1 - z) n + z h.
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh);
// tanh (or relu) of input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh.
Tensor rnn_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh, bool relu);

}  // namespace ts::nn
