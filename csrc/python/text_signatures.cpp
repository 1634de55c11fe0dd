// Text signatures for every pybind11 function of _C, made from pybind11's own records.
//
// Note [Text signatures from the records]
// inspect.signature (and help()) read a builtin's signature from a first docstring line in
// CPython's form, "name(a, /, b=1, *, c=None)\n--\n\n" (it becomes __text_signature__).
// pybind11 writes its own form instead ("name(a: tessera._C.Tensor, /, b: int = 1) -> ..."),
// which inspect cannot parse, or none at all under py::options().disable_function_signatures().
// install_text_signatures() runs once, after every binding and the arg-error overloads exist
// (and before the keyword fast paths copy the docstrings): for each pybind11 function reachable
// from _C (its submodules and classes) whose docstring has no text signature yet, it writes
// one made from the function_record, the data pybind11 itself dispatches on, so the signature
// is what the binding accepts: the names (py::arg), pybind11's unnamed parameters as
// positional-only, the `/` of py::pos_only, the `*` of py::kw_only, *args and **kwargs, and
// the defaults (each argument_record's descr: the repr of the value, or the text given to
// py::arg_v). A method's first parameter is `self`, plain: a pybind11 function's __self__ is
// its record capsule, so a `$self` would be dropped from Tensor.op's signature as well as from
// x.op's. The docstring after the line is the bindings' own text (pybind11's signature line,
// which help() showed, goes). Hand-written text signatures (Note [Readable signatures]) are
// kept; tests/tooling/test_text_signatures.py checks them against the records
// (_C._binding_signature).
//
// A function gets no signature, and is listed by _C._text_signature_failures(), when its
// record cannot give a truthful one: a default whose repr is not a Python literal (give the
// binding py::arg_v(name, value, "literal") or take None), a required parameter after a
// defaulted one, or overloads (beyond the arg-error catch-alls) whose parameters differ.
//
// Memory: ml_doc is pybind11's (strdup'ed in initialize_generic and freed with the record, or
// when an overload is added); it is replaced by a strdup'ed string and the old one freed, so
// ownership stays as pybind11 expects. Nothing else holds the old pointer at this point (the
// keyword fast paths share the docstring, and are made afterwards).
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "python/convert.h"
#include "python/function_method.h"

namespace ts::python {

bool is_arg_error_overload(const py::detail::function_record* rec);  // arg_errors.cpp

namespace {

using py::detail::function_record;

struct Failure {
  std::string where, why;
};
std::vector<Failure>& failures() {
  static auto* f = new std::vector<Failure>();
  return *f;
}
double g_pass_seconds = 0;

// CPython's test (find_signature / skip_signature in typeobject.c): the docstring starts with
// "name(" and has ")\n--\n\n" before the first blank line.
// The text after the signature, or nullptr.
const char* after_text_signature(const char* name, const char* doc) {
  if (doc == nullptr) return nullptr;
  const size_t n = std::strlen(name);
  if (std::strncmp(doc, name, n) != 0 || doc[n] != '(') return nullptr;
  for (const char* p = doc + n; *p; ++p) {
    if (std::strncmp(p, ")\n--\n\n", 6) == 0) return p + 6;
    if (p[0] == '\n' && p[1] == '\n') return nullptr;
  }
  return nullptr;
}
bool has_text_signature(const char* name, const char* doc) {
  return after_text_signature(name, doc) != nullptr;
}

// An overload's own docstring without a text signature line written for it by hand (one
// pybind11 put its own line in front of, so inspect never read it; the record's replaces it).
const char* without_text_signature(const char* doc) {
  const char* p = doc;
  while (std::isalnum(static_cast<unsigned char>(*p)) || *p == '_') ++p;
  const std::string name(doc, p);
  const char* rest = name.empty() ? nullptr : after_text_signature(name.c_str(), doc);
  return rest ? rest : doc;
}

// A Python literal that inspect's text-signature parser accepts (ast.literal_eval after
// resolving names): None, True, False, ... (Ellipsis), numbers (inf/nan as math.inf/math.nan),
// strings, and tuples/lists of them. Appends the text to `out`; false for anything else.
struct LiteralReader {
  const char* p;
  std::string& out;
  void space() {
    while (*p == ' ') out += *p++;
  }
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (std::strncmp(p, w, n) != 0 || std::isalnum(static_cast<unsigned char>(p[n])) || p[n] == '_')
      return false;
    p += n;
    return true;
  }
  bool number() {
    const char* s = p;
    if (*p == '-' || *p == '+') ++p;
    if (word("inf") || word("nan")) {
      out += std::string(s, p - 3 - s) + "math." + std::string(p - 3, 3);
      return true;
    }
    const char* digits = p;
    while (std::isdigit(static_cast<unsigned char>(*p)) || *p == '.') ++p;
    if (p == digits) return false;
    if (*p == 'e' || *p == 'E') {
      ++p;
      if (*p == '-' || *p == '+') ++p;
      if (!std::isdigit(static_cast<unsigned char>(*p))) return false;
      while (std::isdigit(static_cast<unsigned char>(*p))) ++p;
    }
    if (*p == 'j') ++p;  // a complex literal: literal_eval takes 1j, not (1+2j) (no sums)
    out.append(s, p);
    return true;
  }
  bool string() {
    const char q = *p;
    if (q != '\'' && q != '"') return false;
    const char* s = p++;
    while (*p && *p != q) p += (*p == '\\' && p[1]) ? 2 : 1;
    if (*p != q) return false;
    ++p;
    out.append(s, p);
    return true;
  }
  bool sequence(char open, char close) {
    if (*p != open) return false;
    out += *p++;
    space();
    while (*p != close) {
      if (!value()) return false;
      space();
      if (*p == ',') {
        out += *p++;
        space();
      } else if (*p != close) {
        return false;
      }
    }
    out += *p++;
    return true;
  }
  bool value() {
    for (const char* w : {"None", "True", "False"})
      if (word(w)) {
        out += w;
        return true;
      }
    if (word("Ellipsis") || std::strncmp(p, "...", 3) == 0) {  // input_arg.h's missing()
      if (*p == '.') p += 3;
      out += "...";
      return true;
    }
    return string() || number() || sequence('(', ')') || sequence('[', ']');
  }
};

bool literal_default(const char* descr, std::string& out) {
  std::string text;
  LiteralReader r{descr, text};
  if (!r.value() || *r.p != '\0') return false;
  out += text;
  return true;
}

// "a, /, b=1, *, c=None" for one overload; false (with `why`) where no truthful text exists.
bool params_of(const function_record& rec, std::string& out, std::string& why) {
  const size_t named = rec.nargs - rec.has_args - rec.has_kwargs;
  std::vector<std::string> items;
  bool after_default = false;
  for (size_t i = 0; i < named; ++i) {
    const bool has_record = i < rec.args.size() && rec.args[i].name && rec.args[i].name[0];
    std::string name = has_record                  ? std::string(rec.args[i].name)
                       : (i == 0 && rec.is_method) ? std::string("self")
                                                   : "arg" + std::to_string(i - rec.is_method);
    if (i == rec.nargs_pos) items.push_back(rec.has_args ? "*args" : "*");
    std::string item = name;
    if (i < rec.args.size() && rec.args[i].descr) {
      item += '=';
      // the value's own repr where it is a plain literal (a descr given to py::arg_v could
      // name another); the descr otherwise (it must then be a literal naming the value)
      PyObject* v = rec.args[i].value.ptr();
      if (v != nullptr &&
          (v == Py_None || v == Py_Ellipsis || PyBool_Check(v) || PyLong_CheckExact(v) ||
           PyFloat_CheckExact(v) || PyUnicode_CheckExact(v))) {
        PyObject* r = PyObject_Repr(v);
        if (r == nullptr) throw py::error_already_set();
        std::string text;
        const bool ok = literal_default(PyUnicode_AsUTF8(r), text);
        Py_DECREF(r);
        if (ok) {
          item += text;
          items.push_back(item);
          after_default = true;
          continue;
        }
      }
      if (!literal_default(rec.args[i].descr, item)) {
        why = "default of '" + name + "' is not a Python literal: " + rec.args[i].descr;
        return false;
      }
      after_default = true;
    } else if (after_default && i < rec.nargs_pos) {
      why = "required parameter '" + name + "' after a defaulted one";
      return false;
    }
    items.push_back(item);
  }
  // the `/` after the last positional-only parameter: py::pos_only's, or all of them where
  // the binding names none (pybind11 matches keywords only to py::arg names); a "*" marker in
  // `items` sits at nargs_pos >= pos_only
  size_t pos_only = rec.nargs_pos_only;
  if (rec.args.empty()) pos_only = std::min<size_t>(named, rec.nargs_pos);
  if (pos_only > 0) items.insert(items.begin() + static_cast<std::ptrdiff_t>(pos_only), "/");
  if (rec.has_args && rec.nargs_pos >= named) items.push_back("*args");
  if (rec.has_kwargs) items.push_back("**kwargs");
  out.clear();
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return true;
}

std::string join_docs(const function_record* head) {
  std::string doc;
  for (auto* it = head; it; it = it->next) {
    if (is_arg_error_overload(it) || !it->doc || !it->doc[0]) continue;
    if (!doc.empty()) doc += '\n';
    doc += without_text_signature(it->doc);
  }
  return doc;
}

// The text signature's parameters for a record chain (the arg-error catch-alls left out).
bool chain_params(const function_record* head, std::string& out, std::string& why) {
  bool first = true;
  for (auto* it = head; it; it = it->next) {
    if (is_arg_error_overload(it)) continue;
    std::string p;
    if (!params_of(*it, p, why)) return false;
    if (first) {
      out = p;
      first = false;
    } else if (p != out) {
      why = "overloads with different parameters: (" + out + ") and (" + p + ")";
      return false;
    }
  }
  if (first) {
    why = "no overload";
    return false;
  }
  return true;
}

bool variadic(const function_record* head) {
  for (auto* it = head; it; it = it->next)
    if (!is_arg_error_overload(it) && (it->has_args || it->has_kwargs)) return true;
  return false;
}

// Every overload takes only (self and) *args and **kwargs: the record says nothing.
bool bare(const function_record* head) {
  for (auto* it = head; it; it = it->next)
    if (!is_arg_error_overload(it) &&
        !(it->has_args && it->has_kwargs && it->nargs == 2u + it->is_method))
      return false;
  return true;
}

const function_record* record_of(PyObject* f) {
  if (f == nullptr || !PyCFunction_Check(f)) return nullptr;
  PyObject* self = PyCFunction_GET_SELF(f);
  if (self == nullptr || !py::detail::is_function_record_PyObject(self)) return nullptr;
  return py::detail::function_record_ptr_from_PyObject(self);
}

// The pybind11 function an attribute holds (a plain function, or one wrapped as a method).
PyObject* function_of(PyObject* v) {
  if (PyCFunction_Check(v)) return v;
  if (PyInstanceMethod_Check(v)) return PyInstanceMethod_GET_FUNCTION(v);
  if (Py_IS_TYPE(v, &PyStaticMethod_Type)) {  // Tensor.__new__
    PyObject* f = PyObject_GetAttrString(v, "__func__");
    if (f == nullptr) {
      PyErr_Clear();
      return nullptr;
    }
    Py_DECREF(f);  // the staticmethod holds it
    return PyCFunction_Check(f) ? f : nullptr;
  }
  PyObject* f = descriptor_function(v);  // function_method.h
  return f != nullptr && PyCFunction_Check(f) ? f : nullptr;
}

// The parameter list, "(...)", of a text signature written at the start of the first
// overload's own docstring; empty where there is none. A method's "$self" becomes "self"
// (Note [Text signatures from the records]).
std::string written_params(const function_record* head, const char* name) {
  for (auto* it = head; it; it = it->next) {
    if (is_arg_error_overload(it)) continue;
    const char* rest = after_text_signature(name, it->doc);
    if (rest == nullptr) return {};
    const char* open = it->doc + std::strlen(name);
    std::string text(open, rest - 5 - open);  // up to and with the ')' before "\n--\n\n"
    if (text.rfind("($self", 0) == 0) text.replace(1, 5, "self");
    return text;
  }
  return {};
}

void set_doc(PyMethodDef* def, const std::string& doc) {
  char* old = const_cast<char*>(def->ml_doc);
  def->ml_doc = strdup(doc.c_str());
  std::free(old);
}

void sign(PyObject* f, const std::string& where, std::unordered_set<PyObject*>& done) {
  if (!done.insert(f).second) return;
  const function_record* rec = record_of(f);
  if (rec == nullptr) return;
  PyMethodDef* def = reinterpret_cast<PyCFunctionObject*>(f)->m_ml;
  // A hand-written text signature stays only where the binding parses *args / **kwargs itself
  // (the record says no more than that); elsewhere the record's replaces it (it is what the
  // binding accepts: tests/tooling/test_text_signatures.py).
  if (variadic(rec)) {
    if (has_text_signature(def->ml_name, def->ml_doc)) return;
    // a bare (*args, **kwargs) record: the text signature written in the first overload's own
    // docstring, in front of which pybind11 put its typed line, so inspect never saw it
    const std::string written = bare(rec) ? written_params(rec, def->ml_name) : std::string();
    if (!written.empty()) {
      set_doc(def, std::string(def->ml_name) + written + "\n--\n\n" + join_docs(rec));
      return;
    }
  }
  std::string params, why;
  if (!chain_params(rec, params, why)) {
    failures().push_back({where, why});
    return;
  }
  set_doc(def, std::string(def->ml_name) + "(" + params + ")\n--\n\n" + join_docs(rec));
}

void sign_namespace(PyObject* dict, const std::string& prefix,
                    std::unordered_set<PyObject*>& done) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    if (PyObject* f = function_of(value)) sign(f, prefix + PyUnicode_AsUTF8(key), done);
  }
}

}  // namespace

void install_text_signatures(py::module_& m) {
  const auto start = std::chrono::steady_clock::now();
  std::unordered_set<PyObject*> done;
  std::vector<py::handle> modules{m};
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  PyObject* dict = PyModule_GetDict(m.ptr());
  while (PyDict_Next(dict, &pos, &key, &value))
    if (PyModule_Check(value)) modules.push_back(value);
  for (py::handle mod : modules) {
    const std::string name = PyModule_GetName(mod.ptr());
    PyObject* d = PyModule_GetDict(mod.ptr());
    sign_namespace(d, name + ".", done);
    pos = 0;
    while (PyDict_Next(d, &pos, &key, &value))
      if (PyType_Check(value) &&
          PyType_HasFeature(reinterpret_cast<PyTypeObject*>(value), Py_TPFLAGS_HEAPTYPE))
        sign_namespace(reinterpret_cast<PyTypeObject*>(value)->tp_dict,
                       name + "." + PyUnicode_AsUTF8(key) + ".", done);
  }
  g_pass_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void init_text_signatures(py::module_& m) {
  m.def(
      "_text_signature_failures",
      [] {
        py::list out;
        for (const auto& f : failures()) out.append(py::make_tuple(f.where, f.why));
        return out;
      },
      "_text_signature_failures()\n--\n\n"
      "(name, reason) for each pybind11 function left without a text signature (Note [Text "
      "signatures from the records]).");
  m.def(
      "_text_signature_seconds", [] { return g_pass_seconds; },
      "_text_signature_seconds()\n--\n\nWall time of the text-signature pass at import.");
  m.def(
      "_binding_signature",
      [](py::handle fn) -> py::object {
        py::handle f = fn;
        if (PyObject* g = function_of(fn.ptr())) f = g;
        const function_record* rec = record_of(f.ptr());
        if (rec == nullptr) throw py::type_error("_binding_signature: not a pybind11 function");
        std::string params, why;
        if (!chain_params(rec, params, why)) throw py::value_error(why);
        return py::str("(" + params + ")");
      },
      py::arg("fn"),
      "_binding_signature(fn)\n--\n\n"
      "The text signature fn's pybind11 records give (without the arg-error catch-alls), "
      "for checking hand-written ones.");
  m.def(
      "_typed_signatures",
      [](py::handle fn) {
        py::list out;
        py::handle f = fn;
        if (PyObject* g = function_of(fn.ptr())) f = g;
        if (const function_record* rec = record_of(f.ptr()))
          for (auto* it = rec; it; it = it->next)
            if (!is_arg_error_overload(it) && it->signature)
              out.append(py::str(std::string(it->name) + it->signature));
        return out;
      },
      py::arg("fn"),
      "_typed_signatures(fn)\n--\n\n"
      "pybind11's typed signature of each of fn's overloads (name(a: T, ...) -> R), for "
      "tools/stubgen.py.");
}

}  // namespace ts::python
