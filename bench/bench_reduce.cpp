// Scratch C++ benchmark of the reduction ops (no Python, no BLAS): builds on any machine with
// g++ and OpenMP. Prints microseconds (best of 20) for the cases bench_reduction.py covers.
//   g++ -std=c++17 -O3 -fopenmp -Icsrc bench/bench_reduce.cpp <sources> -o /tmp/bench_reduce
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>

#include "cpu/parallel.h"
#include "ops/cumulative.h"
#include "ops/reduce.h"

namespace ts {
void blas_set_num_threads(int) {}  // the bench links no BLAS
}  // namespace ts

using namespace ts;

static double best(const std::function<void()>& f) {
  f();
  double b = 1e30;
  for (int r = 0; r < 20; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    b = std::min(b, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return b;
}

static Tensor randn(Shape s) {
  Tensor t = Tensor::empty(s, DType::Float32);
  std::mt19937 g(0);
  std::normal_distribution<float> d;
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(g);
  return t;
}

int main(int argc, char** argv) {
  for (int nt : {1, 2, 16}) {
    set_num_threads(nt);
    std::printf("threads %d\n", get_num_threads());
    for (int k : {20, 24}) {
      Tensor x = randn(Shape{int64_t(1) << k});
      std::printf("  sum f32 2^%d     %9.1f us\n", k, best([&] { sum(x, std::nullopt, false, std::nullopt); }));
      std::printf("  max f32 2^%d     %9.1f us\n", k, best([&] { max(x, std::nullopt, false); }));
      std::printf("  argmax f32 2^%d  %9.1f us\n", k, best([&] { argmax(x, std::nullopt, false); }));
    }
    Tensor m = randn(Shape{2048, 2048});
    std::printf("  colsum 2048^2    %9.1f us\n", best([&] { sum(m, Shape{0}, false, std::nullopt); }));
    std::printf("  rowsum 2048^2    %9.1f us\n", best([&] { sum(m, Shape{1}, false, std::nullopt); }));
    std::printf("  colmax 2048^2    %9.1f us\n", best([&] { max(m, Shape{0}, false); }));
    std::printf("  var 2048^2       %9.1f us\n", best([&] { var(m, std::nullopt, 0, false); }));
    std::printf("  cumsum ax1 2048^2 %8.1f us\n", best([&] { cumulative_sum(m, 1, std::nullopt, false); }));
  }
}
