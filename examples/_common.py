"""Helpers shared by the example scripts: where the data sets are, the test accuracy of a
classifier and the epoch loop of the MNIST examples. (The notebooks spell the same steps out
in their cells, so that each one reads top to bottom on its own.)"""
from __future__ import annotations

import argparse
import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from tessera.utils.data import DataLoader, Dataset, Generator, Subset

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_data_dir(name: str, env: Optional[str] = None) -> str:
    """Where the data set `name` (a folder of ../shared/data: "mnist", "tinyshakespeare")
    is: $`env` when set, else $TESSERA_DATA/`name`, else ../shared/data/`name` from the
    working directory, from beside the repository or from beside its parent or grandparent
    (a git worktree)."""
    if env and os.environ.get(env):
        return os.environ[env]
    if os.environ.get("TESSERA_DATA"):
        return os.path.join(os.environ["TESSERA_DATA"], name)
    for base in (os.path.join("..", "shared"), os.path.join(_REPO, "..", "shared"),
                 os.path.join(_REPO, "..", "..", "shared"),
                 os.path.join(_REPO, "..", "..", "..", "shared")):
        cand = os.path.join(base, "data", name)
        if os.path.isdir(cand):
            return os.path.normpath(cand)
    return os.path.join("..", "shared", "data", name)


def mnist_parser(doc: str, epochs: int, lr: float) -> argparse.ArgumentParser:
    """The arguments the MNIST scripts share (their own ones are added after)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--data-dir", default=default_data_dir("mnist", env="TESSERA_MNIST"))
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=lr)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: tessera's default)")
    ap.add_argument("--small", action="store_true",
                    help="1,000 train / 500 test images, 1 epoch (a smoke test)")
    return ap


def mnist_loaders(args: argparse.Namespace) -> Tuple[DataLoader, DataLoader]:
    """Applies --threads and --seed, reads MNIST from --data-dir (the first 1,000 / 500
    images and one epoch with --small) and returns the shuffled train loader and the test
    loader."""
    if args.threads:
        ts.set_num_threads(args.threads)
    ts.manual_seed(args.seed)
    train: Dataset[Any] = ts.datasets.MNIST(args.data_dir, train=True)
    test: Dataset[Any] = ts.datasets.MNIST(args.data_dir, train=False)
    if args.small:
        train, test, args.epochs = Subset(train, range(1000)), Subset(test, range(500)), 1
    return (DataLoader(train, batch_size=args.batch_size, shuffle=True,
                       generator=Generator(args.seed)),
            DataLoader(test, batch_size=500))


def accuracy(model: nn.Module, loader: DataLoader) -> float:
    """The fraction of samples whose arg-max logit is the label (in eval mode, no grad)."""
    model.eval()
    correct = total = 0
    with ts.no_grad():
        for x, y in loader:
            pred = ts.argmax(model(x), axis=1)
            correct += int(ts.sum(pred == y).item())
            total += y.shape[0]
    model.train()
    return correct / total


def fit_classifier(model: nn.Module, opt: ts.optim.Optimizer, train_loader: DataLoader,
                   test_loader: DataLoader, epochs: int,
                   scheduler: Optional[ts.optim.lr_scheduler.LRScheduler] = None,
                   log: Callable[[str], None] = print) -> Dict[str, List[float]]:
    """Trains with cross-entropy for `epochs` epochs (the scheduler, if any, steps once per
    batch), printing the mean train loss, the test accuracy and the time of each epoch.
    Returns the history: per-epoch "loss", "accuracy" and "seconds"."""
    hist: Dict[str, List[float]] = {"loss": [], "accuracy": [], "seconds": []}
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        total_loss, steps = 0.0, 0
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if scheduler is not None:
                scheduler.step()
            total_loss += float(loss.item())
            steps += 1
        dt = time.perf_counter() - t0
        acc = accuracy(model, test_loader)
        hist["loss"].append(total_loss / steps)
        hist["accuracy"].append(acc)
        hist["seconds"].append(dt)
        log(f"epoch {epoch}: train loss {total_loss / steps:.4f}  test accuracy {acc * 100:.2f}%  "
            f"({dt:.1f} s, {steps / dt:.1f} steps/s)")
    return hist
