"""torch.stft / istft bound in C++ (csrc/ops/stft.cpp, csrc/python/bind_stft.cpp): every keyword
against torch (hypothesis over the forms), the Tensor methods, float64 gradients through both and
the errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import assert_same, compare_grads, same_as_torch


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_stft_matches_torch(data):
    n_fft = data.draw(st.sampled_from([4, 8, 16]))
    batch = data.draw(st.sampled_from([None, 1, 3]))
    length = data.draw(st.integers(n_fft, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    dt = data.draw(st.sampled_from(["float32", "float64", "complex128"]))
    sig = rng.standard_normal((length,) if batch is None else (batch, length)).astype(dt)
    hop = data.draw(st.sampled_from([None, 1, 3, n_fft // 2]))
    win_length = data.draw(st.sampled_from([None, n_fft // 2, n_fft]))
    use_win = data.draw(st.booleans())
    center = data.draw(st.booleans())
    pad_mode = data.draw(st.sampled_from(["reflect", "constant", "replicate", "circular"]))
    normalized = data.draw(st.booleans())
    cplx = dt.startswith("complex")
    onesided = data.draw(st.sampled_from([None, False] if cplx else [None, True, False]))
    rc = data.draw(st.sampled_from([True] if not cplx else [True, False]))
    wl = n_fft if win_length is None else win_length
    wnp = np.hanning(wl + 2)[1:-1].astype("float64" if dt != "float32" else "float32")
    kw = dict(n_fft=n_fft, hop_length=hop, win_length=win_length, center=center,
              pad_mode=pad_mode, normalized=normalized, onesided=onesided, return_complex=rc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.stft(torch.from_numpy(sig), window=torch.from_numpy(wnp) if use_win else None,
                          **kw)
    got = ts.stft(ts.asarray(sig), window=ts.asarray(wnp) if use_win else None, **kw)
    assert_same(got, want, rtol=1e-4, atol=1e-4)
    if rc and onesided is not False and not cplx:
        ikw = {k: v for k, v in kw.items() if k not in ("pad_mode", "return_complex")}
        ikw["onesided"] = None
        win_t = torch.from_numpy(wnp) if use_win else None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                back = torch.istft(want, window=win_t, length=length, **ikw)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ts.istft(ts.asarray(want.numpy()), window=ts.asarray(wnp) if use_win else None,
                         length=length, **ikw)
            return
        got_back = ts.istft(ts.asarray(want.numpy()), window=ts.asarray(wnp) if use_win else None,
                            length=length, **ikw)
        assert_same(got_back, back, rtol=1e-4, atol=1e-4)


def test_stft_methods_and_gradients():
    sig = np.random.default_rng(0).standard_normal((2, 32))
    w = np.hanning(10)[1:-1].copy()
    x = ts.asarray(sig)
    assert_same(x.stft(8, 2, window=ts.asarray(w), return_complex=True),
                torch.from_numpy(sig).stft(8, 2, window=torch.from_numpy(w), return_complex=True))
    compare_grads(lambda s, w: ts.abs(ts.stft(s, 8, 2, window=w, return_complex=True)),
                  lambda s, w: torch.stft(s, 8, 2, window=w, return_complex=True).abs(),
                  [sig, w])
    compare_grads(lambda s: ts.stft(s, 8, 3, center=False, return_complex=False),
                  lambda s: torch.view_as_real(torch.stft(s, 8, 3, center=False,
                                                          window=torch.ones(8, dtype=s.dtype),
                                                          return_complex=True)), [sig])
    spec = torch.stft(torch.from_numpy(sig), 8, 2, window=torch.from_numpy(w),
                      return_complex=True).numpy()
    compare_grads(lambda z: ts.istft(ts.view_as_complex(z), 8, 2, window=ts.asarray(w), length=30),
                  lambda z: torch.istft(torch.view_as_complex(z), 8, 2,
                                        window=torch.from_numpy(w), length=30),
                  [np.stack([spec.real, spec.imag], -1)])


def test_stft_errors():
    sig = ts.ones(20, dtype=ts.float64)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        ts.stft(sig, 8)
    with pytest.raises(RuntimeError, match="win_length"):
        ts.stft(sig, 8, win_length=9, return_complex=True)
    with pytest.raises(RuntimeError, match="window tensor of size equal to win_length"):
        ts.stft(sig, 8, window=ts.ones(5), return_complex=True)
    with pytest.raises(RuntimeError, match="istft requires a complex-valued input"):
        ts.istft(ts.ones((5, 4)), 8)
    with pytest.raises(RuntimeError, match="NOLA"):
        ts.istft(ts.ones((5, 4), dtype=ts.complex128), 8, 8, window=ts.zeros(8, dtype=ts.float64))
    same_as_torch(lambda m: m.stft(m.ones(20, dtype=m.float64), 32, center=False,
                                   return_complex=True))
    same_as_torch(lambda m: m.stft(m.ones((2, 2, 20)), 8, return_complex=True))
    same_as_torch(lambda m: m.stft(m.ones(20), 8, window=m.ones(8, dtype=m.complex64),
                                   onesided=True))
