// CUDA kernels for the transcendental elementwise functions. The complex forms that cuda::std
// lacks (expm1, log1p, log2 of complex) raise TypeError on CUDA.
#include "cuda/functors.cuh"
#include "cuda/loops.cuh"
#include "ops/math.h"

namespace ts::cuda {
namespace {

TS_CUDA_UNARY(exp, kInexactSet, Exp)
TS_CUDA_UNARY(log, kInexactSet, Log)
TS_CUDA_UNARY(sqrt, kInexactSet, Sqrt)
TS_CUDA_UNARY(sin, kInexactSet, Sin)
TS_CUDA_UNARY(cos, kInexactSet, Cos)
TS_CUDA_UNARY(tan, kInexactSet, Tan)
TS_CUDA_UNARY(asin, kInexactSet, Asin)
TS_CUDA_UNARY(acos, kInexactSet, Acos)
TS_CUDA_UNARY(atan, kInexactSet, Atan)
TS_CUDA_UNARY(sinh, kInexactSet, Sinh)
TS_CUDA_UNARY(cosh, kInexactSet, Cosh)
TS_CUDA_UNARY(tanh, kInexactSet, Tanh)
TS_CUDA_UNARY(asinh, kInexactSet, Asinh)
TS_CUDA_UNARY(acosh, kInexactSet, Acosh)
TS_CUDA_UNARY(atanh, kInexactSet, Atanh)
TS_CUDA_UNARY(log10, kInexactSet, Log10)
TS_CUDA_UNARY(expm1, kFloatSet, Expm1)
TS_CUDA_UNARY(log1p, kFloatSet, Log1p)
TS_CUDA_UNARY(log2, kFloatSet, Log2)
TS_CUDA_UNARY(reciprocal, kInexactSet, Reciprocal)
TS_CUDA_BINARY(atan2, kFloatSet, Atan2)
TS_CUDA_BINARY(hypot, kFloatSet, Hypot)
TS_CUDA_BINARY(copysign, kFloatSet, CopySign)
TS_CUDA_BINARY(logaddexp, kFloatSet, LogAddExp)

}  // namespace
}  // namespace ts::cuda
