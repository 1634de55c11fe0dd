// The constructors from data (issue 17): asarray, tensor, as_tensor, from_numpy. Each parses
// its argument forms here, once: tensors, Python scalars, nested lists/tuples (of numbers,
// tensors, NumPy scalars and arrays), NumPy arrays, the buffer protocol, __dlpack__ and
// __array_interface__ producers; dtype=, device=, copy= (the array API's: copy=False raises
// ValueError where a copy is needed), requires_grad=, pin_memory=.
//
// Note [Nested sequence conversion]: a nested list is read in two walks over the Python
// objects. The first fixes the shape (each level's length, checked against the first seen:
// ragged input is a ValueError naming the op and the dim), the widest Python scalar kind
// (bool < int < float < complex) and whether any leaf is something else (a tensor, a NumPy
// value); nesting is capped at kMaxNesting levels, so a list that contains itself raises
// instead of recursing forever (a TypeError, torch's, when the walk can tell it is itself). The element count is multiplied with overflow checks before
// anything is allocated. The second walk writes the numbers straight into the output buffer
// (bounds-checked: no Python code runs in between, but the walk does not rely on it). The
// dtype follows torch.tensor's inference (which the array API's asarray shares here): bool,
// int64 (uint64 for ints past int64, as NumPy), the default float dtype, its complex twin; a
// leaf tensor or NumPy value contributes its own dtype, promoted with the others.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <set>
#include <unistd.h>
#include <vector>

#include "autograd/meta.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "core/no_cuda_error.h"
#include "core/scalar_range.h"
#include "ops/copy.h"
#include "ops/default_dtype.h"
#include "ops/manipulation.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/input_arg.h"

namespace ts::python {
namespace {

constexpr int kMaxNesting = 64;
enum Kind : int { kNoKind = -1, kBool = 0, kInt = 1, kFloat = 2, kComplex = 3 };

bool is_seq(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

py::handle numpy_generic() {
  static py::object* g = new py::object(py::module_::import("numpy").attr("generic"));
  return *g;
}

// The kind of a plain Python number (NumPy scalars, which subclass float/complex, are not).
int python_kind(PyObject* o) {
  if (PyBool_Check(o)) return kBool;
  if (PyFloat_CheckExact(o)) return kFloat;
  if (PyLong_CheckExact(o)) return kInt;
  if (PyComplex_CheckExact(o)) return kComplex;
  if (!PyLong_Check(o) && !PyFloat_Check(o) && !PyComplex_Check(o)) return kNoKind;
  if (py::isinstance(o, numpy_generic())) return kNoKind;
  return PyLong_Check(o) ? kInt : PyFloat_Check(o) ? kFloat : kComplex;
}

DType default_complex() {
  return default_float_dtype() == DType::Float64 ? DType::Complex128 : DType::Complex64;
}

// An int no dtype holds: an OverflowError (NumPy's class) that is also a ValueError (a bad
// value), the class every op's out-of-range int raises (tessera.errors.IntRangeError).
[[noreturn]] void raise_overflow(const std::string& msg) {
  PyErr_SetString(int_range_error(), msg.c_str());
  throw py::error_already_set();
}

[[noreturn]] void overflow(const char* op, PyObject* o) {
  raise_overflow(std::string(op) + ": Python int " + py::repr(py::handle(o)).cast<std::string>() +
                 " does not fit in int64 or uint64");
}

struct Walk {
  const char* op = nullptr;
  Shape shape;                         // the sequence dims
  bool complete = false;               // shape fixed: a leaf or an empty sequence was seen
  int kind = kNoKind;                  // the widest Python scalar kind among the leaves
  bool general = false;                // a leaf that is not a plain Python number
  bool negative = false, big = false;  // ints below 0, ints past int64 (uint64 then)
  std::set<std::pair<PyObject*, int64_t>> seen;  // (sequence, depth) already checked
  std::vector<PyObject*> path;                   // the sequences being visited, outermost first

  [[noreturn]] void ragged(int64_t dim, const std::string& what) const {
    throw ValueError(std::string(op) + ": the nested sequence is ragged: " + what + " at dim " +
                     std::to_string(dim) +
                     "; hint: every list at one level must have the same length and hold "
                     "the same kind of item");
  }

  void leaf_int(PyObject* o) {
    int ovf = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &ovf);
    if (ovf == 0) {
      if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
      negative |= v < 0;
    } else if (ovf < 0) {
      overflow(op, o);
    } else {
      PyLong_AsUnsignedLongLong(o);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        overflow(op, o);
      }
      big = true;
    }
  }

  void visit(PyObject* o, int64_t depth) {
    if (is_seq(o)) {
      if (depth >= kMaxNesting)
        throw ValueError(std::string(op) + ": the nested sequence is deeper than " +
                         std::to_string(kMaxNesting) +
                         " levels; hint: does a list contain itself?");
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      if (depth < shape.size()) {
        if (shape[depth] != n)
          ragged(depth, "expected a sequence of length " + std::to_string(shape[depth]) +
                            ", got one of length " + std::to_string(n));
      } else if (complete) {
        if (std::find(path.begin(), path.end(), o) != path.end())  // torch's class
          throw TypeError(std::string(op) + ": the list contains itself (a self-referential " +
                          "list) at dim " + std::to_string(depth) + "; hint: build it anew");
        ragged(depth, "expected a number, got a sequence");
      } else {
        shape.push_back(n);
        if (n == 0) complete = true;
      }
      // One list object repeated ([row] * 10**6) is checked once per depth: its items add
      // nothing new, so a huge claimed size costs one walk of the distinct objects.
      if (depth > 0 && n > 0 && !seen.insert({o, depth}).second) return;
      PyObject** items = PySequence_Fast_ITEMS(o);
      path.push_back(o);
      for (Py_ssize_t i = 0; i < n; ++i) visit(items[i], depth + 1);
      path.pop_back();
      return;
    }
    if (depth != shape.size())
      ragged(depth, std::string("expected a sequence, got ") + Py_TYPE(o)->tp_name);
    complete = true;
    const int k = python_kind(o);
    if (k == kNoKind) {
      general = true;
      return;
    }
    if (k > kind) kind = k;
    if (k == kInt) leaf_int(o);
  }
};

// Note [Sequence protocol conversion]: an object that is neither a list nor a tuple but has
// __len__ and __getitem__ (range, a user's sequence class) is read as torch reads it: exactly
// len(obj) items by index, never by iterating until IndexError (NumPy's way, which never ends
// when __getitem__ answers every index: memory grew until the OOM killer). The items become a
// tuple, sequences among them likewise, and the tuple goes through from_nested. Bounded: at
// most kMaxNesting levels (an object that returns itself), at most as many items in all as
// fit in the machine's memory at 32 bytes each (MemoryError up front), IndexError before
// len(obj) items and a length that changes while read raise, naming the op.
bool is_plain_sequence(py::handle o) {
  PyObject* p = o.ptr();
  if (is_seq(p) || !PySequence_Check(p) || PyUnicode_Check(p) || PyBytes_Check(p) ||
      PyObject_CheckBuffer(p) || python_kind(p) != kNoKind || py::isinstance<Tensor>(o) ||
      py::isinstance<py::array>(o) || py::isinstance(o, numpy_generic()))
    return false;
  for (const char* a : {"__array__", "__array_interface__", "__array_struct__", "__dlpack__"})
    if (py::hasattr(o, a)) return false;
  return true;
}

// The pending Python error again, its message prefixed (its class kept, or `cls` when given).
[[noreturn]] void reraise_prefixed(const std::string& prefix, PyObject* cls = nullptr) {
  py::error_already_set e;
  const std::string msg = prefix + py::str(e.type().attr("__name__")).cast<std::string>() +
                          ": " + py::str(e.value()).cast<std::string>();
  PyErr_SetString(cls ? cls : e.type().ptr(), msg.c_str());
  throw py::error_already_set();
}

struct SequenceReader {
  const char* op;
  int64_t budget;  // items still allowed in all (Note [Sequence protocol conversion])

  static int64_t max_items() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return INT64_MAX / 8;
    // An item costs its tuple slot, often a fresh Python number and its slot in the output:
    // 32 bytes is a floor, so a claimed length past this cannot be converted.
    return static_cast<int64_t>(pages) * page / 32;
  }

  py::object read(py::handle o, int depth) {
    const std::string who = std::string(op) + ": an object of type " + type_name(o);
    if (depth >= kMaxNesting)
      throw ValueError(who + " nests sequences deeper than " + std::to_string(kMaxNesting) +
                       " levels (too many dimensions); hint: does its __getitem__ return a "
                       "sequence that contains itself?");
    const Py_ssize_t n = PySequence_Size(o.ptr());
    if (n < 0) reraise_prefixed(who + " has no valid length: len() raised ");
    if (n > budget) {
      const std::string msg = std::string(op) + ": out of memory converting an object of type " +
                              type_name(o) + ": it says its length is " + std::to_string(n) +
                              ", more items than fit in memory; hint: is its length what you "
                              "meant?";
      PyErr_SetString(PyExc_MemoryError, msg.c_str());
      throw py::error_already_set();
    }
    budget -= n;
    if (PyRange_Check(o.ptr())) {  // exact, and its items are ints: C's own tuple(range)
      PyObject* t = PySequence_Tuple(o.ptr());
      if (!t) reraise_prefixed(who + ": ");
      return py::reinterpret_steal<py::object>(t);
    }
    py::tuple out(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* it = PySequence_GetItem(o.ptr(), i);
      if (!it) {
        const std::string at = who + " says its length is " + std::to_string(n) +
                               " but item " + std::to_string(i) + " raised ";
        if (PyErr_ExceptionMatches(PyExc_IndexError)) reraise_prefixed(at);
        reraise_prefixed(at, i == 0 ? PyExc_ValueError : nullptr);  // torch: no shape
      }
      py::object item = py::reinterpret_steal<py::object>(it);
      PyTuple_SET_ITEM(out.ptr(), i,
                       (is_plain_sequence(item) ? read(item, depth + 1) : item).release().ptr());
    }
    const Py_ssize_t again = PySequence_Size(o.ptr());
    if (again < 0) reraise_prefixed(who + " has no valid length: len() raised ");
    if (again != n)
      throw ValueError(who + " changed its length from " + std::to_string(n) + " to " +
                       std::to_string(again) + " while it was read; hint: convert a list(...) "
                       "of it taken once");
    return std::move(out);
  }
};

// A sequence that is not a list or tuple, as a tensor (Note [Sequence protocol conversion]).
Tensor from_nested(py::handle obj, const DType* target, const char* op);
Tensor from_plain_sequence(py::handle obj, const DType* target, const char* op) {
  SequenceReader r{op, SequenceReader::max_items()};
  py::object items = r.read(obj, 0);
  return from_nested(items, target, op);
}

// The second walk of Note [Nested sequence conversion]: the numbers as T, in C order.
template <class T>
void fill_leaves(PyObject* o, T*& p, T* end, const char* op) {
  if (is_seq(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i) fill_leaves(items[i], p, end, op);
    return;
  }
  if (p == end) throw RuntimeError(std::string(op) + ": the nested sequence changed size");
  if constexpr (std::is_same_v<T, bool>) {
    *p = o == Py_True;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    *p = PyBool_Check(o) ? (o == Py_True) : PyLong_AsLongLong(o);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    *p = PyBool_Check(o) ? (o == Py_True) : PyLong_AsUnsignedLongLong(o);
  } else if constexpr (std::is_floating_point_v<T>) {
    *p = static_cast<T>(PyFloat_Check(o) ? PyFloat_AS_DOUBLE(o) : PyLong_AsDouble(o));
  } else {
    const Py_complex c = PyComplex_AsCComplex(o);
    *p =
        T(static_cast<typename T::value_type>(c.real), static_cast<typename T::value_type>(c.imag));
  }
  if (PyErr_Occurred()) throw py::error_already_set();
  ++p;
}

template <class T>
Tensor filled(py::handle obj, const Shape& shape, DType dt, const char* op) {
  Tensor out = Tensor::empty(shape, dt);
  T* p = out.data<T>();
  fill_leaves<T>(obj.ptr(), p, p + out.numel(), op);
  if (p != out.data<T>() + out.numel())
    throw RuntimeError(std::string(op) + ": the nested sequence changed size");
  return out;
}

// A leaf that is not a Python number: its values (full precision) and the dtype it asks for.
std::pair<Tensor, DType> general_leaf(py::handle o, const char* op) {
  if (py::isinstance<Tensor>(o)) {
    Tensor t = autograd::detach(o.cast<const Tensor&>());
    return {t.device().is_cpu() ? t : to_device(t, Device{}), t.dtype()};
  }
  Scalar s;
  const int k = python_kind(o.ptr());
  if (k != kNoKind && to_scalar(o, s)) {
    const DType natural = k == kBool    ? DType::Bool
                          : k == kInt   ? (s.is_u64 ? DType::UInt64 : DType::Int64)
                          : k == kFloat ? DType::Float64
                                        : DType::Complex128;
    const DType asks = k == kFloat     ? default_float_dtype()
                       : k == kComplex ? default_complex()
                                       : natural;
    return {scalar_tensor(s, natural), asks};
  }
  if (py::isinstance(o, numpy_generic()) || py::isinstance<py::array>(o)) {
    Tensor t = from_numpy(py::array::ensure(o), 1, op);
    return {t, t.dtype()};
  }
  if (is_plain_sequence(o)) {  // [range(3), range(3)]
    Tensor t = from_plain_sequence(o, nullptr, op);
    return {t, t.dtype()};
  }
  throw TypeError(std::string(op) + ": a nested sequence may hold numbers, tensors and NumPy " +
                  "values, got an item of type " + type_name(o));
}

void collect(py::handle o, std::vector<std::pair<Tensor, DType>>& out, const char* op) {
  if (is_seq(o.ptr())) {
    // (owned references: converting a leaf may run Python code)
    py::object seq = py::reinterpret_borrow<py::object>(o);
    for (py::handle e : seq) collect(e, out, op);
    return;
  }
  out.push_back(general_leaf(o, op));
}

// A nested sequence mixing numbers with tensors / NumPy values: each leaf as a tensor, the
// dtype promoted over them (torch.tensor's rule), stacked.
Tensor from_general(py::handle obj, const Shape& outer, const DType* target, const char* op) {
  std::vector<std::pair<Tensor, DType>> leaves;
  collect(obj, leaves, op);
  int64_t n = 1;
  for (int64_t d : outer) mul_ok(n, d, &n);
  if (static_cast<int64_t>(leaves.size()) != n)
    throw RuntimeError(std::string(op) + ": the nested sequence changed size");
  DType dt = leaves[0].second;
  for (const auto& l : leaves) dt = promote_types(dt, l.second);
  if (target) dt = *target;
  const Shape& inner = leaves[0].first.shape();
  std::vector<Tensor> parts;
  parts.reserve(leaves.size());
  for (const auto& l : leaves) {
    if (l.first.shape() != inner)
      throw ValueError(std::string(op) + ": the nested sequence is ragged: items of shapes " +
                       shape_str(inner) + " and " + shape_str(l.first.shape()) +
                       "; hint: tensors and arrays in one list must have the same shape");
    parts.push_back(astype(l.first, dt, false));
  }
  Shape full = outer;
  for (int64_t d : inner) full.push_back(d);
  return reshape(stack(parts, 0), full);
}

// tensor(..., dtype=) of Python numbers: each must fit an integer dtype (or be real for a real
// one) by Note [Checked scalar writes], as torch.tensor checks, instead of the cast below
// wrapping 300 to 44 in uint8 or turning 1e300 and NaN into INT64_MIN. `buf` holds the numbers
// at full precision (int64, uint64, float64 or complex128); its extremes decide.
void check_numbers_fit(const Tensor& buf, DType want, const char* op) {
  const int64_t n = buf.numel();
  if (n == 0 || is_bool(want) || is_complex(want)) return;
  const bool complex_src = is_complex(buf.dtype());
  if (!is_integral(want) && !complex_src) return;  // floats overflow to inf, as in torch
  switch (buf.dtype()) {
    case DType::Int64: {
      const int64_t* p = buf.data<int64_t>();
      const auto [lo, hi] = std::minmax_element(p, p + n);
      check_scalar_fits(Scalar::from_int(*lo), want, op);
      check_scalar_fits(Scalar::from_int(*hi), want, op);
      return;
    }
    case DType::UInt64: {
      const uint64_t* p = buf.data<uint64_t>();
      check_scalar_fits(Scalar::from_uint(*std::max_element(p, p + n)), want, op);
      return;
    }
    case DType::Float64:
    case DType::Complex128: {
      double lo = 0, hi = 0;
      for (int64_t i = 0; i < n; ++i) {
        double re;
        if (complex_src) {
          const std::complex<double> c = buf.data<std::complex<double>>()[i];
          if (c.imag() != 0) check_scalar_fits(Scalar::from_complex(c), want, op);
          re = c.real();
        } else {
          re = buf.data<double>()[i];
        }
        if (!std::isfinite(re)) check_scalar_fits(Scalar::from_double(re), want, op);
        lo = i ? std::min(lo, re) : re;
        hi = i ? std::max(hi, re) : re;
      }
      check_scalar_fits(Scalar::from_double(lo), want, op);
      check_scalar_fits(Scalar::from_double(hi), want, op);
      return;
    }
    default:
      return;
  }
}

// A Python number or nested sequence as a new tensor (Note [Nested sequence conversion]).
Tensor from_nested(py::handle obj, const DType* target, const char* op) {
  Walk w;
  w.op = op;
  w.visit(obj.ptr(), 0);
  int64_t numel = 1;
  for (int64_t d : w.shape)
    if (!mul_ok(numel, d, &numel))
      throw ValueError(std::string(op) + ": the nested sequence's shape " + shape_str(w.shape) +
                       " has more than 2^63 elements");
  if (w.general && numel > 0) return from_general(obj, w.shape, target, op);
  if (w.big && w.negative) {
    raise_overflow(std::string(op) +
                   ": the Python ints span past both int64 (negative values) and int64's "
                   "maximum: no integer dtype holds them all");
  }
  DType natural = DType::Float32;
  switch (w.kind) {
    case kBool:
      natural = DType::Bool;
      break;
    case kInt:
      natural = w.big ? DType::UInt64 : DType::Int64;
      break;
    case kComplex:
      natural = default_complex();
      break;
    default:  // floats, and an empty sequence (torch: the default float dtype)
      natural = default_float_dtype();
  }
  const DType want = target ? *target : natural;
  Tensor buf;
  switch (w.kind) {
    case kBool:
      buf = filled<bool>(obj, w.shape, DType::Bool, op);
      break;
    case kInt:
      buf = w.big ? filled<uint64_t>(obj, w.shape, DType::UInt64, op)
                  : filled<int64_t>(obj, w.shape, DType::Int64, op);
      break;
    case kComplex:
      buf = want == DType::Complex64
                ? filled<std::complex<float>>(obj, w.shape, DType::Complex64, op)
                : filled<std::complex<double>>(obj, w.shape, DType::Complex128, op);
      break;
    default:
      buf = want == DType::Float32 ? filled<float>(obj, w.shape, DType::Float32, op)
                                   : filled<double>(obj, w.shape, DType::Float64, op);
  }
  if (buf.dtype() == want) return buf;
  check_numbers_fit(buf, want, op);
  return astype(buf, want, true);
}

// copy=: None (-1), False (0) or True (1); TypeError naming the op otherwise.
int copy_mode(py::handle copy, const char* op) {
  if (copy.is_none()) return -1;
  if (PyBool_Check(copy.ptr()) || py::isinstance(copy, py::module_::import("numpy").attr("bool_")))
    return PyObject_IsTrue(copy.ptr());
  throw TypeError(std::string(op) + ": copy must be True, False or None, got " + type_name(copy) +
                  " (" + py::repr(copy).cast<std::string>() + ")");
}

[[noreturn]] void needs_copy(const char* op, const std::string& why) {
  throw ValueError(std::string(op) + ": copy=False but " + why +
                   " needs a copy; hint: pass copy=None (copy only when needed)");
}

// t in `target` (when given), copying only as `copy` allows.
Tensor cast_to(const Tensor& t, const DType* target, int copy, const char* op) {
  if (!target || *target == t.dtype()) return t;
  if (copy == 0)
    needs_copy(op,
               std::string("converting ") + dtype_name(t.dtype()) + " to " + dtype_name(*target));
  return astype_op(t, *target, true);
}

// obj as a tensor where it lives (the device step is the caller's).
Tensor convert_host(py::handle obj, const DType* target, int copy, const char* op) {
  if (py::isinstance<Tensor>(obj)) {
    const Tensor& x = obj.cast<const Tensor&>();
    if (target && *target != x.dtype()) return cast_to(x, target, copy, op);
    return copy == 1 ? clone_op(x, MemoryFormat::Preserve) : x;
  }
  const bool seq = is_seq(obj.ptr());
  if (seq || python_kind(obj.ptr()) != kNoKind) {
    if (copy == 0)
      throw ValueError(std::string(op) + ": copy=False is impossible for a Python " +
                       (seq ? "sequence" : "scalar") + "; hint: pass copy=None");
    return from_nested(obj, target, op);
  }
  const bool is_array = py::isinstance<py::array>(obj);
  if (!is_array && py::hasattr(obj, "__dlpack__")) {
    py::object from_dlpack = py::module_::import("tessera._interop").attr("from_dlpack");
    py::object c = copy < 0 ? py::object(py::none()) : py::object(py::bool_(copy == 1));
    return cast_to(from_dlpack(obj, py::arg("copy") = c).cast<Tensor>(), target, copy, op);
  }
  if (!is_array && is_plain_sequence(obj)) {
    if (copy == 0)
      throw ValueError(std::string(op) +
                       ": copy=False is impossible for a Python sequence; hint: pass copy=None");
    return from_plain_sequence(obj, target, op);
  }
  py::object np = py::module_::import("numpy");
  py::object arr;
  if (is_array) {
    arr = py::reinterpret_borrow<py::object>(obj);
  } else if (py::isinstance(obj, numpy_generic())) {
    arr = np.attr("array")(obj);  // a fresh writable 0-d array, not a read-only scalar view
  } else {
    try {
      arr = PyObject_CheckBuffer(obj.ptr())
                ? np.attr("asarray")(py::memoryview(py::reinterpret_borrow<py::object>(obj)))
                : np.attr("asarray")(obj);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_Exception)) throw;
      if (e.matches(PyExc_MemoryError)) {  // too large (range(10**12)): no TypeError
        const std::string why = py::str(e.value()).cast<std::string>();
        PyErr_SetString(PyExc_MemoryError,
                        (std::string(op) + ": out of memory converting an object of type " +
                         type_name(obj) + (why.empty() ? "" : " (" + why + ")") +
                         " to a tensor; hint: is its length what you meant?")
                            .c_str());
        throw py::error_already_set();
      }
      throw TypeError(std::string(op) + ": cannot convert an object of type " + type_name(obj) +
                      " to a tensor (" + py::str(e.value()).cast<std::string>() + ")");
    }
    if (arr.attr("dtype").attr("kind").cast<std::string>() == "O")
      throw TypeError(std::string(op) + ": cannot convert an object of type " + type_name(obj) +
                      " (a NumPy object array) to a tensor; hint: nested sequences must hold "
                      "numbers");
    // __array_interface__ hands over a raw address: from_numpy checks it (Note [Foreign
    // memory] in convert.cpp).
  }
  py::array a = py::reinterpret_borrow<py::array>(arr);
  if (target && from_numpy_dtype(a.dtype()) != *target) {
    if (copy == 0)
      needs_copy(op, "converting " + py::str(a.dtype()).cast<std::string>() + " to " +
                         dtype_name(*target));
    return astype_op(from_numpy(a, -1, op), *target, true);
  }
  return from_numpy(a, copy, op);
}

Tensor leaf(const Tensor& t, bool requires_grad) {
  if (requires_grad) autograd::set_requires_grad(t, true);
  return t;
}

// The result as Python sees it: the caller's own object when no new tensor was made (so
// asarray(x) is x, as torch.as_tensor(x) is x).
py::object result(py::handle obj, const Tensor& out) {
  if (py::isinstance<Tensor>(obj) && obj.cast<const Tensor&>().impl() == out.impl())
    return py::reinterpret_borrow<py::object>(obj);
  return py::cast(out);
}

// asarray's whole job; tensor and as_tensor are its forms. `device` None: the default device
// when one is set (or always, for `on_default`: torch.tensor), else where obj lives.
Tensor convert(py::handle obj, py::handle dtype, py::handle device, int copy, const char* op,
               bool on_default = false) {
  DType target{};
  const bool has_target = !dtype.is_none();
  if (has_target) target = to_dtype(dtype);
  Tensor out = convert_host(obj, has_target ? &target : nullptr, copy, op);
  if (device.is_none() && default_device().is_cpu() && !on_default) return out;
  const Device dev = creation_device(device);
  if (dev == out.device()) return out;
  if (copy == 0) needs_copy(op, "moving to " + dev.str());
  try {
    return to_device(out, dev);
  } catch (const CudaNotCompiledError& e) {
    throw CudaNotCompiledError(std::string(op) + ": " + e.what());
  } catch (const RuntimeError& e) {
    throw RuntimeError(std::string(op) + ": " + e.what());
  }
}

// frombuffer: `count` items of dtype from byte `offset` of an object with the buffer protocol,
// copied (torch shares them); sizes checked before the copy, bools normalized (Note [Bool
// bytes] in convert.cpp).
Tensor frombuffer_py(py::handle buffer, py::handle dtype, int64_t count, int64_t offset,
                     bool requires_grad) {
  const DType dt = to_dtype(dtype);
  Py_buffer view;
  if (PyObject_GetBuffer(buffer.ptr(), &view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    throw TypeError(
        "frombuffer: expected an object with the buffer protocol (bytes, bytearray, "
        "memoryview, array.array, ...), got " +
        type_name(buffer));
  }
  std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release(&view, PyBuffer_Release);
  const int64_t nbytes = view.len, isz = itemsize(dt);
  if (offset < 0 || offset > nbytes - (nbytes ? 1 : 0))
    throw ValueError("frombuffer: both buffer length (" + std::to_string(nbytes) +
                     ") and offset (" + std::to_string(offset) +
                     ") must be non-negative and offset must be less than the buffer length");
  const int64_t avail = nbytes - offset;
  if (count == 0)
    throw ValueError("frombuffer: both buffer length (" + std::to_string(nbytes) +
                     ") and count (0) must not be 0; hint: pass count=-1 for the whole buffer");
  if (count < 0 && avail % isz)
    throw ValueError("frombuffer: buffer length (" + std::to_string(avail) +
                     " after offset) must be a multiple of element size (" + std::to_string(isz) +
                     ")");
  int64_t n = count < 0 ? avail / isz : count, want = 0;
  if (!mul_ok(n, isz, &want) || want > avail)
    throw ValueError("frombuffer: count=" + std::to_string(count) + " items of " + dtype_name(dt) +
                     " need " + (want > 0 ? std::to_string(want) : "over 2^63") +
                     " bytes, but the buffer has " + std::to_string(avail) + " after offset");
  Tensor out = Tensor::empty(Shape{n}, dt);
  const auto* src = static_cast<const unsigned char*>(view.buf) + offset;
  if (dt == DType::Bool) {
    for (int64_t i = 0; i < n; ++i) out.data<bool>()[i] = src[i] != 0;
  } else if (want) {
    std::memcpy(out.data_ptr(), src, static_cast<size_t>(want));
  }
  return leaf(out, requires_grad);
}
}  // namespace

void init_asarray(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  const auto none = py::none();
  m.def(
      "asarray",
      [](py::handle obj, py::handle dtype, py::handle device, py::handle copy, bool requires_grad) {
        return result(obj, leaf(convert(obj, dtype, device, copy_mode(copy, "asarray"), "asarray"),
                                requires_grad));
      },
      py::arg("obj"), py::pos_only(), py::kw_only(), py::arg("dtype") = none,
      py::arg("device") = none, py::arg("copy") = none, py::arg("requires_grad") = false,
      "asarray(obj, /, *, dtype=None, device=None, copy=None, requires_grad=False)\n--\n\n"
      "Converts obj to a tensor: a tensor, a Python scalar, a nested sequence (of numbers,\n"
      "tensors, NumPy values), a NumPy array, any object with the buffer protocol or\n"
      "__array_interface__, or a DLPack producer. copy=None copies only when needed,\n"
      "copy=False never copies (ValueError when it would have to), copy=True always copies.\n"
      "Python floats become the default float dtype, ints int64 (uint64 past int64's range);\n"
      "NumPy values and tensors keep their dtype. device places the result (the default\n"
      "device when one is set).");
  m.def(
      "tensor",
      [](py::handle data, py::handle dtype, py::handle device, bool requires_grad,
         bool pin_memory) {
        py::handle src = data;
        py::object detached;
        if (py::isinstance<Tensor>(data)) {  // torch: a copy that is a new leaf
          detached = py::cast(autograd::detach(data.cast<const Tensor&>()));
          src = detached;
        }
        Tensor out = leaf(convert(src, dtype, device, 1, "tensor", true), requires_grad);
        if (pin_memory) return py::cast(out).attr("pin_memory")().cast<Tensor>();
        return out;
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = none, py::arg("device") = none,
      py::arg("requires_grad") = false, py::arg("pin_memory") = false,
      "tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False)\n--\n\n"
      "A new tensor holding a copy of data (anything asarray takes), on the default device\n"
      "unless device says otherwise; a tensor given as data is copied and detached\n"
      "(torch.tensor). dtype as asarray infers it.");
  m.def(
      "as_tensor",
      [](py::handle data, py::handle dtype, py::handle device) {
        if (py::isinstance<Tensor>(data)) {  // torch: never the default device for a tensor
          Tensor out = data.cast<const Tensor&>();
          if (!device.is_none() && to_device(device) != out.device())
            out = to_device(out, to_device(device));
          return result(data, dtype.is_none() ? out : astype_op(out, to_dtype(dtype), false));
        }
        return py::cast(convert(data, dtype, device, -1, "as_tensor"));
      },
      py::arg("data"), py::arg("dtype") = none, py::arg("device") = none,
      "as_tensor(data, dtype=None, device=None)\n--\n\n"
      "data as a tensor, sharing memory when dtype and device allow (torch.as_tensor).");
  m.def(
      "from_numpy",
      [](py::handle ndarray) {
        if (!py::isinstance<py::array>(ndarray))
          throw TypeError("from_numpy: expected np.ndarray, got " + type_name(ndarray));
        return from_numpy(py::reinterpret_borrow<py::array>(ndarray), 0, "from_numpy");
      },
      py::arg("ndarray"),
      "from_numpy(ndarray)\n--\n\n"
      "A CPU tensor sharing ndarray's memory (writes show through both ways); never a copy\n"
      "(ValueError for a misaligned or byte-swapped array).");
  m.def("frombuffer", &frombuffer_py, py::arg("buffer"), py::kw_only(), py::arg("dtype"),
        py::arg("count") = -1, py::arg("offset") = 0, py::arg("requires_grad") = false,
        "frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False)\n--\n\n"
        "A 1-D tensor of count items of dtype (all that fit when -1) read from byte offset of\n"
        "an object with the buffer protocol. tessera copies the bytes (torch shares them).");
}

}  // namespace ts::python
