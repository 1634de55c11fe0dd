// Typed errors raised by ops; csrc/python maps each to its Python exception.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ts {

struct TypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct IndexError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NotImplementedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
inline void cat(std::ostringstream&) {}
template <class T, class... R>
void cat(std::ostringstream& os, const T& t, const R&... r) {
  os << t;
  cat(os, r...);
}
}  // namespace detail

template <class... A>
std::string str(const A&... a) {
  std::ostringstream os;
  detail::cat(os, a...);
  return os.str();
}

}  // namespace ts

// TS_CHECK(cond, ErrorType, message parts...): messages start with the op name, e.g. "matmul: ...".
#define TS_CHECK(cond, Err, ...)                          \
  do {                                                    \
    if (!(cond)) throw ::ts::Err(::ts::str(__VA_ARGS__)); \
  } while (0)
