// TensorImpl (storage, shape, strides, offset, dtype, flags) and the Tensor handle.
#pragma once
#include <memory>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace ts {

namespace autograd {
struct AutogradMeta;
}

struct TensorImpl {
  StoragePtr storage;
  Shape shape;
  Strides strides;     // in elements
  int64_t offset = 0;  // in elements
  int64_t numel = 0;
  DType dtype = DType::Float32;
  bool contiguous = true;
  // A Python scalar wrapped as a 0-d tensor: weak in type promotion (Note [Type promotion]).
  bool wrapped_number = false;
  // Shares its storage with the tensor it was made from (in-place autograd refuses views).
  bool is_view = false;
  // requires_grad, grad, grad_fn, hooks: null for the (common) tensors autograd never saw.
  std::shared_ptr<autograd::AutogradMeta> autograd;

  void refresh() {  // recompute cached numel / contiguity after shape or strides change
    numel = numel_of(shape);
    contiguous = is_contiguous(shape, strides);
  }
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Fresh, uninitialized, contiguous.
  static Tensor empty(const Shape& shape, DType dtype, Device device = {});
  // A view over `storage` (no copy).
  static Tensor view_of(const StoragePtr& storage, const Shape& shape, const Strides& strides,
                        int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  const Shape& shape() const { return impl_->shape; }
  const Strides& strides() const { return impl_->strides; }
  int64_t ndim() const { return impl_->shape.size(); }
  int64_t dim(int64_t i) const { return impl_->shape[i]; }
  int64_t numel() const { return impl_->numel; }
  int64_t offset() const { return impl_->offset; }
  DType dtype() const { return impl_->dtype; }
  int64_t itemsize() const { return ts::itemsize(impl_->dtype); }
  int64_t nbytes() const { return impl_->numel * itemsize(); }
  Device device() const { return impl_->storage->device; }
  bool is_contiguous() const { return impl_->contiguous; }
  bool is_wrapped_number() const { return impl_->wrapped_number; }
  const StoragePtr& storage() const { return impl_->storage; }

  char* data_ptr() const {
    return static_cast<char*>(impl_->storage->data) + impl_->offset * itemsize();
  }
  template <class T>
  T* data() const {
    return reinterpret_cast<T*>(data_ptr());
  }

  // A new view sharing storage with different geometry.
  Tensor as_strided(const Shape& shape, const Strides& strides, int64_t offset) const;
  // Marks an in-place write (bumps the shared version counter).
  void bump_version() const { impl_->storage->version.fetch_add(1, std::memory_order_relaxed); }
  uint64_t version() const { return impl_->storage->version.load(std::memory_order_relaxed); }
  // A factory's result starts at version 0, as PyTorch's do, whatever its fills bumped. Only
  // for a tensor nothing else has seen yet.
  void reset_version() const { impl_->storage->version.store(0, std::memory_order_relaxed); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace ts
