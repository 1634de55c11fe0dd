"""ts.utils.tensorboard: ``SummaryWriter`` writing TensorBoard event files (torch.utils.tensorboard).

It needs the ``tensorboard`` package (``pip install tensorboard``); without it, importing this
module raises an ImportError that names the package.
"""
try:
    import tensorboard as _tensorboard
except ImportError as e:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError("tessera.utils.tensorboard needs the 'tensorboard' package: "
                      "pip install tensorboard") from e


def _version_tuple(v: str) -> tuple:
    out = []
    for part in v.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


if _version_tuple(getattr(_tensorboard, "__version__", "0")) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
