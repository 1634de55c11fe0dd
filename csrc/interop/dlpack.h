// The DLPack ABI (https://dmlc.github.io/dlpack), written from the published specification.
// Only the layout matters: these structs cross library boundaries inside PyCapsules, so field
// order, widths and the enum values below must match the spec exactly. Version 1.0 layout;
// 1.1 only added flag bits and dtype codes, which this file names but tessera does not produce.
#pragma once
#include <cstdint>

namespace ts::dlpack {

constexpr uint32_t kMajorVersion = 1;
constexpr uint32_t kMinorVersion = 0;

// Capsule names of the Python exchange protocol. A consumer renames the capsule to the "used_"
// name when it takes ownership, which tells the capsule's destructor not to call the deleter.
constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";
constexpr const char* kVersionedCapsuleName = "dltensor_versioned";
constexpr const char* kUsedVersionedCapsuleName = "used_dltensor_versioned";

extern "C" {

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

// DLDeviceType is a C enum in the spec: int-sized, so int32_t here.
enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory: plain CPU memory for a CPU consumer
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
};

struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};

enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};

struct DLDataType {
  uint8_t code;    // a DLDataTypeCode
  uint8_t bits;    // bits per lane: complex64 is 64, bool is 8
  uint16_t lanes;  // 1 for every tessera dtype (>1 would be a SIMD vector type)
};

struct DLTensor {
  void* data;  // for CPU/CUDA a real pointer; the first element is at data + byte_offset
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;    // ndim entries
  int64_t* strides;  // ndim entries, in ELEMENTS; may be NULL for a C-contiguous tensor
  uint64_t byte_offset;
};

// Legacy (pre-1.0, unversioned) managed tensor.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

constexpr uint64_t kFlagReadOnly = 1ull << 0;         // the consumer must not write
constexpr uint64_t kFlagIsCopied = 1ull << 1;         // the producer made a copy the consumer owns
constexpr uint64_t kFlagIsSubbytePadded = 1ull << 2;  // 1.1: sub-byte types padded to bytes

// DLPack 1.x managed tensor. version/manager_ctx/deleter come first and stay ABI-stable across
// major versions, so a consumer can read the version before trusting the rest.
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

}  // extern "C"

static_assert(sizeof(DLDevice) == 8, "DLDevice layout");
static_assert(sizeof(DLDataType) == 4, "DLDataType layout");
static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");
static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned layout");

}  // namespace ts::dlpack
