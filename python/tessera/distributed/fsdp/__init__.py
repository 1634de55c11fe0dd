"""tessera.distributed.fsdp: fully sharded data parallelism (PyTorch's
``torch.distributed.fsdp``); Note [FSDP flat parameters] in fully_sharded_data_parallel.py."""
from .fully_sharded_data_parallel import (BackwardPrefetch, CPUOffload, FullStateDictConfig,
                                          FullyShardedDataParallel, MixedPrecision,
                                          ShardingStrategy, StateDictType)
from .wrap import ModuleWrapPolicy, size_based_auto_wrap_policy, transformer_auto_wrap_policy

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "BackwardPrefetch", "StateDictType",
           "FullStateDictConfig", "MixedPrecision", "CPUOffload", "ModuleWrapPolicy",
           "transformer_auto_wrap_policy", "size_based_auto_wrap_policy"]
