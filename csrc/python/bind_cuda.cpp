// Bindings behind ts.cuda: device queries, streams, events, memory statistics, device moves
// and pinned memory. Compiled into every build; without the CUDA backend the queries answer
// "not available" and everything else raises a RuntimeError saying why.
#include <pybind11/stl.h>

#include "core/device_backend.h"
#include "ops/attention.h"
#include "ops/conv.h"
#include "ops/copy.h"
#include "python/convert.h"

namespace ts::python {

namespace {

int dev_index(py::handle h, const char* what) {
  if (h.is_none()) return require_cuda(what).current_device();
  if (py::isinstance<py::int_>(h)) return h.cast<int>();
  const Device d = to_device(h);
  TS_CHECK(!d.is_cpu(), ValueError, what, ": expected a CUDA device, got ", d.str());
  return d.index;
}

DeviceBackend& checked(const char* what, int index) {
  DeviceBackend& b = require_cuda(what);
  TS_CHECK(index >= 0 && index < b.device_count(), RuntimeError, what, ": device cuda:", index,
           " does not exist (", b.device_count(), " CUDA device(s) found)");
  return b;
}

void bind_queries(py::module_& c) {
  c.def("is_built", [] { return cuda_backend() != nullptr; });
  c.def("is_available", [] { return cuda_backend() != nullptr && cuda_backend()->available(); });
  c.def("device_count", [] { return cuda_backend() ? cuda_backend()->device_count() : 0; });
  c.def("current_device", [] { return require_cuda("cuda.current_device").current_device(); });
  c.def("set_device", [](py::handle d) {
    const int i = dev_index(d, "cuda.set_device");
    checked("cuda.set_device", i).set_device(i);
  });
  c.def("synchronize", [](py::handle d) {
    const int i = dev_index(d, "cuda.synchronize");
    py::gil_scoped_release nogil;
    checked("cuda.synchronize", i).synchronize(i);
  });
  c.def("get_device_name", [](py::handle d) {
    const int i = dev_index(d, "cuda.get_device_name");
    return checked("cuda.get_device_name", i).device_name(i);
  });
  c.def("get_arch_list", [] {
    DeviceBackend* b = cuda_backend();
    return b && b->available() ? b->arch_list() : std::vector<std::string>{};
  });
  c.def("nvtx_range_push",
        [](const std::string& msg) { return require_cuda("cuda.nvtx.range_push").nvtx_range_push(msg); });
  c.def("nvtx_range_pop", [] { return require_cuda("cuda.nvtx.range_pop").nvtx_range_pop(); });
  c.def("nvtx_mark",
        [](const std::string& msg) { require_cuda("cuda.nvtx.mark").nvtx_mark(msg); });
  c.def("get_device_properties", [](py::handle d) {
    const int i = dev_index(d, "cuda.get_device_properties");
    return checked("cuda.get_device_properties", i).device_properties(i);
  });
}

void bind_memory(py::module_& c) {
  c.def("memory_stats", [](py::handle d) {
    const int i = dev_index(d, "cuda.memory_stats");
    return checked("cuda.memory_stats", i).memory_stats(i);
  });
  c.def("reset_peak_memory_stats", [](py::handle d) {
    const int i = dev_index(d, "cuda.reset_peak_memory_stats");
    checked("cuda.reset_peak_memory_stats", i).reset_peak_memory_stats(i);
  });
  c.def("reset_accumulated_memory_stats", [](py::handle d) {
    const int i = dev_index(d, "cuda.reset_accumulated_memory_stats");
    checked("cuda.reset_accumulated_memory_stats", i).reset_accumulated_memory_stats(i);
  });
  // PyTorch's memory_snapshot() layout: a dict per segment with its blocks in address order.
  c.def("memory_snapshot", [] {
    py::list out;
    if (!cuda_backend() || !cuda_backend()->available()) return out;
    static const char* kStates[3] = {"active_allocated", "active_pending_free", "inactive"};
    for (const MemorySegment& seg : cuda_backend()->memory_snapshot()) {
      py::list blocks;
      for (const MemoryBlock& b : seg.blocks) {
        py::dict bd;
        bd["address"] = b.address;
        bd["size"] = b.size;
        bd["requested_size"] = b.requested_size;
        bd["state"] = kStates[b.state];
        bd["frames"] = py::list();
        blocks.append(bd);
      }
      py::dict sd;
      sd["device"] = seg.device;
      sd["address"] = seg.address;
      sd["total_size"] = seg.total_size;
      sd["allocated_size"] = seg.allocated_size;
      sd["active_size"] = seg.active_size;
      sd["requested_size"] = seg.requested_size;
      sd["stream"] = seg.stream;
      sd["segment_type"] = seg.large ? "large" : "small";
      sd["segment_pool_id"] = py::make_tuple(0, seg.pool_id);
      sd["is_expandable"] = false;
      sd["frames"] = py::list();
      sd["blocks"] = blocks;
      out.append(sd);
    }
    return out;
  });
  c.def("empty_cache", [] {
    if (cuda_backend() && cuda_backend()->available()) cuda_backend()->empty_cache();
  });
  c.def("set_memory_fraction", [](double fraction, py::handle d) {
    const int i = dev_index(d, "cuda.set_per_process_memory_fraction");
    checked("cuda.set_per_process_memory_fraction", i).set_memory_fraction(i, fraction);
  });
  c.def("memory_fraction", [](py::handle d) {
    const int i = dev_index(d, "cuda.get_per_process_memory_fraction");
    return checked("cuda.get_per_process_memory_fraction", i).memory_fraction(i);
  });
  c.def("mem_get_info", [](py::handle d) {
    const int i = dev_index(d, "cuda.mem_get_info");
    const auto [free_bytes, total_bytes] = checked("cuda.mem_get_info", i).mem_get_info(i);
    return py::make_tuple(free_bytes, total_bytes);
  });
}

void bind_streams(py::module_& c) {
  c.def("current_stream",
        [](int i) { return checked("cuda.current_stream", i).current_stream(i); });
  c.def("set_current_stream",
        [](int i, uintptr_t s) { checked("cuda.set_stream", i).set_current_stream(i, s); });
  c.def("create_stream",
        [](int i, int priority) { return checked("cuda.Stream", i).create_stream(i, priority); });
  c.def("destroy_stream", [](int i, uintptr_t s) {
    if (cuda_backend()) cuda_backend()->destroy_stream(i, s);
  });
  c.def("stream_synchronize", [](int i, uintptr_t s) {
    DeviceBackend& b = checked("Stream.synchronize", i);
    py::gil_scoped_release nogil;
    b.stream_synchronize(i, s);
  });
  c.def("stream_query",
        [](int i, uintptr_t s) { return checked("Stream.query", i).stream_query(i, s); });
  c.def("create_event",
        [](int i, bool timing) { return checked("cuda.Event", i).create_event(i, timing); });
  c.def("destroy_event", [](uintptr_t e) {
    if (cuda_backend()) cuda_backend()->destroy_event(e);
  });
  c.def("record_event",
        [](uintptr_t e, int i, uintptr_t s) { checked("Event.record", i).record_event(e, i, s); });
  c.def("stream_wait_event", [](int i, uintptr_t s, uintptr_t e) {
    checked("Event.wait", i).stream_wait_event(i, s, e);
  });
  c.def("event_synchronize", [](uintptr_t e) {
    DeviceBackend& b = require_cuda("Event.synchronize");
    py::gil_scoped_release nogil;
    b.event_synchronize(e);
  });
  c.def("event_query", [](uintptr_t e) { return require_cuda("Event.query").event_query(e); });
  c.def("event_elapsed_ms", [](uintptr_t a, uintptr_t b) {
    return require_cuda("Event.elapsed_time").event_elapsed_ms(a, b);
  });
  c.def("record_stream", [](const Tensor& t, uintptr_t s) {
    TS_CHECK(!t.device().is_cpu(), RuntimeError, "record_stream: the tensor is on the CPU");
    checked("record_stream", t.device().index)
        .record_stream(t.storage()->data, t.device().index, s);
  });
}

void bind_graphs(py::module_& c) {
  c.def("graph_pool_handle", [] { return require_cuda("cuda.graph_pool_handle").graph_pool_handle(); });
  c.def("graph_create", [] { return require_cuda("cuda.CUDAGraph").graph_create(); });
  c.def("graph_destroy", [](uintptr_t g) {
    if (cuda_backend()) cuda_backend()->graph_destroy(g);
  });
  c.def("graph_capture_begin", [](uintptr_t g, int i, uintptr_t s, uint64_t pool, int mode) {
    checked("CUDAGraph.capture_begin", i).graph_capture_begin(g, i, s, pool, mode);
  });
  c.def("graph_capture_end", [](uintptr_t g) {
    require_cuda("CUDAGraph.capture_end").graph_capture_end(g);
  });
  c.def("graph_replay", [](uintptr_t g) { require_cuda("CUDAGraph.replay").graph_replay(g); });
  c.def("graph_reset", [](uintptr_t g) { require_cuda("CUDAGraph.reset").graph_reset(g); });
  c.def("graph_pool", [](uintptr_t g) { return require_cuda("CUDAGraph.pool").graph_pool(g); });
  c.def("is_current_stream_capturing", [] {
    return cuda_backend() != nullptr && cuda_backend()->available() &&
           cuda_backend()->is_current_stream_capturing();
  });
}

}  // namespace

void init_cuda(py::module_& m) {
  py::module_ c = m.def_submodule("_cuda", "CUDA runtime bindings (use ts.cuda)");
  py::register_exception<OutOfMemoryError>(c, "OutOfMemoryError", PyExc_MemoryError);
  bind_queries(c);
  bind_memory(c);
  bind_streams(c);
  bind_graphs(c);
  c.def("set_allow_tf32", [](bool v) { cuda_matmul_allow_tf32() = v; });
  // ts.backends.cudnn (ops/conv.h: CudnnFlags, the loader, the path the last conv took).
  c.def("cudnn_set_flag", [](const std::string& name, bool v) {
    CudnnFlags& f = cudnn_flags();
    bool* slot = name == "enabled"         ? &f.enabled
                 : name == "benchmark"     ? &f.benchmark
                 : name == "deterministic" ? &f.deterministic
                 : name == "allow_tf32"    ? &f.allow_tf32
                                           : nullptr;
    TS_CHECK(slot, ValueError, "backends.cudnn: unknown switch '", name, "'");
    *slot = v;
  });
  c.def("cudnn_get_flag", [](const std::string& name) {
    const CudnnFlags& f = cudnn_flags();
    if (name == "enabled") return f.enabled;
    if (name == "benchmark") return f.benchmark;
    if (name == "deterministic") return f.deterministic;
    TS_CHECK(name == "allow_tf32", ValueError, "backends.cudnn: unknown switch '", name, "'");
    return f.allow_tf32;
  });
  c.def("cudnn_set_search_paths",
        [](const std::vector<std::string>& p) { cudnn_loader().search_paths = p; });
  c.def("cudnn_version", [] {
    const CudnnLoader& l = cudnn_loader();
    return l.version && cuda_backend() && cuda_backend()->available() ? l.version() : int64_t(0);
  });
  c.def("cudnn_load_error", [] { return cudnn_loader().load_error; });
  c.def("conv_last_path", [] { return std::string(conv_path_used()); });
  // Note [cuDNN attention] (ops/attention.h): ts.backends.cuda's SDP switch and reports.
  c.def("cudnn_sdp_set_enabled", [](bool v) { cudnn_attention().enabled = v; });
  c.def("cudnn_sdp_enabled", [] { return cudnn_attention().enabled; });
  c.def("attention_last_path", [] { return std::string(attention_path_used()); });
  c.def("cudnn_sdp_status", [] {
    const auto f = cudnn_attention().status;
    return f ? f() : std::string("this build of tessera has no CUDA backend");
  });
  c.def("attention_lse_from_cudnn_dropout", [](const Tensor& lse) {
    const auto f = cudnn_attention().from_cudnn_dropout;
    return f != nullptr && f(lse);
  });
  c.def("get_allow_tf32", [] { return cuda_matmul_allow_tf32(); });
  c.def("set_gemm_tuning", [](bool v) { cuda_gemm_tuning() = v; }, py::arg("enabled"));
  c.def("get_gemm_tuning", [] { return cuda_gemm_tuning(); });
  // `op` names the public op in the error when the target is CUDA and there is none.
  m.def(
      "_to_device",
      [](const Tensor& x, py::handle device, bool non_blocking, const std::string& op) {
        const Device d = to_device(device);
        if (!d.is_cpu() && d != x.device())  // the message names the device asked for
          require_cuda((op + ": device '" + std::string(py::str(device)) + "'").c_str());
        return ts::to_device(x, d, non_blocking);
      },
      py::arg("x"), py::arg("device"), py::arg("non_blocking"), py::arg("op") = "to");
  m.def("_pin_memory", &pin_memory);
  m.def("_is_pinned", &is_pinned);
}

}  // namespace ts::python
