"""Stacking helpers for batched envs (they live in :mod:`hub.envs.stacking`, which rollouts use
too).

Example:
    >>> from hub.batching.stacking import stack_like
"""

from hub.envs.stacking import split_inputs, stack_like

__all__ = ["split_inputs", "stack_like"]
