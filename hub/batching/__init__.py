"""The batching engine: ``SerialEnv`` (in this process) and ``ParallelEnv`` (worker processes).

Example:
    >>> from hub.batching import SerialEnv
"""

from hub.batching.batched import BatchedEnvBase
from hub.batching.serial import SerialEnv
from hub.batching.stacking import split_inputs, stack_like

__all__ = ["BatchedEnvBase", "SerialEnv", "split_inputs", "stack_like"]
