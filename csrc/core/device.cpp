#include "core/device.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace ts {

Device parse_device(const std::string& s) {
  if (s == "cpu") return {DeviceType::CPU, 0};
  if (s.rfind("cuda", 0) == 0) {
    if (s.size() == 4) return {DeviceType::CUDA, 0};
    if (s[4] == ':' && s.size() > 5) {
      // The index by hand, bounded: std::stoi's out_of_range would reach users as "stoi", and
      // an index past int16 would wrap.
      bool digits = true;
      int64_t index = 0;
      for (size_t i = 5; i < s.size() && digits; ++i) {
        digits = std::isdigit((unsigned char)s[i]) != 0;
        if (digits) index = std::min<int64_t>(index * 10 + (s[i] - '0'), int64_t{1} << 20);
      }
      if (digits && index > INT16_MAX)
        throw ValueError(str("device: CUDA device index in '", s, "' is out of range (at most ",
                             INT16_MAX, ")"));
      if (digits) return {DeviceType::CUDA, static_cast<int16_t>(index)};
    }
  }
  throw ValueError(str("device: unknown device '", s, "'; expected 'cpu', 'cuda' or 'cuda:N'"));
}

}  // namespace ts
