"""``EnvBase``: the TensorDict environment contract.

An env reads and writes :class:`tensordict.TensorDict` objects. ``reset()`` returns the first
data of a trajectory; ``step(td)`` reads the action from ``td`` and writes what follows under
``td["next"]``; ``step_and_maybe_reset`` and ``rollout`` build on these (the step pipeline,
:mod:`hub.envs.pipeline`). A subclass writes ``__init__`` (setting the specs, batch dims first)
and the hooks of :mod:`hub.envs.contract`: ``_step_arrays``, ``_reset_arrays`` and
``_set_seed`` (or ``_step`` and ``_reset`` on tensordicts).

Example:
    >>> import numpy as np
    >>> from hub import EnvBase
    >>> from hub.specs import Bounded, Composite, Unbounded
    >>> class Walk(EnvBase):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.observation_spec = Composite(position=Unbounded((1,)))
    ...         self.action_spec = Bounded(-1.0, 1.0, shape=(1,))
    ...         self.reward_spec = Unbounded((1,))
    ...     def _reset_arrays(self, rows=None, inputs=None, **kwargs):
    ...         self.position = np.zeros(1, np.float32)
    ...         return {"position": self.position.copy()}
    ...     def _step_arrays(self, inputs, rows=None):
    ...         self.position = self.position + inputs["action"]
    ...         return {
    ...             "position": self.position.copy(),
    ...             "reward": -abs(float(self.position[0])),
    ...             "terminated": bool(abs(self.position[0]) > 2),
    ...         }
    ...     def _set_seed(self, seed):
    ...         pass
    >>> env = Walk()
    >>> sorted(env.done_keys)
    ['done', 'terminated', 'truncated']
    >>> env.rollout(4, break_when_any_done=False).batch_size  # ended episodes restart
    torch.Size([4])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs.contract import writes_arrays
from hub.envs.keys import EnvKeys, KeyList, OnlyKey
from hub.envs.pipeline import StepPipeline
from hub.envs.seeding import check_seed, next_seed
from hub.envs.spec_store import INPUT_SPECS, OUTPUT_SPECS, FullSpec, LeafSpec, SpecStore
from hub.errors import HubError
from hub.specs import Composite, NestedKey

__all__ = ["EnvBase"]


class _EnvMeta(type):
    """Runs ``_post_init`` once the whole ``__init__`` chain of a subclass has finished."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        env = super().__call__(*args, **kwargs)
        env._post_init()
        return env


class EnvBase(StepPipeline, metaclass=_EnvMeta):
    """Base class of every hub environment.

    Args:
        device: where the env's tensors live (``None``: where the backend puts them, usually
            the CPU).
        batch_size: the env's batch dims (``()`` for a single env). Every spec starts with them.
        checks: check every action against the action spec (bounds included) and every output
            against the output specs (shapes, dtypes, finite rewards). With ``checks=False``,
            wrong action shapes and dtypes still raise, and so do discrete action values out of
            their spec (native code indexes with them); continuous bounds and finiteness are
            not checked.
        spec_locked: lock the specs after construction (setting a spec through the env's
            properties still works: it unlocks, sets and relocks).
        auto_reset: the env resets itself inside its step when an episode ends (see the
            "Auto-resetting envs" section of the docs).
        auto_reset_replace: with ``auto_reset``, replace the observations returned with the
            ``done`` flag by NaN (floats) or ``-1`` (integers), since they belong to the new episode.
        allow_done_after_reset: with ``checks``, tolerate ``done`` right after a reset.

    A subclass writes the hooks of :class:`hub.envs.contract.EnvHooks` (``_step_arrays``,
    ``_reset_arrays``, ``_set_seed``, and ``_close`` when it holds resources; or ``_step`` and
    ``_reset`` on tensordicts), and sets ``batch_locked = False`` when it accepts inputs of any
    batch size. Every other underscore name of this class is internal.
    """

    def __init__(
        self,
        *,
        device: torch.device | str | int | None = None,
        batch_size: Sequence[int] | torch.Size | None = None,
        checks: bool = False,
        spec_locked: bool = True,
        auto_reset: bool = False,
        auto_reset_replace: bool = True,
        allow_done_after_reset: bool = False,
    ) -> None:
        self._device = torch.device(device) if device is not None else None
        self._batch_size = torch.Size(batch_size if batch_size is not None else ())
        self.checks = checks
        self._spec_locked = spec_locked
        self.auto_reset = auto_reset
        self.auto_reset_replace = auto_reset_replace
        self.allow_done_after_reset = allow_done_after_reset
        self._closed = False
        self._writes_arrays = writes_arrays(type(self))
        self._fuses_resets = type(self)._step_reset_arrays is not StepPipeline._step_reset_arrays
        self._ended = None
        self._auto_reset_cache = None
        self._keys_cache: EnvKeys | None = None
        self._specs = SpecStore(self._batch_size, self._device)

    # ------------------------------------------------------------------ construction
    def _post_init(self) -> None:
        """Complete the specs once the subclass's ``__init__`` has set them, then lock them."""
        self._specs.complete_defaults()
        if self._spec_locked:
            self._specs.lock(True)

    # ------------------------------------------------------------------ batch size and device
    @property
    def batch_size(self) -> torch.Size:
        """The env's batch dims; every spec shape starts with them."""
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value: Sequence[int]) -> None:
        value = torch.Size(value)
        if value == self._batch_size:
            return
        if not self._specs.is_empty():
            raise HubError(
                "the batch size of an env can only be set before its specs: got "
                f"{list(value)} after specs of shape {list(self._batch_size)} were set."
            )
        self._batch_size = value
        self._specs = SpecStore(value, self._device)

    @property
    def device(self) -> torch.device | None:
        """The device of the env's data (``None``: left to the backend)."""
        return self._device

    # ------------------------------------------------------------------ specs
    @property
    def spec_store(self) -> SpecStore:
        """Where the env keeps its specs (:class:`hub.envs.spec_store.SpecStore`)."""
        return self._specs

    @property
    def output_spec(self) -> Composite:
        """``full_observation_spec``, ``full_reward_spec`` and ``full_done_spec`` in one Composite."""
        return self._specs.output

    @output_spec.setter
    def output_spec(self, value: Composite) -> None:
        for name in OUTPUT_SPECS:
            self._specs.set_full(name, value[name])

    @property
    def input_spec(self) -> Composite:
        """``full_action_spec`` and ``full_state_spec`` in one Composite."""
        return self._specs.input

    @input_spec.setter
    def input_spec(self, value: Composite) -> None:
        for name in INPUT_SPECS:
            self._specs.set_full(name, value[name])

    full_observation_spec = FullSpec(
        "full_observation_spec",
        """Every observation entry, as written under ``"next"`` by ``step`` and by ``reset``.""",
    )
    observation_spec = full_observation_spec
    full_action_spec = FullSpec(
        "full_action_spec", """Every action entry (nested for multi-agent envs)."""
    )
    action_spec = LeafSpec(
        "full_action_spec",
        "action",
        """The action's leaf spec when the env has one action entry, else ``full_action_spec``.""",
    )
    full_reward_spec = FullSpec("full_reward_spec", """Every reward entry.""")
    reward_spec = LeafSpec(
        "full_reward_spec",
        "reward",
        """The reward's leaf spec when the env has one reward entry, else ``full_reward_spec``.""",
    )
    full_done_spec = FullSpec(
        "full_done_spec",
        """Every done flag: ``done``, ``terminated`` and ``truncated`` at each done level.""",
    )
    done_spec = LeafSpec(
        "full_done_spec",
        "done",
        """The done flags (a Composite, since ``terminated`` and ``truncated`` always exist).""",
    )
    full_state_spec = FullSpec(
        "full_state_spec",
        """Inputs other than actions that the step reads (the state of stateless envs).""",
    )
    state_spec = full_state_spec

    def set_spec_lock_(self, mode: bool = True) -> EnvBase:
        """Lock (``True``) or unlock (``False``) every spec of the env."""
        self._specs.lock(mode)
        self._spec_locked = mode
        return self

    @property
    def is_spec_locked(self) -> bool:
        """Whether the specs are locked."""
        return self._specs.locked

    # ------------------------------------------------------------------ keys
    @property
    def env_keys(self) -> EnvKeys:
        """The env's keys and what its step path derives from its specs
        (:class:`hub.envs.keys.EnvKeys`), read again whenever a spec changed."""
        keys = self._keys_cache
        specs = self._specs
        if keys is None or keys.version != specs.version:
            keys = self._keys_cache = EnvKeys.from_specs(
                specs.output,
                specs.input,
                self._batch_size,
                self._device,
                specs.version,
                type(self).__name__,
            )
        return keys

    action_keys = KeyList("action_keys", "The keys of the action entries (nested keys are tuples).")
    reward_keys = KeyList("reward_keys", "The keys of the reward entries.")
    done_keys = KeyList(
        "done_keys",
        "The keys of every done flag (``done``, ``terminated``, ``truncated`` at each level).",
    )
    observation_keys = KeyList("observation_keys", "The keys of the observation entries.")
    state_keys = KeyList("state_keys", "The keys of the state entries.")
    reset_keys = KeyList("reset_keys", 'The ``"_reset"`` keys, one next to each ``done`` flag.')

    action_key = OnlyKey("action", "The key of the env's action (raises when it has several).")
    reward_key = OnlyKey("reward", "The key of the env's reward (raises when it has several).")

    @property
    def done_key(self) -> NestedKey:
        """The key of the outermost ``done`` flag."""
        return self.env_keys.done_key

    # ------------------------------------------------------------------ random actions
    def rand_action(self, tensordict: TensorDictBase | None = None) -> TensorDictBase:
        """Write a random action (drawn from the action spec) into ``tensordict`` (or a new one)."""
        keys = self.env_keys
        if tensordict is None:
            tensordict = TensorDict({}, batch_size=self._batch_size, device=self._device)
            extra: tuple[int, ...] = ()
        elif self.batch_locked:
            extra = ()
        else:
            extra = tuple(tensordict.batch_size[: tensordict.batch_dims - len(self._batch_size)])
        single = keys.single_action
        if single is not None:
            tensordict.set(single.key, single.spec.rand(extra))
        elif keys.action_checks:
            tensordict.update(self._specs.full("full_action_spec").rand(extra))
        return tensordict

    def rand_step(self, tensordict: TensorDictBase | None = None) -> TensorDictBase:
        """Step with a random action; resets first when no ``tensordict`` is given."""
        if tensordict is None:
            tensordict = self.reset()
        return self.step(self.rand_action(tensordict))

    # ------------------------------------------------------------------ seeding
    def set_seed(self, seed: int | None = None, static_seed: bool = False) -> int | None:
        """Seed the env and return the seed that follows the ones it used.

        An env of ``n`` sub-envs seeded with ``s`` seeds sub-env ``i`` with ``s + i`` (the rule
        of gymnasium's and EnvPool's vector envs, in every hub strategy) and returns ``s + n``
        (a single env returns ``s + 1``): seeding envs one after the other with the returned
        values gives every sub-env its own seed, and one seed gives one dataset whatever the
        batching. ``static_seed=True`` returns ``seed`` itself.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Pendulum")
            >>> env.set_seed(7)
            8

        Raises:
            InvalidSeedError: ``seed`` is not ``None`` nor an int in ``[0, 2**32)``.
        """
        self._refuse_closed("set_seed")
        seed = check_seed(seed)
        self._set_seed(seed)
        if seed is None or static_seed:
            return seed
        return next_seed(seed, self.seed_count)

    @property
    def seed_count(self) -> int:
        """How many consecutive seeds ``set_seed`` uses: one per sub-env (the number of elements
        of the batch size, 1 for a single env)."""
        return max(1, self._batch_size.numel())

    # ------------------------------------------------------------------ life cycle
    @property
    def is_closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def close(self) -> None:
        """Release the env's resources. Calling it again does nothing; any other use of a closed
        env raises :class:`hub.errors.ClosedEnvError`."""
        if self._closed:
            return
        self._closed = True
        self._close()

    def __enter__(self) -> EnvBase:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def fake_tensordict(self) -> TensorDictBase:
        """A tensordict of zeros with every entry a step produces (inputs, and outputs under
        ``"next"``), from the specs."""
        specs = self._specs
        data = specs.full("full_state_spec").zero()
        data.update(specs.full("full_action_spec").zero())
        obs = specs.full("full_observation_spec").zero()
        done = specs.full("full_done_spec").zero()
        data.update(obs)
        data.update(done)
        nxt = obs.clone()
        nxt.update(specs.full("full_reward_spec").zero())
        nxt.update(done.clone())
        data.set("next", nxt)
        return data

    def append_transform(self, transform: Any) -> Any:
        """Return ``TransformedEnv(self, transform)`` (see :mod:`hub.transforms`).

        The transform builds it (``transform.wrap(self)``): the env layer knows no transform.
        """
        wrap = getattr(transform, "wrap", None)
        if wrap is None:
            raise TypeError(
                f"append_transform takes a hub.transforms.Transform (or a Compose of them), "
                f"got {type(transform).__name__}; wrap a function in a Transform subclass first."
            )
        return wrap(self)

    def __repr__(self) -> str:
        keys = self.env_keys
        dev = self._device if self._device is not None else "cpu"
        return (
            f"{type(self).__name__}(batch_size={list(self._batch_size)}, device={dev}, "
            f"observations={list(keys.observation_keys)}, actions={list(keys.action_keys)}, "
            f"batch_locked={self.batch_locked})"
        )
