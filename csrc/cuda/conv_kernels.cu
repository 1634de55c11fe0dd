// CUDA kernels of the three convolution ops (ops/conv.h, Note [Convolution as three ops]).
// Note [CUDA convolution paths]: each op first offers the work to cuDNN (cuda/cudnn_conv.h:
// when ts.backends.cudnn.enabled and libcudnn loads at run time); otherwise, or where cuDNN
// declines, the GEMM path here runs:
//   forward    per chunk of images, im2col into a workspace laid out (image, C*K, L), then per
//              group one strided-batched cuBLAS GEMM over the chunk's images, y_n = W_g cols_n
//              (a 1x1 unstrided unpadded convolution reads x as its own columns);
//   transpose  cols_n = W_g^T gy_n (strided-batched), then col2im gathers each input pixel's
//              taps in order (no atomics: deterministic);
//   weight     gy gathered to (O, B*L) and im2col laid out (C*K, B*L), one GEMM per group and
//              chunk, accumulating across chunks (beta = 1) in float32 for 16-bit dtypes.
// Depthwise convolutions (groups == C) take direct kernels (one thread per output / input
// element; the weight gradient one block per (channel, tap), reduced in a fixed order).
// Workspaces come from the caching allocator (Tensor::empty), at most kWorkspaceBytes a
// chunk (one image at least). float16/bfloat16 run on the tensor cores with float32
// accumulation; float32 may use TF32 when ts.backends.cudnn.allow_tf32 (default True, as
// PyTorch's convolutions).
#include <cublas_v2.h>

#include <algorithm>
#include <limits>

#include "cuda/cublas_util.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/cudnn_conv.h"
#include "cuda/device_types.cuh"
#include "ops/conv.h"
#include "ops/copy.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kWorkspaceBytes = int64_t(1) << 28;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 20));
}

// The geometry as 3-D (1-D and 2-D specs have size-1 leading dims).
struct Geo {
  int64_t N, C, O, G, Cg, Og, K, L, I;
  int64_t D, H, W, Do, Ho, Wo;
  int64_t k0, k1, k2, s0, s1, s2, p0, p1, p2, d0, d1, d2;
};

Geo make_geo(int64_t n, int64_t c, int64_t o, const ConvSpec& s) {
  Geo g;
  g.N = n;
  g.C = c;
  g.O = o;
  g.G = s.groups;
  g.Cg = c / s.groups;
  g.Og = o / s.groups;
  g.K = s.k_numel();
  g.L = s.out_numel();
  g.I = s.in_numel();
  g.D = s.in[0];
  g.H = s.in[1];
  g.W = s.in[2];
  g.Do = s.out(0);
  g.Ho = s.out(1);
  g.Wo = s.out(2);
  g.k0 = s.k[0];
  g.k1 = s.k[1];
  g.k2 = s.k[2];
  g.s0 = s.s[0];
  g.s1 = s.s[1];
  g.s2 = s.s[2];
  g.p0 = s.p[0];
  g.p1 = s.p[1];
  g.p2 = s.p[2];
  g.d0 = s.d[0];
  g.d1 = s.d[1];
  g.d2 = s.d[2];
  return g;
}

bool pointwise(const Geo& g) {
  return g.K == 1 && g.s0 == 1 && g.s1 == 1 && g.s2 == 1 && g.p0 == 0 && g.p1 == 0 && g.p2 == 0;
}
bool depthwise(const Geo& g) { return g.G > 1 && g.Cg == 1 && g.G == g.C; }

// Along one dim: whether input position i is read by tap t, and by which output (*o).
__device__ __forceinline__ bool tap_hits(int64_t i, int64_t t, int64_t s, int64_t p, int64_t d,
                                         int64_t n_out, int64_t* o) {
  const int64_t q = i + p - t * d;
  if (q < 0 || q % s != 0) return false;
  *o = q / s;
  return *o < n_out;
}

// Note [Row lanes]: the column and depthwise-weight kernels walk output rows (fixed image,
// channel, tap, od, oh) with a group of `lanes` threads (a power of two up to 32, about the
// output width) over ow: a row's index arithmetic is done once, and the lanes read and write
// neighbouring elements.
int lane_bits(int64_t wo) {
  int b = 0;
  while (b < 5 && (int64_t(1) << b) < wo) ++b;
  return b;
}

// Columns of images [n0, n0 + nb): element (j, c*K + tap, l) at j * sn + (c*K + tap) * sr + l.
template <class T>
__global__ void im2col_kernel(const T* __restrict__ x, T* __restrict__ cols, Geo g, int64_t n0,
                              int64_t nb, int64_t sn, int64_t sr, int bits) {
  const int lanes = 1 << bits, lane = threadIdx.x & (lanes - 1);
  const int64_t rows = nb * g.C * g.K * g.Do * g.Ho;
  const int64_t step = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> bits;
  for (int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> bits;
       row < rows; row += step) {
    const int64_t oh = row % g.Ho, od = (row / g.Ho) % g.Do;
    const int64_t r = (row / (g.Ho * g.Do)) % (g.C * g.K), j = row / (g.Ho * g.Do * g.C * g.K);
    const int64_t c = r / g.K, tap = r % g.K;
    const int64_t e = tap % g.k2, b = (tap / g.k2) % g.k1, a = tap / (g.k2 * g.k1);
    const int64_t id = od * g.s0 - g.p0 + a * g.d0, ih = oh * g.s1 - g.p1 + b * g.d1;
    const bool in = id >= 0 && id < g.D && ih >= 0 && ih < g.H;
    const T* src = x + ((n0 + j) * g.C + c) * g.I + (in ? (id * g.H + ih) * g.W : 0);
    T* dst = cols + j * sn + r * sr + (od * g.Ho + oh) * g.Wo;
    for (int64_t ow = lane; ow < g.Wo; ow += lanes) {
      const int64_t iw = ow * g.s2 - g.p2 + e * g.d2;
      dst[ow] = in && iw >= 0 && iw < g.W ? src[iw] : T(0.0f);
    }
  }
}

// The adjoint: input pixel (j, c, pos) = the sum of the column entries that read it, taps in
// order (the CPU's col2vol order).
template <class T>
__global__ void col2im_kernel(const T* __restrict__ cols, T* __restrict__ x, Geo g, int64_t n0,
                              int64_t nb, int64_t sn, int64_t sr) {
  using A = dacc_t<T>;
  const int64_t total = nb * g.C * g.I;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pos = i % g.I, c = (i / g.I) % g.C, j = i / (g.I * g.C);
    const int64_t iw = pos % g.W, ih = (pos / g.W) % g.H, id = pos / (g.W * g.H);
    const T* src = cols + j * sn + c * g.K * sr;
    A acc = A(0);
    for (int64_t a = 0; a < g.k0; ++a) {
      int64_t od;
      if (!tap_hits(id, a, g.s0, g.p0, g.d0, g.Do, &od)) continue;
      for (int64_t b = 0; b < g.k1; ++b) {
        int64_t oh;
        if (!tap_hits(ih, b, g.s1, g.p1, g.d1, g.Ho, &oh)) continue;
        for (int64_t e = 0; e < g.k2; ++e) {
          int64_t ow;
          if (!tap_hits(iw, e, g.s2, g.p2, g.d2, g.Wo, &ow)) continue;
          const int64_t tap = (a * g.k1 + b) * g.k2 + e;
          acc += A(src[tap * sr + (od * g.Ho + oh) * g.Wo + ow]);
        }
      }
    }
    x[((n0 + j) * g.C + c) * g.I + pos] = T(acc);
  }
}

// (nb, O, L) images [n0, n0 + nb) -> (O, nb * L).
template <class T>
__global__ void gather_rows_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t O,
                                   int64_t L, int64_t n0, int64_t nb) {
  const int64_t total = nb * O * L;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t l = i % L, o = (i / L) % O, j = i / (L * O);
    dst[o * nb * L + j * L + l] = src[((n0 + j) * O + o) * L + l];
  }
}

// y += b per channel; y (N, O, L) contiguous, or channels-last (N, L, O) in memory (L = 1).
template <class T>
__global__ void add_bias_kernel(T* __restrict__ y, const T* __restrict__ b, int64_t O, int64_t L,
                                int64_t total) {
  using A = dacc_t<T>;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = T(A(y[i]) + A(b[(i / L) % O]));
}

void add_bias(const Tensor& y, const Tensor& b, const Geo& g, cudaStream_t st) {
  const int64_t L = y.is_contiguous() ? g.L : 1;  // channels-last: the channel is innermost
  cuda_visit<kFloatSet>(y.dtype(), "convolution", [&](auto tag) {
    using T = typename decltype(tag)::type;
    add_bias_kernel<T><<<grid_for(y.numel()), kThreads, 0, st>>>(
        reinterpret_cast<T*>(y.data_ptr()), reinterpret_cast<const T*>(b.data_ptr()), g.O, L,
        y.numel());
  });
  TS_CUDA_CHECK_LAUNCH();
}

template <class T>
__global__ void from_float_kernel(const float* __restrict__ src, T* __restrict__ dst, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = T(src[i]);
}

// ---- depthwise (groups == C): Og = O / C outputs per input channel
template <class T>
__global__ void dw_forward_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                  const T* __restrict__ b, T* __restrict__ y, Geo g) {
  using A = dacc_t<T>;
  const int64_t total = g.N * g.O * g.L;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t l = i % g.L, o = (i / g.L) % g.O, n = i / (g.L * g.O), c = o / g.Og;
    const T* xs = x + (n * g.C + c) * g.I;
    const T* ws = w + o * g.K;
    // The window's corner, then the taps without per-tap divisions.
    const int64_t ow = l % g.Wo, oh = (l / g.Wo) % g.Ho, od = l / (g.Wo * g.Ho);
    const int64_t z0 = od * g.s0 - g.p0, y0 = oh * g.s1 - g.p1, x0 = ow * g.s2 - g.p2;
    A acc = b ? A(b[o]) : A(0);
    int64_t tap = 0;
    for (int64_t a = 0; a < g.k0; ++a) {
      const int64_t id = z0 + a * g.d0;
      const bool in_d = id >= 0 && id < g.D;
      for (int64_t bb = 0; bb < g.k1; ++bb) {
        const int64_t ih = y0 + bb * g.d1;
        const bool in_h = in_d && ih >= 0 && ih < g.H;
        for (int64_t e = 0; e < g.k2; ++e, ++tap) {
          const int64_t iw = x0 + e * g.d2;
          if (in_h && iw >= 0 && iw < g.W) acc += A(ws[tap]) * A(xs[(id * g.H + ih) * g.W + iw]);
        }
      }
    }
    y[i] = T(acc);
  }
}

template <class T>
__global__ void dw_transpose_kernel(const T* __restrict__ gy, const T* __restrict__ w,
                                    T* __restrict__ gx, Geo g) {
  using A = dacc_t<T>;
  const int64_t total = g.N * g.C * g.I;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pos = i % g.I, c = (i / g.I) % g.C, n = i / (g.I * g.C);
    const int64_t iw = pos % g.W, ih = (pos / g.W) % g.H, id = pos / (g.W * g.H);
    A acc = A(0);
    for (int64_t m = 0; m < g.Og; ++m) {
      const int64_t o = c * g.Og + m;
      const T* ys = gy + (n * g.O + o) * g.L;
      const T* ws = w + o * g.K;
      for (int64_t a = 0; a < g.k0; ++a) {
        int64_t od;
        if (!tap_hits(id, a, g.s0, g.p0, g.d0, g.Do, &od)) continue;
        for (int64_t bb = 0; bb < g.k1; ++bb) {
          int64_t oh;
          if (!tap_hits(ih, bb, g.s1, g.p1, g.d1, g.Ho, &oh)) continue;
          for (int64_t e = 0; e < g.k2; ++e) {
            int64_t ow;
            if (!tap_hits(iw, e, g.s2, g.p2, g.d2, g.Wo, &ow)) continue;
            acc += A(ws[(a * g.k1 + bb) * g.k2 + e]) * A(ys[(od * g.Ho + oh) * g.Wo + ow]);
          }
        }
      }
    }
    gx[i] = T(acc);
  }
}

// One block per (o, tap): the sum over images and output positions (Note [Row lanes]), then
// a block reduction in a fixed order.
template <class T>
__global__ void dw_weight_kernel(const T* __restrict__ gy, const T* __restrict__ x,
                                 T* __restrict__ gw, Geo g, int bits) {
  using A = dacc_t<T>;
  const int64_t o = blockIdx.x / g.K, tap = blockIdx.x % g.K, c = o / g.Og;
  const int64_t e = tap % g.k2, b = (tap / g.k2) % g.k1, a = tap / (g.k2 * g.k1);
  const int lanes = 1 << bits, lane = threadIdx.x & (lanes - 1);
  const int64_t rows = g.N * g.Do * g.Ho;
  A acc = A(0);
  for (int64_t row = threadIdx.x >> bits; row < rows; row += blockDim.x >> bits) {
    const int64_t oh = row % g.Ho, od = (row / g.Ho) % g.Do, n = row / (g.Ho * g.Do);
    const int64_t id = od * g.s0 - g.p0 + a * g.d0, ih = oh * g.s1 - g.p1 + b * g.d1;
    if (id < 0 || id >= g.D || ih < 0 || ih >= g.H) continue;
    const T* ys = gy + (n * g.O + o) * g.L + (od * g.Ho + oh) * g.Wo;
    const T* xs = x + (n * g.C + c) * g.I + (id * g.H + ih) * g.W;
    for (int64_t ow = lane; ow < g.Wo; ow += lanes) {
      const int64_t iw = ow * g.s2 - g.p2 + e * g.d2;
      if (iw >= 0 && iw < g.W) acc += A(ys[ow]) * A(xs[iw]);
    }
  }
  __shared__ A part[kThreads];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int step = kThreads / 2; step > 0; step >>= 1) {
    if (threadIdx.x < step) part[threadIdx.x] += part[threadIdx.x + step];
    __syncthreads();
  }
  if (threadIdx.x == 0) gw[blockIdx.x] = T(part[0]);
}

// ---- cuBLAS

// float32 uses TF32 when ts.backends.cudnn.allow_tf32, as PyTorch's convolutions do.
GemmTypes conv_gemm_types(DType d) {
  GemmTypes t = gemm_types(d);
  if (d == DType::Float32)
    t.compute = cudnn_flags().allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  return t;
}

struct Gemm {
  cublasHandle_t h;
  GemmTypes ty;
  cudaDataType_t out_type;
  bool wide;  // double alpha/beta
};

int as_int(int64_t v, const char* op) {
  TS_CHECK(v <= std::numeric_limits<int>::max(), ValueError, op,
           ": a dimension of the convolution's GEMM (", v,
           ") exceeds 2^31 on CUDA; hint: use a smaller batch or split the input");
  return static_cast<int>(v);
}

// Row-major C (M x N, ldc) = op(A) (M x K) op(B) (K x N) for `batch` matrices at the given
// element strides (Note [Row-major GEMM] in matmul_cuda.cpp: computed as C^T = B^T A^T).
void rm_gemm(const Gemm& gm, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void* A,
             int64_t lda, int64_t sa, const void* B, int64_t ldb, int64_t sb, void* C, int64_t ldc,
             int64_t sc, int64_t batch, bool accumulate, const char* op) {
  static const double one_d = 1.0, zero_d = 0.0;
  static const float one_f = 1.0f, zero_f = 0.0f;
  const void* alpha = gm.wide ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = accumulate ? (gm.wide ? static_cast<const void*>(&one_d) : &one_f)
                                : (gm.wide ? static_cast<const void*>(&zero_d) : &zero_f);
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                          opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(
      cublasGemmStridedBatchedEx(gm.h, opb, opa, as_int(N, op), as_int(M, op), as_int(K, op), alpha,
                                 B, gm.ty.data, as_int(ldb, op), sb, A, gm.ty.data, as_int(lda, op),
                                 sa, beta, C, gm.out_type, as_int(ldc, op), sc, as_int(batch, op),
                                 gm.ty.compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx", op);
}

Gemm make_gemm(int dev, DType d, bool float_out = false) {
  const GemmTypes ty = conv_gemm_types(d);
  return {cublas_handle(dev), ty, float_out ? CUDA_R_32F : ty.data, d == DType::Float64};
}

// Images per chunk: the workspace of `per_image` elements each within kWorkspaceBytes.
int64_t chunk_images(const Geo& g, int64_t per_image, int64_t itemsize) {
  const int64_t cap = kWorkspaceBytes / std::max<int64_t>(per_image * itemsize, 1);
  return std::clamp<int64_t>(cap, 1, std::max<int64_t>(g.N, 1));
}

template <class T>
T* ptr(const Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

void zero(const Tensor& t, cudaStream_t s) {
  TS_CUDA_CHECK(cudaMemsetAsync(t.data_ptr(), 0, t.numel() * t.itemsize(), s));
}

template <class T>
void forward_gemm(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y, const Geo& g,
                  int dev, cudaStream_t st) {
  const char* op = "convolution";
  const int64_t CgK = g.Cg * g.K, CK = g.C * g.K;
  if (CgK == 0) {
    zero(y, st);
  } else {
    const Gemm gm = make_gemm(dev, y.dtype());
    const T* wp = ptr<T>(w);
    T* yp = ptr<T>(y);
    if (pointwise(g)) {
      for (int64_t gi = 0; gi < g.G; ++gi)
        rm_gemm(gm, false, false, g.Og, g.L, CgK, wp + gi * g.Og * CgK, CgK, 0,
                ptr<T>(x) + gi * CgK * g.I, g.L, g.C * g.I, yp + gi * g.Og * g.L, g.L, g.O * g.L,
                g.N, false, op);
    } else {
      const int64_t B = chunk_images(g, CK * g.L, sizeof(T));
      const int bits = lane_bits(g.Wo);
      Tensor cols = Tensor::empty(Shape{B * CK * g.L}, y.dtype(), y.device());
      for (int64_t n0 = 0; n0 < g.N; n0 += B) {
        const int64_t nb = std::min(B, g.N - n0);
        im2col_kernel<T><<<grid_for((nb * CK * g.Do * g.Ho) << bits), kThreads, 0, st>>>(
            ptr<T>(x), ptr<T>(cols), g, n0, nb, CK * g.L, g.L, bits);
        TS_CUDA_CHECK_LAUNCH();
        for (int64_t gi = 0; gi < g.G; ++gi)
          rm_gemm(gm, false, false, g.Og, g.L, CgK, wp + gi * g.Og * CgK, CgK, 0,
                  ptr<T>(cols) + gi * CgK * g.L, g.L, CK * g.L,
                  yp + n0 * g.O * g.L + gi * g.Og * g.L, g.L, g.O * g.L, nb, false, op);
      }
    }
  }
  if (b) add_bias(y, *b, g, st);
}

template <class T>
void transpose_gemm(const Tensor& gy, const Tensor& w, const Tensor& gx, const Geo& g, int dev,
                    cudaStream_t st) {
  const char* op = "conv_transpose";
  const int64_t CgK = g.Cg * g.K, CK = g.C * g.K;
  if (g.O == 0 || g.L == 0) return zero(gx, st);
  const Gemm gm = make_gemm(dev, gx.dtype());
  const T* wp = ptr<T>(w);
  const T* gyp = ptr<T>(gy);
  if (pointwise(g)) {
    for (int64_t gi = 0; gi < g.G; ++gi)
      rm_gemm(gm, true, false, CgK, g.L, g.Og, wp + gi * g.Og * CgK, CgK, 0, gyp + gi * g.Og * g.L,
              g.L, g.O * g.L, ptr<T>(gx) + gi * CgK * g.I, g.I, g.C * g.I, g.N, false, op);
    return;
  }
  const int64_t B = chunk_images(g, CK * g.L, sizeof(T));
  Tensor cols = Tensor::empty(Shape{B * CK * g.L}, gx.dtype(), gx.device());
  for (int64_t n0 = 0; n0 < g.N; n0 += B) {
    const int64_t nb = std::min(B, g.N - n0);
    for (int64_t gi = 0; gi < g.G; ++gi)
      rm_gemm(gm, true, false, CgK, g.L, g.Og, wp + gi * g.Og * CgK, CgK, 0,
              gyp + n0 * g.O * g.L + gi * g.Og * g.L, g.L, g.O * g.L, ptr<T>(cols) + gi * CgK * g.L,
              g.L, CK * g.L, nb, false, op);
    col2im_kernel<T><<<grid_for(nb * g.C * g.I), kThreads, 0, st>>>(ptr<T>(cols), ptr<T>(gx), g, n0,
                                                                    nb, CK * g.L, g.L);
    TS_CUDA_CHECK_LAUNCH();
  }
}

template <class T>
void weight_gemm(const Tensor& gy, const Tensor& x, const Tensor& gw, const Geo& g, int dev,
                 cudaStream_t st) {
  const char* op = "convolution_backward_weight";
  const int64_t CgK = g.Cg * g.K, CK = g.C * g.K;
  if (g.N == 0 || g.L == 0) return zero(gw, st);
  // 16-bit weights accumulate in a float32 copy across chunks.
  const bool half = sizeof(T) == 2;
  const Gemm gm = make_gemm(dev, gw.dtype(), half);
  Tensor acc = half ? Tensor::empty(gw.shape(), DType::Float32, gw.device()) : gw;
  char* accp = reinterpret_cast<char*>(acc.data_ptr());
  const int64_t osz = half ? 4 : sizeof(T);
  const int64_t B = chunk_images(g, (CK + g.O) * g.L, sizeof(T));
  const int bits = lane_bits(g.Wo);
  Tensor cols = Tensor::empty(Shape{B * CK * g.L}, gw.dtype(), gw.device());
  Tensor gyc = Tensor::empty(Shape{B * g.O * g.L}, gw.dtype(), gw.device());
  for (int64_t n0 = 0; n0 < g.N; n0 += B) {
    const int64_t nb = std::min(B, g.N - n0), BL = nb * g.L;
    gather_rows_kernel<T>
        <<<grid_for(nb * g.O * g.L), kThreads, 0, st>>>(ptr<T>(gy), ptr<T>(gyc), g.O, g.L, n0, nb);
    TS_CUDA_CHECK_LAUNCH();
    im2col_kernel<T><<<grid_for((nb * CK * g.Do * g.Ho) << bits), kThreads, 0, st>>>(
        ptr<T>(x), ptr<T>(cols), g, n0, nb, g.L, BL, bits);
    TS_CUDA_CHECK_LAUNCH();
    for (int64_t gi = 0; gi < g.G; ++gi)
      rm_gemm(gm, false, true, g.Og, CgK, BL, ptr<T>(gyc) + gi * g.Og * BL, BL, 0,
              ptr<T>(cols) + gi * CgK * BL, BL, 0, accp + gi * g.Og * CgK * osz, CgK, 0, 1, n0 > 0,
              op);
  }
  if (half) {
    from_float_kernel<T>
        <<<grid_for(gw.numel()), kThreads, 0, st>>>(ptr<float>(acc), ptr<T>(gw), gw.numel());
    TS_CUDA_CHECK_LAUNCH();
  }
}

// ---- entry points

// The GEMM and depthwise kernels work on contiguous tensors: channels-last operands are
// copied to NCHW, and a channels-last result computed into an NCHW buffer and copied back.
Tensor nchw(const Tensor& t) { return t.is_contiguous() ? t : contiguous(t); }
Tensor nchw_out(const Tensor& t) {
  return t.is_contiguous() ? t : Tensor::empty(t.shape(), t.dtype(), t.device());
}
void finish_out(const Tensor& out, const Tensor& buf) {
  if (out.data_ptr() != buf.data_ptr()) copy_(out, buf);
}

// The common entry: cuDNN when it takes the problem (`cudnn()` true), else `kernels(tag, a, b,
// out, stream)` (the depthwise or GEMM kernels) on contiguous copies of the operands a, b.
template <class Cudnn, class Kernels>
void conv_entry(const char* op, const Tensor& a, const Tensor& b, const Tensor& out, const Geo& g,
                Cudnn&& cudnn, Kernels&& kernels) {
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  if (cudnn()) {
    conv_path_used() = "cudnn";
    return;
  }
  cudaStream_t st = current_stream(dev);
  const Tensor ac = nchw(a), bc = nchw(b), oc = nchw_out(out);
  conv_path_used() = depthwise(g) ? "cuda_depthwise" : "cuda_gemm";
  cuda_visit<kFloatSet>(out.dtype(), op, [&](auto tag) { kernels(tag, ac, bc, oc, st); });
  finish_out(out, oc);
}

void cuda_conv_forward(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y,
                       const ConvSpec& s) {
  const Geo g = make_geo(x.dim(0), x.dim(1), w.dim(0), s);
  conv_entry(
      "convolution", x, w, y, g,
      [&] {
        if (!cudnn_conv_forward(x, w, y, s)) return false;
        if (b) add_bias(y, *b, g, current_stream(y.device().index));
        return true;
      },
      [&](auto tag, const Tensor& xc, const Tensor& wc, const Tensor& yc, cudaStream_t st) {
        using T = typename decltype(tag)::type;
        if (!depthwise(g)) return forward_gemm<T>(xc, wc, b, yc, g, yc.device().index, st);
        dw_forward_kernel<T><<<grid_for(yc.numel()), kThreads, 0, st>>>(
            ptr<T>(xc), ptr<T>(wc), b ? ptr<T>(*b) : nullptr, ptr<T>(yc), g);
        TS_CUDA_CHECK_LAUNCH();
      });
}

void cuda_conv_transpose(const Tensor& gy, const Tensor& w, const Tensor& gx, const ConvSpec& s) {
  const Geo g = make_geo(gx.dim(0), gx.dim(1), w.dim(0), s);
  conv_entry(
      "conv_transpose", gy, w, gx, g, [&] { return cudnn_conv_transpose(gy, w, gx, s); },
      [&](auto tag, const Tensor& gyc, const Tensor& wc, const Tensor& gxc, cudaStream_t st) {
        using T = typename decltype(tag)::type;
        if (!depthwise(g)) return transpose_gemm<T>(gyc, wc, gxc, g, gxc.device().index, st);
        dw_transpose_kernel<T>
            <<<grid_for(gxc.numel()), kThreads, 0, st>>>(ptr<T>(gyc), ptr<T>(wc), ptr<T>(gxc), g);
        TS_CUDA_CHECK_LAUNCH();
      });
}

void cuda_conv_weight(const Tensor& gy, const Tensor& x, const Tensor& gw, const ConvSpec& s) {
  const Geo g = make_geo(x.dim(0), x.dim(1), gw.dim(0), s);
  conv_entry(
      "convolution_backward_weight", gy, x, gw, g, [&] { return cudnn_conv_weight(gy, x, gw, s); },
      [&](auto tag, const Tensor& gyc, const Tensor& xc, const Tensor& gwc, cudaStream_t st) {
        using T = typename decltype(tag)::type;
        if (!depthwise(g)) return weight_gemm<T>(gyc, xc, gwc, g, gwc.device().index, st);
        if (g.N == 0 || g.L == 0) return zero(gwc, st);
        dw_weight_kernel<T><<<static_cast<unsigned>(g.O * g.K), kThreads, 0, st>>>(
            ptr<T>(gyc), ptr<T>(xc), ptr<T>(gwc), g, lane_bits(g.Wo));
        TS_CUDA_CHECK_LAUNCH();
      });
}

}  // namespace

TS_REGISTER_KERNEL(conv_forward_stub, CUDA, &cuda_conv_forward);
TS_REGISTER_KERNEL(conv_transpose_stub, CUDA, &cuda_conv_transpose);
TS_REGISTER_KERNEL(conv_weight_stub, CUDA, &cuda_conv_weight);

}  // namespace ts::cuda
