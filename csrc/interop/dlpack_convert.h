// Tensor <-> DLPack managed tensors, without Python (capsules live in csrc/interop/py_dlpack.*).
#pragma once
#include <functional>

#include "core/tensor.h"
#include "interop/dlpack.h"

namespace ts::dlpack {

DLDataType to_dl_dtype(DType d);
DType from_dl_dtype(DLDataType t, const char* op);  // TypeError for codes tessera lacks
DLDevice to_dl_device(Device d);
Device from_dl_device(DLDevice d, const char* op);  // RuntimeError for devices not built

// A managed tensor that keeps `t` (its TensorImpl and storage) alive until the consumer calls
// its deleter; it owns its shape/strides arrays. export_versioned fills version and flags.
DLManagedTensorVersioned* export_versioned(const Tensor& t, uint64_t flags);
DLManagedTensor* export_legacy(const Tensor& t);

// A tensor viewing the memory `dl` describes. `release` runs exactly once, when the last view
// dies (it must call the producer's deleter). Checks dtype/device/geometry BEFORE taking
// ownership: when this throws, `release` has not been stored and the caller still owns `dl`.
// Data that is not aligned to the element size is copied (ValueError when !allow_copy).
Tensor import_tensor(const DLTensor& dl, bool readonly, bool allow_copy,
                     std::function<void()> release, const std::function<void()>& on_commit);

}  // namespace ts::dlpack
