"""Train a ResNet-18 (CIFAR form: 3x3 stem, four stages of two BasicBlocks, BatchNorm, ReLU,
adaptive average pool, linear) on MNIST padded to 32x32, or on synthetic data, with SGD +
momentum; a progress bar per epoch and a loss plot at the end.

    PYTHONPATH=python python examples/resnet.py --epochs 1
    PYTHONPATH=python python examples/resnet.py --small --width 8     # CI: seconds
    PYTHONPATH=python python examples/resnet.py --synthetic --steps 20

MNIST is read from --data-dir (default $TESSERA_MNIST, else ../shared/data/mnist); nothing
is downloaded. --channels-last trains in ts.channels_last. --plot PATH writes the loss curve
(matplotlib, Agg backend).
"""
from __future__ import annotations

import argparse
import time
from typing import Any, List

import tessera as ts
from tessera import nn
from tessera.nn import functional as F

from _common import default_data_dir


def basic_block_class(nn_: Any) -> Any:
    """BasicBlock over `nn_` (tessera.nn, or torch.nn for the benchmark's twin network): two
    3x3 conv-BN layers with an identity skip, or a 1x1 conv-BN one when the shape changes."""

    class BasicBlock(nn_.Module):  # type: ignore[misc]  # nn_ is tessera.nn or torch.nn
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn_.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn_.BatchNorm2d(cout)
            self.conv2 = nn_.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn_.BatchNorm2d(cout)
            self.relu = nn_.ReLU()
            self.shortcut = nn_.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn_.Sequential(nn_.Conv2d(cin, cout, 1, stride, bias=False),
                                               nn_.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            y = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(y)) + self.shortcut(x))

    return BasicBlock


def resnet18(nn_: Any = nn, num_classes: int = 10, in_channels: int = 3, width: int = 64) -> Any:
    """ResNet-18 in CIFAR form over (N, in_channels, 32, 32) -> (N, num_classes) logits."""
    block = basic_block_class(nn_)
    w = width
    layers: List[Any] = [nn_.Conv2d(in_channels, w, 3, 1, 1, bias=False), nn_.BatchNorm2d(w),
                         nn_.ReLU()]
    cin = w
    for i, cout in enumerate((w, 2 * w, 4 * w, 8 * w)):
        for j in range(2):
            layers.append(block(cin, cout, 2 if (i > 0 and j == 0) else 1))
            cin = cout
    layers += [nn_.AdaptiveAvgPool2d(1), nn_.Flatten(), nn_.Linear(cin, num_classes)]
    return nn_.Sequential(*layers)


def mnist32(data_dir: str, train: bool, limit: int = 0) -> Any:
    """MNIST images (N, 1, 32, 32) float32 in [0, 1] (zero-padded by 2) and int64 labels."""
    ds = ts.datasets.MNIST(data_dir, train=train)
    n = len(ds) if not limit else min(limit, len(ds))
    xs, ys = zip(*(ds[i] for i in range(n)))
    x = ts.stack(list(xs)).reshape((n, 1, 28, 28))
    return F.pad(x, (2, 2, 2, 2)), ts.asarray([int(y) for y in ys], dtype=ts.int64)


def synthetic(n: int, seed: int) -> Any:
    """n random (1, 32, 32) images whose label is the quadrant of their brightest pixel."""
    ts.manual_seed(seed)
    x = ts.rand((n, 1, 32, 32))
    flat = ts.argmax(x.reshape((n, -1)), axis=1)
    row, col = flat // 32, flat % 32
    y = (row >= 16).astype(ts.int64) * 2 + (col >= 16).astype(ts.int64)
    return x, y


def progress(i: int, n: int, loss: float, t0: float, width: int = 30) -> None:
    done = int(width * i / max(n, 1))
    rate = i / max(time.perf_counter() - t0, 1e-9)
    print(f"\r[{'#' * done}{'.' * (width - done)}] {i}/{n}  loss {loss:.4f}  {rate:.1f} it/s",
          end="", flush=True)


def main(argv: Any = None) -> List[float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=default_data_dir("mnist", env="TESSERA_MNIST"))
    ap.add_argument("--synthetic", action="store_true", help="random images instead of MNIST")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0, help="stop each epoch after this many steps")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--width", type=int, default=64, help="channels of the first stage")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--small", action="store_true",
                    help="CI setting: 256 train / 128 test images, 1 epoch, 4 steps")
    ap.add_argument("--plot", default="", help="write the loss curve (PNG) here")
    args = ap.parse_args(argv)
    if args.threads:
        ts.set_num_threads(args.threads)
    ts.manual_seed(args.seed)
    limit = 256 if args.small else 0
    if args.small:
        args.epochs, args.steps = 1, args.steps or 4
    if args.synthetic:
        (xtr, ytr), (xte, yte) = synthetic(limit or 2048, args.seed), synthetic(128, args.seed + 1)
        classes = 4
    else:
        (xtr, ytr), (xte, yte) = mnist32(args.data_dir, True, limit), \
            mnist32(args.data_dir, False, 128 if args.small else 2000)
        classes = 10
    fmt = ts.channels_last if args.channels_last else ts.contiguous_format
    model = resnet18(nn, classes, 1, args.width).to(memory_format=fmt)
    opt = ts.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    print(f"ResNet-18 (width {args.width}): "
          f"{sum(p.numel() for p in model.parameters()):,} parameters", flush=True)
    losses: List[float] = []
    n, bs = xtr.shape[0], args.batch_size
    for epoch in range(1, args.epochs + 1):
        perm = ts.asarray(ts.randperm(n))
        steps = n // bs if not args.steps else min(args.steps, n // bs)
        t0 = time.perf_counter()
        model.train()
        for i in range(steps):
            idx = perm[i * bs:(i + 1) * bs]
            x = xtr[idx].contiguous(memory_format=fmt)
            loss = F.cross_entropy(model(x), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.item()))
            progress(i + 1, steps, losses[-1], t0)
        print()
        model.eval()
        with ts.no_grad():
            correct = 0
            for j in range(0, xte.shape[0], 256):
                pred = ts.argmax(model(xte[j:j + 256].contiguous(memory_format=fmt)), axis=1)
                correct += int(ts.sum(pred == yte[j:j + 256]).item())
        print(f"epoch {epoch}: test accuracy {100 * correct / xte.shape[0]:.2f}% "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.figure(figsize=(6, 3.5))
        plt.plot(losses)
        plt.xlabel("step")
        plt.ylabel("train loss")
        plt.title("ResNet-18 on MNIST 32x32" if not args.synthetic else "ResNet-18, synthetic")
        plt.tight_layout()
        plt.savefig(args.plot)
        print(f"wrote {args.plot}")
    return losses


if __name__ == "__main__":
    main()
