"""ChannelShuffle (torch.nn.modules.channelshuffle)."""
from __future__ import annotations


from ..._C import Tensor
from .module import Module
from ..._C import channel_shuffle


class ChannelShuffle(Module):
    """Interleaves the channels of `groups` groups."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
