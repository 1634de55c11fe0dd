#include "interop/dlpack_convert.h"

#include <cstring>
#include <memory>

#include "ops/copy.h"

namespace ts::dlpack {

// More dimensions than any producer makes (NumPy's limit is 64).
constexpr int32_t kMaxImportNdim = 1024;

DLDataType to_dl_dtype(DType d) {
  const auto bits = static_cast<uint8_t>(itemsize(d) * 8);
  uint8_t code = kDLFloat;
  if (is_bool(d))
    code = kDLBool;
  else if (is_signed_int(d))
    code = kDLInt;
  else if (is_unsigned_int(d))
    code = kDLUInt;
  else if (d == DType::BFloat16)
    code = kDLBfloat;
  else if (is_complex(d))
    code = kDLComplex;
  return DLDataType{code, bits, 1};
}

DType from_dl_dtype(DLDataType t, const char* op) {
  TS_CHECK(t.lanes == 1, TypeError, op, ": DLPack vector dtypes (lanes=", t.lanes,
           ") are not supported");
  const int bits = t.bits;
  switch (t.code) {
    case kDLBool:
      if (bits == 8) return DType::Bool;
      break;
    case kDLInt:
      if (bits == 8) return DType::Int8;
      if (bits == 16) return DType::Int16;
      if (bits == 32) return DType::Int32;
      if (bits == 64) return DType::Int64;
      break;
    case kDLUInt:
      if (bits == 8) return DType::UInt8;
      if (bits == 16) return DType::UInt16;
      if (bits == 32) return DType::UInt32;
      if (bits == 64) return DType::UInt64;
      break;
    case kDLFloat:
      if (bits == 16) return DType::Float16;
      if (bits == 32) return DType::Float32;
      if (bits == 64) return DType::Float64;
      break;
    case kDLBfloat:
      if (bits == 16) return DType::BFloat16;
      break;
    case kDLComplex:
      if (bits == 64) return DType::Complex64;
      if (bits == 128) return DType::Complex128;
      break;
    default:
      break;
  }
  throw TypeError(str(op, ": DLPack dtype (code=", int(t.code), ", bits=", bits,
                      ") has no tessera equivalent; supported: bool, int/uint 8-64, float16, "
                      "bfloat16, float32/64, complex64/128"));
}

DLDevice to_dl_device(Device d) {
  return d.is_cpu() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, d.index};
}

Device from_dl_device(DLDevice d, const char* op) {
  // Pinned host memory is ordinary CPU memory to a CPU consumer.
  if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost) return Device{};
#if TESSERA_WITH_CUDA
  if (d.device_type == kDLCUDA || d.device_type == kDLCUDAManaged)
    return Device{DeviceType::CUDA, static_cast<int16_t>(d.device_id)};
#endif
  const bool cuda = d.device_type == kDLCUDA || d.device_type == kDLCUDAManaged;
  throw RuntimeError(str(op, ": the data is on DLPack device (", int(d.device_type), ", ",
                         d.device_id, ")",
                         cuda ? ", CUDA memory, but this build has no CUDA backend; hint: move "
                                "it to the host first (e.g. x.cpu())"
                              : ", which tessera does not support; hint: move it to the host"));
}

namespace {

// Owns everything a managed tensor points into; freed by the deleter. Heap-allocated once and
// never moved, so the DLTensor may point at its shape/strides members directly.
template <class M>
struct ExportCtx {
  M managed{};
  // The storage, not the tensor: t.set_() / t.data = ... may give the tensor other memory while
  // the consumer still reads this one (Note [Exported storage] in python/py_buffer.h).
  StoragePtr storage;
  Shape shape;
  Strides strides;

  static void deleter(M* self) { delete static_cast<ExportCtx*>(self->manager_ctx); }

  static M* make(const Tensor& t) {
    auto* ctx = new ExportCtx;
    ctx->storage = t.storage();
    ctx->storage->resizable = false;
    ctx->shape = t.shape();
    ctx->strides = t.strides();
    DLTensor& dl = ctx->managed.dl_tensor;
    // data points at the first element and byte_offset is 0: what CPU consumers expect.
    dl.data = t.data_ptr();
    dl.device = to_dl_device(t.device());
    dl.ndim = static_cast<int32_t>(t.ndim());
    dl.dtype = to_dl_dtype(t.dtype());
    dl.shape = ctx->shape.data();
    dl.strides = ctx->strides.data();
    dl.byte_offset = 0;
    ctx->managed.manager_ctx = ctx;
    ctx->managed.deleter = &ExportCtx::deleter;
    return &ctx->managed;
  }
};


}  // namespace

DLManagedTensorVersioned* export_versioned(const Tensor& t, uint64_t flags) {
  DLManagedTensorVersioned* m = ExportCtx<DLManagedTensorVersioned>::make(t);
  m->version = DLPackVersion{kMajorVersion, kMinorVersion};
  m->flags = flags;
  return m;
}

DLManagedTensor* export_legacy(const Tensor& t) { return ExportCtx<DLManagedTensor>::make(t); }

Tensor import_tensor(const DLTensor& dl, bool readonly, bool allow_copy,
                     std::function<void()> release, const std::function<void()>& on_commit) {
  const char* op = "from_dlpack";
  const DType dtype = from_dl_dtype(dl.dtype, op);
  const Device device = from_dl_device(dl.device, op);
  TS_CHECK(dl.ndim >= 0, ValueError, op, ": negative ndim ", dl.ndim);
  // The producer's shape and strides arrays hold ndim entries each: an absurd ndim (2^30)
  // made an 8 GiB copy of memory past them (or a read far out of bounds) before any check.
  TS_CHECK(dl.ndim <= kMaxImportNdim, ValueError, op, ": ndim ", dl.ndim,
           " is larger than ", kMaxImportNdim, " (a malformed DLPack capsule?)");
  TS_CHECK(dl.ndim == 0 || dl.shape != nullptr, ValueError, op, ": shape is NULL for ndim ",
           dl.ndim);
  Shape shape(dl.shape, dl.shape + dl.ndim);
  for (int64_t s : shape)
    TS_CHECK(s >= 0, ValueError, op, ": negative dimension in shape ", shape_str(shape));
  // NULL strides mean C-contiguous (allowed by DLPack; common from older producers).
  Strides strides =
      dl.strides ? Strides(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);
  const int64_t isz = itemsize(dtype);
  // Element offsets (lo, hi) reachable from the first element (0, 0 when empty), and the
  // bytes they span, all checked: a producer's shape and strides are untrusted input.
  int64_t lo = 0, hi = 0, nbytes = 0, lo_bytes = 0;
  if (numel_of(shape) > 0) {
    TS_CHECK(strided_extent(shape, strides, 0, &lo, &hi) && mul_ok(lo, isz, &lo_bytes) &&
                 !__builtin_sub_overflow(hi, lo, &nbytes) && add_ok(nbytes, 1, &nbytes) &&
                 mul_ok(nbytes, isz, &nbytes),
             ValueError, op, ": shape ", shape_str(shape), " and strides ", shape_str(strides),
             " span more than 2^63 bytes");
  }
  // A NULL data pointer with elements, or a byte_offset that wraps the address space (e.g.
  // 2^64 - 8, a pointer below data), named memory that is not the producer's.
  TS_CHECK(dl.data != nullptr || nbytes == 0, ValueError, op, ": the data pointer is NULL for ",
           "a tensor of shape ", shape_str(shape), " (a malformed DLPack capsule)");
  uintptr_t first_addr = 0, base_addr = 0;
  TS_CHECK(dl.byte_offset <= static_cast<uint64_t>(INT64_MAX) &&
               !__builtin_add_overflow(reinterpret_cast<uintptr_t>(dl.data),
                                       static_cast<uintptr_t>(dl.byte_offset), &first_addr) &&
               !__builtin_add_overflow(first_addr, lo_bytes, &base_addr) &&
               (nbytes == 0 || !__builtin_add_overflow(base_addr, nbytes, &base_addr)),
           ValueError, op, ": byte_offset ", dl.byte_offset, " with shape ", shape_str(shape),
           " and strides ", shape_str(strides),
           " reaches outside the address space (a malformed DLPack capsule)");
  char* first = static_cast<char*>(dl.data) + dl.byte_offset;
  char* base = first + lo_bytes;  // negative strides reach below the first element
  const bool aligned = reinterpret_cast<uintptr_t>(first) % isz == 0;
  TS_CHECK(aligned || allow_copy, ValueError, op,
           ": copy=False but the data is not aligned to its ", isz,
           "-byte element size and can only be imported by copying");
  TS_CHECK(aligned || device.is_cpu(), ValueError, op, ": the data on ", device.str(),
           " is not aligned to its element size");

  // Note [Bool bytes] (python/convert.cpp): bytes other than 0 and 1 import as a normalized
  // copy (host memory only; device data is trusted).
  bool odd_bools = false;
  if (dtype == DType::Bool && device.is_cpu() && nbytes > 0) {
    const auto* p = reinterpret_cast<const uint8_t*>(base);
    uint8_t any = 0;
    for (int64_t i = 0; i < nbytes; ++i) any |= p[i];
    odd_bools = any > 1;
    TS_CHECK(!odd_bools || allow_copy, ValueError, op,
             ": copy=False but the bool data holds bytes other than 0 and 1; tessera imports "
             "such data only as a normalized copy (x != 0)");
  }

  on_commit();  // from here on this function owns the producer's tensor
  auto storage = std::make_shared<Storage>(base, nbytes, device, std::move(release));
  storage->readonly = readonly;
  if (aligned && !odd_bools) return Tensor::view_of(storage, shape, strides, -lo, dtype);
  // Misaligned host memory (or odd bools): copy the bytes (same geometry) so kernels see
  // aligned (normalized) elements.
  auto owned = std::make_shared<Storage>(nbytes, device);
  if (nbytes) std::memcpy(owned->data, base, static_cast<size_t>(nbytes));
  if (odd_bools)
    for (int64_t i = 0; i < nbytes; ++i) {
      auto* b = static_cast<uint8_t*>(owned->data) + i;
      *b = *b != 0;
    }
  return Tensor::view_of(owned, shape, strides, -lo, dtype);
}

}  // namespace ts::dlpack
