// embedding_bag (PyTorch's F.embedding_bag): sums, means or maxima of bags of embedding rows,
// with PyTorch's offsets, per_sample_weights, include_last_offset and padding_idx rules.
#pragma once
#include <optional>
#include <string>

#include "core/tensor.h"

namespace ts::nn {

// (B, dim): the sum / mean / max of each bag's rows of weight (num, dim). Bags are the rows of
// a 2-D input, or the spans of a 1-D input that start at `offsets` (the last one ending at the
// end, or at offsets[-1] with include_last_offset). Empty bags give zeros; padding_idx entries
// are left out (and not counted by the mean). The bag layout is computed on the host from the
// indices (a synchronization for a device tensor); the values come from embedding_op (max_norm,
// scale_grad_by_freq) and device-agnostic recorded ops (index_select, where, sum/max), so the
// gradients are theirs: the weight's adds into the looked-up rows, per_sample_weights' are the
// rows' dot products with the output gradient.
Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const std::optional<Tensor>& offsets, std::optional<double> max_norm,
                     double norm_type, bool scale_grad_by_freq, const std::string& mode,
                     bool sparse, const std::optional<Tensor>& per_sample_weights,
                     bool include_last_offset, std::optional<int64_t> padding_idx);

}  // namespace ts::nn
