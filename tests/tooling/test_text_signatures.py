"""Every public tessera callable has an inspect.signature, and it tells the truth (issue 17;
Note [Text signatures from the records] in csrc/python/text_signatures.cpp).

- coverage: each public function of the namespaces below and each Tensor method (and the dunders
  Tensor defines) has a signature; the exceptions are listed with their reason;
- hand-written text signatures agree with the pybind11 records the binding dispatches on;
- calls: for every callable that some simple positional call works on, the same call with each
  keyword-capable parameter passed by its name, plus every other keyword-capable parameter
  passed explicitly as its signature's default, gives the same result;
- nn.functional's parameter names are PyTorch's where both define the function.
"""
from __future__ import annotations

import inspect
import math
import warnings
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np
import pytest

import tessera as ts
import tessera.nn.functional as F
from tessera import _C

NAMESPACES = {"ts": ts, "ts.linalg": ts.linalg, "ts.fft": ts.fft, "ts.special": ts.special,
              "F": F, "ts.random": ts.random, "ts.autograd": ts.autograd, "ts.cuda": ts.cuda}

# Callables without a signature, each with the reason none can be given.
NO_SIGNATURE = {
    "Tensor.uniform_": "its first parameter is PyTorch's `from`, a Python keyword: no "
                       "inspect.Parameter can carry that name (torch.Tensor.uniform_ has no "
                       "signature either)",
}


def _is_function(obj: Any) -> bool:
    return callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj)


def public_callables() -> Iterator[Tuple[str, Any]]:
    for ns, mod in NAMESPACES.items():
        for name in sorted(dir(mod)):
            obj = getattr(mod, name)
            if not name.startswith("_") and _is_function(obj):
                yield f"{ns}.{name}", obj
    for name in sorted(dir(ts.Tensor)):
        # public methods, and the dunders Tensor itself defines (not object's)
        if name.startswith("_") and not (name.startswith("__") and name in vars(ts.Tensor)):
            continue
        obj = getattr(ts.Tensor, name)
        if _is_function(obj):
            yield f"Tensor.{name}", obj


def test_every_public_callable_has_a_signature():
    missing = []
    count = 0
    for qual, obj in public_callables():
        count += 1
        try:
            inspect.signature(obj)
        except (ValueError, TypeError):
            missing.append(qual)
    assert count > 1400, count  # the namespaces and Tensor were walked
    assert missing == sorted(NO_SIGNATURE), missing


# Public callables whose signature is a bare (*args, **kwargs), each with the reason. Every
# other public function of the namespaces below, Tensor method and Generator method names its
# parameters (issue 17: no generic signature where the callable has a real one).
BARE_SIGNATURE: Dict[str, str] = {
    "Tensor.__init__": "object's: tessera.Tensor is made by __new__ (Tensor(*sizes) / Tensor(data))",
}
BARE_NAMESPACES = dict(NAMESPACES, **{
    "ts.nn.init": ts.nn.init, "ts.optim": ts.optim, "ts.func": ts.func, "ts.amp": ts.amp,
    "ts.utils.data": ts.utils.data, "ts.nn.utils": ts.nn.utils, "ts.testing": ts.testing,
    "ts.distributed": ts.distributed, "ts.cuda.nvtx": ts.cuda.nvtx,
    "ts.optim.lr_scheduler": ts.optim.lr_scheduler})


def _is_bare(obj: Any) -> bool:
    try:
        sig = inspect.signature(obj)
    except (ValueError, TypeError):
        return False  # no signature at all: test_every_public_callable_has_a_signature
    P = inspect.Parameter
    kinds = sorted(p.kind for p in sig.parameters.values() if p.name != "self")
    return kinds == [P.VAR_POSITIONAL, P.VAR_KEYWORD]


def test_no_public_callable_has_a_bare_signature():
    bare = []
    count = 0
    for ns, mod in BARE_NAMESPACES.items():
        for name in sorted(dir(mod)):
            obj = getattr(mod, name)
            if not name.startswith("_") and _is_function(obj):
                count += 1
                if _is_bare(obj):
                    bare.append(f"{ns}.{name}")
    for cls in (ts.Tensor, ts.Generator):
        for name in sorted(dir(cls)):
            obj = getattr(cls, name)
            if (not name.startswith("_") or name in vars(cls)) and _is_function(obj):
                count += 1
                if _is_bare(obj):
                    bare.append(f"{cls.__name__}.{name}")
    assert count > 1500, count
    assert sorted(bare) == sorted(BARE_SIGNATURE), sorted(set(bare) ^ set(BARE_SIGNATURE))


def test_bare_check_catches_a_forwarder():
    def forwarder(*args: Any, **kwargs: Any) -> Any:
        return ts.abs(*args, **kwargs)
    assert _is_bare(forwarder) and not _is_bare(ts.abs) and not _is_bare(ts.Tensor.view)


def test_generator_methods_take_the_samplers_parameters():
    # g.normal(...) is ts.normal(..., generator=g): the same parameters but generator
    samplers = {"rand": ts.rand, "randn": ts.randn, "randint": ts.randint,
                "randperm": ts.randperm, "uniform": ts.random.uniform, "normal": ts.normal,
                "bernoulli": ts.bernoulli, "multinomial": ts.multinomial,
                "exponential": ts.random.exponential, "permutation": ts.random.permutation,
                "shuffle": ts.random.shuffle, "choice": ts.random.choice,
                "integers": ts.randint}
    for name, fn in samplers.items():
        want = [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()
                if p.name != "generator"]
        got = [(p.name, p.kind, p.default)
               for p in list(inspect.signature(getattr(ts.Generator, name)).parameters.values())[1:]]
        # the samplers' leading parameters may be positional-or-keyword where the method's
        # follow the `self, /` marker: compare names, defaults and the keyword-only split
        assert [(n, d, k is inspect.Parameter.KEYWORD_ONLY) for n, k, d in got] == \
            [(n, d, k is inspect.Parameter.KEYWORD_ONLY) for n, k, d in want], name
    random = [p.name for p in inspect.signature(ts.Generator.random).parameters.values()]
    assert random == ["self", "size", "dtype", "device"]


def test_generator_methods_by_name_draw_as_the_samplers():
    g1, g2 = ts.Generator(), ts.Generator()
    g1.manual_seed(5)
    g2.manual_seed(5)
    a = g1.normal(mean=1.0, std=2.0, size=(3,), dtype=ts.float64)
    b = ts.normal(1.0, 2.0, (3,), generator=g2, dtype=ts.float64)
    assert a.tolist() == b.tolist()
    assert g1.random(size=(2,)).shape == (2,)
    with pytest.raises(TypeError, match="generator"):
        g1.rand(2, generator=g2)


def test_in_place_views_take_torchs_parameter_names():
    torch = pytest.importorskip("torch")
    for name, args in [("squeeze_", {"dim": 0}), ("unsqueeze_", {"dim": 1}),
                       ("transpose_", {"dim0": 0, "dim1": 1}),
                       ("swapaxes_", {"axis0": 0, "axis1": 1}),
                       ("swapdims_", {"dim0": 0, "dim1": 1}),
                       ("as_strided_", {"size": (1,), "stride": (1,), "storage_offset": 1})]:
        x, t = ts.ones(1, 2), torch.ones(1, 2)
        getattr(x, name)(**args)
        getattr(t, name)(**args)
        assert tuple(x.shape) == tuple(t.shape), name
        assert list(inspect.signature(getattr(ts.Tensor, name)).parameters)[1:] == list(args)
    x, t = ts.ones(2, 3), torch.ones(2, 3)
    assert tuple(x.matmul(other=ts.ones(3)).shape) == tuple(t.matmul(other=torch.ones(3)).shape)
    assert tuple(x.new_zeros(2, 1, dtype=ts.int64).shape) == (2, 1)


def test_deprecated_init_aliases_carry_their_targets_signature():
    torch = pytest.importorskip("torch")
    for name in ("uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
                 "kaiming_uniform", "kaiming_normal", "orthogonal", "eye", "dirac", "sparse"):
        alias, target = getattr(ts.nn.init, name), getattr(ts.nn.init, name + "_")
        assert inspect.signature(alias) == inspect.signature(target), name
        # the parameter names are torch's (its target's; torch's alias itself has none)
        assert list(inspect.signature(alias).parameters) == \
            list(inspect.signature(getattr(torch.nn.init, name + "_")).parameters), name
    with pytest.warns(FutureWarning, match="normal_"):
        ts.nn.init.normal(ts.empty(2), mean=0.0, std=1.0)


def test_bound_methods_drop_self():
    x = ts.ones(2, 3)
    for name in ("abs", "abs_", "sum", "reshape", "add", "clamp", "__add__", "cuda"):
        unbound = list(inspect.signature(getattr(ts.Tensor, name)).parameters)
        bound = list(inspect.signature(getattr(x, name)).parameters)
        assert bound == unbound[1:], (name, unbound, bound)


def test_no_binding_left_without_text_signature():
    # what the import-time pass could not sign (Note [Text signatures from the records])
    assert _C._text_signature_failures() == []


def test_help_keeps_the_docstring():
    assert ts.abs.__doc__ is None or "--" not in (ts.abs.__doc__ or "")
    doc = ts.Tensor.abs_.__doc__
    assert doc.startswith("In-place abs") and "\n--\n" not in doc
    assert "(self, /)" in ts.Tensor.abs_.__text_signature__


def _pybind_functions() -> Iterator[Tuple[str, Any]]:
    """Every pybind11 function reachable from _C, its submodules and classes."""
    seen = set()
    mods = [_C] + [v for v in vars(_C).values() if inspect.ismodule(v)]
    spaces: List[Tuple[str, Dict[str, Any]]] = []
    for m in mods:
        spaces.append((m.__name__, vars(m)))
        spaces += [(f"{m.__name__}.{k}", vars(v)) for k, v in vars(m).items()
                   if isinstance(v, type) and v.__module__.startswith("tessera")]
    for where, d in spaces:
        for k, v in list(d.items()):
            f = getattr(v, "__func__", v)
            try:
                _C._binding_signature(f)
            except TypeError:
                continue  # not a pybind11 function
            except ValueError:
                pass
            if id(f) not in seen:
                seen.add(id(f))
                yield f"{where}.{k}", f


def _signature_from_text(text: str) -> inspect.Signature:
    ns: Dict[str, Any] = {"math": math}
    exec(f"def f{text}: pass", ns)  # noqa: S102 (a test-only parse of a binding's signature)
    return inspect.signature(ns["f"])


def _shape(sig: inspect.Signature) -> List[Tuple[Any, ...]]:
    out = []
    for p in sig.parameters.values():
        name = p.name if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) else "*"
        out.append((name, p.kind, p.default))
    return out


def test_text_signatures_agree_with_the_bindings():
    wrong = []
    n = 0
    for qual, f in _pybind_functions():
        try:
            text = _C._binding_signature(f)
            if "*args" in text or "**kwargs" in text:
                continue  # parses *args/**kwargs itself: its hand-written text is checked by calls
            want = _signature_from_text(text)
            got = inspect.signature(f)
        except SyntaxError:  # a parameter named as a Python keyword
            assert any(qual.endswith("." + k.split(".")[-1]) for k in NO_SIGNATURE), qual
            continue
        except ValueError:
            continue  # no signature at all: test_every_public_callable_has_a_signature
        n += 1
        if _shape(got) != _shape(want):
            wrong.append(f"{qual}: text {got} but the binding takes {want}")
    assert n > 1000, n
    assert not wrong, "\n".join(wrong)


# ---- calls by name

SKIP_CALLS = {
    # global state
    "manual_seed", "seed", "set_rng_state", "set_num_threads", "set_default_dtype",
    "set_default_device", "set_printoptions", "use_deterministic_algorithms",
    "set_grad_enabled", "set_flush_denormal", "set_default_tensor_type", "set_warn_always",
    "set_detect_anomaly", "set_float32_matmul_precision", "set_deterministic_debug_mode",
    "set_num_interop_threads", "compile", "fork_rng", "enable_grad", "no_grad",
    "inference_mode", "set_multithreading_enabled",
    # storage identity
    "data_ptr", "const_data_ptr", "untyped_storage", "storage", "_storage_ptr",
    "__hash__", "__repr__", "__str__", "__format__", "__reduce__", "__reduce_ex__",
    "__setstate__", "__dlpack__", "__array__", "__array_wrap__", "__deepcopy__", "__copy__",
    "register_hook", "backward", "share_memory_", "pin_memory", "tolist", "numpy",
}


def _inputs() -> List[Tuple[Any, ...]]:
    x = ts.tensor([[0.2, 0.5, 0.7], [0.3, 0.6, 0.4]])
    y = ts.tensor([[0.6, 0.1, 0.3], [0.9, 0.2, 0.5]])
    return [(), (x,), (x, y), (x, 1), (x, 0.5), (x, y, y), (x, (3, 2))]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, ts.Tensor) and isinstance(b, ts.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        an, bn = np.asarray(a.detach().cpu()), np.asarray(b.detach().cpu())
        return bool(np.array_equal(an, bn, equal_nan=an.dtype.kind in "fc"))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (int, bool, str, type(None), complex)):
        return type(a) is type(b) and a == b
    return type(a) is type(b)


def _call(f: Callable, args: Tuple, kwargs: Dict) -> Any:
    ts.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def _by_name(sig: inspect.Signature, args: Tuple) -> Tuple[Tuple, Dict]:
    """args as the signature binds them, each keyword-capable one passed by name, plus every
    other keyword-capable parameter given explicitly as its default."""
    bound = sig.bind(*args)
    pos: List[Any] = []
    kw: Dict[str, Any] = {}
    params = list(sig.parameters.values())
    # parameters before a *args that received values stay positional
    star = next((i for i, p in enumerate(params)
                 if p.kind is p.VAR_POSITIONAL and bound.arguments.get(p.name)), None)
    for i, p in enumerate(params):
        if p.name in bound.arguments:
            v = bound.arguments[p.name]
            if p.kind is p.VAR_POSITIONAL:
                pos += list(v)
            elif p.kind is p.VAR_KEYWORD:
                kw.update(v)
            elif p.kind is p.POSITIONAL_ONLY or (star is not None and i < star):
                pos.append(v)
            else:
                kw[p.name] = v
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is not p.empty:
            if star is None or i > star:
                kw[p.name] = p.default
    return tuple(pos), kw


def _callables_to_call() -> Iterator[Tuple[str, Callable[[], Callable]]]:
    shared = ts.tensor([[0.2, 0.5, 0.7], [0.3, 0.6, 0.4]])
    for qual, obj in public_callables():
        name = qual.rsplit(".", 1)[1]
        if (name in SKIP_CALLS or name.startswith("set_") or qual.startswith("ts.cuda")
                or qual in NO_SIGNATURE
                or not inspect.isbuiltin(obj) and not qual.startswith("Tensor.")):
            continue
        if qual.startswith("Tensor."):
            if name.endswith("_") or name.startswith("__i"):  # in place: a fresh tensor each call
                yield qual, lambda name=name: getattr(shared.clone(), name)
            else:
                yield qual, lambda name=name: getattr(shared, name)
        else:
            yield qual, lambda obj=obj: obj


def name_of(qual: str) -> str:
    return qual.rsplit(".", 1)[1]


def test_parameters_passed_by_name_do_what_the_signature_says():
    """Signatures of the C++ bindings (builtins) and of every Tensor method."""
    wrong = []
    checked = 0
    for qual, get in _callables_to_call():
        sig = inspect.signature(get())
        for args in _inputs():
            try:
                want = _call(get(), args, {})
            except Exception:
                continue
            # a call that works binds to the signature
            try:
                pos, kw = _by_name(sig, args)
            except TypeError as e:
                wrong.append(f"{qual}{sig}: the working call with {len(args)} arguments does "
                             f"not bind: {e}")
                break
            try:
                got = _call(get(), pos, kw)
            except Exception as e:
                wrong.append(f"{qual}{sig}: by name {sorted(kw)} raised {type(e).__name__}: {e}")
                break
            if name_of(qual).startswith(("empty", "new_empty")):  # uninitialized values
                got, want = (got.shape, got.dtype), (want.shape, want.dtype)
            if not _same(got, want):
                wrong.append(f"{qual}{sig}: by name {sorted(kw)} gave another result")
            checked += 1
            break
    assert checked > 700, checked
    assert not wrong, f"{len(wrong)} signatures do not match their callables:\n" + \
        "\n".join(wrong)


def test_by_name_catches_a_wrong_default():
    # the check above fails for a signature whose default is not the real one
    P = inspect.Parameter
    sig = inspect.Signature([P("x", P.POSITIONAL_ONLY),
                             P("dim", P.POSITIONAL_OR_KEYWORD, default=0)])  # really None
    x = _inputs()[1][0]
    pos, kw = _by_name(sig, (x,))
    assert pos == (x,) and kw == {"dim": 0}
    assert not _same(_call(ts.sum, pos, kw), _call(ts.sum, (x,), {}))


# ---- nn.functional against PyTorch

# nn.functional functions whose parameters are not torch's, with the reason.
F_NAME_DIFFERENCES: Dict[str, str] = {
    "normalize": "no out= (torch writes the result into out); a call with out raises TypeError",
    "rrelu": "an extra keyword generator= (the random source of training mode), after torch's",
}


def _names(f: Callable) -> List[str]:
    return [p.name for p in inspect.signature(f).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def test_functional_parameter_names_are_torchs():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    differ = {}
    compared = 0
    for name in sorted(dir(F)):
        if name.startswith("_") or not hasattr(tf, name) or not _is_function(getattr(F, name)):
            continue
        try:
            want = _names(getattr(tf, name))
        except (ValueError, TypeError):
            continue  # a torch builtin without a signature
        if not want:
            continue  # torch's boolean dispatch (max_pool2d and kin): (*args, **kwargs)
        compared += 1
        got = _names(getattr(F, name))
        if got != want:
            differ[name] = f"tessera {got}, torch {want}"
    assert compared > 80, compared
    unexplained = {k: v for k, v in differ.items() if k not in F_NAME_DIFFERENCES}
    assert not unexplained, "\n".join(f"{k}: {v}" for k, v in unexplained.items())
    assert not set(F_NAME_DIFFERENCES) - set(differ), "listed differences that are gone"
