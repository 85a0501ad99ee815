"""``RayEnv``: envs spread over Ray actors, as one batched hub env.

Each actor holds one hub env of batch size ``[k]`` (a ``SerialEnv`` of ``k`` copies, or a
natively batched env such as EnvPool's), built inside the actor; a step is one Ray call per
actor, so Ray's per-call cost is paid once per ``k`` env-steps. Actions go to the actors and
outputs come back as numpy arrays through Ray's object store. Same API and, for the same seed,
the same data as ``hub.SerialEnv`` with as many envs.

Example:
    >>> import hub
    >>> from hub.envs.builtin import CountingEnv
    >>> env = RayEnv(CountingEnv, 4, envs_per_actor=2)  # doctest: +SKIP
    >>> env.rollout(3)["next", "observation"].shape  # doctest: +SKIP
    torch.Size([4, 3, 1])
    >>> env.close()  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

import hub
from hub.batching import AsyncCallError, FirstReady, LastData, truncate_rows
from hub.envs import derived_seed
from hub.errors import HubError, WorkerError, WorkerTimeoutError
from hub.specs import numpy_dtype
from hub_ray.actor import METHOD, EnvActor
from hub_ray.arrays import Arrays, join_rows, split_rows
from hub_ray.connect import check_session, connect, ray_session, same_session
from hub_ray.faults import (
    ActorPlace,
    ActorRestartWarning,
    closed_error,
    died_error,
    raised_error,
)
from hub_ray.first_ready import FirstReadyActors, first_ready_layout
from hub_ray.specs import join_specs

__all__ = ["RayEnv"]

_SPECS = (
    "full_observation_spec",
    "full_reward_spec",
    "full_done_spec",
    "full_action_spec",
    "full_state_spec",
)


@dataclass
class _Call:
    """A step or reset sent to the actors, waiting for their answers."""

    kind: str  # "step", "fused" (step and reset what ended) or "reset"
    refs: list[Any]  # one Ray object ref per actor, None for an actor not called
    rows: np.ndarray | None = None  # the envs it reaches (None: all)
    kwargs: dict[str, Any] = field(default_factory=dict)
    answers: list[Any] | None = None
    tensordict: TensorDictBase | None = None  # step_send's / reset_send's input
    inputs: Arrays | None = None  # the step's input arrays (a step that timed out)


class _Restarted:
    """The answer of an actor that died and was created again: its fresh reset data."""

    def __init__(self, reset: Arrays) -> None:
        self.reset = reset


class RayEnv(FirstReadyActors, hub.EnvBase):
    """Run ``num_envs`` envs in Ray actors as one env of batch size ``[num_envs]``.

    Args:
        create_env_fn: builds one env; picklable (a module-level function, a class, or a
            ``functools.partial`` of one). Each actor builds ``SerialEnv(k, create_env_fn)``.
        num_envs: the number of envs in all.
        envs_per_actor: envs per actor (``k``); the last actor holds fewer when ``num_envs`` is
            not a multiple. Default: one actor per CPU of the cluster, at most ``num_envs``.
        actor_options: Ray's actor options (``num_cpus``, ``resources``, ``scheduling_strategy``,
            ``runtime_env``, ...): one dict for every actor, or a list of one per actor.
        address: the Ray cluster to join when this process is not connected yet: ``"auto"``
            (a cluster started on this machine with ``ray start``), ``"host:port"``,
            ``"ray://host:10001"``; ``None``: ``RAY_ADDRESS``, else a new local instance.
        create_batch_fn: ``create_batch_fn(k)`` builds ``k`` envs as one natively batched env
            (``make_env`` passes it for namespaces such as ``envpool``); used instead of a
            ``SerialEnv`` of ``create_env_fn`` copies.
        max_restarts: how many times each actor is created again after it died (killed, its
            process or node lost); the step it died in reports its episodes as truncated.
            ``0``: a dead actor raises :class:`hub.errors.WorkerError`.
        timeout: seconds that ``step``, ``reset`` and the other synchronous calls wait for the
            actors before raising :class:`hub.errors.WorkerTimeoutError` (``None``: as long as
            they live; a dead actor is always reported).
        start_timeout: seconds to wait for the actors to be placed and to build their envs.
        shutdown_timeout: seconds ``close()`` gives the actors to close their envs before it
            kills them.
        device: where the batched data lives (default: CPU).
        checks: check actions and outputs against the specs in this process.
        batch_size: first-ready async mode (EnvPool's ``batch_size``): ``step_fetch()`` returns
            the first ``batch_size`` envs to finish, with their ``"env_id"`` and ``"is_init"``,
            and ``step_send(td)`` steps the envs of ``td["env_id"]`` (see
            :mod:`hub_ray.first_ready`). The env's batch size is then ``[batch_size]``; every
            actor holds as many envs, a divisor of ``batch_size`` (by default a batch spreads
            over the cluster's CPUs). ``None``: every env steps at once.

    Attributes:
        restarts: how many times each actor was created again.
        places: where each actor runs (node, process, envs), as :class:`hub_ray.faults.ActorPlace`.

    ``step_send(td)`` / ``step_fetch(timeout=None)`` and ``reset_send(td=None)`` /
    ``reset_fetch(timeout=None)`` split a step or a reset in two, as with ``ParallelEnv``.
    """

    def __init__(
        self,
        create_env_fn: Callable[[], Any],
        num_envs: int,
        *,
        envs_per_actor: int | None = None,
        actor_options: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        address: str | None = None,
        create_batch_fn: Callable[[int], Any] | None = None,
        max_restarts: int = 0,
        timeout: float | None = None,
        start_timeout: float | None = 120.0,
        shutdown_timeout: float = 1.0,
        device: Any = None,
        checks: bool = False,
        batch_size: int | None = None,
    ) -> None:
        import ray

        self._actors: list[Any] = []
        self._calls, self._answers = {}, {}  # first-ready batches: the calls under way
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}.")
        if max_restarts < 0:
            raise ValueError(f"max_restarts must be >= 0, got {max_restarts}.")
        self.max_restarts = max_restarts
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.shutdown_timeout = shutdown_timeout
        self._create_env_fn = create_env_fn
        self._create_batch_fn = create_batch_fn
        self.started_ray = connect(address)
        self._ray_session = ray_session()  # its actors live there: check_session before calls
        cpus = ray.cluster_resources().get("CPU", 1)
        if batch_size is None:
            sizes = _actor_sizes(num_envs, envs_per_actor, cpus)
        else:
            actors, per = first_ready_layout(num_envs, batch_size, cpus, envs_per_actor)
            sizes = [per] * actors
        self._options = _per_actor(actor_options, len(sizes))
        self._ranges = _ranges(sizes)
        if batch_size is not None:
            self._book = FirstReady(self._ranges, int(batch_size))
        self._job: _Call | None = None
        self._fetched: _Call | None = None
        self._seed: int | None = None
        self._last = LastData()
        self.restarts = [0] * len(sizes)
        self._remote = ray.remote(EnvActor)
        descriptions = self._start_all()
        first = descriptions[0]
        rows = num_envs if batch_size is None else int(batch_size)
        super().__init__(
            device=device, batch_size=(rows,) + tuple(first["batch_size"][1:]), checks=checks
        )
        if self._book is not None:
            self._first_ready_specs(descriptions, _SPECS)
            return
        for name in _SPECS:
            setattr(self, name, join_specs([d[name] for d in descriptions], name))

    # ---------------------------------------------------------------- actors
    @property
    def num_envs(self) -> int:
        """The number of envs in all (the batch size, unless ``batch_size`` is given)."""
        return self._ranges[-1][1]

    @property
    def num_actors(self) -> int:
        """The number of Ray actors."""
        return len(self._ranges)

    @property
    def actors(self) -> list[Any]:
        """The Ray actor handles, in env order (empty once closed)."""
        return list(self._actors)

    @property
    def envs_per_actor(self) -> list[int]:
        """How many envs each actor holds."""
        return [stop - start for start, stop in self._ranges]

    def _build_fn(self, index: int) -> Callable[[], Any]:
        k = self._ranges[index][1] - self._ranges[index][0]
        if self._create_batch_fn is not None:
            return functools.partial(self._create_batch_fn, k)
        return functools.partial(hub.SerialEnv, k, self._create_env_fn)

    def _launch(self, index: int) -> Any:
        return self._remote.options(**self._options[index]).remote(self._build_fn(index))

    def _start_all(self) -> list[dict[str, Any]]:

        self._actors = [self._launch(i) for i in range(self.num_actors)]
        self.places = [
            ActorPlace(i, start, stop, "?", "?", "?", -1)
            for i, (start, stop) in enumerate(self._ranges)
        ]
        refs = [actor.describe.remote() for actor in self._actors]
        try:
            descriptions = self._get_all(refs, self.start_timeout, "start-up (building the envs)")
        except BaseException:
            self._kill_all()
            raise
        for i, description in enumerate(descriptions):
            self._check_batch_rows(i, description)
            self.places[i] = self._place(i, description)
        return descriptions

    def _place(self, index: int, description: dict[str, Any]) -> ActorPlace:
        start, stop = self._ranges[index]
        d = description
        return ActorPlace(index, start, stop, d["node_ip"], d["node_id"], d["host"], d["pid"])

    def _check_batch_rows(self, index: int, description: dict[str, Any]) -> None:
        batch = tuple(description["batch_size"])
        k = self._ranges[index][1] - self._ranges[index][0]
        if not batch or batch[0] != k:
            raise HubError(
                f"actor {index} built an env of batch size {list(batch)}, expected [{k}, ...]: "
                "create_batch_fn(k) must build k envs as one env with a leading dim of k."
            )

    def _get_all(self, refs: list[Any], timeout: float | None, what: str) -> list[Any]:
        """``ray.get`` of one ref per actor, waiting at most ``timeout``; failures raise
        :class:`WorkerError` naming the actor."""
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        pending = {ref: i for i, ref in enumerate(refs)}
        _, not_ready = ray.wait(list(pending), num_returns=len(pending), timeout=timeout)
        if not_ready:
            late = sorted(pending[ref] for ref in not_ready)
            raise WorkerTimeoutError(
                f"Ray actors {late} did not answer within {timeout} s during {what}. "
                f"{self._resource_hint(late)}",
                worker=late[0],
            )
        out = []
        for i, ref in enumerate(refs):
            try:
                out.append(ray.get(ref))
            except RayTaskError as error:
                raise raised_error(self.places[i], error, what) from None
            except RayActorError as error:
                raise died_error(self.places[i], error, what) from None
        return out

    def _resource_hint(self, late: list[int]) -> str:
        import ray

        options = [self._options[i] for i in late]
        return (
            f"Their actor options are {options} and the cluster has "
            f"{ray.available_resources()} free: check that a node can host them (or raise "
            "timeout / start_timeout for slow envs)."
        )

    # ---------------------------------------------------------------- sending and collecting
    def _ready(self, what: str) -> None:
        if self.is_closed:
            raise closed_error(what)
        check_session(self._ray_session, what)
        job = self._job
        if job is not None:
            kind = "step" if job.kind == "fused" else job.kind
            raise AsyncCallError(
                f"{what}() was called while a {kind} is pending (sent with {kind}_send() or "
                f"timed out); call {kind}_fetch() first."
            )

    def _rows_of(self, rows: Any) -> np.ndarray | None:
        if rows is None:
            return None
        mask = np.asarray(rows, dtype=bool).reshape(self.batch_size[0], -1).any(-1)
        return None if mask.all() else mask

    def _send_step(self, inputs: Arrays, rows: Any, fused: bool) -> _Call:
        if self.is_closed:
            raise closed_error("step")
        check_session(self._ray_session, "step")
        active = self._rows_of(rows)
        parts = split_rows(inputs, self._ranges)
        method = "step_reset" if fused else "step"
        refs = []
        for actor, part, (start, stop) in zip(self._actors, parts, self._ranges):
            if active is not None and not active[start:stop].any():
                refs.append(None)
                continue
            sub = None if active is None else active[start:stop]
            refs.append(getattr(actor, method).remote(part, sub))
        return _Call("fused" if fused else "step", refs, active, inputs=inputs)

    def _collect(self, job: _Call, timeout: float | None) -> list[Any]:
        """The answers of ``job`` (``None`` for actors not called; :class:`_Restarted` for
        actors created again). A timeout leaves ``job`` pending."""
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        if job.answers is not None:
            return job.answers
        self._job = job
        live = {ref: i for i, ref in enumerate(job.refs) if ref is not None}
        if live:
            _, not_ready = ray.wait(list(live), num_returns=len(live), timeout=timeout)
            if not_ready:
                late = sorted(live[ref] for ref in not_ready)
                kind = "step" if job.kind == "fused" else job.kind
                raise WorkerTimeoutError(
                    f"Ray actors {late} did not finish the {kind} within {timeout} s; it is still "
                    f"pending: call {kind}_fetch() to wait for it again.",
                    worker=late[0],
                )
        self._job = None
        what = "step" if job.kind == "fused" else job.kind
        answers: list[Any] = []
        for i, ref in enumerate(job.refs):
            if ref is None:
                answers.append(None)
                continue
            try:
                answers.append(ray.get(ref))
            except RayTaskError as error:
                raise raised_error(self.places[i], error, what) from None
            except RayActorError as error:
                if self.restarts[i] >= self.max_restarts:
                    raise died_error(self.places[i], error, what) from None
                answers.append(self._restart(i, error))
        job.answers = answers
        return answers

    def _restart(self, index: int, error: Any) -> _Restarted:
        """Create actor ``index`` again (seeded, reset) after it died."""
        import ray

        old = self.places[index].describe()
        try:
            ray.kill(self._actors[index], no_restart=True)
        except Exception:  # already gone
            pass
        self.restarts[index] += 1
        self._actors[index] = self._launch(index)
        what = f"re-creating actor {index}"
        description = self._get_all_one(index, self._actors[index].describe.remote(), what)
        self._check_batch_rows(index, description)
        self.places[index] = self._place(index, description)
        if self._seed is not None:
            seed = derived_seed(self._seed + self._ranges[index][0], self.restarts[index])
            self._get_all_one(index, self._actors[index].set_seed.remote(seed), what)
        reset = self._get_all_one(index, self._actors[index].reset.remote(None, {}), what)
        warnings.warn(
            f"{old} died ({str(error).splitlines()[0] if str(error) else type(error).__name__}) "
            f"and was created again on node {self.places[index].node_ip} "
            f"({self.restarts[index]} of {self.max_restarts} restarts); its episodes were "
            "reported as truncated.",
            ActorRestartWarning,
            stacklevel=5,
        )
        return _Restarted(reset)

    def _get_all_one(self, index: int, ref: Any, what: str) -> Any:
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        ready, _ = ray.wait([ref], timeout=self.start_timeout)
        if not ready:
            raise WorkerTimeoutError(
                f"Ray actor {index} did not answer within {self.start_timeout} s while "
                f"{what}. {self._resource_hint([index])}",
                worker=index,
            )
        try:
            return ray.get(ref)
        except RayTaskError as error:
            raise raised_error(self.places[index], error, what) from None
        except RayActorError as error:
            raise died_error(self.places[index], error, what) from None

    # ---------------------------------------------------------------- the hooks
    def _take_step(self, inputs: Arrays, rows: Any, fused: bool) -> _Call:
        job, self._fetched = self._fetched, None
        if job is None:
            self._ready("step")
            job = self._send_step(inputs, rows, fused)
        return job

    def _step_arrays(self, inputs: Arrays, rows: Any = None) -> Arrays:
        if self._book is not None:
            self._refuse_sync("step()")
        return self._step_result(self._take_step(inputs, rows, False))[0]

    def _step_reset_arrays(self, inputs: Arrays, rows: Any = None) -> tuple[Arrays, Any]:
        if self._book is not None:
            self._refuse_sync("step_and_maybe_reset()")
        return self._step_result(self._take_step(inputs, rows, True))

    def _step_result(self, job: _Call) -> tuple[Arrays, Arrays | None]:
        """The actors' answers as one step output (zeros for actors not stepped, truncated
        rows for actors created again) and one reset output (``None``: nothing was reset)."""
        answers = self._collect(job, self.timeout)
        fused = job.kind == "fused"
        sizes = self.envs_per_actor
        steps, firsts, restarted = [], [], []
        for i, answer in enumerate(answers):
            if isinstance(answer, _Restarted):
                steps.append(None)
                firsts.append(answer.reset)
                restarted.append(i)
            elif answer is None:
                steps.append(None)
                firsts.append(None)
            else:
                steps.append(answer[0] if fused else answer)
                firsts.append(answer[1] if fused else None)
        if all(part is None for part in steps):  # every actor stepped was created again
            steps[0] = self._zero_arrays(0)
        out = join_rows(steps, sizes)
        if restarted:
            rows = np.zeros(self.batch_size[0], dtype=bool)
            for i in restarted:
                start, stop = self._ranges[i]
                rows[start:stop] = True
            truncate_rows(out, self._last.data, rows, self.env_keys.reward_keys)
        first = None
        if any(part is not None for part in firsts) and (fused or restarted):
            # the actors that reset nothing give their step's rows: the next input as it is
            keys = next(part for part in firsts if part is not None).keys()
            first = join_rows(
                [
                    part if part is not None or step is None else {k: step[k] for k in keys}
                    for part, step in zip(firsts, steps)
                ],
                sizes,
            )
        self._last.remember(out, job.rows)
        return out, first if fused else None

    def _zero_arrays(self, index: int) -> Arrays:
        k = self.envs_per_actor[index]
        zeros = {}
        for name in ("full_observation_spec", "full_reward_spec", "full_done_spec"):
            spec = getattr(self, name)
            for key in spec.keys(include_nested=True, leaves_only=True):
                leaf = spec[key]
                zeros[key] = np.zeros((k, *leaf.shape[1:]), dtype=numpy_dtype(leaf.dtype))
        return zeros

    def _reset_arrays(self, rows: Any = None, inputs: Any = None, **kwargs: Any) -> Arrays:
        if self._book is not None:
            return self._async_reset(rows, dict(kwargs))
        job, self._fetched = self._fetched, None
        if job is None:
            self._ready("reset")
            job = self._send_reset(self._rows_of(rows), kwargs)
        answers = self._collect(job, self.timeout)
        parts = [a.reset if isinstance(a, _Restarted) else a for a in answers]
        out = join_rows(parts, self.envs_per_actor)
        self._last.remember(out, job.rows)
        return out

    def _send_reset(self, rows: np.ndarray | None, kwargs: dict[str, Any]) -> _Call:
        if self.is_closed:
            raise closed_error("reset")
        seed = kwargs.get("seed")
        refs = []
        for actor, (start, stop) in zip(self._actors, self._ranges):
            if rows is not None and not rows[start:stop].any():
                refs.append(None)
                continue
            sub = None if rows is None else rows[start:stop]
            options = kwargs if seed is None else {**kwargs, "seed": seed + start}
            refs.append(actor.reset.remote(sub, options))
        return _Call("reset", refs, rows, kwargs)

    # ---------------------------------------------------------------- async use
    def step_send(self, tensordict: TensorDictBase) -> None:
        """Start a step; :meth:`step_fetch` returns its result (as ``ParallelEnv.step_send``).

        In first-ready async mode (``batch_size``), steps the envs of ``tensordict["env_id"]``
        (see :mod:`hub_ray.first_ready`)."""
        if self._book is not None:
            return self._async_send(tensordict)
        self._ready("step_send")
        self.check_step_input(tensordict, "step_send")
        keys = self.env_keys
        inputs = {
            k: v.numpy(force=True) for k, v in tensordict.items(True, True) if k in keys.input_keys
        }
        step_mask = tensordict.get("_step", None)
        rows = None if step_mask is None else step_mask.numpy(force=True)
        job = self._send_step(inputs, rows, fused=False)
        job.tensordict = tensordict
        self._job = job

    def step_fetch(self, timeout: float | None = None) -> Any:
        """Wait (at most ``timeout`` seconds) for the step started by :meth:`step_send` and
        return it, as :meth:`step` would. On :class:`hub.errors.WorkerTimeoutError` the step
        stays pending: fetch again to get it. (After a ``step_and_maybe_reset`` that timed out,
        it returns what that call would have: ``(data, next_input)``.)

        In first-ready async mode (``batch_size``), returns the next ``batch_size`` envs to
        finish: their observations, ``"reward"``, done flags, ``"env_id"`` and ``"is_init"``
        (not under ``"next"``: each row is the env's latest data)."""
        if self._book is not None:
            return self._async_fetch(timeout)
        job = self._take("step", timeout)
        self._job = None
        self._fetched = job
        td = job.tensordict
        if td is None:  # a synchronous call that timed out: its input, from its arrays
            td = TensorDict({k: torch.as_tensor(v) for k, v in job.inputs.items()}, self.batch_size)
        if job.kind == "fused":  # a step_and_maybe_reset that timed out: finish it
            return self.step_and_maybe_reset(td)
        return self.step(td)

    def _take(self, kind: str, timeout: float | None) -> _Call:
        if self.is_closed:
            raise closed_error(f"{kind}_fetch")
        job = self._job
        if job is None or (job.kind == "reset") != (kind == "reset"):
            pending = ""
            if job is not None:
                other = "reset" if job.kind == "reset" else "step"
                pending = f" (a {other} is pending: {other}_fetch() collects it)"
            raise AsyncCallError(
                f"{kind}_fetch() was called without a pending {kind}_send(){pending}; "
                f"call {kind}_send() first."
            )
        self._collect(job, timeout)
        return job

    def reset_send(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> None:
        """Start a reset (full, or partial through ``"_reset"`` entries); :meth:`reset_fetch`
        returns its result."""
        if self._book is not None:
            self._refuse_reset_send()
        self._ready("reset_send")
        keys = self.env_keys
        rows = None
        if tensordict is not None:
            if tensordict.batch_size != self.batch_size:
                raise hub.errors.SpecMismatchError(
                    "<batch_size>",
                    f"batch size {list(self.batch_size)}",
                    f"a tensordict of batch size {list(tensordict.batch_size)}",
                    where="reset_send",
                )
            flags = [tensordict.get(k, None) for k in keys.reset_keys]
            flags = [f for f in flags if f is not None]
            if flags:
                rows = np.zeros(self.batch_size[0], dtype=bool)
                for flag in flags:
                    rows |= flag.reshape(self.batch_size[0], -1).any(-1).numpy(force=True)
                if not rows.any():  # nothing to reset: reset() returns the input
                    self._job = _Call("reset", [], None, kwargs, answers=[])
                    self._job.tensordict = tensordict
                    return
                rows = None if rows.all() else rows
        job = self._send_reset(rows, kwargs)
        job.tensordict = tensordict
        self._job = job

    def reset_fetch(self, timeout: float | None = None) -> TensorDictBase:
        """Wait (at most ``timeout`` seconds) for the reset started by :meth:`reset_send` and
        return it, as :meth:`reset` would."""
        job = self._take("reset", timeout)
        self._job = None
        self._fetched = job if job.refs else None
        return self.reset(job.tensordict, **job.kwargs)

    # ---------------------------------------------------------------- seeds and attributes
    def _set_seed(self, seed: int | None) -> None:
        """Seed env ``i`` with ``seed + i``: each actor's env with ``seed`` plus its first
        env's index."""
        self._ready("set_seed")
        self._seed = seed
        for i, (actor, (start, _)) in enumerate(zip(self._actors, self._ranges)):
            value = None if seed is None else seed + start
            self._get_all_one(i, actor.set_seed.remote(value), "set_seed")

    def _control(self, method: str, what: str, *args: Any) -> list[Any]:
        self._ready(what)
        return self._results_of(
            [getattr(actor, method).remote(*args) for actor in self._actors], what
        )

    def _results_of(self, refs: list[Any], what: str) -> list[Any]:
        """The actors' results of ``refs`` (in actor order); a missing attribute stays an
        ``AttributeError``."""
        try:
            return self._get_all(refs, self.timeout, what)
        except WorkerError as error:
            cause = getattr(error, "cause", None)
            if isinstance(cause, AttributeError):
                raise AttributeError(f"Ray actor {error.worker}: {cause}") from None
            raise

    def get_attr(self, name: str) -> list[Any]:
        """The attribute ``name`` of every env, in env order (a natively batched actor env's
        own, once per env); methods come back as ``"<method>"`` (use :meth:`call`)."""
        return [
            value
            for values in self._control("get_attr", f"get_attr({name!r})", name)
            for value in values
        ]

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every env (one value each, or one for all)."""
        n = self.num_envs
        if not (isinstance(values, (list, tuple)) and len(values) == n):
            values = [values] * n
        self._ready(f"set_attr({name!r})")
        refs = [
            actor.set_attr.remote(name, list(values[start:stop]))
            for actor, (start, stop) in zip(self._actors, self._ranges)
        ]
        self._get_all(refs, self.timeout, f"set_attr({name!r})")

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of every env with the same arguments; one result each (a
        natively batched actor env is called once, its result given for each of its envs)."""
        results = self._control("call", f"call({name!r})", name, args, kwargs)
        return [value for values in results for value in values]

    def call_at(self, indices: Any, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of the envs of ``indices`` only, each in its actor; one
        result each, in the order of ``indices`` (SB3's ``env_method(..., indices=...)``)."""
        local = hub.batching.split_indices(self._ranges, indices, self.num_envs)
        results = self._at(local, "call_at", f"call({name!r})", lambda _: (name, args, kwargs))
        return hub.batching.join_by_index(self._ranges, local, results, indices)

    def get_attr_at(self, indices: Any, name: str) -> list[Any]:
        """The attribute ``name`` of the envs of ``indices`` only, in that order (the others
        are not read, and need not have it)."""
        local = hub.batching.split_indices(self._ranges, indices, self.num_envs)
        results = self._at(local, "get_attr_at", f"get_attr({name!r})", lambda _: (name,))
        return hub.batching.join_by_index(self._ranges, local, results, indices)

    def set_attr_at(self, indices: Any, name: str, values: Any) -> None:
        """Set the attribute ``name`` of the envs of ``indices`` only, one value each (the
        others keep theirs, or stay without it), as SB3's ``set_attr(..., indices=...)``."""
        local = hub.batching.split_indices(self._ranges, indices, self.num_envs)
        per_actor = hub.batching.split_values(self._ranges, local, indices, list(values))
        self._at(local, "set_attr_at", f"set_attr({name!r})", lambda a: (name, per_actor[a]))

    def _at(self, local: list[list[int]], method: str, what: str, args: Any) -> list[Any]:
        """Each actor's ``method(rows, *args(actor))`` with its rows ``local[actor]``; their
        results, in actor order."""
        self._ready(what)
        refs = [
            getattr(actor, method).remote(rows, *args(a))
            for a, (actor, rows) in enumerate(zip(self._actors, local))
        ]
        return self._results_of(refs, what)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or "_actors" not in self.__dict__ or name in _NOT_FORWARDED:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        values = self.get_attr(name)
        if values and all(isinstance(value, str) and value == METHOD for value in values):

            def forward(*args: Any, **kwargs: Any) -> list[Any]:
                return self.call(name, *args, **kwargs)

            forward.__name__ = name
            return forward
        return values

    # ---------------------------------------------------------------- life cycle
    def _close(self) -> None:
        import ray

        self._job = self._fetched = None
        self._last.clear()
        self._calls.clear()
        self._answers.clear()
        if not self._actors or not same_session(self.__dict__.get("_ray_session")):
            self._actors = []  # gone with the Ray instance they lived in
            return
        refs = [actor.close.remote() for actor in self._actors]
        ray.wait(refs, num_returns=len(refs), timeout=self.shutdown_timeout)
        self._kill_all()

    def _kill_all(self) -> None:
        """Kill every actor and wait (briefly) until Ray reports them dead."""
        import ray

        actors, self._actors = self._actors, []
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already dead
                pass
        probes = [actor.ping.remote() for actor in actors]
        deadline = time.monotonic() + max(self.shutdown_timeout, 1.0)
        ray.wait(probes, num_returns=len(probes), timeout=max(0.0, deadline - time.monotonic()))

    def __repr__(self) -> str:
        return (
            f"RayEnv(num_envs={self.num_envs}, actors={self.num_actors}, "
            f"envs_per_actor={self.envs_per_actor}, closed={self.is_closed})"
        )


_NOT_FORWARDED = frozenset(
    {"batch_locked", "checks", "auto_reset", "places", "restarts", "timeout", "max_restarts"}
)


def _actor_sizes(num_envs: int, envs_per_actor: int | None, cpus: float) -> list[int]:
    if envs_per_actor is None:
        actors = max(1, min(num_envs, int(cpus)))
        envs_per_actor = math.ceil(num_envs / actors)
    if isinstance(envs_per_actor, bool) or not isinstance(envs_per_actor, int):
        raise ValueError(f"envs_per_actor must be a positive int, got {envs_per_actor!r}.")
    if envs_per_actor < 1:
        raise ValueError(f"envs_per_actor must be a positive int, got {envs_per_actor!r}.")
    full, rest = divmod(num_envs, envs_per_actor)
    return [envs_per_actor] * full + ([rest] if rest else [])


def _ranges(sizes: list[int]) -> list[tuple[int, int]]:
    out, start = [], 0
    for size in sizes:
        out.append((start, start + size))
        start += size
    return out


def _per_actor(options: Any, n: int) -> list[dict[str, Any]]:
    if options is None:
        return [{} for _ in range(n)]
    if isinstance(options, dict):
        return [dict(options) for _ in range(n)]
    options = [dict(o) for o in options]
    if len(options) != n:
        raise ValueError(
            f"actor_options holds {len(options)} dicts for {n} actors: pass one dict for all "
            "actors, or one per actor."
        )
    return options
