// The op x device -> kernel table. Each op declares a stub (a function-pointer slot per device
// type); backends fill their slot with TS_REGISTER_KERNEL at static-initialization time.
// Stubs are constant-initialized, so registration order across files does not matter.
#pragma once
#include "core/device.h"
#include "core/error.h"

namespace ts {

template <class Fn>
struct KernelStub {
  const char* name;
  Fn table[kNumDeviceTypes];

  Fn get(Device d) const {
    Fn f = table[static_cast<int>(d.type)];
    if (!f)
      throw NotImplementedError(str(name, ": no kernel for device ", d.str(),
                                    d.is_cpu() ? "" : " (is the CUDA backend built?)"));
    return f;
  }
};

template <class Fn>
struct KernelRegistrar {
  KernelRegistrar(KernelStub<Fn>& stub, DeviceType d, Fn f) { stub.table[static_cast<int>(d)] = f; }
};

}  // namespace ts

// In a header:  TS_DECLARE_STUB(BinaryKernel, add_stub);
// In one .cpp:  TS_DEFINE_STUB(BinaryKernel, add_stub, "add");
// In a backend: TS_REGISTER_KERNEL(add_stub, CPU, &cpu_add);
#define TS_DECLARE_STUB(Fn, name) extern ::ts::KernelStub<Fn> name
#define TS_DEFINE_STUB(Fn, name, opname) \
  ::ts::KernelStub<Fn> name {            \
    opname, {}                           \
  }
#define TS_REGISTER_KERNEL(name, DEV, fn)                               \
  static ::ts::KernelRegistrar<decltype(fn)> name##_##DEV##_registrar { \
    name, ::ts::DeviceType::DEV, fn                                     \
  }
