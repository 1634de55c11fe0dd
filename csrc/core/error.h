// Typed errors raised by ops; csrc/python maps each to its Python exception.
#pragma once
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

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
// Integer division by zero where PyTorch raises (div with rounding_mode on the CPU):
// tessera.errors.ZeroDivisionError, a ZeroDivisionError and a RuntimeError.
struct ZeroDivisionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
// Note [Error text without iostreams]: numbers are formatted with to_string/snprintf, not an
// ostream. A module linked against a static libstdc++ (seen with the GPU machine's toolchain)
// crashed inside the stream locale's num_put when another libstdc++ was loaded in the process;
// this is also cheaper.
inline void cat1(std::string& s, const std::string& v) { s += v; }
inline void cat1(std::string& s, const char* v) { s += v ? v : "(null)"; }
inline void cat1(std::string& s, char v) { s += v; }
template <class T>
void cat1(std::string& s, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    s += v ? '1' : '0';
  } else if constexpr (std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    s += static_cast<char>(v);
  } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
    if constexpr (std::is_enum_v<T>)
      s += std::to_string(static_cast<std::underlying_type_t<T>>(v));
    else
      s += std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    s += buf;
  } else if constexpr (std::is_convertible_v<const T&, std::string>) {
    s += std::string(v);
  } else {
    std::ostringstream os;  // other streamable types (rare in messages)
    os << v;
    s += os.str();
  }
}
inline void cat(std::string&) {}
template <class T, class... R>
void cat(std::string& s, const T& t, const R&... r) {
  cat1(s, t);
  cat(s, r...);
}
}  // namespace detail

template <class... A>
std::string str(const A&... a) {
  std::string s;
  detail::cat(s, a...);
  return s;
}

}  // namespace ts

// TS_CHECK(cond, ErrorType, message parts...): messages start with the op name, e.g. "matmul: ...".
#define TS_CHECK(cond, Err, ...)                          \
  do {                                                    \
    if (!(cond)) throw ::ts::Err(::ts::str(__VA_ARGS__)); \
  } while (0)
