// Clear errors for calls whose arguments match no signature of a bound function.
//
// pybind11 answers such a call with a TypeError that dumps every C++ signature ("incompatible
// function arguments ... Invoked with: ..."). After all bindings exist, install_arg_errors()
// appends two last overloads to every bound function and Tensor method:
//   - (first, *args, **kwargs): its first parameter refuses pybind11's no-conversion pass, so
//     it is reached only when every real overload has failed in both passes;
//   - (**kwargs) for calls without positional arguments: it raises only for an unknown keyword
//     (or no arguments at all) and otherwise hands on to the converting pass.
// Having more than one overload makes pybind11 try a no-conversion pass first; calls that
// work pay only that. Instead of the dump, callers get:
//   - TypeError "op(): got an unexpected keyword argument 'axsi' (accepted: x, axis, ...)"
//   - ValueError "op(): integer argument 2**70 ... out of range" for ints beyond int64
//   - TypeError "op(): argument 'input' (position 1) must be Tensor, not str" (PyTorch's) where
//     the one signature declares a Tensor
//   - TypeError "op(): invalid argument types (Tensor, str); expected op(x: Tensor, ...)"
#include <cstdlib>
#include <cstring>
#include <set>

#include "python/convert.h"
#include "python/function_method.h"

namespace ts::python {
namespace {

// A positional argument that only binds in pybind11's second (converting) pass.
struct SecondPass {
  py::object value;
};

}  // namespace
}  // namespace ts::python

namespace pybind11::detail {
template <>
struct type_caster<ts::python::SecondPass> {
  PYBIND11_TYPE_CASTER(ts::python::SecondPass, const_name("object"));
  bool load(handle src, bool convert) {
    if (!convert) return false;
    value.value = reinterpret_borrow<object>(src);
    return true;
  }
  static handle cast(const ts::python::SecondPass&, return_value_policy, handle) {
    return none().release();
  }
};
}  // namespace pybind11::detail

namespace ts::python {
namespace {

std::string type_name(py::handle h) {
  return py::type::handle_of(h).attr("__name__").cast<std::string>();
}

// The signature lines of a pybind11 docstring, with module prefixes dropped.
std::vector<std::string> signatures(const std::string& name, const std::string& doc) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= doc.size()) {
    size_t eol = doc.find('\n', pos);
    std::string line = doc.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos = eol == std::string::npos ? doc.size() + 1 : eol + 1;
    size_t dot = line.find(". ");  // "2. name(...)" in an overloaded docstring
    if (dot != std::string::npos && line.find_first_not_of("0123456789") == dot)
      line = line.substr(dot + 2);
    size_t arrow = line.rfind(") -> ");
    // a text signature line ("name(args)" before "--") has no return annotation
    if (arrow == std::string::npos && !line.empty() && line.back() == ')') arrow = line.size() - 1;
    if (line.rfind(name + "(", 0) != 0 || arrow == std::string::npos) continue;
    std::string sig = line.substr(0, arrow + 1);
    for (const char* prefix : {"tessera._C.", "typing.", "collections.abc."}) {
      for (size_t p; (p = sig.find(prefix)) != std::string::npos;) sig.erase(p, strlen(prefix));
    }
    // pybind11 3 spells int/float parameters as protocols.
    for (auto [from, to] :
         {std::pair<const char*, const char*>{"SupportsInt | SupportsIndex", "int"},
          {"SupportsFloat | SupportsIndex", "float"},
          {"SupportsInt", "int"},
          {"SupportsFloat", "float"}}) {
      for (size_t p; (p = sig.find(from)) != std::string::npos;) sig.replace(p, strlen(from), to);
    }
    out.push_back(sig);
  }
  return out;
}

// The text between the top-level commas of a signature "f(a: T, b: U = 1, *, c: V)".
std::vector<std::string> top_level_params(const std::string& sig) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (size_t i = sig.find('(') + 1; i + 1 < sig.size(); ++i) {
    const char c = sig[i];
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// Parameter names of a signature "f(a: T, b: U = 1, *, c: V)" (top-level commas only); the
// positional-only ones (before a "/") go to `positional_only`. *args and **kwargs name no
// parameter a keyword can reach.
void param_names(const std::string& sig, std::set<std::string>& names,
                 std::set<std::string>& positional_only) {
  std::string cur;
  std::set<std::string> seen;  // names so far; all positional-only if a "/" follows
  auto flush = [&] {
    if (cur.find_first_not_of(" ") != std::string::npos &&
        cur.substr(cur.find_first_not_of(" ")) == "/") {
      positional_only.insert(seen.begin(), seen.end());
      seen.clear();
      cur.clear();
      return;
    }
    if (cur.find('*') != std::string::npos && cur.find_first_not_of(" *") != std::string::npos &&
        cur[cur.find_first_not_of(" ")] == '*') {
      cur.clear();
      return;
    }
    size_t b = cur.find_first_not_of(" *");
    size_t e = cur.find_first_of(":=");
    if (b != std::string::npos && (e == std::string::npos || e > b)) {
      std::string n = cur.substr(b, e == std::string::npos ? std::string::npos : e - b);
      while (!n.empty() && n.back() == ' ') n.pop_back();
      // pybind11 names unnamed parameters argN; they cannot be passed by keyword.
      bool unnamed = n.size() > 3 && n.compare(0, 3, "arg") == 0 &&
                     n.find_first_not_of("0123456789", 3) == std::string::npos;
      if (!n.empty() && !unnamed) seen.insert(n);
    }
    cur.clear();
  };
  for (const std::string& piece : top_level_params(sig)) {
    cur = piece;
    flush();
  }
  names.insert(seen.begin(), seen.end());
}

bool fits_int64(py::handle h) {
  if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr())) return true;
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  return overflow == 0;
}

// Raises for a keyword no signature accepts; otherwise lets pybind11 try the next overload
// (this check runs in its no-conversion pass, before the real overloads' converting pass).
// A keyword naming a positional-only parameter that was also given by position (a binding
// whose **kwargs takes torch's keyword form of it, as arange's start=) is Python's "multiple
// values" error.
void raise_bad_keyword(const std::string& name, const std::vector<std::string>& sigs,
                       const py::kwargs& kwargs, bool positional_given = false) {
  std::set<std::string> accepted, positional_only;
  for (const auto& s : sigs) param_names(s, accepted, positional_only);
  accepted.erase("self");
  for (auto kv : kwargs) {
    std::string k = py::str(kv.first);
    if (positional_given && positional_only.count(k) && !accepted.count(k))
      throw py::type_error(name + "() got multiple values for argument '" + k + "'");
    if (!accepted.count(k)) {
      std::string list;
      for (const auto& a : accepted) list += (list.empty() ? "" : ", ") + a;
      throw py::type_error(name + "(): got an unexpected keyword argument '" + k +
                           "' (accepted: " + (list.empty() ? "none" : list) + ")");
    }
  }
  throw py::reference_cast_error();  // pybind11's "not this overload"
}

// The catch-all for calls without positional arguments (beyond self).
void raise_not_tensor(const std::string& name, const std::vector<std::string>& typed,
                      const std::vector<std::string>& sigs, const std::vector<py::handle>& args,
                      const py::kwargs& kwargs);

void raise_bad_keyword_only(const std::string& name, const std::vector<std::string>& sigs,
                            const std::vector<std::string>& typed, const py::kwargs& kwargs) {
  // A Tensor parameter binds only a Tensor in either pass (no implicit conversions), so a
  // non-tensor there fails every pass: say so now.
  raise_not_tensor(name, typed, sigs, {}, kwargs);
  if (kwargs.empty()) {  // no real overload takes zero arguments
    std::string expected;
    for (const auto& s : sigs) expected += "\n    " + s;
    throw py::type_error(
        name + "(): missing required arguments" +
        (expected.empty() ? std::string("; see help(") + name + ")" : "; expected" + expected));
  }
  // Every signature needs an argument the call lacks (a required positional-only one, or a
  // required one not among the keywords; e.g. ts.all(keepdims=True)): no pass can take it.
  bool all_lack = !sigs.empty();
  for (const auto& sig : sigs) {
    const std::vector<std::string> pieces = top_level_params(sig);
    size_t slash = pieces.size();
    for (size_t i = 0; i < pieces.size(); ++i)
      if (pieces[i].find_first_not_of(' ') != std::string::npos &&
          pieces[i].substr(pieces[i].find_first_not_of(' '), 1) == "/")
        slash = i;
    bool lacks = false;
    for (size_t i = 0; i < pieces.size() && !lacks; ++i) {
      const std::string& t = pieces[i];
      const size_t b = t.find_first_not_of(' ');
      if (b == std::string::npos || t[b] == '/' || t[b] == '*') continue;
      if (t.find('=') != std::string::npos) continue;  // has a default
      const std::string n = t.substr(b, t.find_first_of(":= ", b) - b);
      if (n == "self" || n == "$self") continue;
      lacks = i < slash ? true : !kwargs.contains(n);
    }
    all_lack = all_lack && lacks;
  }
  try {
    raise_bad_keyword(name, sigs, kwargs);  // an unknown keyword first
  } catch (const py::reference_cast_error&) {
    if (!all_lack) throw;
    std::string expected;
    for (const auto& s : sigs) expected += "\n    " + s;
    throw py::type_error(name + "(): missing required arguments; expected" + expected);
  }
}

// The parameters of a signature "f(a: T, b: U = 1, *, c: V)" as (name, type, positional),
// top-level commas only; "self" and the "/" and "*" markers are not parameters.
struct Param {
  std::string name, type;
  bool positional;
};
std::vector<Param> params_of(const std::string& sig) {
  std::vector<Param> out;
  bool kw_only = false;
  std::string cur;
  auto trim = [](std::string t) {
    size_t b = t.find_first_not_of(' '), e = t.find_last_not_of(' ');
    return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
  };
  auto flush = [&] {
    std::string t = trim(cur);
    cur.clear();
    if (t.empty() || t == "/") return;
    if (t[0] == '*') {  // "*" or "*args" / "**kwargs"
      kw_only = true;
      return;
    }
    size_t colon = t.find(':'), eq = t.find('=');
    std::string n = trim(t.substr(0, std::min(colon, eq)));
    std::string ty = colon == std::string::npos || (eq != std::string::npos && eq < colon)
                         ? std::string()
                         : trim(t.substr(colon + 1, eq == std::string::npos ? std::string::npos
                                                                            : eq - colon - 1));
    if (n == "self" || n == "$self") return;
    out.push_back({n, ty, !kw_only});
  };
  for (const std::string& piece : top_level_params(sig)) {
    cur = piece;
    flush();
  }
  return out;
}

// PyTorch's TypeError for a non-tensor where the only signature declares a Tensor
// ("linear(): argument 'input' (position 1) must be Tensor, not str"), if there is one.
void raise_not_tensor(const std::string& name, const std::vector<std::string>& typed,
                      const std::vector<std::string>& sigs, const std::vector<py::handle>& args,
                      const py::kwargs& kwargs) {
  if (typed.size() != 1 || sigs.size() != 1) return;
  const auto params = params_of(typed[0]);
  auto tensor_type = [](const std::string& ty, bool& optional) {
    optional = ty == "Tensor | None" || ty == "Optional[Tensor]" || ty == "None | Tensor";
    return ty == "Tensor" || optional;
  };
  auto bad = [](py::handle h, bool optional) {
    return !py::isinstance<Tensor>(h) && !(optional && h.is_none());
  };
  auto raise = [&](const std::string& where, bool optional, py::handle h) {
    throw py::type_error(name + "(): " + where + " must be Tensor" + (optional ? " or None" : "") +
                         ", not " + type_name(h) + "; expected " + sigs[0]);
  };
  size_t pos = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    while (pos < params.size() && !params[pos].positional) ++pos;
    if (pos >= params.size()) return;
    bool optional = false;
    if (tensor_type(params[pos].type, optional) && bad(args[i], optional))
      raise("argument '" + params[pos].name + "' (position " + std::to_string(i + 1) + ")",
            optional, args[i]);
    ++pos;
  }
  for (auto kv : kwargs) {
    const std::string k = py::str(kv.first);
    for (const auto& p : params) {
      bool optional = false;
      if (p.name == k && tensor_type(p.type, optional) && bad(kv.second, optional))
        raise("argument '" + k + "'", optional, kv.second);
    }
  }
}

[[noreturn]] void raise_bad_call(const std::string& name, const std::vector<std::string>& sigs,
                                 const std::vector<std::string>& typed,
                                 const std::vector<py::handle>& args, const py::kwargs& kwargs) {
  try {
    raise_bad_keyword(name, sigs, kwargs, !args.empty());
  } catch (const py::reference_cast_error&) {
  }
  raise_not_tensor(name, typed, sigs, args, kwargs);
  std::string got;
  auto add = [&](const std::string& s) { got += (got.empty() ? "" : ", ") + s; };
  for (auto a : args) {
    if (!fits_int64(a))
      throw py::value_error(name + "(): integer argument " + py::str(a).cast<std::string>() +
                            " is out of range for a 64-bit integer");
    add(type_name(a));
  }
  for (auto kv : kwargs) {
    if (!fits_int64(kv.second))
      throw py::value_error(name + "(): integer argument " + py::str(kv.first).cast<std::string>() +
                            "=" + py::str(kv.second).cast<std::string>() +
                            " is out of range for a 64-bit integer");
    add(py::str(kv.first).cast<std::string>() + "=" + type_name(kv.second));
  }
  std::string expected;
  for (const auto& s : sigs) expected += "\n    " + s;
  throw py::type_error(name + "(): invalid argument types (" + got + "); expected" +
                       (sigs.size() > 1 ? " one of:" : ":") + expected);
}

// The docstring of a pybind11 function object as it is now (before the catch-all joins it).
// The raw ml_doc is read, not __doc__: CPython strips a "name(...)\n--\n\n" text signature
// from __doc__, and it must survive for inspect.signature (Note [Readable signatures]).
std::string doc_of(py::handle fn) {
  if (PyCFunction_Check(fn.ptr())) {
    const char* raw = reinterpret_cast<PyCFunctionObject*>(fn.ptr())->m_ml->ml_doc;
    return raw ? std::string(raw) : std::string();
  }
  py::object d = fn.attr("__doc__");
  return d.is_none() ? std::string() : d.cast<std::string>();
}

// Restores the docstring pybind11 regenerates when an overload is added, so help() keeps
// showing only the real signatures.
void set_doc(py::handle fn, const std::string& doc) {
  if (!PyCFunction_Check(fn.ptr())) return;
  auto* f = reinterpret_cast<PyCFunctionObject*>(fn.ptr());
  // pybind11 owns ml_doc: it strdup's it when an overload is added, frees the one it replaces
  // and frees the last with the function. Do the same (nothing else holds the pointer yet;
  // the keyword fast paths copy it later).
  char* old = const_cast<char*>(f->m_ml->ml_doc);
  f->m_ml->ml_doc = strdup(doc.c_str());
  std::free(old);
}

// The `impl` of each catch-all overload added here (one per lambda, shared by every function
// it is added to), so that other passes can tell them from the real overloads.
std::set<void*>& catch_all_impls() {
  static auto* impls = new std::set<void*>();
  return *impls;
}

// Records the impl of `fn`'s last overload (the catch-all just added) as a catch-all.
void mark_catch_all(py::handle fn) {
  if (PyInstanceMethod_Check(fn.ptr())) fn = PyInstanceMethod_GET_FUNCTION(fn.ptr());
  if (!PyCFunction_Check(fn.ptr())) return;
  PyObject* self = PyCFunction_GET_SELF(fn.ptr());
  if (self == nullptr || !py::detail::is_function_record_PyObject(self)) return;
  auto* rec = py::detail::function_record_ptr_from_PyObject(self);
  while (rec->next) rec = rec->next;
  catch_all_impls().insert(reinterpret_cast<void*>(rec->impl));
}

// The signatures pybind11 generated for `fn`'s overloads, with types ("name(x: Tensor, ...)"),
// also where the docstring carries an untyped text signature (Note [Readable signatures]).
std::vector<std::string> typed_signatures(const std::string& name, py::handle fn) {
  std::string doc;
  if (PyCFunction_Check(fn.ptr())) {
    PyObject* self = PyCFunction_GET_SELF(fn.ptr());
    if (self != nullptr && py::detail::is_function_record_PyObject(self)) {
      for (auto* rec = py::detail::function_record_ptr_from_PyObject(self); rec; rec = rec->next)
        if (rec->signature) doc += name + rec->signature + "\n";
    }
  }
  return signatures(name, doc);
}

bool is_pybind_function(py::handle h) {
  if (!PyCFunction_Check(h.ptr())) return false;
  PyObject* self = PyCFunction_GET_SELF(h.ptr());
  return self != nullptr && py::detail::is_function_record_PyObject(self);
}

void install_on_module(py::module_& m) {
  py::dict d = m.attr("__dict__");
  std::vector<std::string> names;
  for (auto kv : d) {
    std::string n = py::str(kv.first);
    if (n.rfind("__", 0) != 0 && is_pybind_function(kv.second)) names.push_back(n);
  }
  for (const auto& n : names) {
    py::object fn = m.attr(n.c_str());
    std::string doc = doc_of(fn);
    auto sigs = signatures(n, doc);
    auto typed = typed_signatures(n, fn);
    std::string op = n.substr(n.find_first_not_of('_'));
    m.def(
        n.c_str(),
        [op, sigs, typed](SecondPass first, py::args rest, py::kwargs kw) {
          std::vector<py::handle> args{first.value};
          for (auto a : rest) args.push_back(a);
          raise_bad_call(op, sigs, typed, args, kw);
        },
        py::sibling(fn));
    mark_catch_all(m.attr(n.c_str()));
    m.def(
        n.c_str(),
        [op, sigs, typed](py::kwargs kw) { raise_bad_keyword_only(op, sigs, typed, kw); },
        py::sibling(m.attr(n.c_str())));
    mark_catch_all(m.attr(n.c_str()));
    set_doc(m.attr(n.c_str()), doc);
  }
}

void install_on_class(py::handle cls_h) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(cls_h);
  py::dict d = cls.attr("__dict__");
  std::vector<std::string> names;
  for (auto kv : d) {
    std::string n = py::str(kv.first);
    if (n.rfind("__", 0) != 0 && PyInstanceMethod_Check(kv.second.ptr()) &&
        is_pybind_function(PyInstanceMethod_GET_FUNCTION(kv.second.ptr())))
      names.push_back(n);
  }
  for (const auto& n : names) {
    py::object fn = py::getattr(cls, n.c_str());
    std::string doc = doc_of(fn);
    auto sigs = signatures(n, doc);
    auto typed = typed_signatures(n, PyInstanceMethod_Check(fn.ptr())
                                         ? py::handle(PyInstanceMethod_GET_FUNCTION(fn.ptr()))
                                         : py::handle(fn));
    std::string qual = "Tensor." + n;
    // Tensor.op(not_a_tensor, ...) through the class: torch's descriptor error.
    auto check_self = [n](py::handle self) {
      if (!py::isinstance<Tensor>(self))
        throw py::type_error("descriptor '" + n + "' for 'Tensor' objects doesn't apply to a '" +
                             type_name(self) + "' object");
    };
    cls.def(n.c_str(), [qual, sigs, typed, check_self](py::object self, SecondPass first,
                                                       py::args rest, py::kwargs kw) {
      check_self(self);
      std::vector<py::handle> args{first.value};
      for (auto a : rest) args.push_back(a);
      raise_bad_call(qual, sigs, typed, args, kw);
    });
    mark_catch_all(py::getattr(cls, n.c_str()));
    cls.def(n.c_str(), [qual, sigs, typed, check_self](py::object self, py::kwargs kw) {
      check_self(self);
      raise_bad_keyword_only(qual, sigs, typed, kw);
    });
    mark_catch_all(py::getattr(cls, n.c_str()));
    // Tensor.op(**kwargs) through the class, with no tensor at all.
    // (Keyword arguments only, so it never takes a call that has a positional argument.)
    cls.def(n.c_str(), [qual](py::kwargs) {
      throw py::type_error(qual +
                           "(): called through the class without a tensor; pass the "
                           "tensor first (" +
                           qual + "(x, ...))");
    });
    mark_catch_all(py::getattr(cls, n.c_str()));
    py::handle entry =
        PyDict_GetItemString(reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_dict, n.c_str());
    if (entry && PyInstanceMethod_Check(entry.ptr()))
      set_doc(PyInstanceMethod_GET_FUNCTION(entry.ptr()), doc);
  }
}

// The class's pybind11 methods held by method_descriptor objects instead of
// PyInstanceMethod: the same function (Tensor.op is it, x.op a bound method of it), but
// x.op(...) calls it without making a bound method each time (Py_TPFLAGS_METHOD_DESCRIPTOR;
// Note [One function, two spellings]; issue 17).
void methods_as_descriptors(py::handle cls) {
  py::dict d = cls.attr("__dict__");
  std::vector<std::pair<py::object, py::object>> found;
  for (auto kv : d)
    if (PyInstanceMethod_Check(kv.second.ptr()) &&
        is_pybind_function(PyInstanceMethod_GET_FUNCTION(kv.second.ptr())))
      found.emplace_back(
          py::reinterpret_borrow<py::object>(kv.first),
          py::reinterpret_borrow<py::object>(PyInstanceMethod_GET_FUNCTION(kv.second.ptr())));
  for (auto& [name, fn] : found) py::setattr(cls, name, method_descriptor(fn));
}

// Note [Keyword fast path]
// pybind11 looks each parameter not given positionally up among the call's keywords by
// interning its name anew (PyUnicode_InternFromString, once per parameter per call): a
// reduction with seven parameters called as ts.sum(x, axis=1) paid more for that than for the
// sum itself (issue 17). def_keyword_twin() registers, for a bound function, a twin taking
// every parameter positionally; after the arg-error overloads exist, the module name is
// rebound to a small vectorcall function that places the keywords by pointer (the names in
// source code are interned) and calls the twin. Any other call (an unknown or non-interned
// keyword, a parameter given twice, too many positional arguments, an argument the twin's
// types refuse) goes to the original binding unchanged, so accepted forms and errors stay.
struct KeywordTwin {
  py::module_ m;
  std::string name;
  py::object twin;
  std::vector<py::object> params;    // interned names, in the twin's order
  std::vector<py::object> defaults;  // null where required
  size_t first_keyword;              // params before this one are positional-only
  size_t max_positional;
  py::object fallback;  // the full binding (with the arg-error overloads)
};

std::vector<KeywordTwin>& keyword_twins() {
  static auto* twins = new std::vector<KeywordTwin>();  // leaked: lives as long as the module
  return *twins;
}

py::object& twin_refused() {  // what a twin's catch-all overload returns
  static auto* o = new py::object(py::reinterpret_steal<py::object>(
      PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type))));
  return *o;
}

PyObject* keyword_fast_call(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                            PyObject* kwnames) {
  const auto& e = *static_cast<const KeywordTwin*>(PyCapsule_GetPointer(self, nullptr));
  const size_t nargs = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
  const size_t n = e.params.size();
  PyObject* slots[12];
  if (n <= 12 && nargs <= e.max_positional) {
    for (size_t i = 0; i < n; ++i) slots[i] = i < nargs ? args[i] : e.defaults[i].ptr();
    bool ok = true;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw && ok; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      size_t j = e.first_keyword;
      while (j < n && e.params[j].ptr() != key) ++j;
      ok = j < n && j >= nargs;
      if (ok) slots[j] = args[nargs + static_cast<size_t>(k)];
    }
    for (size_t i = 0; i < n && ok; ++i) ok = slots[i] != nullptr;
    if (ok) {
      PyObject* r = PyObject_Vectorcall(e.twin.ptr(), slots, n, nullptr);
      if (r == nullptr || r != twin_refused().ptr()) return r;
      Py_DECREF(r);
    }
  }
  return PyObject_Vectorcall(e.fallback.ptr(), args, nargsf, kwnames);
}

void install_keyword_twins() {
  for (KeywordTwin& e : keyword_twins()) {
    e.fallback = e.m.attr(e.name.c_str());
    const char* doc = reinterpret_cast<PyCFunctionObject*>(e.fallback.ptr())->m_ml->ml_doc;
    auto* def = new PyMethodDef{
        e.name.c_str(),
        reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&keyword_fast_call)),
        METH_FASTCALL | METH_KEYWORDS, doc};  // leaked with the module
    py::capsule self(static_cast<void*>(&e));
    py::object fn = py::reinterpret_steal<py::object>(
        PyCFunction_NewEx(def, self.ptr(), e.m.attr("__name__").ptr()));
    if (!fn) throw py::error_already_set();
    e.m.attr(e.name.c_str()) = fn;
    // Tensor methods that are this function (Note [One function, two spellings]) stay it
    py::object cls = e.m.attr("Tensor");
    py::dict d = cls.attr("__dict__");
    for (auto kv : d) {
      py::object f = py::getattr(kv.second, "__func__", py::none());
      if (f.is(e.fallback)) cls.attr(kv.first) = function_method(fn);
    }
  }
}

}  // namespace

void def_keyword_twin(py::module_& m, const char* name, py::cpp_function twin,
                      const std::vector<std::pair<const char*, py::object>>& params,
                      size_t first_keyword, size_t max_positional, bool refuses) {
  // the catch-all: arguments the twin's types refuse go to the full binding (a twin of
  // py::handle parameters refuses none, and one overload skips pybind11's no-conversion pass)
  (void)twin_refused();  // made here, never while an error is set
  if (refuses)
    twin = py::cpp_function([](const py::args&) { return twin_refused(); }, py::name(name),
                            py::sibling(twin));
  KeywordTwin e{m, name, twin, {}, {}, first_keyword, max_positional, py::object()};
  for (const auto& [param, value] : params) {
    e.params.push_back(py::reinterpret_steal<py::object>(PyUnicode_InternFromString(param)));
    e.defaults.push_back(value);
  }
  keyword_twins().push_back(std::move(e));
}

bool is_arg_error_overload(const py::detail::function_record* rec) {
  return catch_all_impls().count(reinterpret_cast<void*>(rec->impl)) != 0;
}

void init_tensor_method(py::module_& m);  // tensor_method.cpp

void install_arg_errors(py::module_& m) {
  init_tensor_method(m);
  install_on_module(m);
  for (const char* sub : {"_fft", "_linalg", "_torch_nn", "_random", "_torch",
                          "_functional", "_foreach"}) {  // families bound as public functions
    py::module_ s = m.attr(sub);
    install_on_module(s);
  }
  install_on_class(m.attr("Tensor"));
  methods_as_descriptors(m.attr("Tensor"));
}

void install_keyword_fast_paths(py::module_&) {
  install_keyword_twins();  // last: wraps the finished bindings
}

}  // namespace ts::python
