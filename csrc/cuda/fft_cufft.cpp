// CUDA kernels of the fft ops through cuFFT: batches of 1-D transforms in the layouts that
// ops/fft.cpp's transform_axis hands over (contiguous rows, or the middle dim of
// (batch, n, inner) for c2c). Plans are cached per (device, type, length, layout, batch);
// their work areas come from the caching allocator at each execution. cuFFT does not scale,
// so the normalization factor is applied after, in place.
#include "ops/fft.h"

#include <cufft.h>

#include <climits>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/fft_scale.h"
#include "ops/copy.h"

namespace ts::cuda {
namespace {

void check_cufft(cufftResult r, const char* what, const char* op) {
  if (r != CUFFT_SUCCESS)
    throw RuntimeError(
        str(op, ": cuFFT failed in ", what, " with error code ", static_cast<int>(r)));
}

int int32_of(int64_t v, const char* op) {
  TS_CHECK(v <= INT_MAX, ValueError, op, ": a transform dimension of ", v,
           " exceeds cuFFT's 32-bit plan limits");
  return static_cast<int>(v);
}

// A plan's identity: everything cufftMakePlanMany takes, and the device it was made on.
struct PlanKey {
  int device;
  cufftType type;
  int n, in_len, out_len, stride, in_dist, out_dist, batch;
  auto tie() const {
    return std::tie(device, type, n, in_len, out_len, stride, in_dist, out_dist, batch);
  }
  bool operator<(const PlanKey& o) const { return tie() < o.tie(); }
};

struct Plan {
  cufftHandle handle = 0;
  size_t work_bytes = 0;
};

// The plan cache. Its mutex is held across a plan's use as well (setting the stream and the
// work area mutates the plan); executions only enqueue work, so the critical section is short.
class PlanCache {
 public:
  // Runs exec(handle) with the plan of `key` bound to the current stream and a fresh work area.
  template <class F>
  void run(const PlanKey& key, const char* op, const F& exec) {
    std::lock_guard<std::mutex> lock(mu_);
    const Plan& p = get(key, op);
    const Device dev{DeviceType::CUDA, static_cast<int16_t>(key.device)};
    check_cufft(cufftSetStream(p.handle, current_stream(key.device)), "cufftSetStream", op);
    Tensor work = Tensor::empty(Shape{static_cast<int64_t>(p.work_bytes) + 1}, DType::UInt8, dev);
    check_cufft(cufftSetWorkArea(p.handle, work.data_ptr()), "cufftSetWorkArea", op);
    exec(p.handle);
  }

 private:
  static constexpr size_t kMaxPlans = 64;

  const Plan& get(const PlanKey& key, const char* op) {
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) clear();
    Plan p;
    check_cufft(cufftCreate(&p.handle), "cufftCreate", op);
    // Work areas come from the caching allocator instead of a cudaMalloc per plan.
    cufftResult r = cufftSetAutoAllocation(p.handle, 0);
    int n = key.n, inembed = key.in_len, onembed = key.out_len;
    if (r == CUFFT_SUCCESS)
      r = cufftMakePlanMany(p.handle, 1, &n, &inembed, key.stride, key.in_dist, &onembed,
                            key.stride, key.out_dist, key.type, key.batch, &p.work_bytes);
    if (r != CUFFT_SUCCESS) {
      cufftDestroy(p.handle);
      check_cufft(r, "cufftMakePlanMany", op);
    }
    return plans_.emplace(key, p).first->second;
  }

  void clear() {
    for (auto& [k, p] : plans_) cufftDestroy(p.handle);
    plans_.clear();
  }

  std::mutex mu_;
  std::map<PlanKey, Plan> plans_;
};

PlanCache& plan_cache() {
  // Leaked on purpose: plans are not destroyed at exit, when the CUDA driver may be gone.
  static auto* cache = new PlanCache();
  return *cache;
}

// Transforms `count` sets of `batch` transforms; set j starts j * set_step elements in (and
// out). Elements are complex except where the type says real.
void run_transforms(const FftArgs& a, cufftType type, int64_t n, int64_t in_len, int64_t out_len,
                    int64_t stride, int64_t in_dist, int64_t out_dist, int64_t batch, int64_t count,
                    int64_t set_step, const char* op) {
  DeviceGuard g(a.device);
  const PlanKey key{a.device.index,        type,
                    int32_of(n, op),       int32_of(in_len, op),
                    int32_of(out_len, op), int32_of(stride, op),
                    int32_of(in_dist, op), int32_of(out_dist, op),
                    int32_of(batch, op)};
  const bool dbl = type == CUFFT_Z2Z || type == CUFFT_D2Z || type == CUFFT_Z2D;
  const bool real_in = type == CUFFT_R2C || type == CUFFT_D2Z;
  const bool real_out = type == CUFFT_C2R || type == CUFFT_Z2D;
  const int64_t real_size = dbl ? 8 : 4;
  const int64_t in_item = real_in ? real_size : 2 * real_size;
  const int64_t out_item = real_out ? real_size : 2 * real_size;
  const int dir = a.forward ? CUFFT_FORWARD : CUFFT_INVERSE;
  plan_cache().run(key, op, [&](cufftHandle h) {
    for (int64_t j = 0; j < count; ++j) {
      // cuFFT takes non-const inputs; only c2r writes its input, and the caller hands c2r a
      // scratch copy.
      char* in = static_cast<char*>(const_cast<void*>(a.in)) + j * set_step * in_item;
      char* out = static_cast<char*>(a.out) + j * set_step * out_item;
      cufftResult r = CUFFT_SUCCESS;
      switch (type) {
        case CUFFT_C2C:
          r = cufftExecC2C(h, reinterpret_cast<cufftComplex*>(in),
                           reinterpret_cast<cufftComplex*>(out), dir);
          break;
        case CUFFT_Z2Z:
          r = cufftExecZ2Z(h, reinterpret_cast<cufftDoubleComplex*>(in),
                           reinterpret_cast<cufftDoubleComplex*>(out), dir);
          break;
        case CUFFT_R2C:
          r = cufftExecR2C(h, reinterpret_cast<cufftReal*>(in),
                           reinterpret_cast<cufftComplex*>(out));
          break;
        case CUFFT_D2Z:
          r = cufftExecD2Z(h, reinterpret_cast<cufftDoubleReal*>(in),
                           reinterpret_cast<cufftDoubleComplex*>(out));
          break;
        case CUFFT_C2R:
          r = cufftExecC2R(h, reinterpret_cast<cufftComplex*>(in),
                           reinterpret_cast<cufftReal*>(out));
          break;
        default:
          r = cufftExecZ2D(h, reinterpret_cast<cufftDoubleComplex*>(in),
                           reinterpret_cast<cufftDoubleReal*>(out));
          break;
      }
      check_cufft(r, "cufftExec", op);
    }
  });
}

int64_t out_reals(const FftArgs& a, int64_t out_len, bool real_out) {
  return a.batch * out_len * a.inner * (real_out ? 1 : 2);
}

// Length-1 transforms are the identity (a real part taken or a zero imaginary part added):
// plain copies, not leaning on cuFFT's handling of degenerate sizes. Element strides: in and
// out hold one value every `in_step` / `out_step` reals.
void copy_length_one(const FftArgs& a, int64_t count, int64_t real_size, int64_t in_step,
                     int64_t out_step, bool zero_out) {
  DeviceGuard g(a.device);
  const cudaStream_t s = current_stream(a.device);
  if (zero_out) TS_CUDA_CHECK(cudaMemsetAsync(a.out, 0, count * out_step * real_size, s));
  const int64_t width = (in_step == out_step ? in_step : 1) * real_size;
  TS_CUDA_CHECK(cudaMemcpy2DAsync(a.out, out_step * real_size, a.in, in_step * real_size, width,
                                  count, cudaMemcpyDeviceToDevice, s));
}

void cuda_c2c(const FftArgs& a, DType dt) {
  DeviceGuard g(a.device);  // the scaling kernel below launches on a.device's stream
  const cufftType type = dt == DType::Complex128 ? CUFFT_Z2Z : CUFFT_C2C;
  const int64_t n = a.n, inner = a.inner;
  if (n == 1)
    copy_length_one(a, a.batch * inner, type == CUFFT_Z2Z ? 8 : 4, 2, 2, false);
  else if (inner == 1)
    run_transforms(a, type, n, n, n, 1, n, n, a.batch, 1, 0, "fft");
  else if (a.batch <= inner)  // per outer index: `inner` interleaved transforms of stride inner
    run_transforms(a, type, n, n * inner, n * inner, inner, 1, 1, inner, a.batch, n * inner, "fft");
  else  // per inner column: `batch` transforms n * inner apart
    run_transforms(a, type, n, n, n, inner, n * inner, n * inner, a.batch, inner, 1, "fft");
  scale_reals(a.out, out_reals(a, n, false), dt == DType::Complex128, a.scale,
              current_stream(a.device));
}

void cuda_r2c(const FftArgs& a, DType dt) {
  DeviceGuard g(a.device);
  const bool dbl = dt == DType::Complex128;
  const int64_t n = a.n, m = n / 2 + 1;
  if (n == 1)
    copy_length_one(a, a.batch, dbl ? 8 : 4, 1, 2, true);
  else
    run_transforms(a, dbl ? CUFFT_D2Z : CUFFT_R2C, n, n, m, 1, n, m, a.batch, 1, 0, "rfft");
  scale_reals(a.out, out_reals(a, m, false), dbl, a.scale, current_stream(a.device));
}

void cuda_c2r(const FftArgs& a, DType dt) {
  const bool dbl = dt == DType::Complex128;
  const int64_t n = a.n, m = n / 2 + 1, real_size = dbl ? 8 : 4;
  DeviceGuard g(a.device);
  const cudaStream_t s = current_stream(a.device);
  if (n == 1) {  // m == 1: the real part of each row's one bin
    copy_length_one(a, a.batch, real_size, 2, 1, false);
    return scale_reals(a.out, out_reals(a, n, true), dbl, a.scale, s);
  }
  // cuFFT's c2r overwrites its input: work on a copy. The imaginary parts of the zero and (for
  // even n) Nyquist bins are dropped, as NumPy's and the CPU engine's c2r do, instead of
  // leaving their effect to the library.
  Tensor scratch = Tensor::empty(Shape{a.batch, m}, dt, a.device);
  TS_CUDA_CHECK(cudaMemcpyAsync(scratch.data_ptr(), a.in, a.batch * m * 2 * real_size,
                                cudaMemcpyDeviceToDevice, s));
  const size_t pitch = static_cast<size_t>(m * 2 * real_size);
  char* imag0 = scratch.data_ptr() + real_size;
  TS_CUDA_CHECK(cudaMemset2DAsync(imag0, pitch, 0, real_size, a.batch, s));
  if (n % 2 == 0 && m > 1)
    TS_CUDA_CHECK(
        cudaMemset2DAsync(imag0 + (m - 1) * 2 * real_size, pitch, 0, real_size, a.batch, s));
  FftArgs b = a;
  b.in = scratch.data_ptr();
  run_transforms(b, dbl ? CUFFT_Z2D : CUFFT_C2R, n, m, n, 1, m, n, a.batch, 1, 0, "irfft");
  scale_reals(a.out, out_reals(a, n, true), dbl, a.scale, s);
}

}  // namespace

TS_REGISTER_KERNEL(fft_c2c_stub, CUDA, &cuda_c2c);
TS_REGISTER_KERNEL(fft_r2c_stub, CUDA, &cuda_r2c);
TS_REGISTER_KERNEL(fft_c2r_stub, CUDA, &cuda_c2r);

}  // namespace ts::cuda
