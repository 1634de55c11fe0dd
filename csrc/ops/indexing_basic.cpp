#include "ops/indexing_basic.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/copy.h"

namespace ts {

namespace {
// Clamps one unpacked slice bound to [0, len] (or [-1, len-1] going backwards), like
// PySlice_AdjustIndices and NumPy.
int64_t clamp_bound(int64_t v, int64_t len, int64_t step) {
  if (v < 0) {
    v = v < -len ? -1 : v + len;  // written to avoid overflowing INT64_MIN + len
    if (v < 0) v = step < 0 ? -1 : 0;
  } else if (v >= len) {
    v = step < 0 ? len - 1 : len;
  }
  return v;
}
}  // namespace

Tensor index_basic(const Tensor& x, const IndexKey& key) {
  int64_t consumed = 0;
  bool has_ellipsis = false;
  for (const IndexItem& it : key) {
    if (it.kind == IndexItem::Int || it.kind == IndexItem::Slice) ++consumed;
    if (it.kind == IndexItem::Ellipsis) {
      if (has_ellipsis) throw IndexError("an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
    }
  }
  TS_CHECK(consumed <= x.ndim(), IndexError, "too many indices for tensor: tensor is ", x.ndim(),
           "-dimensional, but ", consumed, " were indexed");
  Shape shape;
  Strides strides;
  int64_t offset = x.offset(), d = 0;
  for (const IndexItem& it : key) {
    switch (it.kind) {
      case IndexItem::NewAxis:
        shape.push_back(1);
        strides.push_back(d < x.ndim() ? x.strides()[d] * x.dim(d) : 1);
        break;
      case IndexItem::Ellipsis:
        for (int64_t e = x.ndim() - consumed; e > 0; --e, ++d) {
          shape.push_back(x.dim(d));
          strides.push_back(x.strides()[d]);
        }
        break;
      case IndexItem::Int: {
        const int64_t size = x.dim(d);
        int64_t i = it.start;
        TS_CHECK(i >= -size && i < size, IndexError, "index ", i, " is out of bounds for axis ", d,
                 " with size ", size);
        if (i < 0) i += size;
        offset += i * x.strides()[d];
        ++d;
        break;
      }
      case IndexItem::Slice: {
        TS_CHECK(it.step != 0, ValueError, "slice step cannot be zero");
        const int64_t len = x.dim(d), step = it.step;
        const int64_t start = clamp_bound(it.start, len, step),
                      stop = clamp_bound(it.stop, len, step);
        int64_t n = 0;
        if (step > 0 && stop > start) n = (stop - start - 1) / step + 1;
        if (step < 0 && start > stop) n = (start - stop - 1) / (-step) + 1;
        if (n > 0) offset += start * x.strides()[d];
        shape.push_back(n);
        // With at most one element the stride is never used; skipping the product keeps a
        // huge step (x[::2**62]) from overflowing.
        strides.push_back(n > 1 ? x.strides()[d] * step : x.strides()[d]);
        ++d;
        break;
      }
    }
  }
  for (; d < x.ndim(); ++d) {  // trailing axes not named by the key are kept whole
    shape.push_back(x.dim(d));
    strides.push_back(x.strides()[d]);
  }
  Tensor v = x.as_strided(shape, strides, offset);
  if (autograd::needs_grad({&x}))
    autograd::record_index_basic(x, v, key.data(), key.size());
  else
    autograd::note_view(x, v);
  return v;
}

void index_put_basic(const Tensor& x, const IndexKey& key, const Tensor& value) {
  const bool record = autograd::begin_setitem(x, value);
  autograd::GradModeGuard no_grad(false);  // the internal views below are not part of the graph
  Tensor dst = index_basic(x, key);
  Tensor v = value;
  // NumPy accepts a value with extra leading size-1 dims (a[0] = b[None]); drop them.
  if (v.ndim() > dst.ndim()) {
    const int64_t extra = v.ndim() - dst.ndim();
    for (int64_t i = 0; i < extra; ++i)
      TS_CHECK(v.dim(i) == 1, ValueError, "setitem: could not broadcast a value of shape ",
               shape_str(value.shape()), " into a selection of shape ", shape_str(dst.shape()));
    Shape s(v.shape().begin() + extra, v.shape().end());
    Strides st(v.strides().begin() + extra, v.strides().end());
    v = v.as_strided(s, st, v.offset());
  }
  copy_(dst, v);  // copy_ clones v first if their bytes overlap
  if (record) {
    autograd::GradModeGuard grad_on(true);
    autograd::record_index_put(x, value, key.data(), key.size());
  }
}

}  // namespace ts
