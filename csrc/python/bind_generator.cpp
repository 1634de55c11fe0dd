// The generator classes over the Philox stream of ops/random.h, and the functions of the
// default generator:
//   ts.random.Generator(seed=0)  NumPy's spelling (ts.default_generator is one);
//   ts.Generator(device="cpu")   torch.Generator;
// both give their state as torch does, a uint8 tensor of 16 bytes (get_state / set_state;
// ts.random.Generator's set_state also takes a (seed, offset) pair);
//   ts.manual_seed / seed / initial_seed / get_rng_state / set_rng_state (torch.random's).
// One stream serves every device (Note [Counter-based RNG]); torch's device is kept as an
// attribute. The sampling methods (g.rand, g.normal, ...) are the module's samplers with
// generator=g (bind_random_forms.cpp, bind_random_samplers.cpp).
#include <cstring>
#include <random>

#include "core/error.h"
#include "ops/copy.h"
#include "ops/random.h"
#include "python/convert.h"
#include "python/input_arg.h"  // type_name

namespace ts::python {
namespace {

// torch.Generator()'s seed before any manual_seed (c10's default_rng_seed_val).
constexpr uint64_t kTorchDefaultSeed = 67280421310721ULL;
constexpr int64_t kStateBytes = 2 * sizeof(uint64_t);  // (seed, offset), little-endian words

// torch.Generator: the stream and the device it was made for.
struct DeviceGenerator : Generator {
  explicit DeviceGenerator(Device d) : Generator(kTorchDefaultSeed), device(d) {}
  Device device;
};

// A seed as torch reads one: an int in [-2**63, 2**64), a negative one taken mod 2**64 (so -1
// is 2**64 - 1); a bool is an int; anything else is a TypeError naming the op.
uint64_t seed_arg(py::handle n, const char* op) {
  if (!PyIndex_Check(n.ptr()) || PyFloat_Check(n.ptr()))
    throw TypeError(std::string(op) + ": the seed must be an int, got " + type_name(n));
  py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(n.ptr()));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(s);
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
    if (!PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  throw ValueError(std::string(op) + ": the seed must be in [-2**63, 2**64), got " +
                   py::str(v).cast<std::string>() + " (as torch.manual_seed)");
}

// A non-deterministic seed below 2**63 (torch's seed()).
uint64_t fresh_seed() {
  std::random_device rd;
  const uint64_t hi = rd(), lo = rd();
  return ((hi << 32) | lo) & ~(uint64_t{1} << 63);
}

// The state as torch gives it: a uint8 CPU tensor of the 16 bytes of (seed, offset).
Tensor state_tensor(const Generator& g) {
  const uint64_t words[2] = {g.seed(), g.offset()};
  Tensor t = Tensor::empty({kStateBytes}, DType::UInt8, Device{});
  std::memcpy(t.data_ptr(), words, sizeof(words));
  return t;
}

// Reads a state from get_state / get_rng_state, checked before anything is touched: a Tensor
// (TypeError otherwise), of dtype uint8 (TypeError, as torch's "RNG state must be a
// ByteTensor"), of 16 elements (ValueError, a RuntimeError as torch's).
void set_from_tensor(Generator& g, py::handle state, const char* op) {
  if (!py::isinstance<Tensor>(state))
    throw TypeError(std::string(op) + ": expected a ByteTensor (uint8 tensor) state, but got " +
                    type_name(state));
  const Tensor& t = state.cast<const Tensor&>();
  if (t.dtype() != DType::UInt8)
    throw TypeError(std::string(op) + ": the RNG state must be a ByteTensor (uint8), got " +
                    dtype_name(t.dtype()));
  if (t.numel() != kStateBytes)
    throw ValueError(std::string(op) + ": expected an RNG state of " + std::to_string(kStateBytes) +
                     " bytes (seed, offset), got " + std::to_string(t.numel()) +
                     " (a state from get_state / get_rng_state)");
  const Tensor host = contiguous(to_device(t, Device{}));
  uint64_t words[2];
  std::memcpy(words, host.data_ptr(), sizeof(words));
  g.set_state(words[0], words[1]);
}

// ts.random.Generator's set_state: (seed, offset) as a tuple or two ints, or a state tensor.
void set_any_state(Generator& g, py::handle state, py::handle offset) {
  const char* op = "Generator.set_state";
  if (!offset.is_none()) {
    g.set_state(seed_arg(state, op), seed_arg(offset, op));
  } else if (py::isinstance<py::tuple>(state) || py::isinstance<py::list>(state)) {
    const py::sequence s = py::reinterpret_borrow<py::sequence>(state);
    if (s.size() != 2)
      throw ValueError(std::string(op) + ": expected a (seed, offset) pair, got " +
                       std::to_string(s.size()) + " items");
    g.set_state(seed_arg(s[0], op), seed_arg(s[1], op));
  } else {
    set_from_tensor(g, state, op);
  }
}

std::string repr(const Generator& g) {
  return "Generator(seed=" + std::to_string(g.seed()) + ", offset=" + std::to_string(g.offset()) +
         ")";
}

// The samplers as methods: g.rand(...) is ts.rand(..., generator=g) (bound after them). The
// text signatures are the samplers' without `generator` (tests/tooling/test_text_signatures.py
// compares them).
void bind_sampler_methods(py::module_& m, py::module_& r, py::handle cls) {
  const auto method = [&](const char* name, py::object fn, py::tuple lead, const char* params) {
    auto call = [fn, lead, name](py::object self, py::args args, py::kwargs kwargs) {
      if (kwargs.contains("generator"))
        throw TypeError(std::string("Generator.") + name +
                        "() got an unexpected keyword argument 'generator'");
      kwargs["generator"] = self;
      return fn(*(lead + args), **kwargs);
    };
    const std::string doc = std::string(name) + "(self, /, " + params + ")\n--\n\n" +
                            (lead.empty() ? std::string("ts.random.") + name
                                          : std::string("ts.random.uniform(0.0, 1.0, ...)")) +
                            " drawing from this generator";
    py::setattr(cls, name, py::cpp_function(call, py::name(name), py::is_method(cls), doc.c_str()));
  };
  const char* kSizeAndCreation =
      "*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, "
      "pin_memory=False";
  const char* kRandint =
      "low=None, high=None, size=None, *, dtype=None, device=None, out=None, layout=None, "
      "pin_memory=False";
  method("rand", m.attr("rand"), py::tuple(), kSizeAndCreation);
  method("randn", m.attr("randn"), py::tuple(), kSizeAndCreation);
  method("randint", m.attr("randint"), py::tuple(), kRandint);
  method("randperm", m.attr("randperm"), py::tuple(),
         "n, *, dtype=None, device=None, out=None, requires_grad=False, layout=None, "
         "pin_memory=False");
  method("uniform", m.attr("uniform"), py::tuple(),
         "low=0.0, high=1.0, size=None, *, dtype=None, device=None");
  method("normal", m.attr("normal"), py::tuple(),
         "mean=0.0, std=1.0, size=None, *, out=None, dtype=None, layout=None, device=None, "
         "requires_grad=False, pin_memory=False");
  method("bernoulli", m.attr("bernoulli"), py::tuple(),
         "input, p=None, size=None, *, out=None, dtype=None, device=None");
  method("multinomial", m.attr("multinomial"), py::tuple(),
         "input, num_samples, replacement=False, *, out=None, dtype=None, device=None");
  method("exponential", r.attr("exponential"), py::tuple(),
         "scale=1.0, size=None, *, lambd=None, dtype=None, device=None");
  method("permutation", r.attr("permutation"), py::tuple(), "x, *, dtype=None, device=None");
  method("shuffle", r.attr("shuffle"), py::tuple(), "x");
  method("choice", r.attr("choice"), py::tuple(),
         "a, size=None, replace=True, p=None, *, dtype=None, device=None");
  method("integers", m.attr("randint"), py::tuple(), kRandint);
  method("random", m.attr("uniform"), py::make_tuple(0.0, 1.0),
         "size=None, *, dtype=None, device=None");
}

}  // namespace

void init_generator(py::module_& m) {
  py::module_ r = m.attr("_random");
  auto cls =
      py::class_<Generator>(r, "Generator", R"doc(Generator(seed=0)
--

An independent random stream (ts.random.Generator, NumPy's spelling): a seed plus the offset of
its next call. Every number is a function of (seed, offset, element index), on every device.

    >>> g = ts.random.Generator(42)
    >>> g.normal(0.0, 1.0, size=(2, 3)).shape
    (2, 3))doc")
          .def(py::init([](py::handle seed) { return Generator(seed_arg(seed, "Generator")); }),
               py::arg("seed") = 0)
          .def(
              "manual_seed",
              [](py::object self, py::handle seed) {
                self.cast<Generator&>().manual_seed(seed_arg(seed, "manual_seed"));
                return self;
              },
              py::arg("seed"),
              "Restarts the stream from `seed` (an int in [-2**63, 2**64)); returns the generator.")
          .def(
              "seed",
              [](Generator& g) {
                const uint64_t s = fresh_seed();
                g.manual_seed(s);
                return s;
              },
              "Seeds the generator non-deterministically and returns the seed.")
          .def("initial_seed", &Generator::seed, "The seed the stream started from.")
          .def("get_state", &state_tensor,
               "The state as torch gives it: a uint8 CPU tensor of 16 bytes, (seed, offset) as "
               "little-endian words (for set_state).")
          .def(
              "set_state",
              [](py::object self, py::handle state, py::handle offset) {
                set_any_state(self.cast<Generator&>(), state, offset);
                return self;
              },
              py::arg("new_state"), py::arg("offset") = py::none(),
              "Restores a state from get_state / get_rng_state (a uint8 tensor of 16 bytes), or "
              "a (seed, offset) pair (or the two ints); returns the generator.")
          .def("get_offset", &Generator::offset,
               "The offset of the next call in the stream (torch.Generator.get_offset).")
          .def(
              "set_offset",
              [](py::object self, py::handle offset) {
                Generator& g = self.cast<Generator&>();
                g.set_state(g.seed(), seed_arg(offset, "set_offset"));
                return self;
              },
              py::arg("offset"),
              "Moves the stream to `offset` (torch.Generator.set_offset); returns the generator.")
          .def_property_readonly(
              "device", [](const Generator&) { return Device{}; },
              "cpu: the stream serves every device")
          .def_property_readonly(
              "_g", [](py::object self) { return self; },
              "the stream itself (what the former Python wrapper held)")
          .def(
              "next_philox",
              [](Generator& g, py::handle device) {
                const auto [seed, offset] = g.next_philox(to_device(device));
                return py::make_tuple(seed, offset);
              },
              "(seed, offset) for one op call on `device` (Note [Graph-safe RNG] during a CUDA "
              "graph capture)")
          .def("__repr__", &repr);
  bind_sampler_methods(m, r, cls);

  py::class_<DeviceGenerator, Generator>(m, "Generator", R"doc(Generator(device='cpu')
--

torch.Generator (ts.Generator): ts.Generator().manual_seed(0), usable wherever generator= is
taken (ts.rand, DataLoader, random_split, ...). The same stream as ts.random.Generator; a fresh
one starts from PyTorch's default seed. get_state / set_state exchange a uint8 tensor.)doc")
      .def(py::init([](py::handle device) {
             if (PyLong_Check(device.ptr()))  // torch.Generator(5): not a seed
               throw TypeError(
                   "Generator: the argument is a device (torch.Generator(device)); seed it with "
                   ".manual_seed(n) or use ts.random.Generator(seed)");
             return DeviceGenerator(device.is_none() ? Device{} : to_device(device));
           }),
           py::arg("device") = "cpu")
      .def_property_readonly(
          "device", [](const DeviceGenerator& g) { return g.device; }, "the device it was made for")
      .def(
          "set_state",
          [](py::object self, py::handle state) {
            set_from_tensor(self.cast<Generator&>(), state, "Generator.set_state");
            return self;
          },
          py::arg("new_state"),
          "Restores a state from get_state (a uint8 tensor of 16 bytes); returns the generator.");

  r.def(
      "manual_seed",
      [](py::handle seed) -> Generator& {
        default_generator().manual_seed(seed_arg(seed, "manual_seed"));
        return default_generator();
      },
      py::arg("seed"), py::return_value_policy::reference,
      "Reseeds the default generator (every device's) with `seed`, an int in [-2**63, 2**64); "
      "returns it, as torch.manual_seed.");
  r.def(
      "seed",
      [](py::handle n) -> py::object {
        Generator& g = default_generator();
        if (!n.is_none()) {
          g.manual_seed(seed_arg(n, "seed"));
          return py::cast(g, py::return_value_policy::reference);
        }
        const uint64_t s = fresh_seed();
        g.manual_seed(s);
        return py::int_(s);
      },
      py::arg("n") = py::none(),
      "seed() seeds the default generator non-deterministically and returns the seed (torch's "
      "seed); seed(n) reseeds it with n and returns it.");
  r.def(
      "initial_seed", [] { return default_generator().seed(); }, "The default generator's seed.");
  r.def(
      "get_rng_state", [] { return state_tensor(default_generator()); },
      "The default generator's state as a uint8 tensor of 16 bytes (for set_rng_state).");
  r.def(
      "set_rng_state",
      [](py::handle state) { set_from_tensor(default_generator(), state, "set_rng_state"); },
      py::arg("new_state"), "Restores the default generator's state from get_rng_state.");
  m.def("_default_generator", &default_generator, py::return_value_policy::reference);
}

}  // namespace ts::python
