#include "core/warning.h"

#include <cstdio>

namespace ts {
namespace {
WarningHandler g_handler = nullptr;
}  // namespace

void set_warning_handler(WarningHandler handler) { g_handler = handler; }

void warn(const std::string& message) {
  if (g_handler) {
    g_handler(message);
    return;
  }
  std::fprintf(stderr, "Warning: %s\n", message.c_str());
}

}  // namespace ts
