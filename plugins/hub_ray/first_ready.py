"""First-ready async batches of a :class:`hub_ray.RayEnv` (``batch_size < num_envs``).

EnvPool's async semantics, over Ray actors: ``reset()`` starts every env and returns the first
``batch_size`` envs to come back; ``step_fetch()`` returns the next ``batch_size`` envs to finish
(each row with its ``"env_id"``, and ``"is_init"`` set where it starts an episode);
``step_send(td)`` steps exactly the envs of ``td["env_id"]``. An env whose episode ended restarts
with the next send to it (its action is not used; its next row starts a new episode). An actor
steps all its envs together (they are a :class:`hub.batching.RestartingBatch` in the actor), so
a batch is made of whole actors, taken in the order they finished: ``ray.wait`` finds the first
ready ones, and :class:`hub.batching.FirstReady` keeps the book.

A collector-style loop::

    env = RayEnv(make_pong, 16, batch_size=4)
    td = env.reset()                  # the first 4 envs back, with "env_id" and "is_init"
    for _ in range(1000):
        td = policy(td)               # writes "action" for those rows
        env.step_send(td)             # steps exactly those envs
        td = env.step_fetch()         # the next 4 envs to finish

Example:
    >>> first_ready_layout(16, 4, cpus=2, envs_per_actor=None)
    (8, 2)
    >>> first_ready_layout(16, 4, cpus=2, envs_per_actor=3)
    Traceback (most recent call last):
    ValueError: with batch_size=4, a batch is made of whole actors: envs_per_actor (3) must divide both batch_size and num_envs (16); these do: [1, 2, 4].
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from tensordict import TensorDictBase

from hub.batching import AsyncCallError, FirstReady, async_layout
from hub.errors import WorkerTimeoutError
from hub_ray.arrays import Arrays
from hub_ray.faults import closed_error, died_error, raised_error

__all__ = ["FirstReadyActors", "first_ready_layout"]

#: the done flags of a row (a restarted actor's rows set two of them)
_FLAGS = ("done", "terminated", "truncated")


def first_ready_layout(
    num_envs: int, batch_size: Any, cpus: float, envs_per_actor: int | None
) -> tuple[int, int]:
    """``(actors, envs_per_actor)`` for first-ready batches of ``batch_size`` envs: actors of
    equal size dividing ``batch_size``, a batch spread over ``cpus`` actors by default
    (:func:`hub.batching.async_layout`)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(f"batch_size must be an int or None, got {batch_size!r}.")
    try:
        return async_layout(
            num_envs, int(batch_size), max(int(cpus), 1), envs_per_worker=envs_per_actor
        )
    except ValueError as error:  # in the words of RayEnv's arguments
        raise ValueError(str(error).replace("worker", "actor")) from None


class FirstReadyActors:
    """The first-ready async mode of :class:`hub_ray.RayEnv` (see the module docstring).

    It uses the env's ``_actors``, ``_ranges``, ``places``, ``restarts``, ``max_restarts``,
    ``_restart``, ``timeout``, ``_zero_arrays`` and its public env API.
    """

    _book: FirstReady | None = None
    _calls: dict[int, tuple[Any, str]]  # actor -> (the Ray ref of its call under way, its kind)
    _answers: dict[int, Arrays]  # the rows of the actors that answered, not fetched yet
    _template: Arrays  # zeros of one actor's rows (the shapes and dtypes of the specs)
    _async_last: Arrays | None = None  # each env's last observations (a restarted actor's rows)

    @property
    def is_async(self) -> bool:
        """Whether the env returns first-ready batches (``batch_size`` was given)."""
        return self._book is not None

    def _first_ready_specs(self, descriptions: list[dict[str, Any]], names: tuple) -> None:
        """The env's specs: ``batch_size`` rows of any actor's envs, with ``"env_id"`` and
        ``"is_init"``."""
        from hub_ray.specs import join_specs

        book = self._book
        for name in names:
            setattr(self, name, book.batch_specs([d[name] for d in descriptions], name, join_specs))
        self.full_observation_spec = book.observation_specs(self.full_observation_spec, self.device)
        # zeros of one actor's rows, in the specs' shapes and dtypes
        self._template = {k: v for k, v in self._zero_arrays(0).items() if k != "env_id"}

    # ---------------------------------------------------------------- reset
    def _async_reset(self, rows: Any, kwargs: dict[str, Any]) -> Arrays:
        """Reset every env; the first ``batch_size`` to come back, without rewards."""
        seed = self._book.reset_seed(rows, kwargs)
        self._async_open("reset")
        self._async_drain()
        if seed is not None:
            self.set_seed(seed)
        for actor in self._book.started_all():
            self._async_call(actor, "reset")
        self._async_last = None
        out = self._async_take(self.timeout)
        out.pop("reward", None)
        return out

    def _async_drain(self) -> None:
        """Wait for the calls under way (the env's ``timeout``) and drop their results."""
        import ray

        refs = {ref: actor for actor, (ref, _) in self._calls.items()}
        self._answers.clear()
        if not refs:
            return
        _, late = ray.wait(list(refs), num_returns=len(refs), timeout=self.timeout)
        if late:
            self._book.fail("a step under way did not finish within the timeout")
            raise WorkerTimeoutError(
                f"reset(): Ray actors {sorted(refs[r] for r in late)} did not finish their step "
                f"within {self.timeout} s. Call reset() again to keep waiting (close() stops "
                "the actors).",
                worker=min(refs[r] for r in late),
            )
        self._calls.clear()  # a dead actor is created again when the reset reaches it

    # ---------------------------------------------------------------- send and fetch
    def _async_open(self, what: str) -> None:
        from hub_ray.connect import check_session

        if self.is_closed:
            raise closed_error(what)
        check_session(self._ray_session, what)

    def _async_call(self, actor: int, kind: str, inputs: Arrays | None = None) -> None:
        handle = self._actors[actor]
        if kind == "reset":
            ref = handle.reset_first_ready.remote()
        else:
            ref = handle.step_first_ready.remote(inputs)
        self._calls[actor] = (ref, kind)

    def _async_send(self, tensordict: TensorDictBase) -> None:
        self._async_open("step_send")
        book = self._book
        ids = book.send_ids(tensordict)
        actors = book.workers_of(ids)
        self.check_step_input(tensordict, "step_send")
        keys = self.env_keys
        inputs = {
            k: v.numpy(force=True) for k, v in tensordict.items(True, True) if k in keys.input_keys
        }
        order = np.argsort(ids, kind="stable")  # rows by env id: each actor's envs in turn
        per = book.per
        for j, actor in enumerate(actors):  # ascending, as the sorted ids
            rows = order[j * per : (j + 1) * per]
            part = {k: v.reshape(len(ids), *v.shape[1:])[rows] for k, v in inputs.items()}
            self._async_call(actor, "step", part)
        book.sent(actors)

    def _async_fetch(self, timeout: float | None) -> TensorDictBase:
        self._async_open("step_fetch")
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"step_fetch(timeout=...) must be >= 0 seconds, got {timeout}.")
        out = self._async_take(self.timeout if timeout is None else timeout)
        return self.env_keys.outputs.build(out, None, "first-ready step")[0]

    def _async_take(self, timeout: float | None) -> Arrays:
        """Wait for the first actors to answer until they make a batch; their rows."""
        book = self._book
        book.check_fetch()
        deadline = None if timeout is None else time.monotonic() + timeout
        while not book.has_batch():
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            for actor in book.oldest_first(self._async_ready(left, timeout)):
                self._async_answered(actor)
        return self._async_rows(book.take())

    def _async_ready(self, left: float | None, timeout: float | None) -> list[int]:
        """The actors whose call finished: wait (at most ``left`` seconds) for the first, then
        take every other one that is ready too."""
        import ray

        refs = {ref: actor for actor, (ref, _) in self._calls.items()}
        ready, rest = ray.wait(list(refs), num_returns=1, timeout=left)
        if not ready:
            raise WorkerTimeoutError(
                f"step_fetch: none of the Ray actors {sorted(refs.values())} answered within "
                f"{timeout} s. Nothing is lost: fetch again to keep waiting (close() stops the "
                "actors).",
                worker=min(refs.values()),
            )
        if rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return [refs[ref] for ref in ready]

    def _async_answered(self, actor: int) -> None:
        """Take ``actor``'s answer: its rows are ready, or it failed (created again with
        ``max_restarts``: a step reports its envs truncated, a reset is sent again; else the
        error is raised and the env needs a reset)."""
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        book = self._book
        ref, kind = self._calls.pop(actor)
        what = "a first-ready reset" if kind == "reset" else "a first-ready step"
        try:
            rows = ray.get(ref)
        except RayTaskError as error:
            book.fail(f"Ray actor {actor} failed")
            raise raised_error(self.places[actor], error, what) from None
        except RayActorError as error:
            if self.restarts[actor] >= self.max_restarts:
                book.fail(f"Ray actor {actor} died")
                raise died_error(self.places[actor], error, what) from None
            try:
                self._restart(actor, error)
            except BaseException:
                book.fail(f"Ray actor {actor} died and could not be created again")
                raise
            if kind == "reset":  # its envs start from the new actor's reset
                self._async_call(actor, "reset")
                return
            rows = self._truncated_rows(actor)
        except BaseException:
            book.fail(f"Ray actor {actor}'s answer was lost")
            raise
        self._answers[actor] = rows
        book.answered(actor)

    def _truncated_rows(self, actor: int) -> Arrays:
        """A re-created actor's rows: its envs' last observations, truncated (the next send to
        them starts new episodes: a new actor restarts every env it holds)."""
        start, stop = self._ranges[actor]
        last = self._async_last or {}
        rows = {k: v.copy() for k, v in self._template.items()}
        for key, value in rows.items():
            if key in _FLAGS:
                value[...] = key != "terminated"
            elif key in last:
                value[...] = last[key][start:stop]
        return rows

    def _async_rows(self, actors: list[int]) -> Arrays:
        """The rows of ``actors``, in order, with their env ids."""
        ids = self._book.env_ids(actors)
        out = _join([self._answers.pop(actor) for actor in actors], self._template)
        out["env_id"] = ids.astype(np.int64)
        last = self._async_last
        if last is None:
            skip = ("reward", "is_init", "env_id", *_FLAGS)
            keys = self.full_observation_spec.keys(include_nested=True, leaves_only=True)
            last = self._async_last = {
                key: np.zeros((self._book.num_envs, *out[key].shape[1:]), dtype=out[key].dtype)
                for key in keys
                if key not in skip and key in out
            }
        for key, rows in last.items():
            rows[ids] = out[key]
        return out

    # ---------------------------------------------------------------- refusals
    def _refuse_sync(self, what: str) -> None:
        raise AsyncCallError(
            f"{what}: in first-ready async mode (batch_size < num_envs) each step returns "
            "whichever envs finish first, so a step cannot be paired with its result: use "
            "env.step_send(td) and env.step_fetch() (see docs/batching.md, 'First-ready "
            "batches')."
        )

    def _refuse_reset_send(self) -> None:
        raise AsyncCallError(
            "reset_send() is not available in first-ready async mode: reset() returns the "
            "first batch_size envs to come back, and step_fetch() the others."
        )


def _join(parts: list[Arrays], template: Arrays) -> Arrays:
    """One dict from the actors' rows, joined along the env dim, each entry in the shape of
    ``template`` (one actor's rows); an entry that one actor's rows lack is zeros there."""
    keys = list(dict.fromkeys(key for part in parts for key in part))
    out: Arrays = {}
    for key in keys:
        zeros = template.get(key)
        if zeros is None:  # an entry the specs do not lay out: as the actors gave it
            column = [np.asarray(part[key]) for part in parts]
        else:
            column = [
                np.asarray(part[key]).reshape(zeros.shape) if key in part else zeros
                for part in parts
            ]
        out[key] = np.concatenate(column) if len(column) > 1 else np.array(column[0])
    return out
