"""The worker processes of a ``ParallelEnv``: start, watch, collect answers, restart, stop.

Waiting never hangs on a dead worker: the parent waits with ``poll`` on the answer pipes, and a
worker that dies closes its pipe, which wakes the parent at once with an EOF; in case another
process still holds that pipe (a grandchild started with ``fork``), liveness is also checked every
``LIVENESS_S`` seconds. Stopping is bounded: ``CLOSE`` to every worker, then ``SIGTERM`` and
``SIGKILL`` to those still running after ``shutdown_timeout``. The same shutdown runs from
``close()``, when the env is garbage-collected and at interpreter exit (through a
``multiprocessing.util.Finalize``, which also runs when the owner is itself a ``multiprocessing``
child, whose exit would otherwise wait for its non-daemonic workers), and only in the process
that started the workers.

Example:
    >>> describe_exit(-9)
    'was killed by signal SIGKILL'
"""

from __future__ import annotations

import multiprocessing as mp
import os
import select
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing import reduction, util
from typing import Any

from hub.batching import signals as sig
from hub.batching.fork_safety import no_collection, unsafe_threads
from hub.batching.live_pools import shutdown_all, track
from hub.batching.shared_buffers import SharedBuffers
from hub.batching.worker import worker_main
from hub.errors import HubError, WorkerError, WorkerTimeoutError

__all__ = [
    "WorkerPool",
    "Answer",
    "Pending",
    "describe_exit",
    "resolve_start_method",
    "shutdown_all",
]

LIVENESS_S = 0.5


@dataclass
class Answer:
    """One worker's answer to one command: a status byte, maybe a payload, or its death."""

    status: bytes
    payload: Any = None
    exitcode: int | None = None

    @property
    def died(self) -> bool:
        return self.status == b""

    @property
    def failed(self) -> bool:
        return self.status in (b"", sig.ERROR)


@dataclass
class Pending:
    """A command sent to some workers whose answers are (partly) still to come."""

    what: str
    waiting: set[int]
    answers: dict[int, Answer] = field(default_factory=dict)


def describe_exit(code: int | None) -> str:
    """A worker's exit code in words."""
    if code is None:
        return "closed its pipe without exiting"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"was killed by signal {name}"
    return f"exited with code {code}"


def resolve_start_method(start_method: str | None) -> str:
    """The start method to use: ``start_method``, else the ``HUB_PARALLEL_START_METHOD``
    environment variable, else ``fork`` where the platform has it and no thread of this process
    makes it unsafe (:func:`hub.batching.fork_safety.unsafe_threads`: native threads count, not
    only Python ones), else ``forkserver``, else ``spawn``.

    ``fork`` starts a worker in milliseconds (it needs no import and no pickling), but forking a
    process in which other threads run can deadlock or crash the child; ``forkserver`` is safe
    with threads and, after its first use, nearly as fast (see ``docs/batching.md``).
    """
    methods = mp.get_all_start_methods()
    if start_method is not None:
        if start_method not in methods:
            raise ValueError(
                f"start_method {start_method!r} is not available here; choose one of {methods}."
            )
        return start_method
    chosen = os.environ.get("HUB_PARALLEL_START_METHOD")
    if chosen:
        if chosen not in methods:
            raise ValueError(
                f"HUB_PARALLEL_START_METHOD={chosen!r} is not available here; choose one of "
                f"{methods}."
            )
        return chosen
    if "fork" in methods and not unsafe_threads():
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _forget_inherited_forkserver() -> None:
    """In a child started with ``fork``: forget the fork server of the parent.

    ``multiprocessing`` keeps its fork server's pid in a module global, which a forked child
    inherits; the child's first ``forkserver`` process then calls ``os.waitpid`` on a process
    that is not its child and fails with ``ChildProcessError`` (seen with CPython 3.11). A forked
    child that forgets it starts a fork server of its own when it needs one. (Without this, a
    ``ParallelEnv`` with ``start_method="forkserver"`` in such a child raised at construction,
    and the suite run with ``HUB_PARALLEL_START_METHOD=forkserver`` hung in a test whose owner
    process died before it could answer.)
    """
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    if server is None or getattr(server, "_forkserver_pid", None) is None:
        return
    alive_fd = getattr(server, "_forkserver_alive_fd", None)
    server._forkserver_pid = None
    server._forkserver_address = None
    server._forkserver_alive_fd = None
    if alive_fd is not None:
        try:
            os.close(alive_fd)  # the parent's copy keeps its server alive
        except OSError:
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited_forkserver)


def _preload_in_forkserver(ctx: Any) -> None:
    """Have the fork server import torch and hub once, so that its children need not."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    current = list(getattr(server, "_preload_modules", None) or [])
    if "hub.batching.worker" not in current:
        ctx.set_forkserver_preload(current + ["hub.batching.worker"])


def _check_picklable(what: str, value: Any, start_method: str) -> None:
    try:
        reduction.ForkingPickler.dumps(value)
    except Exception as exc:  # noqa: BLE001 - any pickling failure gets the same advice
        raise HubError(
            f"{what} cannot be sent to a worker started with start_method={start_method!r}: "
            f"{type(exc).__name__}: {exc}. A new interpreter receives the factory pickled, and "
            "lambdas and local functions do not pickle: pass a module-level function or a "
            "functools.partial of one (or an env class), or use start_method='fork' where the "
            "platform has it."
        ) from exc


class WorkerPool:
    """The processes, pipes and shared file behind one ``ParallelEnv``."""

    def __init__(
        self,
        factories: list[Callable[..., Any]],
        kwargs: list[dict[str, Any]],
        start_method: str | None,
        shutdown_timeout: float,
        spin_wait: float = 0.0,
    ) -> None:
        self.start_method = resolve_start_method(start_method)
        self.ctx = mp.get_context(self.start_method)
        if self.start_method == "forkserver":
            _preload_in_forkserver(self.ctx)
        self.factories = factories
        self.kwargs = kwargs
        self.num_workers = len(factories)
        self.shutdown_timeout = shutdown_timeout
        self.spin_wait = spin_wait  # seconds a wait may poll before it sleeps (signals.Spinner)
        self._spinner = sig.Spinner(spin_wait)
        if self.start_method != "fork":
            for i, (fn, kw) in enumerate(zip(factories, kwargs)):
                _check_picklable(f"create_env_fn (worker {i})", fn, self.start_method)
                _check_picklable(f"create_env_kwargs (worker {i})", kw, self.start_method)
        if getattr(mp.current_process(), "_inheriting", False):
            raise HubError(
                "a ParallelEnv is being built while a worker process imports your main script: "
                f"workers started with {self.start_method!r} import it again, and it builds the "
                "env again at module level. Put the code that builds and runs envs under "
                '`if __name__ == "__main__":` (see docs/batching.md), or use '
                "start_method='fork' where the platform has it."
            )
        if mp.current_process().daemon:
            raise HubError(
                "ParallelEnv cannot start workers from a daemonic process (Python forbids "
                "daemonic processes to have children). Use SerialEnv inside that process, or make "
                "the outer process non-daemonic (ParallelEnv's own workers are)."
            )
        from hub.dispatch import backend_state

        self.backend_state = backend_state()
        self.owner_pid = os.getpid()
        self.buffers = SharedBuffers.create()
        self.procs: list[Any] = [None] * self.num_workers
        self.channels: list[sig.ParentChannel | None] = [None] * self.num_workers
        self.dead: dict[int, str] = {}
        self._fd_index: dict[int, int] = {}
        self._polls: list[Any] = [None] * self.num_workers
        # multiprocessing's own finalizer, not weakref.finalize: it also runs when the process
        # that owns the env is itself a multiprocessing child, *before* multiprocessing joins
        # that process's children at exit (which would otherwise wait for our workers forever)
        self._finalizer = util.Finalize(
            self,
            _shutdown,
            args=(self.procs, self.channels, self.buffers, self.owner_pid, shutdown_timeout),
            exitpriority=100,
        )
        track(self)

    # ---------------------------------------------------------------- starting
    def start(self, index: int) -> None:
        """Start (or restart) worker ``index``; its specs answer comes through :meth:`collect`."""
        parent, child = sig.channel_pair(self.ctx)
        close_fds = sig.parent_side_fds() if self.start_method == "fork" else []
        # no collection between the fork and the worker's gc.freeze (hub.batching.fork_safety)
        with no_collection() as collect:
            proc = self.ctx.Process(
                target=worker_main,
                args=(
                    index,
                    self.factories[index],
                    self.kwargs[index],
                    child,
                    self.buffers.handle(),
                    self.backend_state,
                    self.owner_pid,
                    close_fds,
                    self.spin_wait,
                    collect,
                ),
                name=f"hub-ParallelEnv-worker-{index}",
                daemon=False,  # workers may run batched envs of their own
            )
            try:
                proc.start()
            finally:
                child.close()
        self.procs[index] = proc
        self.channels[index] = parent
        self._fd_index[parent.ack_fd] = index
        poller = select.poll()  # kept: the hot path of collect waits on one worker at a time
        poller.register(parent.ack_fd, select.POLLIN)
        self._polls[index] = poller
        self.dead.pop(index, None)

    def stop(self, index: int) -> None:
        """Kill worker ``index`` at once (before a restart)."""
        proc, channel = self.procs[index], self.channels[index]
        if channel is not None:
            self._fd_index.pop(channel.ack_fd, None)
            channel.close()
            self.channels[index] = None
        if proc is not None:
            if proc.is_alive():
                proc.kill()
            proc.join(5)
            _release(proc)
            self.procs[index] = None

    # ---------------------------------------------------------------- talking
    def channel(self, index: int) -> sig.ParentChannel:
        channel = self.channels[index]
        if index in self.dead or channel is None:
            raise WorkerError(
                f"worker {index} of this ParallelEnv {self.dead.get(index, 'is stopped')} "
                "earlier; the env cannot continue. Build a new env, or pass restart_failed=True "
                "to rebuild failed workers automatically.",
                worker=index,
            )
        return channel

    def send(self, indices: Iterable[int], op: bytes, what: str) -> Pending:
        """Send a one-byte command to ``indices``; a worker found dead answers as dead."""
        pending = Pending(what, set())
        for i in indices:
            channel = self.channel(i)
            try:
                channel.send(op)
            except OSError:
                pending.answers[i] = self._death(i)
                continue
            pending.waiting.add(i)
        return pending

    def send_control(self, indices: Iterable[int], operation: str, payloads: Any) -> Pending:
        """Send a control command; ``payloads`` is one payload per index (a list) or a callable
        of the index."""
        pending = Pending(operation, set())
        for i in indices:
            payload = payloads(i) if callable(payloads) else payloads
            channel = self.channel(i)
            try:
                channel.send_control(operation, payload)
            except OSError:
                pending.answers[i] = self._death(i)
                continue
            pending.waiting.add(i)
        return pending

    def collect(self, pending: Pending, timeout: float | None) -> dict[int, Answer]:
        """Wait for every answer of ``pending`` (at most ``timeout`` seconds).

        Raises:
            WorkerTimeoutError: when ``timeout`` passes first; ``pending`` keeps what came, and a
                later call waits for the rest.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        spin = self.spin_wait > 0 and (timeout is None or timeout >= self.spin_wait)
        if len(pending.waiting) > 1 or (spin and pending.waiting):
            # wait first for the worker woken last (usually the last to finish): the parent
            # then wakes up once for all of them instead of once per worker that finishes
            last = max(pending.waiting)
            poller = self._polls[last]
            wait = LIVENESS_S if deadline is None else min(LIVENESS_S, timeout)
            ready = (spin and self._spinner.poll(poller)) or poller.poll(int(wait * 1000))
            if spin:
                self._spinner.done()
            if ready:
                pending.answers[last] = self._read_answer(last)
                pending.waiting.discard(last)
                for i in list(pending.waiting):  # usually answered by now
                    if self._polls[i].poll(0):
                        pending.answers[i] = self._read_answer(i)
                        pending.waiting.discard(i)
                if not pending.waiting:
                    return pending.answers
        waiter = sig.Waiter([self.channels[i].ack_fd for i in pending.waiting])
        while pending.waiting:
            wait = LIVENESS_S
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0))
            ready = waiter.wait(wait)
            for fd in ready:
                i = self._fd_index[fd]
                pending.answers[i] = self._read_answer(i)
                pending.waiting.discard(i)
            if ready:
                continue
            for i in list(pending.waiting):
                if not self.procs[i].is_alive():
                    pending.answers[i] = self._death(i)
                    pending.waiting.discard(i)
                    waiter.drop(self.channels[i].ack_fd)
            if pending.waiting and deadline is not None and time.monotonic() >= deadline:
                first = min(pending.waiting)
                raise WorkerTimeoutError(
                    f"{pending.what}: workers {sorted(pending.waiting)} did not answer within "
                    f"{timeout} s. Nothing is lost: fetch again to keep waiting (close() stops "
                    "the workers).",
                    worker=first,
                )
        return pending.answers

    def collect_some(self, pending: Pending, timeout: float | None) -> dict[int, Answer]:
        """Wait until at least one worker of ``pending`` answers (at most ``timeout`` seconds);
        return the answers that came (also moved into ``pending.answers``), in the order the
        workers were found ready.

        Raises:
            WorkerTimeoutError: when ``timeout`` passes first (``pending`` is unchanged).
        """
        new: dict[int, Answer] = {}

        def take(i: int) -> None:
            new[i] = pending.answers[i] = self._read_answer(i)
            pending.waiting.discard(i)

        for i in sorted(pending.waiting):
            if self._polls[i].poll(0):
                take(i)
        if new or not pending.waiting:
            return new
        fds = [self.channels[i].ack_fd for i in pending.waiting]
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.spin_wait > 0 and (timeout is None or timeout >= self.spin_wait):
            spun = self._spinner.poll(poller)
            self._spinner.done()
            if spun:
                for fd, _ in poller.poll(0):
                    take(self._fd_index[fd])
                if new:
                    return new
        while True:
            wait = LIVENESS_S
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0))
            for fd, _ in poller.poll(int(wait * 1000)):
                take(self._fd_index[fd])
            if new:
                return new
            for i in list(pending.waiting):
                if not self.procs[i].is_alive():
                    new[i] = pending.answers[i] = self._death(i)
                    pending.waiting.discard(i)
            if new:
                return new
            if deadline is not None and time.monotonic() >= deadline:
                raise WorkerTimeoutError(
                    f"{pending.what}: none of the workers {sorted(pending.waiting)} answered "
                    f"within {timeout} s. Nothing is lost: fetch again to keep waiting "
                    "(close() stops the workers).",
                    worker=min(pending.waiting),
                )

    def _read_answer(self, index: int) -> Answer:
        channel = self.channels[index]
        try:
            status = channel.read_status()
            if status in (sig.VALUE, sig.ERROR):
                return Answer(status, channel.read_payload())
            if status == sig.WITH_ENTRIES:  # the step's status, with its non-tensor entries
                status, entries = channel.read_payload()
                return Answer(status, entries)
        except (OSError, EOFError):
            status = b""
        if status == b"":
            return self._death(index)
        return Answer(status)

    def _death(self, index: int) -> Answer:
        proc = self.procs[index]
        if proc is not None:
            proc.join(2.0)
            code = proc.exitcode
        else:
            code = None
        self.dead[index] = describe_exit(code)
        return Answer(b"", exitcode=code)

    def kill_hung(self, index: int, why: str) -> Answer:
        """Kill worker ``index``, which did not answer in time; its answer is its death."""
        proc = self.procs[index]
        if proc is not None and proc.is_alive():
            proc.kill()
        answer = self._death(index)
        self.dead[index] = why
        return answer

    def resync(self, indices: Iterable[int], timeout: float | None) -> dict[int, Answer]:
        """Bring the pipes of ``indices`` back in step after an interrupted call: each worker
        gets a ping with a fresh token, and everything it answered before (stale answers,
        half-read payloads) is read and dropped up to the ping's answer.

        Returns the workers that died (their death) or did not answer within ``timeout``
        (status ``b"?"``); the others are ready for a new command.
        """
        failed: dict[int, Answer] = {}
        expected: dict[int, bytes] = {}
        for i in indices:
            if i in self.dead or self.channels[i] is None:
                continue
            token = os.urandom(16)
            try:
                self.channels[i].send_control("ping", token)
            except OSError:
                failed[i] = self._death(i)
                continue
            expected[i] = sig.ping_answer(token)
        deadline = None if timeout is None else time.monotonic() + timeout
        for i, suffix in expected.items():
            channel = self.channels[i]
            seen = b""
            while not seen.endswith(suffix):
                wait = LIVENESS_S
                if deadline is not None:
                    wait = min(wait, max(deadline - time.monotonic(), 0.0))
                if sig.wait_for([channel.ack_fd], wait):
                    chunk = channel.read_raw()
                    if not chunk:
                        failed[i] = self._death(i)
                        break
                    seen = (seen + chunk)[-len(suffix) - 65536 :]
                elif not self.procs[i].is_alive():
                    failed[i] = self._death(i)
                    break
                elif deadline is not None and time.monotonic() >= deadline:
                    failed[i] = Answer(b"?")
                    break
        return failed

    # ---------------------------------------------------------------- stopping
    @property
    def closed(self) -> bool:
        return not self._finalizer.still_active()

    def shutdown(self) -> None:
        """Stop every worker and release the pipes and the shared file (idempotent)."""
        self._finalizer()

    def alive_children(self) -> list[int]:
        """The pids of the worker processes still running."""
        return [p.pid for p in self.procs if p is not None and p.is_alive()]


def _shutdown(
    procs: list[Any],
    channels: list[sig.ParentChannel | None],
    buffers: SharedBuffers,
    owner_pid: int,
    timeout: float,
) -> None:
    """Stop the workers: CLOSE, then SIGTERM, then SIGKILL (only in the owner process)."""
    if os.getpid() != owner_pid:  # a forked copy of the env: the workers are not ours
        return
    for channel in channels:
        if channel is not None:
            try:
                channel.send(sig.CLOSE)
            except OSError:
                pass
    deadline = time.monotonic() + timeout
    listening = {ch.ack_fd: ch for ch in channels if ch is not None}
    while any(p is not None and p.is_alive() for p in procs):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sentinels = [p.sentinel for p in procs if p is not None and p.exitcode is None]
        if not sentinels:  # the last ones exited since is_alive(): nothing left to wait for
            break
        ready = set(sig.wait_for(list(listening) + sentinels, min(left, LIVENESS_S)))
        for fd in ready & set(listening):  # drain answers so that no worker blocks writing
            try:
                if not os.read(fd, 65536):
                    listening.pop(fd)
            except OSError:
                listening.pop(fd)
    for p in procs:
        if p is not None and p.is_alive():
            p.terminate()
    for i, p in enumerate(procs):
        if p is not None:
            p.join(1.0)
            if p.is_alive():
                p.kill()
                p.join(1.0)
            _release(p)
            procs[i] = None
    for i, channel in enumerate(channels):
        if channel is not None:
            channel.close()
            channels[i] = None
    buffers.close()


def _release(proc: Any) -> None:
    """Close a stopped process's sentinel pipe now rather than when it is garbage-collected."""
    try:
        proc.close()
    except ValueError:  # still running after SIGKILL and 1 s: leave it to the collector
        pass
