// Bindings of pixel_shuffle, pixel_unshuffle, channel_shuffle and native_channel_shuffle
// (ops/nn/shuffle.h): tessera.nn.functional's functions and their torch.* twins are these entry
// points themselves, with PyTorch's signatures (Note [Readable signatures]).
#include "ops/nn/shuffle.h"
#include "python/convert.h"

namespace ts::python {

void init_shuffle(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "pixel_shuffle",
      [](const Tensor& input, int64_t upscale_factor) {
        return nn::pixel_shuffle(input, upscale_factor);
      },
      py::arg("input"), py::arg("upscale_factor"),
      "pixel_shuffle(input, upscale_factor)\n--\n\n"
      "(*, C r^2, H, W) -> (*, C, H r, W r) with r = upscale_factor (sub-pixel convolution's\n"
      "rearrangement): a reshape, a permutation and a reshape (csrc/ops/nn/shuffle.h), so the\n"
      "gradient is the inverse rearrangement.");
  m.def(
      "pixel_unshuffle",
      [](const Tensor& input, int64_t downscale_factor) {
        return nn::pixel_unshuffle(input, downscale_factor);
      },
      py::arg("input"), py::arg("downscale_factor"),
      "pixel_unshuffle(input, downscale_factor)\n--\n\n"
      "(*, C, H r, W r) -> (*, C r^2, H, W) with r = downscale_factor: pixel_shuffle's inverse\n"
      "(csrc/ops/nn/shuffle.h).");
  for (const char* name : {"channel_shuffle", "native_channel_shuffle"}) {
    m.def(
        name,
        [name](const Tensor& input, int64_t groups) {
          return nn::channel_shuffle(input, groups, name);
        },
        py::arg("input"), py::arg("groups"),
        (std::string(name) +
         "(input, groups)\n--\n\n"
         "(N, C, *) with C = groups k: the channel order (groups, k) becomes (k, groups)\n"
         "(ShuffleNet's channel shuffle; csrc/ops/nn/shuffle.h).")
            .c_str());
  }
}

}  // namespace ts::python
