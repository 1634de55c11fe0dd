// nn.Linear's forward on CUDA: one cuBLASLt GEMM with the bias added in its epilogue, so the
// output is written once (a separate bias add reads and writes it again: about 1 ms of a
// char-GPT step in float32). Note [Row-major GEMM] applies: out^T (N x M, col-major) =
// W^T-as-stored (op T of a K x N col-major W) * x^T (K x M col-major), and the epilogue's bias
// runs along D's rows, i.e. over out's features.
#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "core/device_backend.h"
#include "cuda/cublas_util.h"
#include "cuda/cuda_state.h"
#include "cuda/gemm_tuning.h"
#include "ops/linear.h"

namespace ts::cuda {
namespace {

constexpr uint64_t kWorkspaceBytes = 4 << 20;

// Descriptors and the heuristic's algorithm for one problem, built once and reused: asking
// the heuristic costs tens of microseconds, more than the GEMMs of a small model take.
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool ok = false;
};

using PlanKey =
    std::tuple<int, int, int, int64_t, int64_t, int64_t, uint32_t, uint32_t, uint32_t, uint32_t>;

void set_attr(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr, const void* v,
              size_t n) {
  check_cublas(cublasLtMatmulDescSetAttribute(op, attr, v, n), "cublasLtMatmulDescSetAttribute",
               "linear");
}

Plan make_plan(cublasLtHandle_t lt, const GemmTypes& ty, int64_t m, int64_t n, int64_t k,
               const uint32_t (&align)[4]) {
  Plan p;
  check_cublas(cublasLtMatmulDescCreate(&p.op, ty.compute, CUDA_R_32F), "cublasLtMatmulDescCreate",
               "linear");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
  set_attr(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
  set_attr(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
  set_attr(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi));
  check_cublas(cublasLtMatrixLayoutCreate(&p.a, ty.data, k, n, k), "cublasLtMatrixLayoutCreate",
               "linear");
  check_cublas(cublasLtMatrixLayoutCreate(&p.b, ty.data, k, m, k), "cublasLtMatrixLayoutCreate",
               "linear");
  check_cublas(cublasLtMatrixLayoutCreate(&p.d, ty.data, n, m, n), "cublasLtMatrixLayoutCreate",
               "linear");
  cublasLtMatmulPreference_t pref;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", "linear");
  const uint64_t ws = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                       sizeof(ws));
  const cublasLtMatmulPreferenceAttributes_t which[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES};
  for (int i = 0; i < 4; ++i) {
    const uint32_t v = align[i < 3 ? i : 2];
    cublasLtMatmulPreferenceSetAttribute(pref, which[i], &v, sizeof(v));
  }
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.a, p.b, p.d, p.d, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  p.ok = st == CUBLAS_STATUS_SUCCESS && found > 0;
  if (p.ok) p.algo = res.algo;
  return p;
}

bool linear_bias_cuda(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& b) {
  const DType dt = out.dtype();
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) return false;
  const int64_t m = x.dim(0), k = x.dim(1), n = w.dim(0);
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return false;
  const GemmTypes ty = gemm_types(dt);
  const int dev = out.device().index;
  DeviceGuard g(dev);
  cublasLtHandle_t lt = cublaslt_handle(dev);
  // The bias pointer's alignment matters to the kernel choice too (its vector loads).
  const uint32_t align[4] = {pointer_alignment(w.data_ptr()), pointer_alignment(x.data_ptr()),
                             pointer_alignment(out.data_ptr()), pointer_alignment(b.data_ptr())};
  const PlanKey key{dev,
                    static_cast<int>(dt),
                    static_cast<int>(ty.compute),
                    m,
                    n,
                    k,
                    align[0],
                    align[1],
                    align[2],
                    align[3]};
  thread_local std::map<PlanKey, Plan> plans;
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, make_plan(lt, ty, m, n, k, align)).first;
  const Plan& p = it->second;
  if (!p.ok) return false;
  const void* bias = b.data_ptr();
  set_attr(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
  Tensor workspace =
      Tensor::empty(Shape{static_cast<int64_t>(kWorkspaceBytes)}, DType::UInt8, out.device());
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t st = cublasLtMatmul(
      lt, p.op, &one, w.data_ptr(), p.a, x.data_ptr(), p.b, &zero, out.data_ptr(), p.d,
      out.data_ptr(), p.d, &p.algo, workspace.data_ptr(), kWorkspaceBytes, current_stream(dev));
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  check_cublas(st, "cublasLtMatmul", "linear");
  return true;
}

}  // namespace

TS_REGISTER_KERNEL(linear_bias_stub, CUDA, &linear_bias_cuda);

}  // namespace ts::cuda
