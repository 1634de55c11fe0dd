#include "core/tensor.h"

namespace ts {

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->numel = numel_of(shape);
  impl->dtype = dtype;
  impl->contiguous = true;
  int64_t nbytes;
  if (!mul_ok(impl->numel, ts::itemsize(dtype), &nbytes))
    throw ValueError(str("empty: shape ", shape_str(shape), " is too large"));
  impl->storage = std::make_shared<Storage>(nbytes, device);
  return Tensor(std::move(impl));
}

Tensor Tensor::view_of(const StoragePtr& storage, const Shape& shape, const Strides& strides,
                       int64_t offset, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = storage;
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = dtype;
  impl->refresh();
  // Every view stays inside its storage (Note [Checked size arithmetic]): kernels may then
  // compute any offset of it without overflow.
  if (impl->numel > 0)
    check_in_storage(shape, strides, offset, ts::itemsize(dtype), storage->nbytes, "view");
  return Tensor(std::move(impl));
}

Tensor Tensor::as_strided(const Shape& shape, const Strides& strides, int64_t offset) const {
  Tensor v = view_of(impl_->storage, shape, strides, offset, impl_->dtype);
  v.impl()->is_view = true;
  return v;
}

}  // namespace ts
