// Warnings raised by the core (PyTorch's TORCH_WARN): one handler, installed by the Python
// module, turns them into Python's UserWarning.
#pragma once
#include <string>

namespace ts {

// Note [Warnings from the core]: an op warns through warn(); the _C module installs a handler
// that calls PyErr_WarnEx (so warnings.catch_warnings, filters and -W error behave as for
// PyTorch's warnings; a warning turned into an error propagates as that exception). Without a
// handler (C++ use) the text goes to stderr.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);

}  // namespace ts
