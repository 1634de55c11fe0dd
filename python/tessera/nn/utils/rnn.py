"""PackedSequence and the padding/packing helpers of torch.nn.utils.rnn.

A PackedSequence stores variable-length sequences time-major without padding: `data` holds,
for t = 0, 1, ..., the step-t rows of the sequences still running (longest first), and
`batch_sizes[t]` counts them. `sorted_indices` orders the batch by decreasing length and
`unsorted_indices` undoes it. Packing and unpacking are single gathers (differentiable)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as _np

from ..._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


def _invert(perm: Any) -> Any:
    inv = _np.empty_like(perm)
    inv[perm] = _np.arange(perm.size)
    return inv


class PackedSequence(_t.NamedTuple):
    """(data, batch_sizes, sorted_indices, unsorted_indices) as in PyTorch; batch_sizes is
    an int64 CPU tensor, the index tensors are int64 (None when the batch was sorted)."""
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor] = None
    unsorted_indices: Optional[Tensor] = None

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self._replace(data=self.data.to(*args, **kwargs))

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def check_batch_sizes(op: str, batch_sizes: Tensor, rows: int) -> Any:
    """batch_sizes of a PackedSequence as int64 NumPy, checked: a PackedSequence can be built
    by hand (or come from a file), and a lying one would read rows that are not there. They
    must be positive, non-increasing and sum to the packed data's rows."""
    from ...errors import ValueError as TsValueError
    bsz = _np.asarray(batch_sizes.numpy()).astype(_np.int64).reshape(-1)
    if bsz.size == 0 or (bsz < 1).any() or (_np.diff(bsz) > 0).any() or int(bsz.sum()) != rows:
        shown = bsz[:8].tolist() + (["..."] if bsz.size > 8 else [])
        raise TsValueError(f"{op}: invalid PackedSequence: batch_sizes {shown} must be positive, "
                           f"non-increasing and sum to the {rows} rows of its data; hint: build "
                           f"it with pack_padded_sequence or pack_sequence")
    return bsz


def _lengths(lengths: Union[Tensor, Sequence[int]]) -> Any:
    if isinstance(lengths, Tensor):
        return _np.asarray(lengths.numpy()).astype(_np.int64).reshape(-1)
    return _np.asarray(list(lengths), dtype=_np.int64).reshape(-1)


def _pack_layout(lens: Any) -> Tuple[Any, Any]:
    """batch_sizes per step for lengths sorted decreasingly, and for each packed row its
    (t, sorted batch position)."""
    steps = int(lens[0]) if lens.size else 0
    batch_sizes = _np.array([(lens > t).sum() for t in range(steps)], dtype=_np.int64)
    ts_ = _np.repeat(_np.arange(steps), batch_sizes)
    bs_ = _np.concatenate([_np.arange(b) for b in batch_sizes]) if steps else _np.zeros(0, _np.int64)
    return batch_sizes, _np.stack([ts_, bs_]) if steps else _np.zeros((2, 0), _np.int64)


def pack_padded_sequence(input: Tensor, lengths: Union[Tensor, Sequence[int]],
                         batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded (T, B, *) batch ((B, T, *) with batch_first) of sequences with the
    given lengths."""
    t = _ts()
    lens = _lengths(lengths)
    x = t.moveaxis(input, 0, 1) if batch_first else input
    if x.ndim < 2 or lens.size != x.shape[1]:
        raise ValueError(f"pack_padded_sequence: expected {x.shape[1] if x.ndim > 1 else '?'} "
                         f"lengths for input of shape {tuple(input.shape)}, got {lens.size}")
    if lens.size and (lens.min() <= 0 or lens.max() > x.shape[0]):
        raise ValueError(f"pack_padded_sequence: lengths must be in [1, {x.shape[0]}], got "
                         f"{lens.tolist()}")
    if enforce_sorted:
        if _np.any(_np.diff(lens) > 0):
            raise ValueError("pack_padded_sequence: `lengths` array must be sorted in decreasing "
                             "order when `enforce_sorted` is True; pass enforce_sorted=False to "
                             "pack unsorted sequences")
        order = None
        sorted_lens = lens
    else:
        order = _np.argsort(-lens, kind="stable")
        sorted_lens = lens[order]
    batch_sizes, (ts_, bs_) = _pack_layout(sorted_lens)
    cols = bs_ if order is None else order[bs_]
    flat = t.reshape(x, (x.shape[0] * x.shape[1],) + tuple(x.shape[2:]))
    data = t.take(flat, t.asarray(ts_ * x.shape[1] + cols, device=x.device), axis=0)
    sidx = None if order is None else t.asarray(order, device=x.device)
    uidx = None if order is None else t.asarray(_invert(order), device=x.device)
    return PackedSequence(data, t.asarray(batch_sizes), sidx, uidx)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """Inverse of pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths (B,))."""
    t = _ts()
    data = sequence.data
    bsz = check_batch_sizes("pad_packed_sequence", sequence.batch_sizes, data.shape[0])
    steps, b = bsz.size, int(bsz[0]) if bsz.size else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"pad_packed_sequence: total_length {total_length} is smaller than "
                             f"the longest sequence ({steps})")
        steps = total_length
    # slot (t, j) of the sorted padded batch -> packed row, or the padding row at the end
    slot = _np.full((steps, b), data.shape[0], dtype=_np.int64)
    row = 0
    for i, n in enumerate(bsz):
        slot[i, :n] = _np.arange(row, row + n)
        row += n
    unsorted = None if sequence.unsorted_indices is None else \
        _np.asarray(sequence.unsorted_indices.numpy()).astype(_np.int64)
    if unsorted is not None:
        if unsorted.shape != (b,) or not _np.array_equal(_np.sort(unsorted), _np.arange(b)):
            from ...errors import ValueError as TsValueError
            raise TsValueError(f"pad_packed_sequence: invalid PackedSequence: unsorted_indices "
                               f"of shape {unsorted.shape} must be a permutation of the batch "
                               f"of {b}; hint: build it with pack_padded_sequence")
        slot = slot[:, unsorted]
    pad_row = t.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                     device=data.device)
    table = t.concat([data, pad_row], axis=0)
    out = t.reshape(t.take(table, t.asarray(slot.reshape(-1), device=data.device), axis=0),
                    (steps, b) + tuple(data.shape[1:]))
    lens = (bsz[None, :] > _np.arange(b)[:, None]).sum(axis=1) if b else _np.zeros(0, _np.int64)
    if unsorted is not None:
        lens = lens[unsorted]
    if batch_first:
        out = t.moveaxis(out, 0, 1)
    return out, t.asarray(lens.astype(_np.int64))


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stacks variable-length (L_i, *) tensors into (max L, B, *) ((B, max L, *) with
    batch_first), padding on the right (or left) with padding_value."""
    t = _ts()
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got "
                         f"{padding_side!r}")
    if len(sequences) == 0:
        raise ValueError("pad_sequence: received an empty list of sequences")
    trail = tuple(sequences[0].shape[1:])
    for s in sequences:
        if s.ndim < 1 or tuple(s.shape[1:]) != trail:
            raise ValueError(f"pad_sequence: every sequence must have trailing shape {trail}, "
                             f"got {tuple(s.shape)}")
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        extra = longest - s.shape[0]
        if extra:
            fill = t.full((extra,) + trail, padding_value, dtype=s.dtype, device=s.device)
            s = t.concat([s, fill] if padding_side == "right" else [fill, s], axis=0)
        rows.append(s)
    return t.stack(rows, axis=0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Union[Tensor, Sequence[int]],
                   batch_first: bool = False) -> List[Tensor]:
    """The list of unpadded sequences of a padded batch."""
    x = padded_sequences if batch_first else _ts().moveaxis(padded_sequences, 0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_lengths(lengths))]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of variable-length (L_i, *) tensors."""
    lens = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lens, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> List[Tensor]:
    """The list of sequences of a PackedSequence (pack_sequence's inverse)."""
    padded, lens = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lens, batch_first=True)
