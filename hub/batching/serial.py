"""``SerialEnv``: several envs stepped one after the other in this process, as one batched env.

Example:
    >>> import hub
    >>> from hub.envs.builtin import CountingEnv
    >>> env = hub.SerialEnv(3, CountingEnv, {"max_steps": 4})
    >>> env.batch_size
    torch.Size([3])
    >>> env.rollout(2)["next", "observation"].squeeze(-1).tolist()
    [[1, 2], [1, 2], [1, 2]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch
from tensordict import TensorDictBase

from hub.batching.batched import BatchedEnvBase, EnvFactory
from hub.batching.deadline import call_within
from hub.envs.base import EnvBase
from hub.envs.stacking import split_inputs, stack_like
from hub.errors import HubError, SpecMismatchError, WorkerTimeoutError

__all__ = ["SerialEnv"]

T = TypeVar("T")


class SerialEnv(BatchedEnvBase):
    """Run ``num_workers`` envs in this process as one env of batch size ``[num_workers]``.

    Args:
        num_workers: the number of sub-envs.
        create_env_fn: a callable that builds one env (or one callable per worker).
        create_env_kwargs: keyword arguments for ``create_env_fn`` (one dict for all, or one per
            worker).
        device: where the batched data lives (default: the sub-envs' device).
        checks: check actions and outputs against the specs (see :class:`hub.EnvBase`).
        timeout: seconds a ``step``, ``reset``, ``set_seed`` or ``call`` of the sub-envs may take
            before it is interrupted with :class:`hub.errors.WorkerTimeoutError` naming the
            sub-env (``None``: no limit). The call is interrupted with ``SIGALRM`` in the main
            thread: it bounds sub-envs running Python code or waiting in a system call, not
            native code that never returns to the interpreter (see
            :mod:`hub.batching.deadline`; ``ParallelEnv``'s timeout kills the worker instead).

    The sub-envs are in ``env.envs``; partial steps and resets reach only the sub-envs that
    need them. A sub-env's output of another shape than its spec raises
    :class:`hub.errors.SpecMismatchError`, as in a ``ParallelEnv``.
    """

    def __init__(
        self,
        num_workers: int,
        create_env_fn: EnvFactory | Sequence[EnvFactory],
        create_env_kwargs: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> None:
        self.timeout = timeout
        self._envs: list[EnvBase] = []
        self._current = 0  # the sub-env being called (named by a timeout)
        self._in_flight: str | None = None  # a step or reset that raised part-way
        self._shapes: dict[str, list[tuple[Any, torch.Size]]] = {}
        super().__init__(num_workers, create_env_fn, create_env_kwargs, **kwargs)

    def _meta_env(self) -> EnvBase:
        self._envs = [fn(**kw) for fn, kw in zip(self._factories, self._factory_kwargs)]
        return self._envs[0]

    def _worker_specs(self) -> list[EnvBase]:
        return self._envs

    @property
    def envs(self) -> list[EnvBase]:
        """The sub-envs, in worker order."""
        return list(self._envs)

    def __getitem__(self, index: int) -> EnvBase:
        return self._envs[index]

    def __len__(self) -> int:
        return self.num_workers

    def _input_keys(self) -> list[Any]:
        keys = getattr(self, "_cached_input_keys", None)
        if keys is None or not self._keys_ready:
            self._keys()
            keys = self._cached_input_keys = list(self._action_keys) + list(self._state_keys)
        return keys

    # ---------------------------------------------------------------- bounded calls
    def _who(self) -> tuple[str, int]:
        i = self._current
        name = type(self._envs[i]).__name__ if i < len(self._envs) else "env"
        return f"sub-env {i} ({name}) of this SerialEnv", i

    def _run(self, what: str, fn: Callable[[], T]) -> T:
        """``fn()`` (a loop over the sub-envs that sets ``self._current``) within ``timeout``;
        a step or reset that fails after a sub-env was called leaves ``_in_flight`` set."""
        self._current = 0
        try:
            return call_within(self._timeout, self._who, what, fn)
        except BaseException as exc:
            cut = self._current > 0 or isinstance(exc, WorkerTimeoutError)
            if what in ("step", "reset") and (cut or not isinstance(exc, Exception)):
                self._in_flight = what
            raise

    def _refuse_after_failure(self, what: str) -> None:
        raise HubError(
            f"the last {self._in_flight} of this SerialEnv did not complete (it raised, timed "
            f"out or was interrupted after some sub-envs ran), so the sub-envs' states are not "
            f"known: call env.reset() (every sub-env) before {what}."
        )

    # ---------------------------------------------------------------- reset and step
    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        need = self._reset_workers(tensordict)
        if need is not None and self._in_flight is not None:
            self._refuse_after_failure("a partial reset")

        def run() -> list[TensorDictBase | None]:
            outs: list[TensorDictBase | None] = []
            rows = None if need is None else tensordict.unbind(0)
            for i, env in enumerate(self._envs):
                self._current = i
                if need is None:
                    outs.append(env.reset(**kwargs))
                else:
                    outs.append(env.reset(rows[i], **kwargs) if need[i] else None)
            return outs

        outs = self._run("reset", run)
        out = self._stack(outs, "reset", None if need is None else tensordict)
        self._in_flight = None
        return self._output_device(out)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        if self._in_flight is not None:
            self._refuse_after_failure("stepping again")
        active = self._step_workers(tensordict)
        if active is not None and not any(active):
            # nothing to step: EnvBase masks this output with the previous values
            return self._zero_step_output()
        inputs = split_inputs(tensordict, self._input_keys(), self._sub_batch)

        def run() -> list[TensorDictBase | None]:
            outs: list[TensorDictBase | None] = []
            for i, env in enumerate(self._envs):
                self._current = i
                if active is not None and not active[i]:
                    outs.append(None)
                    continue
                outs.append(env.step(inputs[i]).get("next"))
            return outs

        outs = self._run("step", run)
        out = self._stack(outs, "step", None)
        return self._output_device(out)

    def _stack(
        self,
        outs: list[TensorDictBase | None],
        what: str,
        fallback: TensorDictBase | None,
    ) -> TensorDictBase:
        """The sub-envs' outputs stacked, refusing shapes that are not the specs' (a sub-env
        that returns an observation of shape (3,) for a spec of (2,) would otherwise give
        shape (n, 3), or a raw stacking error when the sub-envs disagree)."""
        try:
            out = stack_like(outs) if fallback is None else stack_like(outs, fallback=fallback)
        except RuntimeError:
            for key, shape in self._expected_shapes(what):
                self._raise_shape(key, shape, outs, what, only_wrong=True)
            raise
        for key, shape in self._expected_shapes(what):
            value = out.get(key, None)
            if isinstance(value, torch.Tensor) and value.shape != shape:
                self._raise_shape(key, shape, outs, what)
        return out

    def _expected_shapes(self, what: str) -> list[tuple[Any, torch.Size]]:
        expected = self._shapes.get(what)
        if expected is None:
            specs = [self.full_observation_spec, self.full_done_spec]
            if what == "step":
                specs.append(self.full_reward_spec)
            expected = self._shapes[what] = [
                (key, spec[key].shape)
                for spec in specs
                for key in spec.keys(include_nested=True, leaves_only=True)
                if -1 not in tuple(spec[key].shape)
            ]
        return expected

    def _raise_shape(
        self,
        key: Any,
        shape: torch.Size,
        outs: list[TensorDictBase | None],
        what: str,
        only_wrong: bool = False,
    ) -> None:
        row = tuple(shape[1:])
        for i, sub in enumerate(outs):
            value = None if sub is None else sub.get(key, None)
            if isinstance(value, torch.Tensor) and tuple(value.shape) != row:
                raise SpecMismatchError(
                    key,
                    f"shape {list(row)} (the spec of each sub-env)",
                    f"a tensor of shape {list(value.shape)}",
                    where=f"{what} output of sub-env {i} ({type(self._envs[i]).__name__})",
                )
        if not only_wrong:
            raise SpecMismatchError(key, f"shape {list(shape)}", "another shape", where=what)

    # ---------------------------------------------------------------- seeds and attributes
    def _seed_workers(self, seed: int | None, static_seed: bool) -> int | None:
        def run() -> int | None:
            next_seed = seed
            for i, env in enumerate(self._envs):
                self._current = i
                next_seed = env.set_seed(next_seed, static_seed=static_seed)
            return next_seed

        return self._run("set_seed", run)

    def get_attr(self, name: str) -> list[Any]:
        return [getattr(env, name) for env in self._envs]

    def set_attr(self, name: str, values: Any) -> None:
        for env, value in zip(self._envs, self._per_worker(values)):
            setattr(env, name, value)

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        def run() -> list[Any]:
            results = []
            for i, env in enumerate(self._envs):
                self._current = i
                results.append(getattr(env, name)(*args, **kwargs))
            return results

        return self._run(f"call({name!r})", run)

    def _close(self) -> None:
        for env in self._envs:
            env.close()
