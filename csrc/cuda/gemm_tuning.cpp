#include "cuda/gemm_tuning.h"

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/device_backend.h"
#include "cuda/caching_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"

namespace ts::cuda {
namespace {

constexpr uint64_t kWorkspace = 32 << 20;
constexpr int kCandidates = 16;

struct Choice {
  bool use_lt = false;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

using Key = std::tuple<int, int, int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       uint32_t, uint32_t, uint32_t>;

void* workspace(int dev, cudaStream_t s) {
  static std::mutex mu;
  static std::map<std::pair<int, cudaStream_t>, void*> ws;
  std::lock_guard<std::mutex> lock(mu);
  void*& p = ws[{dev, s}];
  if (!p) p = cache_allocate(static_cast<int64_t>(kWorkspace), dev, s);
  return p;
}

}  // namespace

cublasLtHandle_t cublaslt_handle(int dev) {
  thread_local std::vector<cublasLtHandle_t> handles;
  if (handles.size() <= static_cast<size_t>(dev)) handles.resize(dev + 1, nullptr);
  if (!handles[dev]) {
    DeviceGuard g(dev);
    check_cublas(cublasLtCreate(&handles[dev]), "cublasLtCreate", "matmul");
  }
  return handles[dev];
}

uint32_t pointer_alignment(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && a % al != 0) al /= 2;
  return al;
}

bool tuned_gemm(cublasOperation_t opb, cublasOperation_t opa, int64_t n, int64_t m, int64_t k,
                const void* b, int64_t ldb, const void* a, int64_t lda, void* d, int64_t ldc,
                const GemmTypes& ty, int dev, cudaStream_t s,
                const std::function<void()>& untuned) {
  if (!cuda_gemm_tuning() || ty.data != CUDA_R_32F || ty.compute != CUBLAS_COMPUTE_32F)
    return false;
  if (static_cast<double>(m) * n * k < static_cast<double>(1 << 30)) return false;
  const uint32_t al[3] = {pointer_alignment(b), pointer_alignment(a), pointer_alignment(d)};
  const Key key{
      dev,  static_cast<int>(opb), static_cast<int>(opa), n, m, k, ldb, lda, ldc, al[0], al[1],
      al[2]};
  static std::mutex mu;
  static std::map<Key, Choice> cache;
  cublasLtHandle_t lt = cublaslt_handle(dev);
  void* ws = workspace(dev, s);
  const float one = 1.0f, zero = 0.0f;
  Choice* ch = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) ch = &it->second;
  }
  if (!ch) {
    cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    TS_CUDA_CHECK(cudaStreamIsCapturing(s, &cap));
    if (cap != cudaStreamCaptureStatusNone) return false;  // timing needs a synchronize
    Choice c;
    check_cublas(cublasLtMatmulDescCreate(&c.op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                 "cublasLtMatmulDescCreate", "matmul");
    cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof(opb));
    cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof(opa));
    const bool tb = opb == CUBLAS_OP_T, ta = opa == CUBLAS_OP_T;
    check_cublas(cublasLtMatrixLayoutCreate(&c.la, CUDA_R_32F, tb ? k : n, tb ? n : k, ldb),
                 "cublasLtMatrixLayoutCreate", "matmul");
    check_cublas(cublasLtMatrixLayoutCreate(&c.lb, CUDA_R_32F, ta ? m : k, ta ? k : m, lda),
                 "cublasLtMatrixLayoutCreate", "matmul");
    check_cublas(cublasLtMatrixLayoutCreate(&c.ld, CUDA_R_32F, n, m, ldc),
                 "cublasLtMatrixLayoutCreate", "matmul");
    cublasLtMatmulPreference_t pref;
    check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", "matmul");
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                         &kWorkspace, sizeof(kWorkspace));
    const cublasLtMatmulPreferenceAttributes_t which[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; ++i)
      cublasLtMatmulPreferenceSetAttribute(pref, which[i], &al[i < 2 ? i : 2], sizeof(uint32_t));
    cublasLtMatmulHeuristicResult_t res[kCandidates];
    int found = 0;
    if (cublasLtMatmulAlgoGetHeuristic(lt, c.op, c.la, c.lb, c.ld, c.ld, pref, kCandidates, res,
                                       &found) != CUBLAS_STATUS_SUCCESS)
      found = 0;
    cublasLtMatmulPreferenceDestroy(pref);
    cudaEvent_t e0, e1;
    TS_CUDA_CHECK(cudaEventCreate(&e0));
    TS_CUDA_CHECK(cudaEventCreate(&e1));
    auto time_of = [&](const std::function<bool()>& run) {
      if (!run()) return 1e30f;  // warm-up; not supported
      TS_CUDA_CHECK(cudaEventRecord(e0, s));
      for (int r = 0; r < 3; ++r) run();
      TS_CUDA_CHECK(cudaEventRecord(e1, s));
      TS_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      TS_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      return ms;
    };
    float best = time_of([&] {
      untuned();
      return true;
    });
    for (int i = 0; i < found; ++i) {
      const float t = time_of([&] {
        return cublasLtMatmul(lt, c.op, &one, b, c.la, a, c.lb, &zero, d, c.ld, d, c.ld,
                              &res[i].algo, ws, kWorkspace, s) == CUBLAS_STATUS_SUCCESS;
      });
      if (t < best * 0.98f) {
        best = t;
        c.use_lt = true;
        c.algo = res[i].algo;
      }
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    std::lock_guard<std::mutex> lock(mu);
    ch = &cache.emplace(key, c).first->second;
  }
  if (!ch->use_lt) {
    untuned();
    return true;
  }
  check_cublas(cublasLtMatmul(lt, ch->op, &one, b, ch->la, a, ch->lb, &zero, d, ch->ld, d, ch->ld,
                              &ch->algo, ws, kWorkspace, s),
               "cublasLtMatmul", "matmul");
  return true;
}

}  // namespace ts::cuda
