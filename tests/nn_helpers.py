"""Shared helpers for the nn tests: run a tessera module and its PyTorch twin (same
weights through load_state_dict) and compare outputs and gradients."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import torch

import tessera as ts


def tt(a: np.ndarray, requires_grad: bool = False) -> ts.Tensor:
    return ts.asarray(np.array(a, order="C"), requires_grad=requires_grad)


def close(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    an = np.asarray(a.numpy() if isinstance(a, ts.Tensor) else a)
    bn = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert an.shape == bn.shape, (an.shape, bn.shape)
    np.testing.assert_allclose(an, bn, rtol=rtol, atol=atol)


def compare_module(t_mod: Any, torch_mod: torch.nn.Module, x: np.ndarray, *,
                   rtol: float = 1e-5, atol: float = 1e-5, grad_input: bool = True,
                   train: bool = True) -> None:
    """Loads torch_mod's weights into t_mod, then compares output, input gradient and
    every parameter gradient (for a random output cotangent)."""
    t_mod.load_state_dict(torch_mod.state_dict())
    t_mod.train(train)
    torch_mod.train(train)
    float_in = np.issubdtype(x.dtype, np.floating)
    xt = torch.tensor(x, requires_grad=grad_input and float_in)
    xs = tt(x, requires_grad=grad_input and float_in)
    yt = torch_mod(xt)
    ys = t_mod(xs)
    close(ys, yt, rtol, atol)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(x.dtype if float_in else np.float32)
    yt.backward(torch.tensor(g))
    ys.backward(tt(g))
    if grad_input and float_in:
        close(xs.grad, xt.grad, rtol, atol)
    tparams = dict(torch_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        if tparams[name].grad is None:
            assert p.grad is None, name
        else:
            close(p.grad, tparams[name].grad, rtol, atol)
    for name, b in t_mod.named_buffers():
        close(b, dict(torch_mod.named_buffers())[name], rtol, atol)


def compare_fn(fn_ts: Callable, fn_torch: Callable, *arrays: np.ndarray,
               rtol: float = 1e-5, atol: float = 1e-6, grad: Optional[list] = None) -> None:
    """Runs fn on tessera and torch inputs; compares outputs and gradients of the inputs
    whose indices are in `grad` (default: all floating inputs)."""
    if grad is None:
        grad = [i for i, a in enumerate(arrays) if np.issubdtype(a.dtype, np.floating)]
    ts_in = [tt(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    th_in = [torch.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    ys, yt = fn_ts(*ts_in), fn_torch(*th_in)
    close(ys, yt, rtol, atol)
    if grad:
        g = np.random.default_rng(2).standard_normal(tuple(yt.shape)).astype(yt.detach().numpy().dtype)
        yt.backward(torch.tensor(g))
        ys.backward(tt(g))
        for i in grad:
            close(ts_in[i].grad, th_in[i].grad, rtol, atol)
