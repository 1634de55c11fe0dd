// CPU kernel for where: a select over raw element bytes (one instantiation per item size).
#include <cstring>

#include "ops/where.h"

namespace ts {
namespace {

struct Bytes16 {
  uint64_t lo, hi;
};

template <class E>
void select_loop(char** p, const int64_t* s, int64_t n) {
  if (s[0] == sizeof(E) && s[1] == 1 && s[2] == sizeof(E) && s[3] == sizeof(E)) {
    E* o = reinterpret_cast<E*>(p[0]);
    const bool* c = reinterpret_cast<const bool*>(p[1]);
    const E* a = reinterpret_cast<const E*>(p[2]);
    const E* b = reinterpret_cast<const E*>(p[3]);
    for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
    const char* src = c ? p[2] + i * s[2] : p[3] + i * s[3];
    *reinterpret_cast<E*>(p[0] + i * s[0]) = *reinterpret_cast<const E*>(src);
  }
}

void where_kernel(const ElementwiseIter& it, int64_t itemsize) {
  auto run = [&](auto tag) {
    using E = typename decltype(tag)::type;
    it.for_each([](char** p, const int64_t* s, int64_t n) { select_loop<E>(p, s, n); });
  };
  switch (itemsize) {
    case 1:
      return run(Tag<uint8_t>{});
    case 2:
      return run(Tag<uint16_t>{});
    case 4:
      return run(Tag<uint32_t>{});
    case 8:
      return run(Tag<uint64_t>{});
    default:
      return run(Tag<Bytes16>{});
  }
}

}  // namespace

TS_REGISTER_KERNEL(where_stub, CPU, &where_kernel);

}  // namespace ts
