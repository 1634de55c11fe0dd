// Bindings of the convolution ops (ops/conv.h). tessera.nn.functional's conv* forward here.
#include <pybind11/stl.h>

#include "core/error.h"
#include "ops/conv.h"
#include "ops/nn/pad.h"
#include "ops/pool.h"
#include "python/convert.h"

namespace ts::python {

namespace {

// d's i-th of n values (one value stands for all).
int64_t nth(const Shape& d, int64_t i) { return d.size() == 1 ? d[0] : d[i]; }

// The convolutions' entry (F.conv*d and the Conv modules): zeros padding inside the op;
// reflect/replicate/circular padding (the modules' padding_mode) applied with F.pad first,
// 'same' putting the extra one on the right as PyTorch, then an unpadded convolution.
Tensor conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::handle stride,
            py::handle padding, py::handle dilation, int64_t groups, int nsp, const std::string& op,
            const std::string& padding_mode = "zeros") {
  std::string pad_str;
  Shape pad{0};
  if (py::isinstance<py::str>(padding))
    pad_str = padding.cast<std::string>();
  else
    pad = to_shape(padding, (op + ": padding").c_str());
  const Shape dil = to_shape(dilation, (op + ": dilation").c_str());
  Tensor input = x;
  if (padding_mode != "zeros") {
    TS_CHECK(padding_mode == "reflect" || padding_mode == "replicate" || padding_mode == "circular",
             ValueError, op, ": padding_mode must be zeros, reflect, replicate or circular, got '",
             padding_mode, "'");
    TS_CHECK(pad_str.empty() || pad_str == "same" || pad_str == "valid", ValueError, op,
             ": padding must be 'same', 'valid' or ints, got '", pad_str, "'");
    TS_CHECK(w.ndim() == nsp + 2 && (pad.size() == 1 || static_cast<int>(pad.size()) == nsp) &&
                 (dil.size() == 1 || static_cast<int>(dil.size()) == nsp),
             ValueError, op, ": expected a ", nsp + 2, "-D weight and ", nsp,
             " padding/dilation values, got weight shape ", shape_str(w.shape()));
    Shape flat;  // F.pad's list, last dim first
    for (int i = nsp - 1; i >= 0; --i) {
      if (pad_str == "valid") {
        flat.push_back(0);
        flat.push_back(0);
      } else if (pad_str == "same") {
        const int64_t total = nth(dil, i) * (w.dim(2 + i) - 1);
        flat.push_back(total / 2);
        flat.push_back(total - total / 2);
      } else {
        flat.push_back(nth(pad, i));
        flat.push_back(nth(pad, i));
      }
    }
    input = nn::pad(x, flat, padding_mode, Scalar::from_double(0.0));
    pad_str.clear();
    pad = Shape{0};
  }
  return convolution(input, w, b ? *b : Tensor(), to_shape(stride, (op + ": stride").c_str()), pad,
                     pad_str, dil, groups, nsp, op.c_str());
}

// PyTorch's ConvTranspose output_size= rule: the output_padding that reaches output_size
// (nsp sizes, or nsp + 2 / nsp + 1 with the batch and channel dims).
Shape output_padding_for(const Tensor& x, const Shape& output_size, const Shape& stride,
                         const Shape& padding, const Shape& kernel, const Shape& dilation, int nsp,
                         const std::string& op) {
  Shape size = output_size;
  const int64_t len = size.size();
  if (len == nsp + 2 || (len == nsp + 1 && x.ndim() == nsp + 1))
    size = Shape(size.end() - nsp, size.end());
  const auto list = [](const Shape& s) {
    std::string out = "[";
    for (int64_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  };
  TS_CHECK(static_cast<int>(size.size()) == nsp, ValueError, op, ": output_size must have ", nsp,
           " or ", nsp + 2, " elements, got ", list(size));
  TS_CHECK(x.ndim() >= nsp, ValueError, op, ": input of shape ", shape_str(x.shape()),
           " has fewer than ", nsp, " dims");
  Shape res;
  for (int i = 0; i < nsp; ++i) {
    const int64_t in = x.dim(x.ndim() - nsp + i), s = nth(stride, i);
    const int64_t lo =
        (in - 1) * s - 2 * nth(padding, i) + nth(dilation, i) * (nth(kernel, i) - 1) + 1;
    TS_CHECK(lo <= size[i] && size[i] < lo + s, ValueError, op, ": requested an output size of ",
             list(size), ", but valid sizes range from ", lo, " to ", lo + s - 1, " in dimension ",
             i);
    res.push_back(size[i] - lo);
  }
  return res;
}

Tensor conv_transpose(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
                      py::handle stride, py::handle padding, py::handle output_padding,
                      int64_t groups, py::handle dilation, int nsp, const std::string& op) {
  return convolution_transpose(x, w, b ? *b : Tensor(), to_shape(stride, (op + ": stride").c_str()),
                               to_shape(padding, (op + ": padding").c_str()),
                               to_shape(output_padding, (op + ": output_padding").c_str()), groups,
                               to_shape(dilation, (op + ": dilation").c_str()), nsp, op.c_str());
}

}  // namespace

void init_conv(py::module_& m) {
  m.def("_conv", &conv, py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"),
        py::arg("padding"), py::arg("dilation"), py::arg("groups"), py::arg("nsp"), py::arg("op"),
        py::arg("padding_mode") = "zeros",
        "PyTorch's conv{1,2,3}d over nsp spatial dims (padding: ints, 'same' or 'valid';\n"
        "padding_mode: the Conv modules' zeros, reflect, replicate or circular)");
  m.def(
      "_conv_transpose_output_padding",
      [](const Tensor& x, py::handle output_size, py::handle stride, py::handle padding,
         py::handle kernel, py::handle dilation, int nsp, const std::string& op) {
        const auto shape = [&](py::handle h, const char* what) {
          return to_shape(h, (op + ": " + what).c_str());
        };
        const Shape r =
            output_padding_for(x, shape(output_size, "output_size"), shape(stride, "stride"),
                               shape(padding, "padding"), shape(kernel, "kernel_size"),
                               shape(dilation, "dilation"), nsp, op);
        py::tuple out(r.size());
        for (int64_t i = 0; i < r.size(); ++i) out[i] = py::int_(r[i]);
        return out;
      },
      py::arg("input"), py::arg("output_size"), py::arg("stride"), py::arg("padding"),
      py::arg("kernel_size"), py::arg("dilation"), py::arg("nsp"), py::arg("op"),
      "PyTorch's ConvTranspose output_size= rule: the output_padding tuple that reaches it");
  m.def("_conv_transpose", &conv_transpose, py::arg("input"), py::arg("weight"), py::arg("bias"),
        py::arg("stride"), py::arg("padding"), py::arg("output_padding"), py::arg("groups"),
        py::arg("dilation"), py::arg("nsp"), py::arg("op"),
        "PyTorch's conv_transpose{1,2,3}d over nsp spatial dims");
  {
    // F.conv{1,2,3}d and F.conv_transpose{1,2,3}d themselves: PyTorch's signatures (Note
    // [Readable signatures]); checks, 'same'/'valid' padding, autocast and gradients in the op.
    py::options text_signature;
    text_signature.disable_function_signatures();
    const char* shapes[] = {"(N, C, L) or (C, L)", "(N, C, H, W) or (C, H, W)",
                            "(N, C, D, H, W) or (C, D, H, W)"};
    for (int nsp : {1, 2, 3}) {
      const std::string op = "conv" + std::to_string(nsp) + "d";
      const std::string doc =
          op + "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)\n--\n\n" +
          "Convolution of " + shapes[nsp - 1] + " input with weight (O, C/groups, *kernel)\n" +
          "-> (N, O, *out); padding: ints, 'same' or 'valid'; the output keeps a channels-last\n" +
          "input's memory format (the C++ op csrc/ops/conv.h, gradients of every order).";
      m.def(
          op.c_str(),
          [op, nsp](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
                    py::handle stride, py::handle padding, py::handle dilation, int64_t groups) {
            return conv(x, w, b, stride, padding, dilation, groups, nsp, op);
          },
          py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
          py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, doc.c_str());
      const std::string top = "conv_transpose" + std::to_string(nsp) + "d";
      const std::string tdoc =
          top + "(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, " +
          "dilation=1)\n--\n\n" + "Transposed convolution (the gradient of " + op +
          " with respect to its input) of\n" + shapes[nsp - 1] +
          " input with weight (C, O/groups, *kernel) -> (N, O, *out),\n" +
          "out = (in-1) stride - 2 padding + dilation (k-1) + output_padding + 1 (the C++ op\n" +
          "csrc/ops/conv.h).";
      m.def(
          top.c_str(),
          [top, nsp](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
                     py::handle stride, py::handle padding, py::handle output_padding,
                     int64_t groups, py::handle dilation) {
            return conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation, nsp,
                                  top);
          },
          py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
          py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("groups") = 1,
          py::arg("dilation") = 1, tdoc.c_str());
    }
  }
  auto shape_or_empty = [](py::handle h, const char* what) {
    return h.is_none() ? Shape{} : to_shape(h, what);
  };
  {
    // F.max_pool{1,2,3}d and max_pool{1,2,3}d_with_indices themselves: PyTorch's signatures
    // (Note [Readable signatures]); the values, or (values, int64 flat per-plane indices) with
    // return_indices (always for the _with_indices forms).
    py::options text_signature;
    text_signature.disable_function_signatures();
    for (int nsp : {1, 2, 3})
      for (bool with_indices : {false, true}) {
        const std::string op = "max_pool" + std::to_string(nsp) + "d";
        const std::string name = with_indices ? op + "_with_indices" : op;
        const std::string doc =
            name + "(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, " +
            "return_indices=" + (with_indices ? "True" : "False") + ")\n--\n\n" +
            "Max over kernel windows of (N, C, *spatial) or (C, *spatial) with " +
            std::to_string(nsp) +
            " spatial dims (-inf\npadding; floating input, or integer on the CPU); " +
            (with_indices ? "(values, indices)" : "with return_indices also") +
            " the int64\nflat index of each maximum in its plane, as max_unpool takes them (the "
            "C++ op\ncsrc/ops/pool.h, gradients in C++).";
        m.def(
            name.c_str(),
            [shape_or_empty, op, nsp, with_indices](const Tensor& x, py::handle k, py::handle s,
                                                    py::handle p, py::handle d, bool ceil_mode,
                                                    bool return_indices) -> py::object {
              auto [y, idx] =
                  max_pool(x, nsp, to_shape(k, (op + ": kernel_size").c_str()),
                           shape_or_empty(s, (op + ": stride").c_str()),
                           to_shape(p, (op + ": padding").c_str()),
                           to_shape(d, (op + ": dilation").c_str()), ceil_mode, op.c_str());
              if (with_indices || return_indices) return py::make_tuple(y, idx);
              return py::cast(y);
            },
            py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
            py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("ceil_mode") = false,
            py::arg("return_indices") = with_indices, doc.c_str());
      }
  }
  {
    // F.avg_pool{1,2,3}d themselves: PyTorch's signatures (Note [Readable signatures]); stride
    // None or empty: the kernel size; divisor_override 0 is refused (None: the window's count).
    py::options text_signature;
    text_signature.disable_function_signatures();
    for (int nsp : {1, 2, 3}) {
      const std::string op = "avg_pool" + std::to_string(nsp) + "d";
      const std::string doc =
          op + "(input, kernel_size, stride=None, padding=0, ceil_mode=False, " +
          "count_include_pad=True" + (nsp > 1 ? ", divisor_override=None" : "") + ")\n--\n\n" +
          "Mean over kernel windows of (N, C, *spatial) or (C, *spatial) with " +
          std::to_string(nsp) +
          " spatial dims;\ncount_include_pad counts the zero padding in each divisor" +
          (nsp > 1 ? ", divisor_override\nreplaces it" : "") +
          " (the C++ op csrc/ops/pool.h, gradients in C++).";
      auto fn = [shape_or_empty, op, nsp](const Tensor& x, py::handle k, py::handle s, py::handle p,
                                          bool ceil_mode, bool count_include_pad,
                                          std::optional<int64_t> divisor) {
        TS_CHECK(!divisor || *divisor != 0, ValueError, op, ": divisor must be not zero");
        return avg_pool(x, nsp, to_shape(k, (op + ": kernel_size").c_str()),
                        shape_or_empty(s, (op + ": stride").c_str()),
                        to_shape(p, (op + ": padding").c_str()), ceil_mode, count_include_pad,
                        divisor ? *divisor : 0, op.c_str());
      };
      if (nsp == 1)
        m.def(
            op.c_str(),
            [fn](const Tensor& x, py::handle k, py::handle s, py::handle p, bool ceil_mode,
                 bool count_include_pad) {
              return fn(x, k, s, p, ceil_mode, count_include_pad, std::nullopt);
            },
            py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
            py::arg("padding") = 0, py::arg("ceil_mode") = false,
            py::arg("count_include_pad") = true, doc.c_str());
      else
        m.def(op.c_str(), fn, py::arg("input"), py::arg("kernel_size"),
              py::arg("stride") = py::none(), py::arg("padding") = 0, py::arg("ceil_mode") = false,
              py::arg("count_include_pad") = true, py::arg("divisor_override") = py::none(),
              doc.c_str());
    }
  }
  {
    py::options text_signature;
    text_signature.disable_function_signatures();
    m.def(
        "pad",
        [](const py::object& input, py::handle pad, const std::string& mode, py::handle value) {
          const Tensor& x = tensor_or_throw(input, "pad", "input");
          Scalar v = Scalar::from_double(0.0);
          if (!value.is_none() && !to_scalar(value, v))
            throw TypeError(str("pad: value must be a number, got ",
                                py::str(py::type::of(value).attr("__name__")).cast<std::string>()));
          Tensor y = nn::pad(x, to_shape(pad, "pad: pad"), mode, v);
          return y.impl() == x.impl() ? input : py::cast(std::move(y));
        },
        py::arg("input"), py::arg("pad"), py::arg("mode") = "constant",
        py::arg("value") = py::none(),
        "pad(input, pad, mode='constant', value=None)\n--\n\n"
        "PyTorch's F.pad: pad lists (left, right) pairs starting from the LAST dimension.\n"
        "Modes: constant (value, default 0), reflect, replicate, circular; negative pads crop\n"
        "(the C++ op csrc/ops/nn/pad.h).");
  }
  m.def(
      "_to_memory_format",
      [](const Tensor& x, py::handle fmt, const std::string& op) {
        return to_memory_format(x, memory_format_of(fmt, op.c_str()), op.c_str());
      },
      "x laid out as the memory format asks (a differentiable copy, or x itself)");
}

}  // namespace ts::python
