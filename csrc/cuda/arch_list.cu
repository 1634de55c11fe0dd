// The GPU architectures this build was compiled for (ts.cuda.get_arch_list).
#include <vector>

#include "cuda/cuda_state.h"

namespace ts::cuda {

// nvcc (11.5 and newer) defines __CUDA_ARCH_LIST__ in every compilation as the ascending,
// comma-separated virtual architectures it generates code for (800, 900 for sm_80, sm_90).
std::vector<int> compiled_arch_list() {
#ifdef __CUDA_ARCH_LIST__
  return {__CUDA_ARCH_LIST__};
#else
  return {};
#endif
}

}  // namespace ts::cuda
