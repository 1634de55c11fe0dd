// The bindings of torch.stft / torch.istft (ops/stft.h) with every keyword torch takes, each
// also the Tensor method (x.stft / x.istft are the same functions).
#include <pybind11/stl.h>

#include "ops/stft.h"
#include "python/convert.h"
#include "python/function_method.h"

namespace ts::python {

namespace {

StftArgs stft_args(int64_t n_fft, std::optional<int64_t> hop, std::optional<int64_t> win,
                   py::handle window, bool center, bool normalized, std::optional<bool> onesided,
                   const char* op) {
  StftArgs a;
  a.n_fft = n_fft;
  a.hop_length = hop;
  a.win_length = win;
  if (!window.is_none()) a.window = tensor_or_throw(window, op, "window");
  a.center = center;
  a.normalized = normalized;
  a.onesided = onesided;
  return a;
}

}  // namespace

void init_stft(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "stft",
      [](py::handle x, int64_t n_fft, std::optional<int64_t> hop, std::optional<int64_t> win,
         py::handle window, bool center, const std::string& pad_mode, bool normalized,
         std::optional<bool> onesided, std::optional<bool> return_complex) {
        StftArgs a = stft_args(n_fft, hop, win, window, center, normalized, onesided, "stft");
        a.pad_mode = pad_mode;
        return stft(tensor_or_throw(x, "stft", "input"), a, return_complex);
      },
      py::arg("input"), py::arg("n_fft"), py::arg("hop_length") = py::none(),
      py::arg("win_length") = py::none(), py::arg("window") = py::none(), py::arg("center") = true,
      py::arg("pad_mode") = "reflect", py::arg("normalized") = false,
      py::arg("onesided") = py::none(), py::arg("return_complex") = py::none(),
      "stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, "
      "pad_mode='reflect', normalized=False, onesided=None, return_complex=None)\n--\n\n"
      "The short-time Fourier transform of a 1-D (L,) or batched (B, L) signal: frames every\n"
      "hop_length (default n_fft // 4) samples of the (center: pad_mode-padded by n_fft // 2)\n"
      "signal, times the window (ones of win_length by default, zero-padded to n_fft), then\n"
      "their (r)fft: (..., n_fft // 2 + 1 or n_fft, n_frames) complex, or its (..., 2) real\n"
      "view with return_complex=False (required for real input and window).");
  m.def(
      "istft",
      [](py::handle x, int64_t n_fft, std::optional<int64_t> hop, std::optional<int64_t> win,
         py::handle window, bool center, bool normalized, std::optional<bool> onesided,
         std::optional<int64_t> length, bool return_complex) {
        const StftArgs a =
            stft_args(n_fft, hop, win, window, center, normalized, onesided, "istft");
        return istft(tensor_or_throw(x, "istft", "input"), a, length, return_complex);
      },
      py::arg("input"), py::arg("n_fft"), py::arg("hop_length") = py::none(),
      py::arg("win_length") = py::none(), py::arg("window") = py::none(), py::arg("center") = true,
      py::arg("normalized") = false, py::arg("onesided") = py::none(),
      py::arg("length") = py::none(), py::arg("return_complex") = false,
      "istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, "
      "normalized=False, onesided=None, length=None, return_complex=False)\n--\n\n"
      "The inverse of stft: windowed overlap-add of the inverse FFTs of the frames, divided by\n"
      "the overlapped squared window (the NOLA condition must hold), trimmed to length.");
  bind_functions_as_methods(m, {"stft", "istft"});
}

}  // namespace ts::python
