#include "iter/reduce_iter.h"

#include <algorithm>
#include <cstdlib>

namespace ts {

namespace {
struct Dim {
  int64_t size, in, out;
  bool red;
};
}  // namespace

ReducePlan ReducePlan::make(const Tensor& in, const SmallVec<bool, 8>& reduce, const Tensor& out,
                            bool keep_reduced_order) {
  ReducePlan p;
  p.in = in.data_ptr();
  p.out = out.data_ptr();
  const int64_t isz = in.itemsize(), osz = out.itemsize();
  const Strides ost = contiguous_strides(out.shape());
  SmallVec<Dim, 8> dims;
  for (int64_t d = 0; d < in.ndim(); ++d) {
    const int64_t n = in.dim(d);
    if (reduce[d])
      p.n_red *= n;
    else
      p.n_out *= n;
    if (n == 1) continue;
    Dim dm{n, in.strides()[d] * isz, reduce[d] ? 0 : ost[d] * osz, reduce[d]};
    if (dm.in < 0 && !(keep_reduced_order &&
                       dm.red)) {  // walk backwards dims forwards: flip input and output together
      p.in += (n - 1) * dm.in;
      dm.in = -dm.in;
      p.out += (n - 1) * dm.out;
      dm.out = -dm.out;
    }
    dims.push_back(dm);
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [](const Dim& a, const Dim& b) { return std::llabs(a.in) < std::llabs(b.in); });
  for (const Dim& d : dims) {
    Shape& sizes = d.red ? p.red_sizes : p.kept_sizes;
    Strides& st = d.red ? p.red_strides : p.kept_in;
    const int64_t last = sizes.size() - 1;
    if (last >= 0 && st[last] * sizes[last] == d.in &&
        (d.red || p.kept_out[last] * sizes[last] == d.out)) {
      sizes[last] *= d.size;  // walks as one dim with the previous one
      continue;
    }
    sizes.push_back(d.size);
    st.push_back(d.in);
    if (!d.red) p.kept_out.push_back(d.out);
  }
  if (p.n_red == 0) {  // an empty reduction: every output is the op's identity
    p.red_sizes = Shape{0};
    p.red_strides = Strides{0};
  }
  if (p.red_sizes.empty()) {  // nothing to reduce (0-d input or size-1 axes): runs of one
    p.red_sizes.push_back(1);
    p.red_strides.push_back(0);
  }
  return p;
}

}  // namespace ts
