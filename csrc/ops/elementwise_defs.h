// Shorthand for declaring and defining elementwise ops (a kernel stub plus its ElementwiseDef).
#pragma once
#include "ops/elementwise.h"

// In a header: TS_DECLARE_ELEMENTWISE(exp) declares exp_stub and the def kExp-style object
// `exp_def`.
#define TS_DECLARE_ELEMENTWISE(op)                     \
  TS_DECLARE_STUB(::ts::ElementwiseKernel, op##_stub); \
  extern const ::ts::ElementwiseDef op##_def

// In the op's .cpp: the stub and the def (dtype set, input rule, output rule, "allowed" text).
#define TS_DEFINE_ELEMENTWISE(op, set, in, out, desc)                \
  TS_DEFINE_STUB(::ts::ElementwiseKernel, op##_stub, #op);           \
  const ::ts::ElementwiseDef op##_def {                              \
#op, &op##_stub, set, ::ts::InRule::in, ::ts::OutRule::out, desc \
  }
