#include "core/shape.h"

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
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

bool is_contiguous(const Shape& shape, const Strides& strides) {
  int64_t expected = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] == 0) return true;
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
