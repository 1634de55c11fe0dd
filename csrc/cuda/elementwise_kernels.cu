// CUDA kernels for the arithmetic, comparison, logical and bitwise ops (the transcendental
// functions are in math_kernels.cu, to keep each translation unit's compile time short).
#include "cuda/functors.cuh"
#include "cuda/loops.cuh"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/math.h"
#include "ops/rounding.h"

namespace ts::cuda {
namespace {

constexpr uint32_t kIntBool = kIntSet | kBoolSet;
constexpr uint32_t kRealBool = kRealSet | kBoolSet;

TS_CUDA_BINARY(add, kAllSet, Add)
TS_CUDA_BINARY(subtract, kNumericSet, Sub)
TS_CUDA_BINARY(multiply, kAllSet, Mul)
TS_CUDA_BINARY(divide, kInexactSet, Div)
TS_CUDA_UNARY(negative, kNumericSet, Neg)
TS_CUDA_UNARY(conj, kComplexSet, Conj)
TS_CUDA_UNARY(positive, kNumericSet, Positive)
TS_CUDA_UNARY(square, kNumericSet, Square)
TS_CUDA_UNARY(abs, kNumericSet, Abs)
TS_CUDA_UNARY(sign, kNumericSet, Sign)
TS_CUDA_BINARY(pow, kNumericSet, Pow)
TS_CUDA_UNARY(real, kComplexSet, Real)
TS_CUDA_UNARY(imag, kComplexSet, Imag)
TS_CUDA_UNARY(isfinite, kAllSet, IsFinite)
TS_CUDA_UNARY(isinf, kAllSet, IsInf)
TS_CUDA_UNARY(isnan, kAllSet, IsNan)
TS_CUDA_UNARY(signbit, kRealSet, SignBit)

TS_CUDA_BINARY(equal, kAllSet, Eq)
TS_CUDA_BINARY(not_equal, kAllSet, Ne)
TS_CUDA_BINARY(less, kRealBool, Lt)
TS_CUDA_BINARY(less_equal, kRealBool, Le)
TS_CUDA_BINARY(greater, kRealBool, Gt)
TS_CUDA_BINARY(greater_equal, kRealBool, Ge)
TS_CUDA_BINARY(maximum, kRealSet, Max)
TS_CUDA_BINARY(minimum, kRealSet, Min)
TS_CUDA_BINARY(logical_and, kAllSet, LogicalAnd)
TS_CUDA_BINARY(logical_or, kAllSet, LogicalOr)
TS_CUDA_BINARY(logical_xor, kAllSet, LogicalXor)
TS_CUDA_UNARY(logical_not, kAllSet, LogicalNot)
TS_CUDA_BINARY(bitwise_and, kIntBool, BitAnd)
TS_CUDA_BINARY(bitwise_or, kIntBool, BitOr)
TS_CUDA_BINARY(bitwise_xor, kIntBool, BitXor)
TS_CUDA_UNARY(bitwise_invert, kIntBool, BitInvert)
TS_CUDA_BINARY(bitwise_left_shift, kIntSet, ShiftLeft)
TS_CUDA_BINARY(bitwise_right_shift, kIntSet, ShiftRight)
TS_CUDA_BINARY(gcd, kIntSet, Gcd)
TS_CUDA_BINARY(lcm, kIntSet, Lcm)

TS_CUDA_UNARY(ceil, kRealSet, Ceil)
TS_CUDA_UNARY(floor, kRealSet, Floor)
TS_CUDA_UNARY(trunc, kRealSet, Trunc)
TS_CUDA_UNARY(round, kNumericSet, Round)
TS_CUDA_BINARY(floor_divide, kRealSet, FloorDiv)
TS_CUDA_BINARY(remainder, kRealSet, Remainder)

}  // namespace
}  // namespace ts::cuda
