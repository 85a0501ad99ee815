"""The keys an env reads and writes, computed once from its specs (and again after a spec
changes): action, reward, done, observation and state keys, the done levels, and what the step
path checks per action.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Counting")
    >>> compute_keys(env)
    >>> env.action_keys, env.done_key
    (['action'], 'done')
"""

from __future__ import annotations

from typing import Any

from hub.envs.checks import action_value_check
from hub.envs.done import done_prefixes
from hub.errors import HubError
from hub.specs import Composite, NestedKey

__all__ = ["compute_keys", "leaf_keys", "KeyList", "OnlyKey"]


def leaf_keys(spec: Composite) -> list[NestedKey]:
    """The keys of ``spec``'s leaves: strings at the root, tuples below.

    Example:
        >>> from hub.specs import Composite, Unbounded
        >>> leaf_keys(Composite(a=Unbounded(()), b=Composite(c=Unbounded(()))))
        ['a', ('b', 'c')]
    """
    keys = []
    for key in spec.keys(include_nested=True, leaves_only=True):
        parts = (key,) if isinstance(key, str) else tuple(key)
        keys.append(parts[0] if len(parts) == 1 else parts)
    return keys


def compute_keys(env: Any) -> None:
    """Read the env's keys, done levels and per-action checks from its specs (``env._keys_ready``
    is then ``True`` until a spec changes)."""
    # bumped each time the specs are read again after a change: envs built on this one
    # (a TransformedEnv) compare it to know when to recompute their own specs
    env._spec_version = env.__dict__.get("_spec_version", 0) + 1
    full_action = env._input_spec["full_action_spec"]
    env._action_keys = leaf_keys(full_action)
    env._reward_keys = leaf_keys(env._output_spec["full_reward_spec"])
    done_spec = env._output_spec["full_done_spec"]
    env._done_keys = leaf_keys(done_spec)
    env._done_prefixes = done_prefixes(done_spec)
    env._done_shapes = {
        p: (done_spec[p + ("done",)] if p else done_spec["done"]).shape for p in env._done_prefixes
    }
    env._observation_keys = leaf_keys(env._output_spec["full_observation_spec"])
    env._state_keys = leaf_keys(env._input_spec["full_state_spec"])
    n_batch = len(env._batch_size)
    env._action_checks = []
    for key in env._action_keys:
        spec = full_action[key]
        env._action_checks.append(
            (key, spec, spec.shape, spec.shape[n_batch:], spec.dtype, action_value_check(spec))
        )
    env._single_action = env._action_checks[0] if len(env._action_checks) == 1 else None
    env._done_flag_keys = [p + ("done",) if p else "done" for p in env._done_prefixes]
    env._reset_keys = [p + ("_reset",) if p else "_reset" for p in env._done_prefixes]
    env._mdp_exclude = set(env._reward_keys) | {"next", "_reset", "_step"}
    env._flat_rewards = all(isinstance(k, str) for k in env._reward_keys)
    env._action_set = set(env._action_keys)
    env._keys_ready = True


class KeyList:
    """An ``action_keys``-like property: a copy of a key list, computed when first read after a
    spec change.

    Args:
        attribute: the env attribute :func:`compute_keys` fills, e.g. ``"_action_keys"``.
        doc: the property's docstring.
    """

    def __init__(self, attribute: str, doc: str) -> None:
        self.attribute = attribute
        self.__doc__ = doc

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        if not env._keys_ready:
            compute_keys(env)
        return list(getattr(env, self.attribute))


class OnlyKey:
    """An ``action_key``-like property: the one key of a kind (``"action"``, ``"reward"``), or
    an error that points to the ``*_keys`` list when the env has several.

    Args:
        kind: ``"action"`` or ``"reward"``; the keys are read from ``<kind>_keys``.
        doc: the property's docstring.
    """

    def __init__(self, kind: str, doc: str) -> None:
        self.kind = kind
        self.__doc__ = doc

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        keys = getattr(env, f"{self.kind}_keys")
        if len(keys) != 1:
            raise HubError(
                f"this env has {len(keys)} {self.kind} entries ({keys}); {self.kind}_key names "
                f"one. Use {self.kind}_keys instead."
            )
        return keys[0]
