// Note [cuDNN attention]: float16/bfloat16 flash attention on CUDA through cuDNN 9's fused SDPA
// (flash forward and backward: wgmma kernels on Hopper), built with the cuDNN frontend's graph
// API. Like the convolutions (Note [cuDNN at run time] in cuda/cudnn_conv.cpp) there is no
// link-time dependency: this file is compiled against the frontend headers (the
// nvidia-cudnn-frontend wheel's include/, header-only C++) with
// NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING, so every cuDNN call goes through
// dlsym(cudnn_frontend::cudnn_dlhandle, ...), the handle being the libcudnn_graph.so.9 that the
// convolutions' loader opened (the graph API lives there; it loads its engine libraries, and
// NVRTC for the runtime-compiled ones, by itself). The frontend dlopens the CUDA runtime by
// name; CUDNN_FRONTEND_CUDART_LIB_NAME is set (unless the user set it) to the soname tessera
// links, so it finds that one loaded. Without the headers every entry point answers "not
// handled".
//
// One graph per problem and direction (dtype, shapes, strides, causal, dropout probability,
// scale, device, deterministic), cached per thread as PyTorch caches its plans: the forward
// computes O and the softmax statistics (Stats = the natural-log logsumexp of the scaled
// scores, exactly tessera's lse, so a forward and a backward without dropout may come from
// different paths); the backward takes Q, K, V, O, dO, Stats. A problem cuDNN rejects (head
// dims off multiples of 8, alignment, no engine, ...) is cached as such and tessera's kernels
// run. Causal is cuDNN's top-left diagonal alignment (PyTorch's is_causal). Workspaces come from
// the caching allocator, the stream is the device's current one (cudnnSetStream).
//
// Note [cuDNN attention dropout]: cuDNN draws its own Philox mask from a seed and offset in
// device memory, a different mask from tessera's kernels' (Note [Attention dropout]). The seed
// is derived on the device from the generator's (seed, offset) pair (cudnn_attention_rng.cu:
// graph-safe, reproducible under ts.manual_seed, a distinct Philox key per call), and the
// backward must run on cuDNN exactly when the forward did: a forward with dropout takes cuDNN
// only when both directions' graphs build, and records its lse's storage (weakly, with the
// seed, offset and probability); the backward with dropout follows that record, not the
// switches of the moment. The composite (create_graph) backward cannot rebuild cuDNN's mask
// and says so (cudnn_attention().from_cudnn_dropout).
#include "cuda/cudnn_attention.h"

#if defined(TESSERA_CUDNN_FRONTEND) && __has_include(<cudnn_frontend.h>) && __has_include(<cudnn.h>)
#define TS_HAVE_CUDNN_FE 1
#else
#define TS_HAVE_CUDNN_FE 0
#endif

#if TS_HAVE_CUDNN_FE
#define NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING 1
#define CUDNN_FRONTEND_SKIP_JSON_LIB 1
#include <cudnn_frontend.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/cudnn_conv.h"
#include "ops/conv.h"
#include "ops/copy.h"

// The frontend's dlsym target (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING): set from the loader.
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend
#endif

namespace ts::cuda {

#if !TS_HAVE_CUDNN_FE

bool cudnn_sdpa_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        double, bool, const AttentionDropout&) {
  return false;
}
bool cudnn_sdpa_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         const Tensor&, double, bool, const AttentionDropout&) {
  return false;
}

namespace {
std::string no_frontend() { return "this build has no cuDNN frontend headers"; }
struct Register {
  Register() { cudnn_attention().status = &no_frontend; }
} register_status;
}  // namespace

#else

namespace {

namespace fe = cudnn_frontend;
using Graph = fe::graph::Graph;
using TensorAttr = fe::graph::Tensor_attributes;

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV, kSeed, kOffset };
enum Kind : int64_t { kForward = 0, kBackward = 1 };

// Why the calling thread's last problem went to tessera's kernels ("" when cuDNN took it).
std::string& last_status() {
  thread_local std::string s;
  return s;
}
std::string status() { return last_status(); }

bool decline(const std::string& why) {
  last_status() = why;
  return false;
}

// ---- the library: the convolutions' loader, once
bool frontend_ready() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    void* lib = cudnn_library();
    if (!lib) return;
    fe::cudnn_dlhandle = lib;
    const std::string cudart = "libcudart.so." + std::to_string(CUDART_VERSION / 1000);
    setenv("CUDNN_FRONTEND_CUDART_LIB_NAME", cudart.c_str(), 0);  // the user's choice stays
    ok = true;
  });
  return ok;
}

// ---- the problem
struct Problem {
  Kind kind;
  DType dtype;
  int dev;
  int64_t B, H, L, S, E, Ev;
  // Strides, 4 each; dO, dq, dk, dv for the backward only.
  std::vector<int64_t> q, k, v, o, dO, dq, dk, dv;
  bool causal;
  uint64_t threshold;
  float scale;
  bool deterministic;
};

// (B, H, R, C) strides as cuDNN takes them: a size-1 dim gets the stride it would have packed
// (any value is valid there, and cuDNN infers the layout from the strides), so that equal
// layouts give equal cache keys.
std::vector<int64_t> unit_dims_fixed(const int64_t* dims, std::vector<int64_t> s) {
  for (int d = 2; d >= 0; --d)
    if (dims[d] == 1) s[d] = s[d + 1] * std::max<int64_t>(dims[d + 1], 1);
  return s;
}

std::vector<int64_t> strides_of(const Tensor& t) {
  const int64_t dims[4] = {t.dim(0), t.dim(1), t.dim(2), t.dim(3)};
  return unit_dims_fixed(dims, std::vector<int64_t>(t.strides().begin(), t.strides().end()));
}

// Packed strides of t's shape with t's order of strides (outermost first): the layout dO is
// given, which is O's own where O is dense (as the op allocates it).
std::vector<int64_t> dense_strides(const Tensor& t) {
  const std::vector<int64_t> s = strides_of(t);
  const int64_t dims[4] = {t.dim(0), t.dim(1), t.dim(2), t.dim(3)};
  int order[4] = {0, 1, 2, 3};
  std::stable_sort(order, order + 4, [&](int a, int b) { return s[a] > s[b]; });
  std::vector<int64_t> out(4);
  int64_t packed = 1;
  for (int i = 3; i >= 0; --i) {
    out[order[i]] = packed;
    packed *= std::max<int64_t>(dims[order[i]], 1);
  }
  return unit_dims_fixed(dims, out);
}

// The strides ops/attention.cpp's kernel_output gives a (B, H, R, C) gradient: (B, R, H, C)
// memory.
std::vector<int64_t> grad_strides(int64_t B, int64_t H, int64_t R, int64_t C) {
  const int64_t dims[4] = {B, H, R, C};
  return unit_dims_fixed(dims, {R * H * C, C, H * C, 1});
}

std::vector<int64_t> key_of(const Problem& p) {
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &p.scale, sizeof scale_bits);
  std::vector<int64_t> key{p.kind, static_cast<int64_t>(p.dtype), p.dev, p.B, p.H, p.L, p.S,
                           p.E, p.Ev, p.causal, static_cast<int64_t>(p.threshold),
                           static_cast<int64_t>(scale_bits), p.deterministic};
  for (const auto* s : {&p.q, &p.k, &p.v, &p.o, &p.dO, &p.dq, &p.dk, &p.dv})
    key.insert(key.end(), s->begin(), s->end());
  return key;
}

double dropout_p(uint64_t threshold) { return std::ldexp(static_cast<double>(threshold), -32); }

struct Entry {
  std::shared_ptr<Graph> graph;  // null: cuDNN does not take this problem
  int64_t workspace = 0;
  std::string why;  // why not, for status()
};

std::shared_ptr<TensorAttr> io(Graph& g, const char* name, Uid uid, int64_t B, int64_t H,
                               int64_t R, int64_t C, const std::vector<int64_t>& strides) {
  return g.tensor(TensorAttr().set_name(name).set_uid(uid).set_dim({B, H, R, C}).set_stride(
      strides));
}

void set_out(const std::shared_ptr<TensorAttr>& t, Uid uid, int64_t B, int64_t H, int64_t R,
             int64_t C, const std::vector<int64_t>& strides) {
  t->set_output(true).set_uid(uid).set_dim({B, H, R, C}).set_stride(strides);
}

std::string failed(const char* step, fe::error_t e) { return std::string(step) + ": " + e.get_message(); }

Entry build(const Problem& p, cudnnHandle_t handle) {
  auto g = std::make_shared<Graph>();
  g->set_io_data_type(p.dtype == DType::BFloat16 ? fe::DataType_t::BFLOAT16
                                                 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto Q = io(*g, "Q", kQ, p.B, p.H, p.L, p.E, p.q);
  auto K = io(*g, "K", kK, p.B, p.H, p.S, p.E, p.k);
  auto V = io(*g, "V", kV, p.B, p.H, p.S, p.Ev, p.v);
  const std::vector<int64_t> stats_strides{p.H * p.L, p.L, 1, 1};
  std::shared_ptr<TensorAttr> seed, offset;
  if (p.threshold) {
    auto word = [&](const char* name, Uid uid) {
      return g->tensor(TensorAttr().set_name(name).set_uid(uid).set_dim({1, 1, 1, 1})
                           .set_stride({1, 1, 1, 1}).set_data_type(fe::DataType_t::INT64));
    };
    seed = word("Seed", kSeed);
    offset = word("Offset", kOffset);
  }
  const float prob = static_cast<float>(dropout_p(p.threshold));
  if (p.kind == kForward) {
    auto opts = fe::graph::SDPA_attributes()
                    .set_name("tessera_sdpa")
                    .set_generate_stats(true)
                    .set_causal_mask(p.causal)
                    .set_attn_scale(p.scale);
    if (p.threshold) opts.set_dropout(prob, seed, offset);
    auto [O, Stats] = g->sdpa(Q, K, V, opts);
    set_out(O, kO, p.B, p.H, p.L, p.Ev, p.o);
    Stats->set_output(true).set_uid(kStats).set_data_type(fe::DataType_t::FLOAT)
        .set_dim({p.B, p.H, p.L, 1}).set_stride(stats_strides);
  } else {
    auto O = io(*g, "O", kO, p.B, p.H, p.L, p.Ev, p.o);
    auto dO = io(*g, "dO", kDO, p.B, p.H, p.L, p.Ev, p.dO);
    auto Stats = g->tensor(TensorAttr().set_name("Stats").set_uid(kStats)
                               .set_dim({p.B, p.H, p.L, 1}).set_stride(stats_strides)
                               .set_data_type(fe::DataType_t::FLOAT));
    auto opts = fe::graph::SDPA_backward_attributes()
                    .set_name("tessera_sdpa_backward")
                    .set_causal_mask(p.causal)
                    .set_attn_scale(p.scale)
                    .set_deterministic_algorithm(p.deterministic);
    if (p.threshold) opts.set_dropout(prob, seed, offset);
    auto [dQ, dK, dV] = g->sdpa_backward(Q, K, V, O, dO, Stats, opts);
    set_out(dQ, kDQ, p.B, p.H, p.L, p.E, p.dq);
    set_out(dK, kDK, p.B, p.H, p.S, p.E, p.dk);
    set_out(dV, kDV, p.B, p.H, p.S, p.Ev, p.dv);
  }
  Entry e;
  fe::error_t st;
  if ((st = g->validate()).is_bad()) return {nullptr, 0, failed("validate", st)};
  if ((st = g->build_operation_graph(handle)).is_bad())
    return {nullptr, 0, failed("build_operation_graph", st)};
  if ((st = g->create_execution_plans({fe::HeurMode_t::A})).is_bad())
    return {nullptr, 0, failed("create_execution_plans", st)};
  if ((st = g->check_support()).is_bad()) return {nullptr, 0, failed("check_support", st)};
  if ((st = g->build_plans()).is_bad()) return {nullptr, 0, failed("build_plans", st)};
  if ((st = g->get_workspace_size(e.workspace)).is_bad())
    return {nullptr, 0, failed("get_workspace_size", st)};
  e.graph = g;
  return e;
}

// The graph of problem p, built on first use (per thread, as cuDNN plans are not guaranteed
// thread-safe); a failure is cached too.
const Entry& graph_for(const Problem& p, cudnnHandle_t handle) {
  thread_local std::map<std::vector<int64_t>, Entry> cache;
  const std::vector<int64_t> key = key_of(p);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Entry e;
  try {
    e = build(p, handle);
  } catch (const std::exception& ex) {
    e = {nullptr, 0, std::string("cuDNN frontend: ") + ex.what()};
  }
  return cache.emplace(key, std::move(e)).first->second;
}

// ---- Note [cuDNN attention dropout]'s record of the forwards that ran on cuDNN with dropout.
struct DropoutRecord {
  std::weak_ptr<Storage> lse;
  uint64_t seed, offset, threshold;
};
std::mutex record_mutex;
std::unordered_map<const Storage*, DropoutRecord>& records() {
  static auto* r = new std::unordered_map<const Storage*, DropoutRecord>();  // kept past exit
  return *r;
}

void record(const Tensor& lse, const AttentionDropout& d) {
  std::lock_guard<std::mutex> lock(record_mutex);
  auto& r = records();
  if (r.size() > 256)  // drop the records of freed lse storages
    for (auto it = r.begin(); it != r.end();) it = it->second.lse.expired() ? r.erase(it) : ++it;
  r[lse.storage().get()] = {lse.storage(), d.seed, d.offset, d.threshold};
}

// Whether lse came from a forward that ran on cuDNN with dropout, with `d`'s seed, offset and
// probability unless d is null (a new storage at a freed one's address does not match: the
// weak pointer has expired).
bool recorded(const Tensor& lse, const AttentionDropout* d) {
  if (!lse.defined() || lse.device().is_cpu()) return false;
  std::lock_guard<std::mutex> lock(record_mutex);
  auto it = records().find(lse.storage().get());
  if (it == records().end() || it->second.lse.lock() != lse.storage()) return false;
  const DropoutRecord& r = it->second;
  return !d || (r.seed == d->seed && r.offset == d->offset && r.threshold == d->threshold);
}

bool from_cudnn_dropout(const Tensor& lse) { return recorded(lse, nullptr); }

struct Register {
  Register() {
    cudnn_attention().status = &status;
    cudnn_attention().from_cudnn_dropout = &from_cudnn_dropout;
  }
} register_hooks;

// ---- eligibility and execution
bool aligned(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; }

// Whether a (B, H, R, C) operand is laid out as cuDNN's 16-bit kernels read it: unit stride
// along C, the other strides whole 16-byte chunks, the data 16-byte aligned.
bool loadable(const Tensor& t) {
  const std::vector<int64_t> s = strides_of(t);
  return s[3] == 1 && s[0] % 8 == 0 && s[1] % 8 == 0 && s[2] % 8 == 0 && aligned(t);
}

// The checks that need no cuDNN; "" when the problem may go to cuDNN.
std::string screen(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                   const AttentionDropout& drop) {
  if (q.dtype() != DType::Float16 && q.dtype() != DType::BFloat16)
    return "cuDNN attention takes float16/bfloat16 only";
  if (q.dim(3) % 8 != 0 || v.dim(3) % 8 != 0) return "head dims must be multiples of 8";
  if (!loadable(q) || !loadable(k) || !loadable(v) || !loadable(out))
    return "an operand is not 16-byte aligned with unit stride along the head dim";
  if (drop.threshold >= (uint64_t{1} << 32)) return "dropout probability 1";
  return "";
}

Problem problem(Kind kind, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                double scale, bool causal, const AttentionDropout& drop) {
  Problem p;
  p.kind = kind;
  p.dtype = q.dtype();
  p.dev = q.device().index;
  p.B = q.dim(0);
  p.H = q.dim(1);
  p.L = q.dim(2);
  p.S = k.dim(2);
  p.E = q.dim(3);
  p.Ev = v.dim(3);
  p.q = strides_of(q);
  p.k = strides_of(k);
  p.v = strides_of(v);
  p.o = strides_of(out);
  p.causal = causal;
  p.threshold = drop.threshold;
  p.scale = static_cast<float>(scale);
  p.deterministic = kind == kBackward && cudnn_flags().deterministic;
  if (kind == kBackward) {  // dO as it is given to cuDNN, the gradients as the op allocates them
    p.dO = dense_strides(out);
    p.dq = grad_strides(p.B, p.H, p.L, p.E);
    p.dk = grad_strides(p.B, p.H, p.S, p.E);
    p.dv = grad_strides(p.B, p.H, p.S, p.Ev);
  }
  return p;
}

// Runs a built graph on the tensors of `ptrs` (uid -> pointer), with the dropout seed words
// and a workspace from the caching allocator.
bool execute(const Entry& e, cudnnHandle_t handle, std::unordered_map<int64_t, void*> ptrs,
             const AttentionDropout& drop, const Tensor& like) {
  const int dev = like.device().index;
  Tensor words, work;
  if (drop.on()) {
    words = Tensor::empty(Shape{2}, DType::Int64, like.device());
    TS_CUDA_CHECK(cudnn_dropout_seed(drop.seed, drop.offset, words.data<int64_t>(),
                                     current_stream(dev)));
    ptrs[kSeed] = words.data<int64_t>();
    ptrs[kOffset] = words.data<int64_t>() + 1;
  }
  if (e.workspace > 0) work = Tensor::empty(Shape{e.workspace}, DType::UInt8, like.device());
  fe::error_t st;
  try {
    st = e.graph->execute(handle, ptrs, e.workspace > 0 ? work.data_ptr() : nullptr);
  } catch (const std::exception& ex) {
    return decline(std::string("execute: ") + ex.what());
  }
  if (st.is_bad()) return decline("execute: " + st.get_message());
  last_status().clear();
  return true;
}

// The calling thread's cuDNN handle for q's device (bound to its current stream), or null.
cudnnHandle_t handle_for(const Tensor& q) {
  if (!frontend_ready()) return nullptr;
  return static_cast<cudnnHandle_t>(cudnn_handle(q.device().index));
}

}  // namespace

bool cudnn_sdpa_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, double scale, bool causal, const AttentionDropout& drop) {
  if (!cudnn_attention().enabled || !cudnn_flags().enabled) return decline("cuDNN attention is off");
  const std::string why = screen(q, k, v, out, drop);
  if (!why.empty()) return decline(why);
  DeviceGuard guard(q.device().index);
  cudnnHandle_t h = handle_for(q);
  if (!h) return decline("cuDNN does not load: " + cudnn_loader().load_error);
  const Entry& f = graph_for(problem(kForward, q, k, v, out, scale, causal, drop), h);
  if (!f.graph) return decline(f.why);
  if (drop.on()) {  // its backward must be able to follow it
    const Entry& b = graph_for(problem(kBackward, q, k, v, out, scale, causal, drop), h);
    if (!b.graph) return decline("backward: " + b.why);
  }
  const bool ran = execute(f, h,
                           {{kQ, q.data_ptr()}, {kK, k.data_ptr()}, {kV, v.data_ptr()},
                            {kO, out.data_ptr()}, {kStats, lse.data_ptr()}},
                           drop, q);
  if (!ran) return false;
  if (drop.on()) record(lse, drop);
  attention_path_used() = "cudnn";
  return true;
}

bool cudnn_sdpa_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                         const Tensor& lse, const Tensor& gout, const Tensor& dq, const Tensor& dk,
                         const Tensor& dv, double scale, bool causal,
                         const AttentionDropout& drop) {
  const char* op = "flash_attention_backward";
  bool must = false;
  if (drop.on()) {
    if (!recorded(lse, &drop)) return decline("the forward with dropout ran on tessera's kernels");
    must = true;
  } else if (!cudnn_attention().enabled || !cudnn_flags().enabled) {
    return decline("cuDNN attention is off");
  }
  auto fail = [&](const std::string& why) {
    TS_CHECK(!must, RuntimeError, op,
             ": the forward ran cuDNN's attention with dropout, whose mask only cuDNN "
             "regenerates, but cuDNN's backward failed: ", why);
    return decline(why);
  };
  const std::string why = screen(q, k, v, out, drop);
  if (!why.empty()) return fail(why);
  if (!aligned(dq) || !aligned(dk) || !aligned(dv)) return fail("a gradient is misaligned");
  DeviceGuard guard(q.device().index);
  cudnnHandle_t h = handle_for(q);
  if (!h) return fail("cuDNN does not load: " + cudnn_loader().load_error);
  Problem p = problem(kBackward, q, k, v, out, scale, causal, drop);
  p.dq = strides_of(dq);
  p.dk = strides_of(dk);
  p.dv = strides_of(dv);
  const Entry& b = graph_for(p, h);
  if (!b.graph) return fail(b.why);
  // dO packed in O's order of strides (the graph's); a copy only when it arrives otherwise.
  Tensor g = gout;
  if (strides_of(gout) != p.dO || !aligned(gout)) {
    g = Tensor::empty(Shape{gout.numel()}, gout.dtype(), gout.device())
            .as_strided(gout.shape(), Strides(p.dO.begin(), p.dO.end()), 0);
    copy_(g, gout);
  }
  const bool ran = execute(b, h,
                           {{kQ, q.data_ptr()}, {kK, k.data_ptr()}, {kV, v.data_ptr()},
                            {kO, out.data_ptr()}, {kDO, g.data_ptr()}, {kStats, lse.data_ptr()},
                            {kDQ, dq.data_ptr()}, {kDK, dk.data_ptr()}, {kDV, dv.data_ptr()}},
                           drop, q);
  if (!ran) return fail(last_status());
  attention_path_used() = "cudnn";
  return true;
}

#endif

}  // namespace ts::cuda
