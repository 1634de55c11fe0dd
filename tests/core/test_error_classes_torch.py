"""Junk arguments raise the exception class PyTorch raises (issue 17: "errors raised once").

A sweep calls every Tensor method and every top-level function that tessera and PyTorch share
with junk arguments (None, a string, an object, a float where an int belongs, a dim out of
range, bool and complex tensors where a number type may not fit) and compares the outcome:
PyTorch's exception as its builtin class (TypeError, ValueError, IndexError,
NotImplementedError, RuntimeError, ...) or "ok". tessera agrees when its exception is an
instance of that class (tessera.errors.TypeError/ValueError are RuntimeErrors too, so they
agree with PyTorch's RuntimeError) or both return.

The calls that still disagree are listed in error_classes_torch_known.txt (call, tessera's
outcome, PyTorch's outcome). The test fails on a disagreement not listed, and on a listed call
that no longer disagrees as listed, so the list only shrinks. After fixing some:

    PYTHONPATH=python python tests/core/test_error_classes_torch.py --update
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Callable, Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch") if __name__ != "__main__" else __import__("torch")
import tessera as ts  # noqa: E402

KNOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "error_classes_torch_known.txt")

BUILTINS = (IndexError, NotImplementedError, TypeError, ValueError, AttributeError, KeyError,
            OverflowError, ZeroDivisionError, MemoryError, RuntimeError)

# Not called: they change global state, allocate by their argument, wait, print, or reach
# outside the process.
SKIP_METHODS = {
    "apply_", "map_", "map2_", "backward", "register_hook", "register_post_accumulate_grad_hook",
    "resize_", "resize_as_", "set_", "share_memory_", "pin_memory", "cuda", "to", "record_stream",
    "storage", "untyped_storage", "numpy", "tolist", "new_empty", "new_zeros", "new_ones",
    "new_full", "new_empty_strided", "new_tensor", "repeat", "expand", "tile", "retain_grad",
    "requires_grad_", "module_load", "dim_order", "data_ptr", "element_size", "item",
    "__reduce_ex__", "cpu", "detach_", "is_pinned", "ipu", "xpu", "mtia", "hpu", "type",
    "random_", "uniform_", "normal_", "exponential_", "geometric_", "cauchy_", "log_normal_",
    "bernoulli_", "multinomial", "bernoulli", "unique", "histc", "histogram", "bincount",
    "repeat_interleave", "combinations", "vander", "stft", "istft", "nonzero_static",
}
SKIP_FUNCTIONS_PREFIX = ("set_", "use_", "manual_seed", "seed", "initial_seed", "load", "save",
                         "compile", "get_", "is_", "from_", "empty", "zeros", "ones", "full",
                         "rand", "arange", "range", "linspace", "logspace", "eye", "tril_",
                         "triu_", "normal", "poisson", "bernoulli", "multinomial", "vander",
                         "combinations", "histc", "histogram", "bincount", "repeat_interleave",
                         "sym_", "cond", "export", "vmap", "enable_grad", "no_grad",
                         "inference_mode", "autocast", "typename", "broadcast_shapes",
                         "can_cast", "promote_types", "result_type", "compiled_with_cxx11_abi",
                         "unique", "stft", "istft", "fork", "wait", "save", "asarray", "tensor",
                         "as_tensor", "kaiser_window", "hann_window", "hamming_window",
                         "bartlett_window", "blackman_window", "quantize", "dequantize",
                         "fake_quantize", "nonzero_static", "frombuffer", "cdist", "tile",
                         "randperm", "randint", "scalar_tensor", "sparse", "saddmm", "align",
                         "chunk", "split", "tensor_split", "unsafe_", "set_default", "xlogy")


def _junk_calls(m: Any) -> List[Tuple[str, Callable[[Any], Any]]]:
    """(label, call(module)) for every shared method and function."""
    def tensor(mod: Any, dtype: str = "float32") -> Any:
        return mod.ones((2, 3), dtype=getattr(mod, dtype))

    junk: List[Tuple[str, Tuple[Any, ...], Dict[str, Any]]] = [
        ("None", (None,), {}), ("'abc'", ("abc",), {}), ("object()", (object(),), {}),
        ("1.5", (1.5,), {}), ("dim=7", (), {"dim": 7}), ("dim='a'", (), {"dim": "a"}),
        ("dtype='junk'", (), {"dtype": "junk"}), ("None, None", (None, None), {}),
    ]
    calls: List[Tuple[str, Callable[[Any], Any]]] = []
    methods = sorted(n for n in dir(torch.Tensor) if not n.startswith("_") and hasattr(
        ts.Tensor, n) and callable(getattr(torch.Tensor, n, None)) and n not in SKIP_METHODS)
    for name in methods:
        for label, args, kwargs in junk:
            calls.append((f"x.{name}({label})",
                          lambda mod, n=name, a=args, k=kwargs: getattr(tensor(mod), n)(*a, **k)))
        for dt in ("bool", "complex64", "int64"):
            calls.append((f"x[{dt}].{name}()",
                          lambda mod, n=name, d=dt: getattr(tensor(mod, d), n)()))
        calls.append((f"Tensor.{name}(3)", lambda mod, n=name: getattr(mod.Tensor, n)(3)))
    funcs = sorted(n for n in dir(torch) if not n.startswith("_") and callable(getattr(
        torch, n, None)) and not isinstance(getattr(torch, n), type) and hasattr(ts, n)
        and callable(getattr(ts, n)) and not n.startswith(SKIP_FUNCTIONS_PREFIX))
    for name in funcs:
        calls.append((f"{name}(None)", lambda mod, n=name: getattr(mod, n)(None)))
        calls.append((f"{name}('abc')", lambda mod, n=name: getattr(mod, n)("abc")))
        calls.append((f"{name}(x, None)", lambda mod, n=name: getattr(mod, n)(tensor(mod), None)))
        calls.append((f"{name}(x, 'abc')", lambda mod, n=name: getattr(mod, n)(tensor(mod), "abc")))
        calls.append((f"{name}(x, dim=7)", lambda mod, n=name: getattr(mod, n)(tensor(mod), dim=7)))
    return calls


def _outcome(call: Callable[[Any], Any], mod: Any) -> Any:
    """'ok', or the exception raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(mod)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return e
    return "ok"


def _torch_class(e: Any) -> str:
    if e == "ok":
        return "ok"
    for cls in BUILTINS:
        if isinstance(e, cls):
            return cls.__name__
    return type(e).__name__


def _ts_class(e: Any) -> str:
    if e == "ok":
        return "ok"
    bases = [c.__name__ for c in BUILTINS if isinstance(e, c)]
    return "+".join(bases) or type(e).__name__


def _agrees(ts_out: Any, torch_out: Any) -> bool:
    if torch_out == "ok" or ts_out == "ok":
        return torch_out == ts_out
    want = next((c for c in BUILTINS if isinstance(torch_out, c)), None)
    return want is not None and isinstance(ts_out, want)


def disagreements() -> List[str]:
    out = []
    for label, call in _junk_calls(ts):
        torch_out = _outcome(call, torch)
        ts_out = _outcome(call, ts)
        if not _agrees(ts_out, torch_out):
            out.append(f"{label}\t{_ts_class(ts_out)}\t{_torch_class(torch_out)}")
    return sorted(set(out))


def _known() -> List[str]:
    with open(KNOWN) as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]


def test_error_classes_agree_with_torch_or_are_listed():
    found = set(disagreements())
    known = set(_known())
    new = sorted(found - known)
    fixed = sorted(known - found)
    assert not new, ("calls raising another class than torch (fix them; the list only "
                     "shrinks):\n" + "\n".join(new))
    assert not fixed, ("listed calls that now agree with torch or changed class: remove them "
                       "from error_classes_torch_known.txt (--update):\n" + "\n".join(fixed))


def test_known_list_is_sorted_and_unique():
    known = _known()
    assert known == sorted(set(known))


if __name__ == "__main__":
    rows = disagreements()
    if "--update" in sys.argv:
        with open(KNOWN, "w") as f:
            f.write("# The junk-argument calls whose exception class still differs from torch's\n"
                    "# (test_error_classes_torch.py): call<TAB>tessera<TAB>torch. Only shrinks.\n")
            f.writelines(r + "\n" for r in rows)
    print(f"{len(rows)} disagreements of {len(_junk_calls(ts))} calls")
