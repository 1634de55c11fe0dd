"""Train a small convolutional network (two 3x3 conv + max-pool stages, then two linear
layers) on MNIST with Adam and a cosine learning-rate schedule; print the test accuracy.

    PYTHONPATH=python python examples/mnist_cnn.py --epochs 4

The IDX files are read from --data-dir (default $TESSERA_MNIST, else $TESSERA_DATA/mnist,
else ../shared/data/mnist); nothing is downloaded. `--small` trains on 1,000 images for one
epoch (a smoke test: seconds, not accuracy). `--save PATH` writes the trained weights
(safetensors, loadable with ts.load or PyTorch's safetensors reader).
"""
from __future__ import annotations

import tessera as ts
from tessera import nn

from _common import fit_classifier, mnist_loaders, mnist_parser


class ConvNet(nn.Module):
    """(N, 1, 28, 28) -> conv 32 -> pool -> conv 64 -> pool -> 128 -> 10 logits."""

    def __init__(self, channels: int = 32, hidden: int = 128, dropout: float = 0.25) -> None:
        super().__init__()
        c = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),       # 32 x 14 x 14
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 64 x 7 x 7
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(2 * c * 7 * 7, hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, 10),
        )

    def forward(self, x: ts.Tensor) -> ts.Tensor:
        out: ts.Tensor = self.classifier(self.features(x))
        return out


def main() -> None:
    ap = mnist_parser(__doc__, epochs=4, lr=2e-3)
    ap.add_argument("--channels", type=int, default=32, help="channels of the first conv layer")
    ap.add_argument("--save", default="", help="write the trained state dict here")
    args = ap.parse_args()
    train_loader, test_loader = mnist_loaders(args)
    model = ConvNet(args.channels)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters", flush=True)
    opt = ts.optim.Adam(model.parameters(), lr=args.lr)
    sched = ts.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * len(train_loader))
    fit_classifier(model, opt, train_loader, test_loader, args.epochs, scheduler=sched,
                   log=lambda s: print(s, flush=True))
    if args.save:
        ts.save(model.state_dict(), args.save)
        print(f"saved {args.save}")


if __name__ == "__main__":
    main()
