"""CNN training on the CPU, tessera against PyTorch in one process with the same thread count:
forward+backward of each distinct ResNet-18 (CIFAR form) convolution shape at batch 32, a
ResNet-18 CIFAR-form training step (batch 32, SGD with momentum), and the step of the MNIST
CNN example (examples/mnist_cnn.py, batch 128, Adam).

    PYTHONPATH=python python benchmarks/bench_cnn.py --threads 1 [--quick] [--markdown out.md]
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
from common import bench_main  # noqa: E402

# (C_in, C_out, H, kernel, stride) of ResNet-18's convolutions on 32x32 inputs.
RESNET18_CONVS = [(3, 64, 32, 3, 1), (64, 64, 32, 3, 1), (64, 128, 32, 3, 2),
                  (64, 128, 32, 1, 2), (128, 128, 16, 3, 1), (128, 256, 16, 3, 2),
                  (128, 256, 16, 1, 2), (256, 256, 8, 3, 1), (256, 512, 8, 3, 2),
                  (256, 512, 8, 1, 2), (512, 512, 4, 3, 1)]


def conv_case(cin: int, cout: int, h: int, k: int, s: int, n: int) -> Dict[str, Callable]:
    import torch
    import tessera as ts
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, cin, h, h)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, k, k)) * 0.05).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    sx, sw = ts.tensor(x, requires_grad=True), ts.tensor(w, requires_grad=True)
    gy = rng.standard_normal(tuple(torch.nn.functional.conv2d(tx, tw, stride=s,
                                                              padding=k // 2).shape))
    tg, sg = torch.tensor(gy.astype(np.float32)), ts.tensor(gy.astype(np.float32))

    def t_step() -> None:
        torch.nn.functional.conv2d(tx, tw, stride=s, padding=k // 2).backward(tg)

    def s_step() -> None:
        ts.nn.functional.conv2d(sx, sw, stride=s, padding=k // 2).backward(sg)
    return {"ts": s_step, "torch": t_step}


def train_step_case(make: Callable[[Any], Any], shape: Tuple[int, ...], classes: int,
                    opt: str) -> Dict[str, Callable]:
    import torch
    import tessera as ts
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, classes, shape[0]).astype(np.int64)
    torch.manual_seed(0)
    tm = make(torch.nn)
    sm = make(ts.nn)
    sm.load_state_dict({k: ts.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    if opt == "sgd":
        topt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
        sopt = ts.optim.SGD(sm.parameters(), lr=0.05, momentum=0.9)
    else:
        topt = torch.optim.Adam(tm.parameters(), lr=2e-3)
        sopt = ts.optim.Adam(sm.parameters(), lr=2e-3)
    tx, ty, sx, sy = torch.tensor(x), torch.tensor(y), ts.tensor(x), ts.tensor(y)

    def t_step() -> None:
        loss = torch.nn.functional.cross_entropy(tm(tx), ty)
        topt.zero_grad()
        loss.backward()
        topt.step()

    def s_step() -> None:
        loss = ts.nn.functional.cross_entropy(sm(sx), sy)
        sopt.zero_grad()
        loss.backward()
        sopt.step()
    return {"ts": s_step, "torch": t_step}


def make_cases(quick: bool) -> List[Tuple[str, Dict[str, Callable]]]:
    from resnet import resnet18

    n = 8 if quick else 32
    cases: List[Tuple[str, Dict[str, Callable]]] = []
    for cin, cout, h, k, s in RESNET18_CONVS:
        cases.append((f"conv2d fwd+bwd {n}x{cin}x{h}x{h} -> {cout}, {k}x{k} s{s}",
                      conv_case(cin, cout, h, k, s, n)))
    cases.append((f"ResNet-18 CIFAR train step, batch {n} (SGD momentum)",
                  train_step_case(lambda nn_: resnet18(nn_, 10, 3), (n, 3, 32, 32), 10, "sgd")))

    def mnist_cnn(nn_: Any) -> Any:
        return nn_.Sequential(
            nn_.Conv2d(1, 32, 3, padding=1), nn_.ReLU(), nn_.MaxPool2d(2),
            nn_.Conv2d(32, 64, 3, padding=1), nn_.ReLU(), nn_.MaxPool2d(2),
            nn_.Flatten(), nn_.Linear(64 * 7 * 7, 128), nn_.ReLU(), nn_.Dropout(0.25),
            nn_.Linear(128, 10))
    # examples/mnist_cnn.py's ConvNet, with its dropout 0.25 (training mode, as it trains).
    cases.append(("MNIST CNN example step, batch 128 (Adam, dropout 0.25)",
                  train_step_case(mnist_cnn, (128, 1, 28, 28), 10, "adam")))
    return cases


if __name__ == "__main__":
    raise SystemExit(bench_main(__doc__.splitlines()[0], make_cases))
