// The _C extension module: registers error translation, then each area's bindings.
#include "core/cpu_allocator.h"
#include "core/no_cuda_error.h"
#include "core/warning.h"
#include "python/convert.h"

namespace ts::python {
void init_dtype(py::module_& m);
void init_device(py::module_& m);
void init_tensor(py::module_& m);
void init_tensor_methods(py::module_& m);
void init_config(py::module_& m);
void init_core(py::module_& m);
void init_elementwise(py::module_& m);
void init_special(py::module_& m);
// Areas filled in by their own bindings files; each defines its init_* (see below).
void init_reduction(py::module_& m);
void init_creation(py::module_& m);
void init_manipulation(py::module_& m);
void init_views(py::module_& m);
void init_indexing(py::module_& m);
void init_search(py::module_& m);
void init_index_forms(py::module_& m);
void init_interop(py::module_& m);
void init_autograd(py::module_& m);
void init_linalg(py::module_& m);
void init_matmul(py::module_& m);
void init_random(py::module_& m);
void init_generator(py::module_& m);  // bind_generator.cpp (after init_random_samplers)
void init_fft(py::module_& m);
void init_cuda(py::module_& m);
void init_optim(py::module_& m);
void init_nn(py::module_& m);
void init_loss(py::module_& m);
void init_activation(py::module_& m);
void init_conv(py::module_& m);
void init_pool(py::module_& m);
void init_autocast(py::module_& m);
void init_attention(py::module_& m);
void init_asarray(py::module_& m);
void init_resample(py::module_& m);
void init_random_forms(py::module_& m);
void init_similarity(py::module_& m);
void init_dropout(py::module_& m);
void init_norm(py::module_& m);
void init_torch_nn(py::module_& m);
void init_random_samplers(py::module_& m);
void init_shuffle(py::module_& m);
void init_embedding(py::module_& m);
void init_fractional_pool(py::module_& m);
void init_distance(py::module_& m);
void init_gumbel_softmax(py::module_& m);
void init_bilinear(py::module_& m);
void init_tensor_protocols(py::module_& m);
void init_pointwise_torch(py::module_& m);
void init_statistics_torch(py::module_& m);
void init_einsum(py::module_& m);
void init_stft(py::module_& m);
void init_sets(py::module_& m);
void init_inplace_methods(py::module_& m);        // after the out-of-place methods
void install_arg_errors(py::module_& m);          // then: wraps every binding above
void init_text_signatures(py::module_& m);        // text_signatures.cpp
void install_text_signatures(py::module_& m);     // then: a text signature for each binding
void install_keyword_fast_paths(py::module_& m);  // then (they copy the docstrings)
void alias_tensor_methods(py::module_& m);        // last: Tensor.arccos is Tensor.acos
}  // namespace ts::python

namespace {
// Note [Errors that are also RuntimeErrors]: the core's TypeError and ValueError reach Python
// as tessera.errors.TypeError / .ValueError (python/tessera/errors.py), subclasses of both the
// builtin and RuntimeError: NumPy-minded code catches ValueError, PyTorch-minded code catches
// RuntimeError (what PyTorch raises for bad shapes and unsupported dtypes), and both work.
PyObject* g_type_error = nullptr;
PyObject* g_value_error = nullptr;
PyObject* g_zero_division_error = nullptr;
PyObject* g_int_range_error = nullptr;
PyObject* g_cuda_not_compiled = nullptr;

PyObject* new_error(py::module_& m, const char* name, PyObject* builtin, const char* doc,
                    PyObject* second_base = PyExc_RuntimeError) {
  PyObject* bases = PyTuple_Pack(2, builtin, second_base);
  const std::string qual = std::string("tessera.errors.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(cls));  // the module keeps a reference for the process
  return cls;
}

void register_errors(py::module_& m) {
  g_type_error = new_error(m, "TypeError", PyExc_TypeError,
                           "A dtype or argument type an op does not accept (also a RuntimeError, "
                           "as PyTorch reports it).");
  g_value_error = new_error(m, "ValueError", PyExc_ValueError,
                            "A shape or argument value an op does not accept (also a "
                            "RuntimeError, as PyTorch reports it).");
  g_zero_division_error =
      new_error(m, "ZeroDivisionError", PyExc_ZeroDivisionError,
                "Integer division by zero where PyTorch raises (also a RuntimeError).");
  g_int_range_error =
      new_error(m, "IntRangeError", PyExc_OverflowError,
                "An integer argument beyond what the op can represent: an OverflowError "
                "(NumPy's class) that is also a ValueError (a bad value).",
                PyExc_ValueError);
  g_cuda_not_compiled =
      new_error(m, "CudaNotCompiledError", PyExc_AssertionError,
                "CUDA asked of a build without the CUDA backend: an AssertionError, as PyTorch's "
                "'Torch not compiled with CUDA enabled', that is also a RuntimeError.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ts::CudaNotCompiledError& e) {
      PyErr_SetString(g_cuda_not_compiled, e.what());
    } catch (const ts::TypeError& e) {
      PyErr_SetString(g_type_error, e.what());
    } catch (const ts::ValueError& e) {
      PyErr_SetString(g_value_error, e.what());
    } catch (const ts::ZeroDivisionError& e) {
      PyErr_SetString(g_zero_division_error, e.what());
    } catch (const ts::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ts::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const ts::RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const ts::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "out of memory while allocating a tensor");
    } catch (const py::cast_error& e) {
      // py::cast inside a binding: an int beyond int64 (the usual case) or a wrong type.
      const std::string msg = e.what();
      const bool big_int = msg.find("of type <class 'int'>") != std::string::npos;
      PyErr_SetString(big_int ? PyExc_ValueError : PyExc_TypeError,
                      big_int ? "integer argument out of range for a 64-bit integer"
                              : ("argument of the wrong type: " + msg).c_str());
    }
  });
}
// Note [Warnings from the core]: the core's warnings are Python UserWarnings from the caller's
// frame; one a filter turns into an error propagates as that exception.
void python_warning(const std::string& message) {
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw py::error_already_set();
}
}  // namespace

namespace ts::python {
PyObject* int_range_error() { return g_int_range_error; }
}  // namespace ts::python

PYBIND11_MODULE(_C, m) {
  m.doc() = "tessera's C++ core";
  register_errors(m);
  ts::set_warning_handler(&python_warning);
  ts::python::init_dtype(m);
  ts::python::init_device(m);
  ts::python::init_tensor(m);
  ts::python::init_tensor_methods(m);
  ts::python::init_config(m);
  ts::python::init_core(m);
  ts::python::init_elementwise(m);
  ts::python::init_special(m);
  ts::python::init_reduction(m);
  ts::python::init_creation(m);
  ts::python::init_manipulation(m);
  ts::python::init_views(m);
  ts::python::init_indexing(m);
  ts::python::init_search(m);
  ts::python::init_index_forms(m);
  ts::python::init_interop(m);
  ts::python::init_cuda(m);
  ts::python::init_autograd(m);
  ts::python::init_linalg(m);
  ts::python::init_matmul(m);
  ts::python::init_random(m);
  ts::python::init_fft(m);
  ts::python::init_optim(m);
  ts::python::init_nn(m);
  ts::python::init_loss(m);
  ts::python::init_activation(m);
  ts::python::init_conv(m);
  ts::python::init_pool(m);
  ts::python::init_autocast(m);
  ts::python::init_attention(m);
  ts::python::init_asarray(m);
  ts::python::init_resample(m);
  ts::python::init_random_forms(m);
  ts::python::init_similarity(m);
  ts::python::init_dropout(m);
  ts::python::init_norm(m);
  ts::python::init_torch_nn(m);
  ts::python::init_random_samplers(m);
  ts::python::init_generator(m);
  ts::python::init_shuffle(m);
  ts::python::init_embedding(m);
  ts::python::init_fractional_pool(m);
  ts::python::init_distance(m);
  ts::python::init_gumbel_softmax(m);
  ts::python::init_bilinear(m);
  ts::python::init_tensor_protocols(m);
  ts::python::init_pointwise_torch(m);
  ts::python::init_statistics_torch(m);
  ts::python::init_einsum(m);
  ts::python::init_stft(m);
  ts::python::init_sets(m);
  ts::python::init_inplace_methods(m);
  ts::python::install_arg_errors(m);
  ts::python::init_text_signatures(m);
  ts::python::install_text_signatures(m);
  ts::python::install_keyword_fast_paths(m);
  ts::python::alias_tensor_methods(m);
}
