#include "core/shape.h"

#include <algorithm>

#include "core/error.h"

namespace ts {

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw ValueError(str("negative dimension in shape ", shape_str(s)));
    if (__builtin_mul_overflow(n, d, &n))
      throw ValueError(str("shape ", shape_str(s), " has more than 2^63 elements"));
  }
  return n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (int64_t i = s.size() - 1; i >= 0; --i) {
    st[i] = acc;
    if (i > 0 && !mul_ok(acc, std::max<int64_t>(s[i], 1), &acc))
      throw ValueError(str("shape ", shape_str(s), " is too large: its strides overflow int64"));
  }
  return st;
}

bool strided_extent(const Shape& shape, const Strides& strides, int64_t offset, int64_t* lo,
                    int64_t* hi) {
  int64_t l = offset, h = offset;
  for (int64_t d = 0; d < shape.size(); ++d) {
    int64_t ext;
    if (!mul_ok(shape[d] - 1, strides[d], &ext)) return false;
    if (!add_ok(ext < 0 ? l : h, ext, ext < 0 ? &l : &h)) return false;
  }
  *lo = l;
  *hi = h;
  return true;
}

namespace {
std::string list_str(const SmallVec<int64_t, 6>& v) {  // PyTorch prints sizes as [a, b]
  std::string r = "[";
  for (int64_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r + "]";
}
}  // namespace

void check_in_storage(const Shape& shape, const Strides& strides, int64_t offset, int64_t itemsize,
                      int64_t storage_nbytes, const char* op) {
  TS_CHECK(shape.size() == strides.size(), RuntimeError, op, ": shape ", shape_str(shape),
           " and strides ", shape_str(strides), " differ in length");
  for (int64_t d : shape)
    TS_CHECK(d >= 0, RuntimeError, op, ": negative size in ", shape_str(shape));
  if (numel_of(shape) > 0) {  // an empty geometry reaches no element
    int64_t lo, hi, need;
    if (!strided_extent(shape, strides, offset, &lo, &hi) || !add_ok(hi, 1, &need) ||
        !mul_ok(need, itemsize, &need))
      throw RuntimeError(str(op, ": Storage size calculation overflowed with sizes=",
                             list_str(shape), " and strides=", list_str(strides)));
    TS_CHECK(lo >= 0 && need <= storage_nbytes, RuntimeError, op, ": sizes ", list_str(shape),
             ", strides ", list_str(strides), ", storage offset ", offset, ", and itemsize ",
             itemsize,
             lo < 0 ? std::string(" reach below the start of the storage and")
                    : " requiring a storage size of " + std::to_string(need),
             " are out of bounds for storage of size ", storage_nbytes);
  }
  // Kernels scale every stride to bytes, those of size-1 dims too (which reach nothing).
  for (int64_t st : strides) {
    int64_t b;
    TS_CHECK(st != INT64_MIN && mul_ok(st, itemsize, &b), RuntimeError, op, ": stride ", st, " in ",
             list_str(strides), " overflows int64 when scaled to bytes");
  }
}

bool is_contiguous(const Shape& shape, const Strides& strides) {
  // An empty tensor is contiguous whatever its strides (PyTorch's rule).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return true;
  int64_t expected = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (int64_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  if (s.size() == 1) r += ",";
  return r + ")";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const int64_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      throw ValueError(str(op, ": shapes ", shape_str(a), " and ", shape_str(b),
                           " cannot be broadcast together: ", da, " != ", db, " at dim ", i - n,
                           " (counting from the end)"));
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(
        str(op, ": axis ", axis, " is out of bounds for a tensor of dimension ", ndim));
  return axis < 0 ? axis + ndim : axis;
}

}  // namespace ts
