#include "core/device.h"

#include <cctype>

namespace ts {

Device parse_device(const std::string& s) {
  if (s == "cpu") return {DeviceType::CPU, 0};
  if (s.rfind("cuda", 0) == 0) {
    if (s.size() == 4) return {DeviceType::CUDA, 0};
    if (s[4] == ':' && s.size() > 5) {
      bool digits = true;
      for (size_t i = 5; i < s.size(); ++i) digits = digits && std::isdigit((unsigned char)s[i]);
      if (digits) return {DeviceType::CUDA, static_cast<int16_t>(std::stoi(s.substr(5)))};
    }
  }
  throw ValueError(str("device: unknown device '", s, "'; expected 'cpu', 'cuda' or 'cuda:N'"));
}

}  // namespace ts
