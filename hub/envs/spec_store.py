"""``SpecStore``: where an env keeps its specs, and the properties that read them.

An env's five full specs live in two groups: ``output`` (observations, rewards, done flags)
and ``input`` (actions, states). Every change goes through the store: it checks that a spec's
shape starts with the env's batch size, moves it to the env's device, relocks its group and
bumps :attr:`SpecStore.version`, from which the env knows that its keys
(:class:`hub.envs.keys.EnvKeys`) must be read again. :class:`FullSpec` and :class:`LeafSpec`
give ``EnvBase`` its ``full_*_spec`` and ``*_spec`` properties, each pair written once.

Example:
    >>> from hub.specs import Composite, Unbounded
    >>> store = SpecStore((2,), None)
    >>> store.set_full("full_observation_spec", Composite(x=Unbounded((2, 3)), shape=(2,)))
    >>> store.version, store.full("full_observation_spec")["x"].shape
    (1, torch.Size([2, 3]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hub.envs.done import complete_done_spec
from hub.errors import HubError
from hub.specs import Categorical, Composite, NestedKey, TensorSpec, Unbounded

__all__ = [
    "SpecStore",
    "FullSpec",
    "LeafSpec",
    "INPUT_SPECS",
    "OUTPUT_SPECS",
    "refuse_spec_change",
]

OUTPUT_SPECS = ("full_observation_spec", "full_reward_spec", "full_done_spec")
INPUT_SPECS = ("full_action_spec", "full_state_spec")


def _group(names: Sequence[str], batch_size: torch.Size, device: Any) -> Composite:
    return Composite(
        {name: Composite(shape=batch_size, device=device) for name in names},
        shape=batch_size,
        device=device,
    )


class SpecStore:
    """The specs of one env (see the module docstring).

    Args:
        batch_size: the env's batch dims; every spec's shape starts with them.
        device: the env's device (``None``: specs keep theirs).
    """

    def __init__(self, batch_size: Sequence[int], device: Any) -> None:
        self.batch_size = torch.Size(batch_size)
        self.device = device
        self.output = _group(OUTPUT_SPECS, self.batch_size, device)
        self.input = _group(INPUT_SPECS, self.batch_size, device)
        self.version = 0

    # ------------------------------------------------------------------ reading
    def group_of(self, name: str) -> Composite:
        """The group (``input`` or ``output``) that holds the full spec ``name``."""
        return self.input if name in INPUT_SPECS else self.output

    def full(self, name: str) -> Composite:
        """The full spec ``name`` (``"full_observation_spec"``, ...)."""
        return self.group_of(name)[name]

    def leaf_or_full(self, full_name: str) -> TensorSpec:
        """The one leaf of the full spec ``full_name``, or the full spec when it has several."""
        full = self.full(full_name)
        keys = list(full.keys(include_nested=True, leaves_only=True))
        return full[keys[0]] if len(keys) == 1 else full

    def is_empty(self) -> bool:
        """Whether no spec was set yet."""
        return not any(list(sub.keys()) for g in (self.output, self.input) for sub in g.values())

    @property
    def locked(self) -> bool:
        """Whether the specs are locked."""
        return self.output.is_locked

    # ------------------------------------------------------------------ writing
    def lock(self, mode: bool = True) -> None:
        """Lock (``True``) or unlock (``False``) both groups."""
        for group in (self.output, self.input):
            group.lock_() if mode else group.unlock_()
        self.version += 1

    def _checked(self, name: str, spec: TensorSpec) -> TensorSpec:
        """``spec`` on the store's device, once its shape is checked to start with the batch."""
        bs = self.batch_size
        if spec.shape[: len(bs)] != bs:
            raise ValueError(
                f"{name} has shape {list(spec.shape)}, which does not start with the env's batch "
                f"size {list(bs)}: specs hold the batch dims first. Use "
                f"spec.expand({', '.join(str(d) for d in bs + spec.shape)}) or build it with "
                "that shape."
            )
        if self.device is not None and spec.device != self.device:
            spec = spec.to(self.device)
        return spec

    def _write(self, name: str, write: Any) -> None:
        group = self.group_of(name)
        locked = group.is_locked
        if locked:
            group.unlock_()
        try:
            write(group)
        finally:
            if locked:
                group.lock_()
        self.version += 1

    def set_full(self, name: str, spec: TensorSpec) -> None:
        """Replace the full spec ``name`` (a Composite); a done spec is completed with
        ``terminated`` and ``truncated``."""
        if not isinstance(spec, Composite):
            raise TypeError(f"{name} must be a Composite, got {type(spec).__name__}.")
        spec = self._checked(name, spec)
        if spec.shape != self.batch_size:
            spec = spec.clone()
            spec.unlock_()
            reshaped = Composite(shape=self.batch_size, device=spec.device)
            for key, value in spec.items():
                reshaped[key] = value
            spec = reshaped

        def write(group: Composite) -> None:
            group[name] = spec
            if name == "full_done_spec" and list(spec.keys()):
                complete_done_spec(group[name])

        self._write(name, write)

    def assign(self, name: str, key: NestedKey, spec: TensorSpec) -> None:
        """Set ``spec`` at ``key`` inside the full spec ``name``."""
        spec = self._checked(f"{name}[{key!r}]", spec)

        def write(group: Composite) -> None:
            group[name][key] = spec

        self._write(name, write)

    def set_leaf(self, full_name: str, default_key: str, spec: TensorSpec) -> None:
        """Set a leaf spec under ``default_key`` (a Composite replaces the whole full spec)."""
        if isinstance(spec, Composite):
            self.set_full(full_name, spec)
            return
        spec = self._checked(full_name.replace("full_", ""), spec)
        self.set_full(
            full_name, Composite({default_key: spec}, shape=self.batch_size, device=self.device)
        )

    def complete_defaults(self) -> None:
        """Add the default done flag and reward when none was declared, and complete every done
        level with ``done``, ``terminated`` and ``truncated``."""
        done = self.full("full_done_spec")
        if not list(done.keys()):
            flag = Categorical(
                2, shape=self.batch_size + (1,), device=self.device, dtype=torch.bool
            )
            self.assign("full_done_spec", "done", flag)
        self._write("full_done_spec", lambda group: complete_done_spec(group["full_done_spec"]))
        if not list(self.full("full_reward_spec").keys()):
            shape = self.batch_size + (1,)
            self.assign("full_reward_spec", "reward", Unbounded(shape, device=self.device))


class FullSpec:
    """A ``full_*_spec`` property of an env: reads the full spec from its store, sets it
    through the env's ``_set_full`` (which a ``TransformedEnv`` refuses).

    Args:
        name: ``"full_observation_spec"``, ``"full_action_spec"``, ...
        doc: the property's docstring.
    """

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        return env.spec_store.full(self.name)

    def __set__(self, env: Any, value: Composite) -> None:
        env.spec_store.set_full(self.name, value)


class LeafSpec:
    """An ``action_spec``-like property: the one leaf of a full spec (or the full spec when it
    has several); setting a leaf puts it under ``default_key``.

    Args:
        full_name: the full spec it reads, e.g. ``"full_action_spec"``.
        default_key: where a leaf spec goes, e.g. ``"action"``.
        doc: the property's docstring.
    """

    def __init__(self, full_name: str, default_key: str, doc: str) -> None:
        self.full_name = full_name
        self.default_key = default_key
        self.__doc__ = doc

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        return env.spec_store.leaf_or_full(self.full_name)

    def __set__(self, env: Any, value: TensorSpec) -> None:
        env.spec_store.set_leaf(self.full_name, self.default_key, value)


def refuse_spec_change(name: str) -> HubError:
    """The error of a store whose specs are derived from another env's (a TransformedEnv)."""
    return HubError(
        f"the specs of a TransformedEnv come from its base env and its transforms: set "
        f"env.base_env.{name} instead, or add a transform that changes {name}."
    )
