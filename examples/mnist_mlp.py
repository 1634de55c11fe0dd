"""Train a 784-256-10 MLP on MNIST with Adam and print the test accuracy.

    PYTHONPATH=python python examples/mnist_mlp.py --epochs 8

The IDX files (train-images-idx3-ubyte.gz, ...) are read from --data-dir (default
$TESSERA_MNIST, else $TESSERA_DATA/mnist, else ../shared/data/mnist); nothing is downloaded.
`--small` trains on 1,000 images for one epoch (a smoke test: seconds, not accuracy).
"""
from __future__ import annotations

import tessera as ts
from tessera import nn

from _common import fit_classifier, mnist_loaders, mnist_parser


def make_model() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def main() -> None:
    args = mnist_parser(__doc__, epochs=8, lr=1e-3).parse_args()
    train_loader, test_loader = mnist_loaders(args)
    model = make_model()
    opt = ts.optim.Adam(model.parameters(), lr=args.lr)
    fit_classifier(model, opt, train_loader, test_loader, args.epochs,
                   log=lambda s: print(s, flush=True))


if __name__ == "__main__":
    main()
