// What ops call to record themselves (csrc/ops -> here); the formulas are in formulas.cpp.
// Every entry point is a no-op unless grad mode is on and an input requires grad, so ops
// call them unconditionally after computing their result.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "ops/elementwise.h"

namespace ts {
struct IndexItem;
struct AdvItem;
}  // namespace ts

namespace ts::autograd {

// Elementwise: `inputs` as the user passed them, `computed` cast to the compute dtype.
void record_elementwise(const ElementwiseDef& def, const std::vector<Tensor>& inputs,
                        const std::vector<Tensor>& computed, const Tensor& out);

// Reductions; `keep_shape` is the input's shape with reduced dims set to 1.
enum class ReduceKind { Sum, Mean, Prod, Var, Std, MaxMin };
void record_reduction(ReduceKind kind, const Tensor& x, const Tensor& out, const Shape& keep_shape,
                      double correction = 0, int64_t single_axis = -1);

// Views and shape functions.
void record_reshape(const Tensor& x, const Tensor& out);  // reshape, squeeze, expand_dims
void record_identity(const Tensor& x, const Tensor& out,
                     const char* name);  // broadcast_to, clone, astype
// view_as_real (to_real) / view_as_complex.
void record_view_as(const Tensor& x, const Tensor& out, bool to_real);
void record_permute(const Tensor& x, const Tensor& out, const Shape& axes);
void record_flip(const Tensor& x, const Tensor& out, const Shape& axes);
void record_slice(const Tensor& x, const Tensor& out, int64_t axis, int64_t start, int64_t stop,
                  int64_t step);
void record_select(const Tensor& x, const Tensor& out, int64_t axis, int64_t index);
void record_split(const Tensor& x, const std::vector<Tensor>& outs, int64_t axis);
void record_diagonal(const Tensor& x, const Tensor& out, int64_t offset, int64_t axis1,
                     int64_t axis2);
// Every view op that did not record `view` (source does not require grad): in grad mode,
// tags it with its root base, so that a later write of a value that requires grad into the
// view gives the base a history (Note [Writes into views]; PyTorch tags every view likewise).
void note_view(const Tensor& source, const Tensor& view);
void record_index_basic(const Tensor& x, const Tensor& out, const IndexItem* key, int64_t n);
// x[key] = value, after the write: x takes the history of the write.
void record_index_put(const Tensor& x, const Tensor& value, const IndexItem* key, int64_t n);

void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out);
void record_where(const Tensor& cond, const Tensor& x1, const Tensor& x2, const Tensor& out);
// clip(x, lo, hi) with PyTorch's clamp gradient (Note [clip gradient]); lo or hi may be
// undefined (no bound).
void record_clip(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out);
void record_concat(const std::vector<Tensor>& xs, const Tensor& out, int64_t axis);
void record_stack(const std::vector<Tensor>& xs, const Tensor& out, int64_t axis);
void record_cumsum(const Tensor& x, const Tensor& out, int64_t axis, bool include_initial);

// roll by `net` (one shift per axis), repeat by an int count, tril/triu; and a node that
// raises at backward for differentiable ops without a formula yet (never a silent zero).
void record_roll(const Tensor& x, const Tensor& out, const Shape& net);
void record_repeat(const Tensor& src, const Tensor& out, int64_t axis, int64_t repeats);
// repeat by per-element counts: `index` (int64, out's length along axis) says which input
// element each output position copies.
void record_repeat_counts(const Tensor& src, const Tensor& out, int64_t axis, const Tensor& index);
void record_cumprod(const Tensor& x, const Tensor& out, int64_t axis, bool include_initial);
void record_tri(const Tensor& x, const Tensor& out, int64_t k, bool upper);
// The three convolution ops (Note [Convolution as three ops] in ops/conv.h); `spec` is
// ConvSpec::encode(). Forward/Transpose inputs (x, w, b), Weight inputs (gy, x).
enum class ConvKind { Forward, Transpose, Weight };
void record_conv(ConvKind kind, const std::vector<Tensor>& inputs, const Tensor& out,
                 const Shape& spec);
// batch_norm: inputs (x, weight, bias) (either may be undefined); saves the contiguous x, the
// statistics the forward used and whether they were the batch's (Note in ops/batch_norm.h).
void record_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& out,
                       const Tensor& x_saved, const Tensor& mean, const Tensor& rstd,
                       bool batch_stats, double eps);
// Pooling (ops/pool.h): Max (input x, saves the int64 indices), Avg (input x), AvgBackward
// (input gy: the average's gradient, linear, whose own gradient is the average again).
enum class PoolKind { Max, Avg, AvgBackward };
void record_pool(PoolKind kind, const Tensor& input, const Tensor& out, const Tensor& idx,
                 const Shape& spec);
// max_unpool (input x, saves idx) and its adjoint gather (input gy, saves idx and the
// unpooled spatial shape in attrs); lp_pool (input x, saves x; attrs the spec, scalar p).
enum class UnpoolKind { Unpool, Gather };
void record_unpool(UnpoolKind kind, const Tensor& input, const Tensor& out, const Tensor& idx,
                   const Shape& out_sp);
void record_lp_pool(const Tensor& x, const Tensor& out, const Shape& spec, double p);
void record_missing(const char* node_name, const std::vector<Tensor>& inputs,
                    const std::vector<Tensor>& outputs);

// Advanced indexing and the gather/scatter/sort family (csrc/ops/indexing_advanced.h, sort.h).
void record_index_advanced(const Tensor& x, const Tensor& out, const std::vector<AdvItem>& key);
void record_index_put_advanced(const Tensor& x, const Tensor& value,
                               const std::vector<AdvItem>& key);
void record_gather(const Tensor& x, const Tensor& out, int64_t dim, const Tensor& index);
void record_scatter(const Tensor& x, const Tensor& src, const Tensor& out, int64_t dim,
                    const Tensor& index, bool add);
// sort/topk values: out = x gathered along dim at `indices`.
void record_take_along(const Tensor& x, const Tensor& out, int64_t dim, const Tensor& indices);

// LAPACK-backed linalg ops; `flag`: cholesky upper, solve's vector case, qr complete, svd
// full_matrices.
enum class LinalgOp { Cholesky, Det, Slogdet, Eigh, Inv, Solve, Svdvals, Qr, Svd };
void record_linalg(LinalgOp op, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& outputs, int64_t flag = 0);

// In-place ops (a op= b): raises for leaves that require grad and for views in the graph;
// `result` (out of place, already recorded) gives `a` its history after the copy.
void check_inplace(const Tensor& a, const char* op);
// x[...] = value: applies the in-place rules and says whether the write must be recorded.
bool begin_setitem(const Tensor& x, const Tensor& value);
void rebase_history(const Tensor& a, const Tensor& result, const char* op = "in-place op");

}  // namespace ts::autograd
