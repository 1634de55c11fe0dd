// Device: every tensor carries one; kernels are registered per device type.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"

namespace ts {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool is_cpu() const { return type == DeviceType::CPU; }
  std::string str() const {
    return type == DeviceType::CPU ? std::string("cpu") : "cuda:" + std::to_string(index);
  }
};

// Parses "cpu", "cuda", "cuda:N".
Device parse_device(const std::string& s);

}  // namespace ts
