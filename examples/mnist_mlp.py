"""Train a 784-256-10 MLP on MNIST with Adam and print the test accuracy.

    PYTHONPATH=python python examples/mnist_mlp.py --epochs 5

The IDX files (train-images-idx3-ubyte.gz, ...) are read from --data-dir (default
$TESSERA_MNIST or ../shared/data/mnist); nothing is downloaded.
"""
from __future__ import annotations

import argparse
import os
import time

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from tessera.utils.data import DataLoader, Generator


def evaluate(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    correct = total = 0
    with ts.no_grad():
        for x, y in loader:
            pred = ts.argmax(model(x), axis=1)
            correct += int(ts.sum(pred == y).item())
            total += y.shape[0]
    model.train()
    return correct / total


def default_data_dir() -> str:
    """$TESSERA_MNIST, else ../shared/data/mnist from the working directory or from the
    repository root (or its parent, for a git worktree)."""
    if os.environ.get("TESSERA_MNIST"):
        return os.environ["TESSERA_MNIST"]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for cand in ("../shared/data/mnist", os.path.join(repo, "..", "shared", "data", "mnist"),
                 os.path.join(repo, "..", "..", "shared", "data", "mnist")):
        if os.path.isdir(cand):
            return os.path.normpath(cand)
    return "../shared/data/mnist"


def main() -> None:
    default_dir = default_data_dir()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=default_dir)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: tessera's default)")
    args = ap.parse_args()
    if args.threads:
        ts.set_num_threads(args.threads)

    nn._rng.manual_seed(args.seed)
    train = ts.datasets.MNIST(args.data_dir, train=True)
    test = ts.datasets.MNIST(args.data_dir, train=False)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                              generator=Generator(args.seed))
    test_loader = DataLoader(test, batch_size=1000)

    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = ts.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        total_loss, steps = 0.0, 0
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += float(loss.item())
            steps += 1
        dt = time.perf_counter() - t0
        acc = evaluate(model, test_loader)
        print(f"epoch {epoch}: train loss {total_loss / steps:.4f}  test accuracy {acc * 100:.2f}%  "
              f"({dt:.1f} s, {steps / dt:.0f} steps/s)", flush=True)


if __name__ == "__main__":
    main()
