// The arguments every sampler binding parses (defined in bind_random_forms.cpp, used by
// bind_random_samplers.cpp too).
#pragma once
#include "ops/random.h"
#include "python/convert.h"
#include "python/int_arg.h"  // real_arg

namespace ts::python {

// generator=: None (the default generator), a tessera.random.Generator or its _C engine.
Generator& generator_arg(py::handle g, const char* op);
// A size: None (0-d), an int, or a sequence of ints.
Shape size_arg(py::handle size, const char* op);
// The tensor a sampler fills: out (its dtype unless dtype= is given, which must then match;
// resized to shape as torch does) or a new one on the device asked for.
Tensor destination(const Shape& shape, py::handle dtype, DType fallback, py::handle device,
                   py::handle out, const char* op);

}  // namespace ts::python
