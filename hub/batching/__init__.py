"""The batching engine: ``SerialEnv`` (in this process) and ``ParallelEnv`` (worker processes).

Example:
    >>> from hub.batching import ParallelEnv, SerialEnv
"""

from hub.batching.batched import BatchedEnvBase, join_specs
from hub.batching.faults import LastData, truncate_rows
from hub.batching.first_ready import FirstReady, RestartingBatch, async_layout
from hub.batching.parallel import AsyncCallError, ParallelEnv, WorkerRestartWarning, worker_layout
from hub.batching.row_access import (
    join_by_index,
    rows_call,
    rows_call_at,
    rows_get_attr,
    rows_get_attr_at,
    rows_set_attr,
    rows_set_attr_at,
    split_indices,
    split_values,
)
from hub.batching.serial import SerialEnv
from hub.envs.stacking import split_inputs, stack_like

__all__ = [
    "AsyncCallError",
    "BatchedEnvBase",
    "FirstReady",
    "LastData",
    "ParallelEnv",
    "RestartingBatch",
    "SerialEnv",
    "WorkerRestartWarning",
    "async_layout",
    "join_by_index",
    "join_specs",
    "rows_call",
    "rows_call_at",
    "rows_get_attr_at",
    "rows_set_attr_at",
    "rows_get_attr",
    "rows_set_attr",
    "split_indices",
    "split_values",
    "split_inputs",
    "stack_like",
    "truncate_rows",
    "worker_layout",
]
