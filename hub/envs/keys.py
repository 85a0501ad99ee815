"""``EnvKeys``: the keys an env reads and writes, derived once from its specs.

Every env holds one :class:`EnvKeys` (``env.env_keys``), rebuilt only when a spec changes: the
action, state, observation, reward and done keys, the done levels, the per-action checks of the
step pipeline and the plan that turns a backend's arrays into tensors (:class:`OutputPlan`).
Batched envs, transforms, exports and plugins read it instead of recomputing keys from specs.

Example:
    >>> import hub
    >>> keys = hub.make_env("hub:Counting").env_keys
    >>> keys.action_keys, keys.done_flag_keys, keys.reset_keys
    (('action',), ('done',), ('_reset',))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from hub.envs.action_checks import ActionCheck, action_check
from hub.envs.arrays import OutputPlan
from hub.envs.done import done_prefixes
from hub.errors import HubError
from hub.specs import Composite, NestedKey

__all__ = ["EnvKeys", "leaf_keys", "KeyList", "OnlyKey"]


def leaf_keys(spec: Composite) -> tuple[NestedKey, ...]:
    """The keys of ``spec``'s leaves: strings at the root, tuples below.

    Example:
        >>> from hub.specs import Composite, Unbounded
        >>> leaf_keys(Composite(a=Unbounded(()), b=Composite(c=Unbounded(()))))
        ('a', ('b', 'c'))
    """
    keys = []
    for key in spec.keys(include_nested=True, leaves_only=True):
        parts = (key,) if isinstance(key, str) else tuple(key)
        keys.append(parts[0] if len(parts) == 1 else parts)
    return tuple(keys)


@dataclass(frozen=True, eq=False)
class EnvKeys:
    """The keys of one env and what its step pipeline derives from them (read-only).

    Attributes:
        version: the version of the specs they were read from (a ``TransformedEnv`` compares
            its base env's to know when to recompute its own specs).
        batch_size: the env's batch size.
        action_keys, state_keys, observation_keys, reward_keys, done_keys: the leaf keys of
            each full spec (nested keys are tuples).
        input_keys: the action keys, then the state keys that are not actions: what a step reads.
        done_prefixes: the levels holding done flags (``()`` for the root), outermost first.
        done_shapes: the shape of each level's ``done`` spec.
        done_flag_keys: the key of each level's ``done`` flag.
        reset_keys: the ``"_reset"`` key of each level.
        action_checks: one :class:`~hub.envs.action_checks.ActionCheck` per action entry.
        action_set: the action keys, as a set.
        mdp_exclude: the root keys ``step_mdp`` leaves out (rewards, ``"next"``, masks).
        flat_rewards: whether every reward key is a root key.
        outputs: how the array-level hooks' outputs become tensors (:class:`OutputPlan`).
    """

    version: int
    batch_size: torch.Size
    action_keys: tuple[NestedKey, ...]
    state_keys: tuple[NestedKey, ...]
    observation_keys: tuple[NestedKey, ...]
    reward_keys: tuple[NestedKey, ...]
    done_keys: tuple[NestedKey, ...]
    input_keys: tuple[NestedKey, ...]
    done_prefixes: tuple[tuple[str, ...], ...]
    done_shapes: dict[tuple[str, ...], torch.Size]
    done_flag_keys: tuple[NestedKey, ...]
    reset_keys: tuple[NestedKey, ...]
    action_checks: tuple[ActionCheck, ...]
    action_set: frozenset[NestedKey]
    mdp_exclude: frozenset[NestedKey]
    flat_rewards: bool
    outputs: OutputPlan

    @classmethod
    def from_specs(
        cls,
        output_spec: Composite,
        input_spec: Composite,
        batch_size: torch.Size,
        device: Any = None,
        version: int = 0,
        owner: str = "env",
    ) -> EnvKeys:
        """Read the keys of an env's two spec groups (``output_spec``: observations, rewards,
        done flags; ``input_spec``: actions, states).

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Pendulum")
            >>> keys = EnvKeys.from_specs(env.output_spec, env.input_spec, env.batch_size)
            >>> keys.state_keys, keys.input_keys[:2]
            (('th', 'thdot', 'step_count'), ('action', 'th'))
        """
        full_action = input_spec["full_action_spec"]
        done_spec = output_spec["full_done_spec"]
        prefixes = tuple(done_prefixes(done_spec))
        action_keys = leaf_keys(full_action)
        state_keys = leaf_keys(input_spec["full_state_spec"])
        reward_keys = leaf_keys(output_spec["full_reward_spec"])
        n = len(batch_size)
        return cls(
            version=version,
            batch_size=torch.Size(batch_size),
            action_keys=action_keys,
            state_keys=state_keys,
            observation_keys=leaf_keys(output_spec["full_observation_spec"]),
            reward_keys=reward_keys,
            done_keys=leaf_keys(done_spec),
            input_keys=action_keys + tuple(k for k in state_keys if k not in action_keys),
            done_prefixes=prefixes,
            done_shapes={p: done_spec[p + ("done",) if p else "done"].shape for p in prefixes},
            done_flag_keys=tuple(p + ("done",) if p else "done" for p in prefixes),
            reset_keys=tuple(p + ("_reset",) if p else "_reset" for p in prefixes),
            action_checks=tuple(action_check(key, full_action[key], n) for key in action_keys),
            action_set=frozenset(action_keys),
            mdp_exclude=frozenset(reward_keys) | {"next", "_reset", "_step"},
            flat_rewards=all(isinstance(k, str) for k in reward_keys),
            outputs=OutputPlan(output_spec, input_spec, batch_size, device, prefixes, owner),
        )

    @property
    def single_action(self) -> ActionCheck | None:
        """The check of the env's one action entry (``None`` when it has several or none)."""
        checks = self.action_checks
        return checks[0] if len(checks) == 1 else None

    @property
    def done_key(self) -> NestedKey:
        """The key of the outermost ``done`` flag."""
        return self.done_flag_keys[0]

    @property
    def single_level(self) -> bool:
        """Whether the env has one done level, at the root (no per-agent flags)."""
        return self.done_prefixes == ((),)


class KeyList:
    """An ``action_keys``-like property of an env: a list copy of one of its
    :class:`EnvKeys` fields.

    Args:
        field: the :class:`EnvKeys` field, e.g. ``"action_keys"``.
        doc: the property's docstring.
    """

    def __init__(self, field: str, doc: str) -> None:
        self.field = field
        self.__doc__ = doc

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        return list(getattr(env.env_keys, self.field))


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
        keys = getattr(env.env_keys, f"{self.kind}_keys")
        if len(keys) != 1:
            raise HubError(
                f"this env has {len(keys)} {self.kind} entries ({list(keys)}); {self.kind}_key "
                f"names one. Use {self.kind}_keys instead."
            )
        return keys[0]
