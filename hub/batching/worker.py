"""The body of a ``ParallelEnv`` worker process: build one env, then serve commands.

The worker builds its env with the factory, sends its specs to the parent (pickled, once),
maps the shared buffers when the parent sends their layout, and then loops: read one command
byte, run it on the env, write the results into shared memory and answer with one byte. An
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

import torch
from tensordict import TensorDict, TensorDictBase

from hub.batching import signals as sig
from hub.batching.fork_safety import freeze_inherited
from hub.batching.shared_buffers import FdHandle, SharedBuffers, SharedViews
from hub.envs._fast_td import fast_get, fast_set, new_td
from hub.envs.base import EnvBase, any_true
from hub.errors import HubError, SpecMismatchError

__all__ = ["worker_main", "RemoteMethod", "describe_env", "error_info"]

PARENT_CHECK_S = 1.0  # how often an idle worker checks that its parent still lives


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
    """One env served over a channel (the loop of :func:`worker_main`)."""

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
        self._next_out: dict[Any, torch.Tensor] = {}
        self._input_rows: list[tuple[Any, torch.Tensor]] = []
        self._input_flat = True
        self._next_flags: list[tuple[Any, int]] = []
        self._next_done: torch.Tensor | None = None
        self._all_next_known = False
        self._rows: dict[str, list[Any]] = {}
        self._present: list[bool | None] = []
        self.sub_batch = env.batch_size
        self.done_key = env.done_key  # of the step's output ("next" data)
        self.reset_key = env.reset_keys[0]

    # ---------------------------------------------------------------- loop
    def serve(self) -> None:
        channel = self.channel
        handlers = {
            sig.STEP: lambda: self.step(False),
            sig.STEP_RESET: lambda: self.step(True),
            sig.RESET: lambda: self.reset(False, {}),
            sig.RESET_PARTIAL: lambda: self.reset(True, {}),
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
                    write(ack_fd, step(True))
                    continue
                except BrokenPipeError:
                    break  # the parent is gone
                except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises
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
    def _views(self) -> SharedViews:
        if self.views is None:
            raise HubError("the parent sent data before the buffer layout (a ParallelEnv bug).")
        return self.views

    def _read(self, group: str, optional: bool) -> TensorDictBase:
        views = self._views()
        present = views.present[self.index].tolist() if optional else None
        data = {}
        for leaf, view in self._rows[group]:
            if present is not None and not present[leaf.flag]:
                continue
            data[leaf.key] = view.clone()
        if all(type(key) is str for key in data):
            return new_td(data, self.sub_batch, None)
        return TensorDict(data, batch_size=self.sub_batch)

    def _write(self, group: str, data: TensorDictBase) -> None:
        present = self._views().present[self.index]
        known = self._present  # what this worker last wrote into its presence flags
        tensor = torch.Tensor
        for leaf, view in self._rows[group]:
            value = fast_get(data, leaf.key)
            if value is None:
                if leaf.flag < 0:
                    raise SpecMismatchError(
                        leaf.key,
                        f"an entry of shape {list(view.shape)}",
                        "no such entry",
                        where=f"{type(self.env).__name__} output in worker {self.index}",
                    )
                if known[leaf.flag] is not False:
                    present[leaf.flag] = known[leaf.flag] = False
                continue
            if (
                not isinstance(value, tensor)
                or value.shape != view.shape
                or value.dtype != view.dtype
            ):
                raise SpecMismatchError(
                    leaf.key,
                    f"shape {list(view.shape)} and dtype {view.dtype} (ParallelEnv's buffers are "
                    "made from the specs: check_env_specs(env) finds such mismatches)",
                    _describe(value),
                    where=f"{type(self.env).__name__} output in worker {self.index}",
                )
            view.copy_(value)
            if leaf.flag >= 0 and known[leaf.flag] is not True:
                present[leaf.flag] = known[leaf.flag] = True

    def step(self, then_reset: bool) -> bytes:
        """One step: the inputs from shared memory, the outputs written straight into it by
        ``env.step_into`` (no re-check of what the parent checked, no tensordict around the
        output); with ``then_reset``, a reset in place when the episode ended."""
        env = self.env
        data = {key: view.clone() for key, view in self._input_rows}
        if self._input_flat:
            inputs = new_td(data, self.sub_batch, None)
        else:
            inputs = TensorDict(data, batch_size=self.sub_batch)
        written = env.step_into(inputs, self._next_out)
        self._mark_written(written)
        if not then_reset:
            return sig.OK
        done = self._next_done
        if done is None or not any_true(done):
            return sig.OK
        next_td = self._read("next", optional=True)
        fast_set(inputs, "next", next_td)
        next_input = env.step_mdp(inputs)
        next_input.set(self.reset_key, next_td.get(self.done_key).clone())
        self._write("reset_out", env.reset(next_input))
        return sig.DID_RESET

    def _mark_written(self, written: list[Any] | None) -> None:
        """Set the presence flags of the ``"next"`` leaves after ``step_into``."""
        known = self._present
        if written is None:
            if self._all_next_known:
                return
            changed = [(flag, True) for _, flag in self._next_flags]
        else:
            keys = set(written)
            changed = [(flag, key in keys) for key, flag in self._next_flags]
        present = self._views().present[self.index]
        for flag, value in changed:
            if known[flag] is not value:
                present[flag] = known[flag] = value
        self._all_next_known = all(known[flag] is True for _, flag in self._next_flags)

    def reset(self, partial: bool, kwargs: dict[str, Any]) -> bytes:
        if partial:
            out = self.env.reset(self._read("reset_in", optional=True), **kwargs)
        else:
            out = self.env.reset(**kwargs)
        self._write("reset_out", out)
        return sig.OK

    # ---------------------------------------------------------------- control
    def bind(self, views: SharedViews) -> None:
        """Use the shared buffers of ``views`` (this worker's row of each group)."""
        self.views = views
        self._present = [None] * views.layout.n_flags
        self._rows = {group: views.row_leaves(group, self.index) for group in views.layout.groups}
        self._input_rows = [(leaf.key, view) for leaf, view in self._rows.get("input", [])]
        self._input_flat = all(type(key) is str for key, _ in self._input_rows)
        rows = self._rows.get("next", [])
        self._next_out = {leaf.key: view for leaf, view in rows}
        self._next_flags = [(leaf.key, leaf.flag) for leaf, _ in rows]
        self._next_done = self._next_out.get(self.done_key)
        self._all_next_known = False

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
            seed, static_seed = payload
            return sig.VALUE, env.set_seed(seed, static_seed=static_seed)
        if operation == "getattr":
            value = getattr(env, payload)
            if callable(value) and not isinstance(value, type):
                value = RemoteMethod(payload, self.index)
            return sig.VALUE, value
        if operation == "setattr":
            name, value = payload
            setattr(env, name, value)
            return sig.OK
        if operation == "call":
            name, args, kwargs = payload
            return sig.VALUE, getattr(env, name)(*args, **kwargs)
        if operation == "ping":  # the parent re-syncs after an interrupted call
            return sig.VALUE, payload
        raise HubError(f"unknown control operation {operation!r} (a ParallelEnv bug).")


def _as_tuple(key: Any) -> tuple[str, ...]:
    return (key,) if isinstance(key, str) else tuple(key)


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {list(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__}"
