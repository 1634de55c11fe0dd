// Note [cuDNN at run time]: tessera has no link-time dependency on cuDNN. The build compiles
// this file against cuDNN 9's headers when it finds them (the nvidia-cudnn-cu13 wheel's
// include/, or -DTESSERA_CUDNN_INCLUDE; else every entry point here answers "not handled"),
// and the library is dlopen'ed on first use: $TESSERA_CUDNN_PATH, then the folders the Python
// layer found (the nvidia.cudnn package: ts.backends.cudnn sets them), then the loader's own
// search for libcudnn_graph.so.9. A library that does not load or is not version 9 leaves cuDNN
// unavailable (ts.backends.cudnn.load_error() says why) and the GEMM path runs.
// The convolutions use the graph (backend) API: one operation (forward, backward data or
// backward filter) per graph, tensors with the actual strides (so NCHW and NHWC), engine
// configurations from heuristics mode A then the fallback list, filtered as PyTorch does
// (no down-converting engines, no tensor-core ones for float32 unless allow_tf32, no
// nondeterministic ones under deterministic), the first that finalizes taken, or under
// benchmark the fastest of up to ten, timed on the call's own tensors. The plan is cached per
// problem (kind, dtype, shapes, strides, geometry, device, switches); a problem cuDNN cannot
// take is cached as such and falls back at once. Workspaces come from the caching allocator.
#include "cuda/cudnn_conv.h"

#if defined(TESSERA_CUDNN_HEADERS) && __has_include(<cudnn_graph.h>)
#define TS_HAVE_CUDNN 1
#else
#define TS_HAVE_CUDNN 0
#endif

#if TS_HAVE_CUDNN
#include <cudnn_graph.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "ops/memory_format.h"
#endif

namespace ts::cuda {

#if !TS_HAVE_CUDNN

bool cudnn_conv_forward(const Tensor&, const Tensor&, const Tensor&, const ConvSpec&) {
  return false;
}
bool cudnn_conv_transpose(const Tensor&, const Tensor&, const Tensor&, const ConvSpec&) {
  return false;
}
bool cudnn_conv_weight(const Tensor&, const Tensor&, const Tensor&, const ConvSpec&) {
  return false;
}
void* cudnn_library() { return nullptr; }
void* cudnn_handle(int) { return nullptr; }

namespace {
struct NoCudnn {
  NoCudnn() { cudnn_loader().load_error = "this build has no cuDNN headers"; }
} no_cudnn;
}  // namespace

#else

namespace {

// ---- the library, loaded once
struct Api {
  decltype(&cudnnGetVersion) GetVersion;
  decltype(&cudnnGetErrorString) GetErrorString;
  decltype(&cudnnCreate) Create;
  decltype(&cudnnSetStream) SetStream;
  decltype(&cudnnBackendCreateDescriptor) CreateDescriptor;
  decltype(&cudnnBackendDestroyDescriptor) DestroyDescriptor;
  decltype(&cudnnBackendFinalize) Finalize;
  decltype(&cudnnBackendSetAttribute) SetAttribute;
  decltype(&cudnnBackendGetAttribute) GetAttribute;
  decltype(&cudnnBackendExecute) Execute;
  size_t version = 0;
};

// cuDNN 9's graph API lives in libcudnn_graph.so.9 (libcudnn.so.9 is a shim that aborts the
// process when that library is missing beside it), so that is what is loaded; it finds its
// engine and heuristics libraries beside itself.
void* open_library(std::string* why) {
  std::vector<std::string> tries;
  if (const char* env = std::getenv("TESSERA_CUDNN_PATH")) tries.push_back(env);
  for (const std::string& p : cudnn_loader().search_paths) tries.push_back(p);
  tries.push_back("libcudnn_graph.so.9");  // the loader's search (or already loaded)
  std::string errors;
  for (std::string p : tries) {
    if (p.find(".so") == std::string::npos) p += "/libcudnn_graph.so.9";  // a folder
    if (void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    errors += std::string(e ? e : p.c_str()) + "; ";
  }
  *why = "cuDNN 9 not found (" + errors +
         "install the nvidia-cudnn-cu13 wheel or set TESSERA_CUDNN_PATH to its lib folder)";
  return nullptr;
}

// cuDNN's runtime-compiled engines (its fused attention among them) dlopen NVRTC by name; in a
// process that did not load it yet (PyTorch does), it is found in the nvidia NVRTC wheel beside
// the cuDNN wheel (nvidia/cu13/lib, or nvidia/cuda_nvrtc/lib for CUDA 12 wheels) and loaded
// here, so that cuDNN's dlopen by name finds it loaded. Failing that, cuDNN answers "no engine"
// for those graphs and tessera's kernels run.
void preload_nvrtc() {
  const std::string major = std::to_string(CUDART_VERSION / 1000);
  const std::string name = "libnvrtc.so." + major;
  if (dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL)) return;
  const std::string rels[2] = {"/../../cu" + major + "/lib/", "/../../cuda_nvrtc/lib/"};
  for (const std::string& dir : cudnn_loader().search_paths)
    for (const std::string& rel : rels)
      if (dlopen((dir + rel + name).c_str(), RTLD_NOW | RTLD_GLOBAL)) return;
  dlerror();  // nothing found: clear the error
}

void* library_handle = nullptr;

const Api* load_api() {
  static std::once_flag once;
  static Api api;
  static bool ok = false;
  std::call_once(once, [] {
    std::string why;
    void* lib = open_library(&why);
    if (!lib) {
      cudnn_loader().load_error = why;
      return;
    }
    preload_nvrtc();
    bool all = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)> >(dlsym(lib, name));
      if (!fn) all = false;
    };
    sym(api.GetVersion, "cudnnGetVersion");
    sym(api.GetErrorString, "cudnnGetErrorString");
    sym(api.Create, "cudnnCreate");
    sym(api.SetStream, "cudnnSetStream");
    sym(api.CreateDescriptor, "cudnnBackendCreateDescriptor");
    sym(api.DestroyDescriptor, "cudnnBackendDestroyDescriptor");
    sym(api.Finalize, "cudnnBackendFinalize");
    sym(api.SetAttribute, "cudnnBackendSetAttribute");
    sym(api.GetAttribute, "cudnnBackendGetAttribute");
    sym(api.Execute, "cudnnBackendExecute");
    if (!all) {
      cudnn_loader().load_error = "libcudnn lacks the cuDNN 9 graph API entry points";
      return;
    }
    api.version = api.GetVersion();
    if (api.version / 10000 != 9) {
      cudnn_loader().load_error =
          "libcudnn version " + std::to_string(api.version) + " is not cuDNN 9";
      return;
    }
    library_handle = lib;
    ok = true;
  });
  return ok ? &api : nullptr;
}

int64_t loaded_version() {
  const Api* a = load_api();
  return a ? static_cast<int64_t>(a->version) : 0;
}

struct RegisterLoader {
  RegisterLoader() { cudnn_loader().version = &loaded_version; }
} register_loader;

// ---- descriptors
struct Desc {
  cudnnBackendDescriptor_t d = nullptr;
  const Api* api = nullptr;
  Desc(const Api* a, cudnnBackendDescriptorType_t t) : api(a) {
    if (a->CreateDescriptor(t, &d) != CUDNN_STATUS_SUCCESS) d = nullptr;
  }
  ~Desc() {
    if (d) api->DestroyDescriptor(d);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
};

// Throws inside plan building; caught there (the problem is then "not handled").
struct CudnnFailure {
  cudnnStatus_t status;
  const char* what;
};

void ok(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw CudnnFailure{s, what};
}

template <class T>
void set(const Api* a, const Desc& d, cudnnBackendAttributeName_t name,
         cudnnBackendAttributeType_t ty, const T* v, int64_t n, const char* what) {
  ok(a->SetAttribute(d.d, name, ty, n, v), what);
}

// The deprecated handle attributes (still honoured), by value to keep the build warning-free.
constexpr auto kGraphHandle = static_cast<cudnnBackendAttributeName_t>(800);
constexpr auto kPlanHandle = static_cast<cudnnBackendAttributeName_t>(400);

cudnnHandle_t handle_for(const Api* a, int dev) {
  thread_local std::vector<cudnnHandle_t> handles;
  if (handles.size() <= static_cast<size_t>(dev)) handles.resize(dev + 1, nullptr);
  if (!handles[dev]) {
    DeviceGuard g(dev);
    cudnnHandle_t h = nullptr;
    ok(a->Create(&h), "cudnnCreate");
    handles[dev] = h;
  }
  ok(a->SetStream(handles[dev], current_stream(dev)), "cudnnSetStream");
  return handles[dev];
}

enum Kind { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };
constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;
constexpr int64_t kMaxWorkspace = int64_t(2) << 30;

struct Operand {
  std::vector<int64_t> dims, strides;
};

// A tensor's dims and packed strides as cuDNN sees them: NCHW, or NHWC when the problem is
// channels-last (`last`); 1-D convolutions as 2-D with H = 1. *ok_layout is false when the
// tensor's memory is not laid out so.
Operand operand(const Tensor& t, int nsp, bool last, bool* ok_layout) {
  Operand o;
  for (int64_t i = 0; i < t.ndim(); ++i) o.dims.push_back(t.dim(i));
  if (nsp == 1) o.dims.insert(o.dims.begin() + 2, 1);  // (N, C, L) -> (N, C, 1, L)
  *ok_layout = last ? is_contiguous_as(t, t.ndim() == 5 ? MemoryFormat::ChannelsLast3d
                                                        : MemoryFormat::ChannelsLast)
                    : t.is_contiguous();
  const size_t nd = o.dims.size();
  o.strides.assign(nd, 1);
  // Innermost first: channels-last C, W, H(, D), N; NCHW the dims in reverse order.
  std::vector<size_t> order;
  if (last) {
    order.push_back(1);
    for (size_t i = nd - 1; i >= 2; --i) order.push_back(i);
    order.push_back(0);
  } else {
    for (size_t i = nd; i-- > 0;) order.push_back(i);
  }
  int64_t packed = 1;
  for (size_t i : order) {
    o.strides[i] = packed;
    packed *= std::max<int64_t>(o.dims[i], 1);
  }
  return o;
}

cudnnDataType_t data_type(DType d) {
  switch (d) {
    case DType::Float32:
      return CUDNN_DATA_FLOAT;
    case DType::Float64:
      return CUDNN_DATA_DOUBLE;
    case DType::Float16:
      return CUDNN_DATA_HALF;
    default:
      return CUDNN_DATA_BFLOAT16;
  }
}

void tensor_desc(const Api* a, Desc& d, const Operand& o, cudnnDataType_t dt, int64_t uid) {
  const int64_t align = 16;
  set(a, d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt, 1, "tensor data type");
  set(a, d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, o.dims.data(),
      static_cast<int64_t>(o.dims.size()), "tensor dims");
  set(a, d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, o.strides.data(),
      static_cast<int64_t>(o.strides.size()), "tensor strides");
  set(a, d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid, 1, "tensor uid");
  set(a, d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align, 1, "tensor alignment");
  ok(a->Finalize(d.d), "tensor finalize");
}

struct Plan {
  std::shared_ptr<Desc> plan;  // null: cuDNN does not take this problem
  int64_t workspace = 0;
  // The descriptors the plan was built from (tensors, convolution, operation, graph, engine
  // configuration), kept alive with it.
  std::vector<std::shared_ptr<Desc> > keep;
};

// The problem: x (N, C, *in), w (O, C/g, *k), y (N, O, *out) with the tensors' strides.
struct Problem {
  Kind kind;
  const Tensor *x, *w, *y;  // for backward data, x is dx; backward filter, w is dw
  const ConvSpec* s;
};

std::vector<int64_t> cache_key(const Problem& p, const Operand& x, const Operand& w,
                               const Operand& y, int dev, const CudnnFlags& f) {
  std::vector<int64_t> k{
      p.kind,  static_cast<int64_t>(p.x->dtype()), dev, f.allow_tf32, f.deterministic, f.benchmark,
      p.s->nsp};
  for (const Operand* o : {&x, &w, &y}) {
    k.insert(k.end(), o->dims.begin(), o->dims.end());
    k.insert(k.end(), o->strides.begin(), o->strides.end());
  }
  for (int i = 0; i < 3; ++i) {
    k.push_back(p.s->s[i]);
    k.push_back(p.s->p[i]);
    k.push_back(p.s->d[i]);
  }
  return k;
}

// Whether an engine configuration passes PyTorch's filters.
bool acceptable(const Api* a, cudnnBackendDescriptor_t cfg, DType dt, const CudnnFlags& f) {
  Desc engine(a, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t n = 0;
  if (a->GetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                      &engine.d) != CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  if (a->GetAttribute(engine.d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                      CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < count; ++i) {
    if (f.deterministic && notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) return false;
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
    if (dt == DType::Float32 && !f.allow_tf32 && notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE)
      return false;
  }
  return true;
}

// Engine configurations from one heuristics mode (empty when the mode has none).
std::vector<std::shared_ptr<Desc> > engine_configs(const Api* a, const Desc& graph,
                                                   cudnnBackendHeurMode_t mode) {
  std::vector<std::shared_ptr<Desc> > out;
  Desc heur(a, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  if (a->SetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                      1, &graph.d) != CUDNN_STATUS_SUCCESS ||
      a->SetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode) !=
          CUDNN_STATUS_SUCCESS ||
      a->Finalize(heur.d) != CUDNN_STATUS_SUCCESS)
    return out;
  int64_t count = 0;
  if (a->GetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                      &count, nullptr) != CUDNN_STATUS_SUCCESS ||
      count <= 0)
    return out;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    out.push_back(std::make_shared<Desc>(a, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(out.back()->d);
  }
  int64_t got = 0;
  if (a->GetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                      &got, raw.data()) != CUDNN_STATUS_SUCCESS)
    return {};
  out.resize(static_cast<size_t>(std::min(got, count)));
  return out;
}

void* data(const Tensor& t) { return t.data_ptr(); }

// Runs a plan on the problem's tensors (workspace from the caching allocator).
cudnnStatus_t execute(const Api* a, cudnnHandle_t h, const Desc& plan, int64_t ws,
                      const Problem& p) {
  Tensor work = ws > 0 ? Tensor::empty(Shape{ws}, DType::UInt8, p.x->device()) : Tensor();
  void* ptrs[3] = {data(*p.x), data(*p.w), data(*p.y)};
  const int64_t uids[3] = {kUidX, kUidW, kUidY};
  void* wsp = ws > 0 ? work.data_ptr() : nullptr;
  Desc pack(a, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  cudnnStatus_t st;
  if ((st = a->SetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
                            ptrs)) != CUDNN_STATUS_SUCCESS ||
      (st = a->SetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3,
                            uids)) != CUDNN_STATUS_SUCCESS ||
      (st = a->SetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                            &wsp)) != CUDNN_STATUS_SUCCESS ||
      (st = a->Finalize(pack.d)) != CUDNN_STATUS_SUCCESS)
    return st;
  return a->Execute(h, plan.d, pack.d);
}

// Milliseconds of one run of a plan (after one warm-up run); -1 when it fails.
float time_plan(const Api* a, cudnnHandle_t h, const Desc& plan, int64_t ws, const Problem& p,
                cudaStream_t stream) {
  if (execute(a, h, plan, ws, p) != CUDNN_STATUS_SUCCESS) return -1;
  cudaEvent_t e0, e1;
  TS_CUDA_CHECK(cudaEventCreate(&e0));
  TS_CUDA_CHECK(cudaEventCreate(&e1));
  TS_CUDA_CHECK(cudaEventRecord(e0, stream));
  const cudnnStatus_t st = execute(a, h, plan, ws, p);
  TS_CUDA_CHECK(cudaEventRecord(e1, stream));
  TS_CUDA_CHECK(cudaEventSynchronize(e1));
  float ms = -1;
  TS_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return st == CUDNN_STATUS_SUCCESS ? ms : -1;
}

Plan build_plan(const Api* a, cudnnHandle_t h, const Problem& p, const Operand& xo,
                const Operand& wo, const Operand& yo, const CudnnFlags& f, cudaStream_t stream) {
  const DType dt = p.x->dtype();
  const cudnnDataType_t data = data_type(dt);
  const cudnnDataType_t comp = dt == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  std::vector<std::shared_ptr<Desc> > keep;
  auto make = [&](cudnnBackendDescriptorType_t t) {
    keep.push_back(std::make_shared<Desc>(a, t));
    return keep.back();
  };
  const auto xd = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR), wd = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR),
             yd = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  tensor_desc(a, *xd, xo, data, kUidX);
  tensor_desc(a, *wd, wo, data, kUidW);
  tensor_desc(a, *yd, yo, data, kUidY);
  // The geometry: the 3 right-aligned slots of the spec, as 2 (1-D, 2-D) or 3 dims.
  const int nd = p.s->nsp == 3 ? 3 : 2;
  std::vector<int64_t> stride, pad, dil;
  for (int i = 3 - nd; i < 3; ++i) {
    stride.push_back(p.s->s[i]);
    pad.push_back(p.s->p[i]);
    dil.push_back(p.s->d[i]);
  }
  const auto conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const int64_t spatial = nd;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  set(a, *conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp, 1, "comp type");
  set(a, *conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode, 1, "mode");
  set(a, *conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial, 1, "dims");
  set(a, *conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dil.data(), nd, "dilations");
  set(a, *conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, stride.data(), nd,
      "strides");
  set(a, *conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pad.data(), nd, "padding");
  set(a, *conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, pad.data(), nd, "padding");
  ok(a->Finalize(conv->d), "convolution finalize");

  static const cudnnBackendDescriptorType_t op_types[3] = {
      CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
      CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
      CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
  // (conv desc, x, w, y, alpha, beta) attribute names per kind.
  static const cudnnBackendAttributeName_t names[3][6] = {
      {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
      {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
      {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA}};
  const auto& nm = names[p.kind];
  const auto op = make(op_types[p.kind]);
  set(a, *op, nm[0], CUDNN_TYPE_BACKEND_DESCRIPTOR, &conv->d, 1, "op conv");
  set(a, *op, nm[1], CUDNN_TYPE_BACKEND_DESCRIPTOR, &xd->d, 1, "op x");
  set(a, *op, nm[2], CUDNN_TYPE_BACKEND_DESCRIPTOR, &wd->d, 1, "op w");
  set(a, *op, nm[3], CUDNN_TYPE_BACKEND_DESCRIPTOR, &yd->d, 1, "op y");
  if (dt == DType::Float64) {
    const double one = 1.0, zero = 0.0;
    set(a, *op, nm[4], CUDNN_TYPE_DOUBLE, &one, 1, "alpha");
    set(a, *op, nm[5], CUDNN_TYPE_DOUBLE, &zero, 1, "beta");
  } else {
    const float one = 1.0f, zero = 0.0f;
    set(a, *op, nm[4], CUDNN_TYPE_FLOAT, &one, 1, "alpha");
    set(a, *op, nm[5], CUDNN_TYPE_FLOAT, &zero, 1, "beta");
  }
  ok(a->Finalize(op->d), "operation finalize");

  const auto graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set(a, *graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, &op->d, 1,
      "graph ops");
  set(a, *graph, kGraphHandle, CUDNN_TYPE_HANDLE, &h, 1, "graph handle");
  ok(a->Finalize(graph->d), "operation graph finalize");

  // No timing runs while a CUDA graph is being captured (they synchronize): heuristics' order.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  TS_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  const bool benchmark = f.benchmark && capture == cudaStreamCaptureStatusNone;
  std::vector<std::shared_ptr<Desc> > cfgs = engine_configs(a, *graph, CUDNN_HEUR_MODE_A);
  for (auto& c : engine_configs(a, *graph, CUDNN_HEUR_MODE_FALLBACK)) cfgs.push_back(c);
  Plan best;
  float best_ms = -1;
  int timed = 0;
  for (const auto& cfg : cfgs) {
    if (!acceptable(a, cfg->d, dt, f)) continue;
    auto plan = std::make_shared<Desc>(a, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (a->SetAttribute(plan->d, kPlanHandle, CUDNN_TYPE_HANDLE, 1, &h) != CUDNN_STATUS_SUCCESS ||
        a->SetAttribute(plan->d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg->d) != CUDNN_STATUS_SUCCESS ||
        a->Finalize(plan->d) != CUDNN_STATUS_SUCCESS)
      continue;
    int64_t ws = 0, n = 0;
    if (a->GetAttribute(plan->d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                        &ws) != CUDNN_STATUS_SUCCESS ||
        ws > kMaxWorkspace)
      continue;
    if (!benchmark) {
      keep.push_back(cfg);
      return {plan, ws, keep};
    }
    const float ms = time_plan(a, h, *plan, ws, p, stream);
    if (ms >= 0 && (best_ms < 0 || ms < best_ms)) {
      best = {plan, ws, keep};
      best.keep.push_back(cfg);
      best_ms = ms;
    }
    if (++timed >= 10) break;
  }
  return best;
}

std::mutex cache_mutex;
std::map<std::vector<int64_t>, Plan>& plan_cache() {
  static auto* cache = new std::map<std::vector<int64_t>, Plan>();  // kept past exit
  return *cache;
}

bool aligned(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; }

bool run(const Problem& p) {
  const CudnnFlags f = cudnn_flags();
  if (!f.enabled) return false;
  const Api* a = load_api();
  if (!a) return false;
  const ConvSpec& s = *p.s;
  if (!aligned(*p.x) || !aligned(*p.w) || !aligned(*p.y)) return false;
  const int dev = p.y->device().index;
  DeviceGuard guard(dev);
  try {
    // One layout for the three: channels-last when any of them is.
    const bool last = is_channels_last(*p.x) || is_channels_last(*p.w) || is_channels_last(*p.y);
    bool lx = false, lw = false, ly = false;
    const Operand xo = operand(*p.x, s.nsp, last, &lx), wo = operand(*p.w, s.nsp, last, &lw),
                  yo = operand(*p.y, s.nsp, last, &ly);
    if (!lx || !lw || !ly) return false;
    cudnnHandle_t h = handle_for(a, dev);
    const std::vector<int64_t> key = cache_key(p, xo, wo, yo, dev, f);
    Plan plan;
    {
      std::lock_guard<std::mutex> lock(cache_mutex);
      auto it = plan_cache().find(key);
      if (it != plan_cache().end()) {
        plan = it->second;
      } else {
        try {
          plan = build_plan(a, h, p, xo, wo, yo, f, current_stream(dev));
        } catch (const CudnnFailure&) {
          plan = Plan{};  // cuDNN does not take this problem: remembered, so no retries
        }
        plan_cache()[key] = plan;
      }
    }
    if (!plan.plan) return false;
    return execute(a, h, *plan.plan, plan.workspace, p) == CUDNN_STATUS_SUCCESS;
  } catch (const CudnnFailure&) {
    return false;
  }
}

}  // namespace

bool cudnn_conv_forward(const Tensor& x, const Tensor& w, const Tensor& y, const ConvSpec& s) {
  return run({kForward, &x, &w, &y, &s});
}
bool cudnn_conv_transpose(const Tensor& gy, const Tensor& w, const Tensor& gx, const ConvSpec& s) {
  return run({kBackwardData, &gx, &w, &gy, &s});
}
bool cudnn_conv_weight(const Tensor& gy, const Tensor& x, const Tensor& gw, const ConvSpec& s) {
  return run({kBackwardFilter, &x, &gw, &gy, &s});
}

void* cudnn_library() { return load_api() ? library_handle : nullptr; }

void* cudnn_handle(int dev) {
  const Api* a = load_api();
  if (!a) return nullptr;
  try {
    return handle_for(a, dev);
  } catch (const CudnnFailure&) {
    return nullptr;
  }
}

#endif

}  // namespace ts::cuda
