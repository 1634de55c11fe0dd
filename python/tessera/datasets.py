"""Datasets read from local files: MNIST / FashionMNIST (IDX files, optionally .gz) and
TinyShakespeare (char-level). Nothing is downloaded: pass `root` holding the files."""
from __future__ import annotations

import gzip as _gzip
import os as _os
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as _np

from ._C import Tensor
from .utils.data import Dataset

_IDX_DTYPES = {0x08: _np.uint8, 0x09: _np.int8, 0x0B: _np.dtype(">i2"), 0x0C: _np.dtype(">i4"),
               0x0D: _np.dtype(">f4"), 0x0E: _np.dtype(">f8")}


def _ts() -> Any:
    import tessera
    return tessera


# Note [untrusted IDX files]
# The header declares the element type and the dimensions; everything it declares is checked
# before data is read: the magic number, the dimension count, the element count (Python ints,
# no overflow) against `max_bytes` and against what the file can hold (its size; for gzip,
# DEFLATE's largest ratio 1032:1 times the compressed size). The payload is then decompressed
# in chunks into the output buffer, never past the declared size, so a gzip bomb costs at most
# the declared bytes. Every malformation is a ValueError naming the file and what is wrong.
_IDX_MAX_BYTES = 1 << 33
_IDX_MAX_NDIM = 32
_GZIP_MAX_RATIO = 1032
_IDX_CHUNK = 1 << 24


def _idx_error(path: str, what: str) -> ValueError:
    return ValueError(f"read_idx: {path}: {what}")


def _read_exact(f: Any, n: int, path: str, what: str) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise _idx_error(path, f"truncated: the file ends inside the {what} (expected {n} "
                               f"bytes, got {len(data)})")
    return data


def read_idx(path: str, *, max_bytes: int = _IDX_MAX_BYTES) -> _np.ndarray:
    """Reads an IDX file (the MNIST format), gzip-compressed or not (detected from the
    content). Returns an array of the declared shape (d0, d1, ...) in native byte order.

    Untrusted input (Note [untrusted IDX files]): a malformed file (bad magic number, unknown
    type, truncated header or data, a declared size beyond `max_bytes` or beyond what the file
    can hold, a corrupt gzip stream) raises ValueError naming the file and the defect."""
    import zlib
    path = _os.fspath(path)
    file_size = _os.path.getsize(path)
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        f: Any = _gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
        try:
            return _read_idx_stream(f, path, file_size, gz, max_bytes)
        except (OSError, EOFError, zlib.error) as e:  # a corrupt gzip stream
            raise _idx_error(path, f"corrupt gzip stream ({type(e).__name__}: {e})") from None


def _read_idx_stream(f: Any, path: str, file_size: int, gz: bool, max_bytes: int) -> _np.ndarray:
    head = _read_exact(f, 4, path, "magic number")
    if head[0] != 0 or head[1] != 0:
        raise _idx_error(path, f"not an IDX file (bad magic number {head.hex()}: the first two "
                               f"bytes must be zero)")
    if head[2] not in _IDX_DTYPES:
        raise _idx_error(path, f"unknown IDX element type 0x{head[2]:02x} (one of "
                               f"{', '.join(f'0x{k:02x}' for k in _IDX_DTYPES)})")
    ndim = head[3]
    if not 1 <= ndim <= _IDX_MAX_NDIM:
        raise _idx_error(path, f"{ndim} dimensions declared (1 to {_IDX_MAX_NDIM} supported)")
    raw_dims = _read_exact(f, 4 * ndim, path, f"header ({ndim} dimensions)")
    dims = tuple(int.from_bytes(raw_dims[4 * i:4 * i + 4], "big") for i in range(ndim))
    dt = _np.dtype(_IDX_DTYPES[head[2]])
    count = 1
    for d in dims:
        count *= d
    nbytes = count * dt.itemsize
    if nbytes > max_bytes:
        raise _idx_error(path, f"the declared shape {dims} of {dt} needs {nbytes} bytes, more "
                               f"than max_bytes={max_bytes}")
    header = 4 + 4 * ndim
    can_hold = (file_size * _GZIP_MAX_RATIO) if gz else file_size - header
    if nbytes > can_hold:
        raise _idx_error(path, f"truncated or inconsistent: the declared shape {dims} needs "
                               f"{nbytes} bytes of data, but the file "
                               + (f"({file_size} bytes of gzip) can hold at most {can_hold}"
                                  if gz else f"holds only {can_hold}"))
    out = _np.empty(count, dtype=dt)
    view = memoryview(out.view(_np.uint8).reshape(-1))
    got = 0
    while got < nbytes:
        n = f.readinto(view[got:got + min(_IDX_CHUNK, nbytes - got)])
        if not n:
            raise _idx_error(path, f"truncated: the declared shape {dims} needs {nbytes} bytes "
                                   f"of data, the file holds {got}")
        got += n
    return out.reshape(dims).astype(dt.newbyteorder("="), copy=False)


def _find(root: str, stem: str) -> str:
    for cand in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        for base in (root, _os.path.join(root, "raw")):
            p = _os.path.join(base, cand)
            if _os.path.exists(p):
                return p
    raise FileNotFoundError(f"{stem}[.gz] not found under {root} (or {root}/raw); this dataset "
                            "reads local files only")


class MNIST(Dataset):
    """MNIST digits from IDX files in `root` (train-images-idx3-ubyte[.gz], ...).
    Samples are (image, label): image a float32 (1, 28, 28) tensor scaled to [0, 1] (then
    `transform`), label an int (then `target_transform`)."""

    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root: str, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        if download:
            raise ValueError(f"{type(self).__name__}: download is not supported; place the IDX "
                             f"files under {root}")
        self.root, self.train = root, train
        self.transform, self.target_transform = transform, target_transform
        img_file, lbl_file = self._files[bool(train)]
        self.data = read_idx(_find(root, img_file))  # uint8 (N, 28, 28)
        self.targets = read_idx(_find(root, lbl_file)).astype(_np.int64)
        if self.data.ndim != 3 or self.targets.ndim != 1 or len(self.data) != len(self.targets):
            raise ValueError(f"{type(self).__name__}: images {self.data.shape} and labels "
                             f"{self.targets.shape} do not match")

    def __len__(self) -> int:
        return len(self.data)

    def _image(self, idx: Any) -> _np.ndarray:
        return (self.data[idx].astype(_np.float32) / 255.0)[..., None, :, :]

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        img: Any = _ts().asarray(self._image(index))
        target: Any = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __getitems__(self, indices: Sequence[int]) -> Any:
        """A batch of images and labels in one gather (used by DataLoader when no
        transforms are set)."""
        if self.transform is not None or self.target_transform is not None:
            return [self[i] for i in indices]
        from .utils.data import _BatchTuple
        idx = _np.asarray(indices, dtype=_np.int64)
        return _BatchTuple((_ts().asarray(self._image(idx)), _ts().asarray(self.targets[idx])))

    def arrays(self) -> Tuple[Tensor, Tensor]:
        """All images (N, 1, 28, 28) float32 in [0, 1] and labels (N,) int64 as tensors."""
        return _ts().asarray(self._image(slice(None))), _ts().asarray(self.targets)


class FashionMNIST(MNIST):
    """Fashion-MNIST: the same IDX layout and file names as MNIST."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class TinyShakespeare(Dataset):
    """Character-level text: samples are (x, y) int64 windows of `block_size`, y shifted
    by one. Reads `root`/input.txt (or `root` itself when it is a file). The first 90% of
    the text is the train split, the rest validation."""

    def __init__(self, root: str, block_size: int = 64, train: bool = True,
                 split: float = 0.9) -> None:
        path = root if _os.path.isfile(root) else _os.path.join(root, "input.txt")
        if not _os.path.exists(path):
            raise FileNotFoundError(f"TinyShakespeare: {path} not found")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        self.itos = {i: c for i, c in enumerate(self.chars)}
        ids = _np.array([self.stoi[c] for c in text], dtype=_np.int64)
        cut = int(len(ids) * split)
        self.data = ids[:cut] if train else ids[cut:]
        self.block_size = block_size
        if len(self.data) <= block_size:
            raise ValueError(f"TinyShakespeare: the split has {len(self.data)} characters, not "
                             f"more than block_size={block_size}")

    def encode(self, s: str) -> list:
        return [self.stoi[c] for c in s]

    def decode(self, ids: Any) -> str:
        return "".join(self.itos[int(i)] for i in (ids.tolist() if hasattr(ids, "tolist") else ids))

    def __len__(self) -> int:
        return len(self.data) - self.block_size

    def __getitem__(self, i: int) -> Tuple[Tensor, Tensor]:
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"TinyShakespeare: index {i} out of range for {len(self)} samples")
        chunk = self.data[i:i + self.block_size + 1]
        return _ts().asarray(chunk[:-1]), _ts().asarray(chunk[1:])

    def __getitems__(self, indices: Sequence[int]) -> Any:
        """A batch (x, y) of shape (B, block_size) in one NumPy gather."""
        from .utils.data import _BatchTuple
        idx = _np.asarray(indices, dtype=_np.int64)
        idx = _np.where(idx < 0, idx + len(self), idx)
        if idx.size and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError(f"TinyShakespeare: indices out of range for {len(self)} samples")
        win = self.data[idx[:, None] + _np.arange(self.block_size + 1)]
        return _BatchTuple((_ts().asarray(win[:, :-1]), _ts().asarray(win[:, 1:])))
