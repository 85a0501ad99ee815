"""The body of a ``ParallelEnv`` worker process: build its sub-envs, then serve commands.

The worker builds its batch of sub-envs (:class:`WorkerEnvs`: a batch-first ``SerialEnv`` of
its slice of the ``ParallelEnv``), sends their specs to the parent (pickled, once), maps the
shared buffers when the parent sends their layout, and then loops: read one command byte, step
or reset its batch through the array-level hooks with the inputs read in place from shared
memory, write the outputs into its slice of the shared buffers and answer with one byte. An
exception is answered with its type, message and formatted traceback; the worker stays alive and
keeps serving. It exits on ``CLOSE``, when its command pipe reaches EOF, or when its parent is gone.

Example:
    >>> from hub.batching.worker import RemoteMethod
    >>> method = RemoteMethod("render", worker=0)
    >>> method.name
    'render'
"""

from __future__ import annotations

import os
import select
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from tensordict import is_tensor_collection

from hub.batching import row_access
from hub.batching import signals as sig
from hub.batching.first_ready import RestartingBatch
from hub.batching.fork_safety import freeze_inherited
from hub.batching.serial import SerialEnv
from hub.batching.shared_buffers import FdHandle, SharedBuffers, SharedViews
from hub.envs.base import EnvBase
from hub.errors import HubError, SpecMismatchError

__all__ = [
    "worker_main",
    "RemoteMethod",
    "WorkerEnvs",
    "describe_env",
    "error_info",
]

PARENT_CHECK_S = 1.0  # how often an idle worker checks that its parent still lives


class WorkerEnvs:
    """Builds a worker's sub-envs: a batch-first ``SerialEnv`` of its factories, or one natively
    batched env of as many sub-envs (picklable when the factories are, for workers started with
    ``spawn`` or ``forkserver``).

    Args:
        factories: one factory per sub-env of the worker.
        kwargs: one dict of keyword arguments per factory.
        first: the index of the worker's first sub-env in the ``ParallelEnv`` (for errors).
        batch_fn: ``batch_fn(k)`` builds ``k`` sub-envs as one env of batch ``[k]`` (a
            namespace's native batching), used instead of the factories.
    """

    def __init__(
        self,
        factories: list[Any],
        kwargs: list[dict[str, Any]],
        first: int,
        batch_fn: Callable[[int], EnvBase] | None = None,
    ) -> None:
        self.factories = factories
        self.kwargs = kwargs
        self.first = first
        self.batch_fn = batch_fn

    def __call__(self) -> EnvBase:
        k = len(self.factories)
        if self.batch_fn is None:
            return SerialEnv(k, self.factories, self.kwargs)
        env = self.batch_fn(k)
        if not isinstance(env, EnvBase) or tuple(env.batch_size[:1]) != (k,):
            raise HubError(
                f"create_batch_fn({k}) returned {type(env).__name__} of batch size "
                f"{list(getattr(env, 'batch_size', []))}: it must build {k} envs as one hub "
                f"env of batch size [{k}, ...]."
            )
        return env


class RemoteMethod:
    """What ``get_attr`` returns for a method of a sub-env: call it through ``env.call``."""

    def __init__(self, name: str, worker: int) -> None:
        self.name = name
        self.worker = worker

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"{self.name!r} is a method of the env in worker {self.worker}, which lives in another "
            f"process: call it with env.call({self.name!r}, ...) or env.{self.name}(...)."
        )

    def __repr__(self) -> str:
        return f"<method {self.name!r} of the env in worker {self.worker}>"


def describe_env(env: EnvBase) -> dict[str, Any]:
    """What the parent needs to know about a worker's env: its specs, batch size and device."""
    return {
        "batch_size": tuple(env.batch_size),
        "device": None if env.device is None else str(env.device),
        "full_observation_spec": env.full_observation_spec,
        "full_reward_spec": env.full_reward_spec,
        "full_done_spec": env.full_done_spec,
        "full_action_spec": env.full_action_spec,
        "full_state_spec": env.full_state_spec,
    }


def error_info(exc: BaseException) -> tuple[str, str, str]:
    """``(type name, message, formatted traceback)`` of the exception being handled."""
    return type(exc).__name__, str(exc), traceback.format_exc()


def _parent_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a pid that exists but is not ours
        return True
    return True


def worker_main(
    index: int,
    factory: Callable[..., EnvBase],
    kwargs: dict[str, Any],
    channel: sig.WorkerChannel,
    shm: FdHandle,
    backend_state: dict[str, str],
    parent_pid: int,
    close_fds: list[int],
    spin_wait: float = 0.0,
    collect: bool = True,
) -> None:
    """Entry point of a worker process (see the module docstring)."""
    # A forked worker inherits the parent's objects, garbage included, and the collector
    # disabled (the parent disables it around the fork): freezing them before the collector runs
    # again keeps this process from ever finalizing objects that own the parent's native
    # resources (threads, rendering contexts, ...), and spares copy-on-write. ``collect``: the
    # parent had the collector enabled (see hub.batching.fork_safety).
    freeze_inherited(collect)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    for fd in close_fds:  # the parent's ends of every pipe, inherited through fork
        try:
            os.close(fd)
        except OSError:
            pass
    sig.forget_inherited_fds()
    torch.set_num_threads(1)
    try:
        from hub.dispatch import restore_backend_state

        restore_backend_state(backend_state)
        env = factory(**kwargs)
        if not isinstance(env, EnvBase):
            raise HubError(
                f"create_env_fn returned {type(env).__name__}, not a hub env (an EnvBase "
                "subclass). Wrap foreign envs first, e.g. with hub.make_env."
            )
        channel.reply_payload(sig.VALUE, describe_env(env))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        channel.reply_payload(sig.ERROR, error_info(exc))
        channel.close()
        _exit_now()
    Worker(index, env, channel, SharedBuffers.attach(shm), parent_pid, spin_wait).serve()
    _exit_now()


def _exit_now() -> None:
    """Leave without the interpreter's teardown (seconds for a spawned interpreter that holds
    torch), once the env is closed, the pools this worker started are stopped and output is
    flushed."""
    from hub.batching.live_pools import shutdown_all

    shutdown_all()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream has nothing to flush
            pass
    os._exit(0)


class Worker:
    """A worker's batch of sub-envs served over a channel (the loop of :func:`worker_main`)."""

    def __init__(
        self,
        index: int,
        env: EnvBase,
        channel: sig.WorkerChannel,
        buffers: SharedBuffers,
        parent_pid: int,
        spin_wait: float = 0.0,
    ) -> None:
        self.index = index
        self.spin_wait = spin_wait  # seconds to poll for the next command before sleeping
        self.env = env
        self.channel = channel
        self.buffers = buffers
        self.parent_pid = parent_pid
        self.views: SharedViews | None = None
        self._inputs: list[tuple[Any, np.ndarray]] = []
        self._rows: np.ndarray | None = None
        self._out: dict[str, list[tuple[Any, np.ndarray, int]]] = {}
        self._side_keys: dict[str, tuple[Any, ...]] = {}  # non-tensor entries, per group
        self._side: dict[str, dict[Any, list[Any]]] = {}  # their values, sent with the answer
        self._rows_count = 0  # the sub-envs this worker holds
        self._present: np.ndarray | None = None
        self._known: list[bool | None] = []
        self._async: RestartingBatch | None = None  # first-ready async: built when first used

    # ---------------------------------------------------------------- loop
    def serve(self) -> None:
        channel = self.channel
        handlers = {
            sig.STEP: lambda: self.step(False, False),
            sig.STEP_ROWS: lambda: self.step(False, True),
            sig.STEP_RESET: lambda: self.step(True, False),
            sig.STEP_RESET_ROWS: lambda: self.step(True, True),
            sig.RESET: lambda: self.reset(False, {}),
            sig.RESET_ROWS: lambda: self.reset(True, {}),
            sig.STEP_ASYNC: self.step_async,
            sig.RESET_ASYNC: self.reset_async,
            sig.CONTROL: self.control,
        }
        cmd_fd, ack_fd = channel.fds()
        poller = select.poll()
        poller.register(cmd_fd, select.POLLIN)
        wait_ms = int(PARENT_CHECK_S * 1000)
        step, read, write, fused = self.step, os.read, os.write, sig.STEP_RESET
        spinner = sig.Spinner(self.spin_wait)  # spin_wait=0: straight to the blocking poll
        while True:
            ready = spinner.poll(poller) or poller.poll(wait_ms)
            spinner.done()
            if not ready:
                if _parent_alive(self.parent_pid):
                    continue
                break
            op = read(cmd_fd, 1)
            if op == fused:  # the hot path: step_and_maybe_reset
                try:
                    answer = step(True, False)
                    if type(answer) is bytes:
                        write(ack_fd, answer)
                    else:
                        channel.reply_payload(*answer)
                    continue
                except BrokenPipeError:
                    break  # the parent is gone
                except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises
                    self._side = {}  # what a failed step wrote is not sent with the next answer
                    channel.reply_payload(sig.ERROR, error_info(exc))
                    continue
            if op in (b"", sig.CLOSE):
                self._close(answer=op == sig.CLOSE)
                return
            try:
                answer = handlers[op]()
                if isinstance(answer, tuple):
                    channel.reply_payload(*answer)  # pickles before it writes anything
                else:
                    channel.reply(answer)
            except BrokenPipeError:
                break  # the parent is gone
            except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises
                self._side = {}
                channel.reply_payload(sig.ERROR, error_info(exc))
        self._close(answer=False)

    def _close(self, answer: bool) -> None:
        try:
            self.env.close()
        finally:
            if answer:
                try:
                    self.channel.reply(sig.OK)
                except OSError:
                    pass
            self.channel.close()
            self.buffers.close()

    # ---------------------------------------------------------------- data
    def _inputs_now(self) -> dict[Any, np.ndarray]:
        if self.views is None:
            raise HubError("the parent sent data before the buffer layout (a ParallelEnv bug).")
        return {key: view for key, view in self._inputs}

    def _write(self, group: str, arrays: Any) -> None:
        """Write the batch's output arrays into this worker's slice of ``group``."""
        known = self._known
        present = self._present
        where = f"{type(self.env).__name__} output in worker {self.index}"
        leaves = self._out[group]
        side = self._side_keys.get(group, ())
        for key in side:
            value = arrays.get(key)
            if value is not None:
                values = _per_row(value, self._rows_count, key, where)
                self._side.setdefault(group, {})[key] = values
        for key, view, flag in leaves:
            value = arrays.get(key)
            if value is None:
                if flag < 0:
                    raise SpecMismatchError(
                        key, f"an entry of shape {list(view.shape)}", "no such entry", where=where
                    )
                if known[flag] is not False:
                    present[flag] = known[flag] = False
                continue
            _copy_into(view, value, key, where)
            if flag >= 0 and known[flag] is not True:
                present[flag] = known[flag] = True
        if len(arrays) > len(leaves):
            declared = {key for key, _, _ in leaves} | set(side)
            extra = [key for key in arrays if key not in declared]
            if extra:
                raise SpecMismatchError(
                    extra[0],
                    "no entry (no spec declares it)",
                    "an entry of the output",
                    where=where,
                )

    def _rows_now(self, partial: bool) -> np.ndarray | None:
        if not partial:
            return None
        return self._rows.copy()

    def step(self, then_reset: bool, partial: bool) -> Any:
        """One step of the worker's sub-envs (those of its ``"rows"`` flags with ``partial``);
        with ``then_reset``, the sub-envs whose episode ended are reset in the same pass."""
        inputs = self._inputs_now()
        rows = self._rows_now(partial)
        if not then_reset:
            self._write("next", self.env.step_arrays(inputs, rows))
            return self._answer(sig.OK)
        out, first = self.env.step_reset_arrays(inputs, rows)
        self._write("next", out)
        if first is None:
            return self._answer(sig.OK)
        self._write("reset_out", first)
        return self._answer(sig.DID_RESET)

    def reset(self, partial: bool, kwargs: dict[str, Any]) -> Any:
        self._inputs_now()
        self._write("reset_out", self.env.reset_arrays(self._rows_now(partial), **kwargs))
        return self._answer(sig.OK)

    def _answer(self, status: bytes) -> Any:
        """``status``, or with the non-tensor entries written since the last answer, the
        ``(WITH_ENTRIES, (status, entries))`` reply that carries them."""
        if not self._side:
            return status
        entries, self._side = self._side, {}
        return sig.WITH_ENTRIES, (status, entries)

    # ---------------------------------------------------------------- first-ready async
    def step_async(self) -> Any:
        """First-ready step: restart the sub-envs that ended, step the others; one row per
        sub-env into the ``"next"`` group (see :class:`~hub.batching.first_ready.RestartingBatch`)."""
        self._write("next", self._restarting().step(self._inputs_now()))
        return self._answer(sig.OK)

    def reset_async(self) -> Any:
        """First-ready reset of every sub-env, written as step rows (``"is_init"`` set)."""
        self._inputs_now()
        self._write("next", self._restarting().reset())
        return self._answer(sig.OK)

    def _restarting(self) -> RestartingBatch:
        if self._async is None:
            self._async = RestartingBatch(self.env)
        return self._async

    # ---------------------------------------------------------------- control
    def bind(self, views: SharedViews) -> None:
        """Use the shared buffers of ``views`` (this worker's slice of each group)."""
        self.views = views
        index = self.index
        self._inputs = [(leaf.key, view) for leaf, view in views.slice_leaves("input", index)]
        rows = views.slice_leaves("rows", index)
        self._rows = rows[0][1] if rows else None
        self._out = {
            group: [(leaf.key, view, leaf.flag) for leaf, view in views.slice_leaves(group, index)]
            for group in ("next", "reset_out")
        }
        self._side_keys = dict(views.layout.side)
        start, stop = views.layout.bounds[index]
        self._rows_count = stop - start
        self._present = views.present[index].numpy()
        self._known = [None] * views.layout.n_flags

    def _placeholders(self, name: str, values: list[Any]) -> list[Any]:
        """``values`` with the methods among them replaced by :class:`RemoteMethod`s (they
        cannot leave this process)."""
        return [
            RemoteMethod(name, self.index)
            if callable(value) and not isinstance(value, type)
            else value
            for value in values
        ]

    def control(self) -> Any:
        operation, payload = self.channel.recv_control()
        env = self.env
        if operation == "layout":
            self.bind(self.buffers.map(payload))
            return sig.OK
        if operation == "reset":
            partial, kwargs = payload
            return self.reset(partial, kwargs)
        if operation == "seed":
            return sig.VALUE, env.set_seed(payload)
        if operation == "getattr":
            return sig.VALUE, self._placeholders(payload, row_access.rows_get_attr(env, payload))
        if operation == "getattr_at":
            rows, name = payload
            return sig.VALUE, self._placeholders(name, row_access.rows_get_attr_at(env, rows, name))
        if operation == "setattr":
            name, values = payload
            row_access.rows_set_attr(env, name, values)
            return sig.OK
        if operation == "setattr_at":
            rows, name, values = payload
            row_access.rows_set_attr_at(env, rows, name, values)
            return sig.OK
        if operation == "call":
            name, args, kwargs = payload
            return sig.VALUE, row_access.rows_call(env, name, args, kwargs)
        if operation == "call_at":
            rows, name, args, kwargs = payload
            return sig.VALUE, row_access.rows_call_at(env, rows, name, args, kwargs)
        if operation == "ping":  # the parent re-syncs after an interrupted call
            return sig.VALUE, payload
        raise HubError(f"unknown control operation {operation!r} (a ParallelEnv bug).")


def _per_row(value: Any, rows: int, key: Any, where: str) -> list[Any]:
    """A non-tensor entry's values as a list of one plain value per sub-env (what a hook gives:
    a list, a numpy array of strings or objects, a tensordict's non-tensor stack, one value)."""
    if is_tensor_collection(value) or isinstance(value, np.ndarray):
        value = value.tolist()
    elif not isinstance(value, (list, tuple)):
        value = [value] * rows
    values = list(value)
    if len(values) != rows:
        raise SpecMismatchError(
            key, f"one value per sub-env ({rows})", f"{len(values)} values", where=where
        )
    return values


def _copy_into(view: np.ndarray, value: Any, key: Any, where: str) -> None:
    """Copy an output array (any array-like of the batch) into its shared view, refusing a
    dtype that cannot be stored without changing kind and a shape of another size."""
    if type(value) is np.ndarray and value.dtype == view.dtype and value.shape == view.shape:
        np.copyto(view, value)
        return
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    array = np.asarray(value)
    if array.dtype != view.dtype:
        allowed = (
            array.dtype.kind in "biu"
            if view.dtype == np.bool_
            else np.can_cast(array.dtype, view.dtype, casting="same_kind")
        )
        if not allowed:
            raise SpecMismatchError(
                key,
                f"dtype {view.dtype} (ParallelEnv's buffers are made from the specs: "
                "check_env_specs(env) finds such mismatches)",
                f"an array of dtype {array.dtype}",
                where=where,
            )
    if array.shape != view.shape:
        if array.size != view.size:
            raise SpecMismatchError(
                key,
                f"shape {list(view.shape)} (ParallelEnv's buffers are made from the specs: "
                "check_env_specs(env) finds such mismatches)",
                f"an array of shape {list(array.shape)}",
                where=where,
            )
        array = array.reshape(view.shape)
    np.copyto(view, array, casting="unsafe")
