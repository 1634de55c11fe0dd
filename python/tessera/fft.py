"""The array API fft extension (2024.12): ``ts.fft.fft``, ``rfft``, ``fftn``, ...

The functions are the C++ bindings themselves (csrc/python/bind_fft.cpp parses every argument
form, Note [fft torch forms]); transforms run on tessera's own FFT engine (mixed-radix Stockham
for lengths with small prime factors, Bluestein for the rest: every length is O(n log n)).
float16/bfloat16/float32 and complex64 inputs compute in complex64, float64 and complex128 in
complex128; integer and bool inputs are promoted to the default floating dtype, as in PyTorch.
Gradients are the C++ ops' own (csrc/autograd/formulas_fft.cpp, Note [FFT backward]).
"""
from ._C._fft import (fft, fft2, fftfreq, fftn, fftshift, hfft, ifft, ifft2, ifftn,  # noqa: F401
                      ifftshift, ihfft, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft2", "ifft2", "rfft2", "irfft2"]
