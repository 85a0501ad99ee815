"""The batching engine: ``SerialEnv`` (in this process) and ``ParallelEnv`` (worker processes).

Example:
    >>> from hub.batching import ParallelEnv, SerialEnv
"""

from hub.batching.batched import BatchedEnvBase, join_specs
from hub.batching.parallel import AsyncCallError, ParallelEnv, WorkerRestartWarning
from hub.batching.serial import SerialEnv
from hub.envs.stacking import split_inputs, stack_like

__all__ = [
    "AsyncCallError",
    "BatchedEnvBase",
    "ParallelEnv",
    "SerialEnv",
    "WorkerRestartWarning",
    "join_specs",
    "split_inputs",
    "stack_like",
]
