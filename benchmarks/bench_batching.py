"""Process-parallel batching: hub's ParallelEnv against gymnasium's AsyncVectorEnv and TorchRL's
ParallelEnv, on CartPole-v1 (cheap state) and Pong (84x84x4 uint8 frames, where shared memory
matters), with 2 and 8 workers.

Each case runs in a fresh process and reports: the time from construction to the end of the
first reset (``start_s``), env-steps per second over a timed loop of pre-drawn random actions
with resets inside the loop (hub and TorchRL: ``step_and_maybe_reset``; gymnasium: ``step`` with
its autoreset), the CPU time of the whole process tree per env-step over that loop (less
disturbed by other load than wall time), and the time ``close()`` takes (``close_s``). hub's
SerialEnv (``hub-serial``, one process) and hub's ParallelEnv with ``spawn`` (``hub-spawn``,
CartPole only) are measured too. Imports and hub's one-time plugin discovery happen before the
start-up clock starts, for every implementation. Rounds alternate the order of the
implementations; the summary gives medians over rounds. The machine is shared and noisy: compare
the figures of one run, not across runs.

Pong is EnvPool's ``Pong-v5`` with one env per worker (``num_envs=1``: EnvPool's defaults, frame
skip 4, 84x84x4 grey frames), behind a small gymnasium adapter for the peers; hub uses
``envpool:Pong-v5``. CartPole is ``gymnasium:CartPole-v1`` for hub and ``gymnasium.make`` for the
peers.

Run (TorchRL needs its own venv, see benchmarks/setup_peer_venv.sh; it is never a dependency of
hub):

    .venv/bin/python benchmarks/bench_batching.py --rounds 3 \
        --torchrl-python /tmp/benchvenv/bin/python

Writes ``benchmarks/results/batching.json`` (or ``--out``). ``--signals`` measures instead how
long the parent takes to wake 2 or 8 workers and hear back from all of them, through hub's
one-byte pipes (sleeping in ``poll`` at once, and polling first for ``ParallelEnv``'s default
``spin_wait``, 500 us, giving the core away between polls) and the alternatives (POSIX semaphores, duplex
``Connection`` objects, ``multiprocessing.Event``, spinning on a shared flag), with and without
50 us of work per worker (``benchmarks/results/batching_signals.json``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
IMPLS = ("hub", "gymnasium", "torchrl")

# ---------------------------------------------------------------------------- the envs


def make_gym_cartpole() -> Any:
    import gymnasium

    return gymnasium.make("CartPole-v1")


class EnvPoolSingle:
    """One EnvPool env (``num_envs=1``) with the plain gymnasium ``Env`` API."""

    def __init__(self, task: str = "Pong-v5") -> None:
        import envpool
        import gymnasium

        self._pool = envpool.make_gymnasium(task, num_envs=1, num_threads=1)
        space = self._pool.observation_space
        self.observation_space = gymnasium.spaces.Box(0, 255, space.shape, space.dtype)
        self.action_space = gymnasium.spaces.Discrete(int(self._pool.action_space.n))
        self.metadata: dict[str, Any] = {"render_modes": []}
        self.render_mode = None
        self.spec = None
        self.np_random = None

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict]:
        obs, _ = self._pool.reset()
        return obs[0], {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        import numpy as np

        obs, reward, term, trunc, _ = self._pool.step(np.asarray([action]))
        return obs[0], float(reward[0]), bool(term[0]), bool(trunc[0]), {}

    def close(self) -> None:
        self._pool.close()

    @property
    def unwrapped(self) -> EnvPoolSingle:
        return self


def make_gym_pong() -> Any:
    import gymnasium

    class Adapter(EnvPoolSingle, gymnasium.Env):
        pass

    return Adapter()


def make_torchrl_env(env: str) -> Any:
    from torchrl.envs import GymWrapper

    return GymWrapper(make_gym_cartpole() if env == "cartpole" else make_gym_pong())


HUB_IDS = {"cartpole": "gymnasium:CartPole-v1", "pong": "envpool:Pong-v5"}

# ---------------------------------------------------------------------------- one case


def _tree_cpu() -> float | None:
    """CPU seconds used so far by this process and all its descendants (Linux ``/proc``)."""
    if not os.path.isdir("/proc/self/task"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    todo = [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def _timed_loop(step, actions: list[Any], seconds: float, warmup: int) -> tuple[int, float]:
    """Run ``step(action)`` over the actions (cycling) for ``seconds``; return (steps, time)."""
    k = len(actions)
    for i in range(warmup):
        step(actions[i % k])
    n = 0
    cpu = _tree_cpu()
    start = time.perf_counter()
    while True:
        for _ in range(20):
            step(actions[n % k])
            n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            used = _tree_cpu()
            _LAST_CPU[0] = None if cpu is None or used is None else used - cpu
            return n, elapsed


_LAST_CPU: list[float | None] = [None]


def _result(start_s: float, steps: int, n: int, elapsed: float, close_s: float, how: str):
    cpu = _LAST_CPU[0]
    return {
        "start_s": start_s,
        "batch_steps": steps,
        "seconds": elapsed,
        "env_steps_per_s": steps * n / elapsed,
        "cpu_us_per_env_step": None if cpu is None else cpu / (steps * n) * 1e6,
        "close_s": close_s,
        "start_method": how,
    }


def run_hub(env_name: str, n: int, seconds: float, start_method: str | None) -> dict[str, Any]:
    import torch

    import hub
    import hub.batching  # (hub imports lazily: the peers' imports are untimed too)

    torch.set_num_threads(1)
    hub.list_envs(HUB_IDS[env_name].split(":")[0])  # plugin discovery: once per process, untimed
    t0 = time.perf_counter()
    if start_method == "serial":
        env = hub.make_env(HUB_IDS[env_name], num_envs=n, batching="serial")
    elif start_method is None:
        env = hub.make_env(HUB_IDS[env_name], num_envs=n, batching="parallel")
    else:
        factory = functools.partial(hub.make_env, HUB_IDS[env_name])
        env = hub.ParallelEnv(n, factory, start_method=start_method)
    state = {"td": env.reset()}
    start_s = time.perf_counter() - t0
    key = env.action_key
    actions = [env.full_action_spec.rand()[key] for _ in range(256)]

    def step(action: Any) -> None:
        td = state["td"]
        td.set(key, action)
        _, state["td"] = env.step_and_maybe_reset(td)

    steps, elapsed = _timed_loop(step, actions, seconds, warmup=50)
    how = getattr(env, "start_method", "in-process")
    t1 = time.perf_counter()
    env.close()
    return _result(start_s, steps, n, elapsed, time.perf_counter() - t1, how)


def run_gymnasium(env_name: str, n: int, seconds: float) -> dict[str, Any]:
    from gymnasium.vector import AsyncVectorEnv

    factory = make_gym_cartpole if env_name == "cartpole" else make_gym_pong
    t0 = time.perf_counter()
    envs = AsyncVectorEnv([factory] * n, shared_memory=True)
    envs.reset(seed=0)
    start_s = time.perf_counter() - t0
    envs.action_space.seed(0)
    actions = [envs.action_space.sample() for _ in range(256)]
    steps, elapsed = _timed_loop(envs.step, actions, seconds, warmup=50)
    t1 = time.perf_counter()
    envs.close()
    return _result(start_s, steps, n, elapsed, time.perf_counter() - t1, "fork (default)")


def run_torchrl(env_name: str, n: int, seconds: float) -> dict[str, Any]:
    import torch
    from torchrl.envs import ParallelEnv

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    env = ParallelEnv(n, functools.partial(make_torchrl_env, env_name))
    state = {"td": env.reset()}
    start_s = time.perf_counter() - t0
    actions = [env.action_spec.rand() for _ in range(256)]

    def step(action: Any) -> None:
        td = state["td"]
        td.set("action", action)
        _, state["td"] = env.step_and_maybe_reset(td)

    steps, elapsed = _timed_loop(step, actions, seconds, warmup=20)
    t1 = time.perf_counter()
    env.close()
    return _result(start_s, steps, n, elapsed, time.perf_counter() - t1, "torchrl default")


def run_case(impl: str, env_name: str, n: int, seconds: float) -> dict[str, Any]:
    if impl == "hub":
        out = run_hub(env_name, n, seconds, None)
    elif impl == "hub-spawn":
        out = run_hub(env_name, n, seconds, "spawn")
    elif impl == "hub-serial":
        out = run_hub(env_name, n, seconds, "serial")
    elif impl == "gymnasium":
        out = run_gymnasium(env_name, n, seconds)
    elif impl == "torchrl":
        out = run_torchrl(env_name, n, seconds)
    else:
        raise ValueError(f"unknown implementation {impl!r}")
    return {"impl": impl, "env": env_name, "num_workers": n, **out}


# ---------------------------------------------------------------------------- signalling


def _spin_seconds(kind: str) -> float:
    """How long a "pipe-spin" wait polls: ParallelEnv's default ``spin_wait``."""
    from hub.batching.parallel import SPIN_WAIT_S

    return SPIN_WAIT_S if kind == "pipe-spin" else 0.0


def _sig_worker(kind: str, a: Any, b: Any, work_us: float) -> None:
    """Answer each wake-up after ``work_us`` of busy work, until told to stop."""
    import select

    def work() -> None:
        end = time.perf_counter() + work_us * 1e-6
        while time.perf_counter() < end:
            pass

    if kind in ("pipe", "pipe-spin"):  # hub's: one byte each way over one-way pipes
        from hub.batching.signals import spin_poll

        spin = _spin_seconds(kind)
        poller = select.poll()
        poller.register(a.fileno(), select.POLLIN)
        while True:
            if not (spin and spin_poll(poller, spin)):
                poller.poll()
            if os.read(a.fileno(), 1) != b"s":
                return
            work()
            os.write(b.fileno(), b"k")
    elif kind == "connection":  # duplex multiprocessing.Connection (a socketpair)
        while a.recv_bytes() == b"s":
            work()
            a.send_bytes(b"k")
    elif kind == "semaphore":  # POSIX semaphores: one per worker to wake it, one shared back
        while True:
            a.acquire()
            if b[1].value:
                return
            work()
            b[0].release()
    elif kind == "event":  # multiprocessing.Event pairs
        while True:
            a.wait()
            a.clear()
            if b[1].value:
                return
            work()
            b[0].set()
    elif kind == "spin":  # a shared flag, spun on by both sides
        while True:
            while a[0] == 0:
                pass
            if a[0] == 2:
                return
            work()
            a[0] = 0


def signal_round_trip(kind: str, n: int, rounds: int, work_us: float) -> float:
    """Microseconds for the parent to wake ``n`` workers and wait for all of them."""
    import ctypes
    import multiprocessing as mp
    import select

    ctx = mp.get_context("fork")
    procs, wake, wait, stop = [], [], [], []
    stop_flag = ctx.Value("b", 0, lock=False)
    done = ctx.Semaphore(0)
    for _ in range(n):
        if kind in ("pipe", "pipe-spin"):
            cmd_r, cmd_w = ctx.Pipe(duplex=False)
            ack_r, ack_w = ctx.Pipe(duplex=False)
            args = (cmd_r, ack_w)
            wake.append(lambda c=cmd_w: os.write(c.fileno(), b"s"))
            wait.append(ack_r)
            stop.append(lambda c=cmd_w: os.write(c.fileno(), b"q"))
        elif kind == "connection":
            here, there = ctx.Pipe()
            args = (there, None)
            wake.append(lambda c=here: c.send_bytes(b"s"))
            wait.append(lambda c=here: c.recv_bytes())
            stop.append(lambda c=here: c.send_bytes(b"q"))
        elif kind == "semaphore":
            go = ctx.Semaphore(0)
            args = (go, (done, stop_flag))
            wake.append(go.release)
            wait.append(lambda: done.acquire(timeout=10))
            stop.append(go.release)
        elif kind == "event":
            go, back = ctx.Event(), ctx.Event()
            args = (go, (back, stop_flag))
            wake.append(go.set)
            wait.append(lambda e=back: (e.wait(10), e.clear()))
            stop.append(go.set)
        else:
            flag = ctx.Array(ctypes.c_int32, 1, lock=False)
            args = (flag, None)
            wake.append(lambda f=flag: f.__setitem__(0, 1))
            wait.append(lambda f=flag: [None for _ in iter(lambda: f[0], 0)])
            stop.append(lambda f=flag: f.__setitem__(0, 2))
        proc = ctx.Process(target=_sig_worker, args=(kind, *args, work_us), daemon=True)
        proc.start()
        procs.append(proc)
    if kind in ("pipe", "pipe-spin"):
        from hub.batching.signals import spin_poll

        fds = {conn.fileno(): conn for conn in wait}
        spin = _spin_seconds(kind)

        def wait_all() -> None:
            left = len(fds)
            poller = select.poll()
            for fd in fds:
                poller.register(fd, select.POLLIN)
            while left:
                if spin:
                    spin_poll(poller, spin)
                for fd, _ in poller.poll():
                    poller.unregister(fd)
                    os.read(fd, 1)
                    left -= 1
    else:

        def wait_all() -> None:
            for w in wait:
                w()

    def one() -> None:
        for w in wake:
            w()
        wait_all()

    for _ in range(min(100, rounds)):
        one()
    start = time.perf_counter()
    for _ in range(rounds):
        one()
    elapsed = time.perf_counter() - start
    stop_flag.value = 1
    for s in stop:
        s()
    for proc in procs:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
    return elapsed / rounds * 1e6


def run_signals(rounds: int) -> list[dict[str, Any]]:
    rows = []
    for work_us in (0.0, 50.0):
        for n in (2, 8):
            for kind in ("pipe", "pipe-spin", "semaphore", "connection", "event", "spin"):
                count = max(rounds // 20, 20) if kind == "spin" else rounds
                us = signal_round_trip(kind, n, count, work_us)
                row = {"kind": kind, "num_workers": n, "work_us": work_us, "round_trip_us": us}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


# ---------------------------------------------------------------------------- the driver


def _spawn_case(python: str, impl: str, env_name: str, n: int, seconds: float) -> dict[str, Any]:
    cmd = [python, str(HERE), "--one", f"{impl}:{env_name}:{n}", "--seconds", str(seconds)]
    load = os.getloadavg()[0]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:]
        return {"impl": impl, "env": env_name, "num_workers": n, "error": " | ".join(tail)}
    line = proc.stdout.strip().splitlines()[-1]
    return {**json.loads(line), "load_before": load, "process_wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", help="run one case impl:env:n in this process (internal)")
    parser.add_argument(
        "--signals", action="store_true", help="only measure parent-worker signalling round trips"
    )
    parser.add_argument("--table", help="print a results file (batching.json) as Markdown tables")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed loop length per case")
    parser.add_argument("--envs", default="cartpole,pong")
    parser.add_argument("--workers", default="2,8")
    parser.add_argument("--impls", default="hub,gymnasium,torchrl,hub-spawn,hub-serial")
    parser.add_argument("--torchrl-python", default=None, help="python of the peer venv")
    parser.add_argument("--out", default=str(HERE.parent / "results" / "batching.json"))
    args = parser.parse_args()
    if args.one:
        impl, env_name, n = args.one.split(":")
        print(json.dumps(run_case(impl, env_name, int(n), args.seconds)), flush=True)
        return
    if args.table:
        print(markdown(json.loads(Path(args.table).read_text())))
        return
    if args.signals:
        rows = run_signals(2000)
        out = Path(args.out).with_name("batching_signals.json")
        out.write_text(json.dumps({"load": os.getloadavg(), "rows": rows}, indent=1))
        return
    impls = args.impls.split(",")
    if "torchrl" in impls and not args.torchrl_python:
        impls.remove("torchrl")
        print("no --torchrl-python: TorchRL is left out", file=sys.stderr)
    runs = []
    for r in range(args.rounds):
        order = impls if r % 2 == 0 else impls[::-1]
        for env_name in args.envs.split(","):
            for n in map(int, args.workers.split(",")):
                for impl in order:
                    if impl == "hub-spawn" and env_name != "cartpole":
                        continue
                    python = args.torchrl_python if impl == "torchrl" else sys.executable
                    res = _spawn_case(python, impl, env_name, n, args.seconds)
                    res["round"] = r
                    runs.append(res)
                    print(json.dumps(res), flush=True)
    summary = summarize(runs)
    for row in summary:
        print(
            f"{row['env']:9s} n={row['num_workers']} {row['impl']:10s} "
            f"{row.get('env_steps_per_s', float('nan')):9.0f} env-steps/s  "
            f"cpu {row.get('cpu_us_per_env_step', float('nan')):7.0f} us/env-step  "
            f"start {row.get('start_s', float('nan')):6.2f} s  "
            f"close {row.get('close_s', float('nan')):5.2f} s"
        )
    out = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "seconds_per_case": args.seconds,
        "rounds": args.rounds,
        "summary": summary,
        "runs": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))


def markdown(results: dict[str, Any]) -> str:
    """The summary of a results file as one Markdown table per env."""
    names = {
        "hub": "hub ParallelEnv (fork)",
        "hub-spawn": "hub ParallelEnv (spawn)",
        "hub-serial": "hub SerialEnv (1 process)",
        "gymnasium": "gymnasium AsyncVectorEnv (shared_memory=True)",
        "torchrl": "TorchRL 0.14.1 ParallelEnv",
    }
    lines = []
    for env_name in ("cartpole", "pong"):
        rows = [r for r in results["summary"] if r["env"] == env_name]
        if not rows:
            continue
        title = "CartPole-v1" if env_name == "cartpole" else "Pong-v5 (EnvPool, 84x84x4 uint8)"
        lines += [
            f"**{title}** (median of {results['rounds']} rounds [min-max])",
            "",
            "| workers | implementation | env-steps/s | CPU us / env-step | start-up s | close s |",
            "|---|---|---|---|---|---|",
        ]
        order = list(names)
        rows.sort(key=lambda r: (r["num_workers"], order.index(r["impl"])))
        for r in rows:
            lo, hi = r["env_steps_per_s_range"]
            cpu = r.get("cpu_us_per_env_step")
            lines.append(
                f"| {r['num_workers']} | {names[r['impl']]} | {r['env_steps_per_s']:,.0f} "
                f"[{lo:,.0f}-{hi:,.0f}] | {'' if cpu is None else f'{cpu:,.0f}'} | "
                f"{r['start_s']:.2f} | {r['close_s']:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Medians (and min-max) over rounds, per (env, workers, implementation)."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for run in runs:
        if "error" in run:
            continue
        groups.setdefault((run["env"], run["num_workers"], run["impl"]), []).append(run)
    rows = []
    for (env_name, n, impl), items in sorted(groups.items()):
        row: dict[str, Any] = {"env": env_name, "num_workers": n, "impl": impl, "n": len(items)}
        for field in ("env_steps_per_s", "cpu_us_per_env_step", "start_s", "close_s"):
            values = [item[field] for item in items if item.get(field) is not None]
            if not values:
                continue
            row[field] = statistics.median(values)
            row[field + "_range"] = [min(values), max(values)]
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
