"""The subclass contract of :class:`~hub.EnvBase`, :class:`~hub.EnvWrapper` and
:class:`~hub.GymLikeEnv`: the underscore names a backend may override or call, in one place.

Every other underscore name of these classes is internal: a subclass neither overrides nor
calls it, and may name its own private attributes freely (a clash with an internal name is
caught by ``tests/test_architecture.py``). docs/plugins.md renders this table.

Example:
    >>> from hub.envs.subclass_hooks import SUBCLASS_HOOKS
    >>> "_step" in SUBCLASS_HOOKS and "_compute_keys" not in SUBCLASS_HOOKS
    True
"""

from __future__ import annotations

__all__ = ["SUBCLASS_HOOKS", "SUBCLASS_ATTRIBUTES"]

#: hook -> (class that defines it, when it is called, what it may assume)
SUBCLASS_HOOKS: dict[str, tuple[str, str, str]] = {
    "_step_arrays": (
        "EnvBase",
        "by step(), with the inputs (actions and state entries, checked) and the rows to step",
        "it returns a dict of arrays (observations, rewards, done flags) of the specs' dtypes",
    ),
    "_reset_arrays": (
        "EnvBase",
        "by reset(), with the rows to reset (None: all), the partial reset's input and options",
        "it returns a dict of arrays of the whole batch (observations, state entries)",
    ),
    "_reset": (
        "EnvBase",
        "by reset(), with the input tensordict or None (a partial reset passes '_reset' masks)",
        "the env is open; it returns the first observations (and done flags, else False)",
    ),
    "_step": (
        "EnvBase",
        "by step(), with the input tensordict holding the action (and state entries)",
        "the action is in the action spec when checks=True; it returns the next data (not "
        "under 'next'): observations, reward, done flags",
    ),
    "_set_seed": (
        "EnvBase",
        "by set_seed(seed), with an int or None",
        "nothing else: it seeds the backend; set_seed returns the next seed itself",
    ),
    "_close": (
        "EnvBase",
        "once, by close() (also from the context manager's exit)",
        "it is called at most once; release the backend's resources",
    ),
    "_step_into": (
        "EnvBase",
        "by step_into(td, out) (ParallelEnv's workers), optional",
        "out holds preallocated tensors of the specs' shapes; the default goes through _step",
    ),
    "_reset_finished": (
        "EnvBase",
        "by step_and_maybe_reset and rollout, with the next input, when some sub-env ended",
        "optional; the default runs the generic partial reset",
    ),
    "_plain_step_ok": (
        "EnvBase",
        "called (not overridden) by a lean step_and_maybe_reset before its fast path",
        "False when checks, auto_reset, a '_step' mask or a closed env need the generic path",
    ),
    "_check_actions": (
        "EnvBase",
        "called (not overridden) by a fast step path that skips step()'s own checks",
        "raises the error step() would raise for an action outside the action spec",
    ),
    "_check_kwargs": (
        "EnvWrapper",
        "first in __init__, with the keyword arguments that are not EnvBase's",
        "nothing is built yet; raise a clear error for arguments that are off",
    ),
    "_build_env": (
        "EnvWrapper",
        "in __init__, after _check_kwargs, with the same keyword arguments",
        "it returns the foreign env object, stored as self._env",
    ),
    "_make_specs": (
        "EnvWrapper",
        "in __init__, with the foreign env, once built",
        "it sets the specs (observation_spec, action_spec, ...) with the batch dims first",
    ),
    "_init_env": (
        "EnvWrapper",
        "in __init__, after _make_specs",
        "the specs are complete (default done flags and reward added) and their keys known",
    ),
    "_output_transform": (
        "GymLikeEnv",
        "on each foreign step output",
        "returns (obs, reward, terminated, truncated, done, info); the default reads 4/5-tuples",
    ),
    "_reset_output_transform": (
        "GymLikeEnv",
        "on each foreign reset output",
        "returns (obs, info); the default reads (obs, info) pairs and bare observations",
    ),
}

#: attributes a subclass may read: name -> what it holds
SUBCLASS_ATTRIBUTES: dict[str, str] = {
    "_env": "EnvWrapper: the foreign env object that _build_env returned",
}
