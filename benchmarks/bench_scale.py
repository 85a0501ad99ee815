"""Batching at scale: hub's batching strategies against the peers at W = 8, 64 and 256 envs.

CartPole-v1 and Pong-v5 on all the CPUs this process may use. Every case (one row, one env, one
width) runs in a fresh process; a round runs every case, and odd rounds run them in the reverse
order. Each case steps random actions from a bank drawn up front (numpy, seed 0, the same values
for every row), with finished episodes reset inside the loop, and reports:

* ``env_steps_per_s``: env-steps over the timed loop (after a warm-up) per wall second;
* ``cpu_us_per_env_step``: CPU time of the whole process tree (``/proc``: the process, its
  threads, its worker processes) over the timed loop, per env-step;
* ``start_s``: construction to the end of the first reset (imports and hub's plugin discovery
  happen before the clock starts);
* ``peak_rss_mb``: the sum over the process tree of each process's peak RSS (``VmHWM``) at the
  end of the timed loop, and ``pss_mb``: the tree's proportional set size then (pages shared
  between processes, such as those a ``fork`` shares, counted once in all);
* ``close_s``: the time ``close()`` takes.

The summary gives per case the median and range over rounds, and paired ratios (each round's
rate over the reference's rate of the same round; median and range): every row against raw
gymnasium ``SyncVectorEnv`` of the same width (``vs_sync``), hub over EnvPool and EnvPool's async
mode against raw EnvPool (``vs_envpool``), hub's ``ParallelEnv`` rows against the minimal
vectorizer (``vs_minimal``, :mod:`minimal_vec`) and against gymnasium ``AsyncVectorEnv``
(``vs_async``).

Rows (``--rows``; a row that cannot run a case is listed under ``skipped`` with the reason):

* ``hub-serial``, ``hub-parallel`` (defaults: one worker per usable CPU, ``W / workers`` envs
  each), ``hub-parallel-wN`` (``num_workers=N``), ``hub-parallel-eK`` (``envs_per_worker=K``;
  ``hub-parallel-e1``, one process per env, runs at W <= 8 only), ``hub-native`` (hub over
  gymnasium's vector env; CartPole), ``hub-envpool`` (``envpool:<task>``); first-ready async
  batches with ``batch_size = W / 2``: ``hub-envpool-async`` and ``hub-parallel-async`` (the
  latter only when ``hub.ParallelEnv`` takes ``batch_size``). hub's loop is
  ``step_and_maybe_reset`` (async: ``step_send`` / ``step_fetch``) with the action in hub's
  default encoding (one-hot for these envs).
* peers: ``gym-sync`` / ``gym-async`` (gymnasium 1.x ``SyncVectorEnv`` / ``AsyncVectorEnv`` with
  ``shared_memory=True``, next-step autoreset, ``step`` only), ``sb3`` (SB3 ``SubprocVecEnv``,
  its default start method; W <= 64: one ``forkserver`` process per env, each importing torch),
  ``torchrl`` (TorchRL ``ParallelEnv`` of one worker per usable CPU, each a ``GymWrapper`` over a
  gymnasium ``SyncVectorEnv`` of its share; ``torchrl-e1``: one env per process, W <= 8),
  ``envpool`` / ``envpool-async`` (raw EnvPool, as many threads as hub gives it: one per usable
  CPU; async with ``batch_size = W / 2``, ``send`` / ``recv`` with ``env_id``), ``pufferlib``
  (PufferLib 1.0.1's ``vector.Multiprocessing`` with its defaults, one worker per usable CPU:
  the newest PufferLib that builds here; 2.x and 3.0 download sources while building), and
  ``minimal`` (:mod:`minimal_vec`: one worker per usable CPU, numpy arrays in shared memory,
  semaphores, or busy-waiting with ``--spin``).

The env: hub's rows use ``gymnasium:CartPole-v1`` and ``envpool:Pong-v5`` (EnvPool's Atari
defaults: 84x84 grey, 4 stacked frames, frame skip 4, up to 30 no-op starts). The gymnasium-based
peers use ``gymnasium.make("CartPole-v1")`` and, for Pong (``--pong-peer``), either ``envpool``
(default: a gymnasium ``Env`` over one EnvPool env, the same emulator and preprocessing as hub's
rows) or ``ale`` (ale-py's ``ALE/Pong-v5`` with gymnasium's ``AtariPreprocessing`` and 4 stacked
frames; needs OpenCV, which the peer venv has). Pong at W=16 is an extra case for the async rows
against raw EnvPool in sync mode.

Torch runs on one thread in every case that imports it. TorchRL runs in the peer venv
(``--torchrl-python``; ``benchmarks/setup_peer_venv.sh``), as do the gymnasium-based Pong peers
with ``--pong-peer ale``; PufferLib in a venv of its own (``--pufferlib-python``;
``benchmarks/setup_pufferlib_venv.sh``: it pins numpy 1.23.3 and gymnasium 0.29.1); the rest
runs in this interpreter. Rows whose venv is not given are skipped.

Run:

    nice -n 0 .venv/bin/python benchmarks/bench_scale.py --rounds 3 \\
        --torchrl-python .bench-venv/bin/python --pufferlib-python .puffer-venv/bin/python
    .venv/bin/python benchmarks/bench_scale.py --quick        # CartPole, W=64, 5 rows, 1 round
    .venv/bin/python benchmarks/bench_scale.py --table benchmarks/results/scale.json

Writes ``benchmarks/results/scale.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))  # minimal_vec, in the fresh processes too

ROWS = (
    "gym-sync",
    "gym-async",
    "minimal",
    "hub-serial",
    "hub-parallel",
    "hub-parallel-e1",
    "hub-native",
    "hub-parallel-async",
    "envpool",
    "hub-envpool",
    "envpool-async",
    "hub-envpool-async",
    "sb3",
    "torchrl",
    "torchrl-e1",
    "pufferlib",
)
PEER_VENV_ROWS = ("torchrl", "torchrl-e1", "pufferlib")  # never in hub's venv
GYM_BASED_ROWS = ("gym-sync", "gym-async", "minimal", "sb3", *PEER_VENV_ROWS)
HUB_IDS = {"cartpole": "gymnasium:CartPole-v1", "pong": "envpool:Pong-v5"}
ENVPOOL_TASKS = {"cartpole": "CartPole-v1", "pong": "Pong-v5"}
ASYNC_CASE = ("pong", 16, ("envpool", "envpool-async", "hub-envpool", "hub-envpool-async"))
# Pong at W=256 builds 256 emulators per case (0.05-0.3 s each): the main rows only by default
PONG_256_ROWS = ("gym-sync", "gym-async", "minimal", "hub-serial", "hub-parallel", "envpool")
PONG_256_ROWS += ("hub-envpool",)
QUICK = {
    "envs": "cartpole",
    "widths": "64",
    "rows": "hub-serial,hub-parallel,hub-native,gym-sync,minimal",
    "rounds": 1,
    "seconds": 2.0,
    "warmup": 0.3,
}
BANK = 64  # batches of random actions, cycled


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# ---------------------------------------------------------------------------- the envs


class EnvPoolSingle:
    """One EnvPool env (``num_envs=1``, one thread) with the gymnasium ``Env`` API."""

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


def make_gym_env(env_name: str, pong_peer: str = "envpool") -> Any:
    """The gymnasium env the peers step (see the module's docstring)."""
    import gymnasium

    if env_name == "cartpole":
        return gymnasium.make("CartPole-v1")
    if pong_peer == "ale":
        import ale_py

        gymnasium.register_envs(ale_py)
        env = gymnasium.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0)
        env = gymnasium.wrappers.AtariPreprocessing(env, noop_max=30, frame_skip=4)
        return gymnasium.wrappers.FrameStackObservation(env, 4)

    class Adapter(EnvPoolSingle, gymnasium.Env):
        pass

    return Adapter()


# ---------------------------------------------------------------------------- the process tree


def _tree_pids() -> list[int]:
    """This process and all its descendants (Linux ``/proc``)."""
    pids, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return pids


def tree_cpu() -> float | None:
    """CPU seconds used so far by this process tree (its threads included)."""
    if not os.path.isdir("/proc/self/task"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in _tree_pids():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


def tree_memory() -> dict[str, float | int | None]:
    """The tree's summed peak RSS (``VmHWM``), RSS and PSS in MB, and its process count."""
    if not os.path.isdir("/proc/self"):
        return {"peak_rss_mb": None, "rss_mb": None, "pss_mb": None, "processes": None}
    hwm = rss = pss = 0
    pids = _tree_pids()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm += int(line.split()[1])
                    elif line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return {
        "peak_rss_mb": hwm / 1024,
        "rss_mb": rss / 1024,
        "pss_mb": pss / 1024,
        "processes": len(pids),
    }


# ---------------------------------------------------------------------------- one case


class Skip(Exception):
    """The row cannot run this case here (the message says why)."""


def action_bank(n_actions: int, width: int, seed: int = 0) -> Any:
    """``BANK`` batches of ``width`` random discrete actions (numpy, int64)."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n_actions, size=(BANK, width))


def _hub_actions(env: Any, bank: Any, shape: tuple[int, ...] | None = None) -> list[Any]:
    """The bank in the encoding ``env.action_spec`` expects (one-hot or integer)."""
    import torch

    import hub

    spec = env.action_spec
    index = torch.from_numpy(bank)
    if isinstance(spec, hub.specs.OneHot):
        eye = torch.eye(int(spec.shape[-1]), dtype=spec.dtype)
        out = eye[index]
        return list(out if shape is None else out.reshape(BANK, *shape, -1))
    out = index.to(spec.dtype)
    return list(out.reshape(BANK, *(shape or spec.shape)))


def _hub_make(row: str, env_name: str, width: int) -> tuple[Any, bool]:
    """The hub env of a hub row, and whether it is a first-ready async one."""
    import hub

    uri = HUB_IDS[env_name]
    if row == "hub-serial":
        return hub.make_env(uri, num_envs=width, batching="serial", seed=0), False
    if row == "hub-native":
        if env_name != "cartpole":
            raise Skip("hub's native batching of Pong is the hub-envpool row")
        return hub.make_env(uri, num_envs=width, batching="native", seed=0), False
    if row == "hub-envpool":
        uri = f"envpool:{ENVPOOL_TASKS[env_name]}"
        return hub.make_env(uri, num_envs=width, seed=0), False
    if row == "hub-envpool-async":
        uri = f"envpool:{ENVPOOL_TASKS[env_name]}"
        return hub.make_env(uri, num_envs=width, batch_size=width // 2, seed=0), True
    if row == "hub-parallel-async":
        params = inspect.signature(hub.ParallelEnv.__init__).parameters
        if "batch_size" not in params:
            raise Skip("not available in this hub: hub.ParallelEnv takes no batch_size")
        env = hub.make_env(uri, num_envs=width, batching="parallel", batch_size=width // 2, seed=0)
        return env, True
    layout = parallel_layout(row)
    return hub.make_env(uri, num_envs=width, batching="parallel", seed=0, **layout), False


def parallel_layout(row: str) -> dict[str, int]:
    """``hub-parallel`` -> ``{}``, ``hub-parallel-w4`` -> ``{"num_workers": 4}``,
    ``hub-parallel-e1`` -> ``{"envs_per_worker": 1}``."""
    if row == "hub-parallel":
        return {}
    match = re.fullmatch(r"hub-parallel-([we])(\d+)", row)
    if match is None:
        raise ValueError(f"unknown row {row!r}; rows are {', '.join(ROWS)}, hub-parallel-wN")
    name = "num_workers" if match[1] == "w" else "envs_per_worker"
    return {name: int(match[2])}


def case_hub(row: str, env_name: str, width: int) -> dict[str, Any]:
    import torch

    import hub
    import hub.batching  # hub imports lazily: what a user's script has imported, untimed

    torch.set_num_threads(1)
    importlib.import_module("envpool" if "envpool" in row or env_name == "pong" else "gymnasium")
    namespace = "envpool" if "envpool" in row else HUB_IDS[env_name].split(":")[0]
    hub.list_envs(namespace)  # plugin discovery, untimed
    t0 = time.perf_counter()
    env, is_async = _hub_make(row, env_name, width)
    state = {"td": env.reset()}
    start_s = time.perf_counter() - t0
    key = env.action_key
    rows = int(env.batch_size[0])
    bank = action_bank(int(env.action_spec.shape[-1]), rows)
    actions = _hub_actions(env, bank, tuple(env.batch_size))
    if is_async:

        def step(i: int) -> None:
            td = state["td"]
            td.set(key, actions[i])
            env.step_send(td)
            state["td"] = env.step_fetch()

    else:

        def step(i: int) -> None:
            td = state["td"]
            td.set(key, actions[i])
            state["td"] = env.step_and_maybe_reset(td)[1]

    info: dict[str, Any] = {"start_s": start_s, "rows_per_step": rows}
    if isinstance(env, hub.ParallelEnv):
        info["layout"] = {"num_workers": env.num_workers, "envs_per_worker": env.envs_per_worker}
        info["start_method"] = env.start_method
    return info, step, env.close


def case_gym(row: str, env_name: str, width: int, pong_peer: str) -> tuple:
    import gymnasium

    factory = functools.partial(make_gym_env, env_name, pong_peer)
    t0 = time.perf_counter()
    if row == "gym-sync":
        envs = gymnasium.vector.SyncVectorEnv([factory] * width)
    else:
        envs = gymnasium.vector.AsyncVectorEnv([factory] * width, shared_memory=True)
    envs.reset(seed=0)
    start_s = time.perf_counter() - t0
    bank = action_bank(int(envs.single_action_space.n), width)
    return {"start_s": start_s, "rows_per_step": width}, lambda i: envs.step(bank[i]), envs.close


def case_minimal(env_name: str, width: int, pong_peer: str, spin: bool) -> tuple:
    from minimal_vec import MinimalVec

    factory = functools.partial(make_gym_env, env_name, pong_peer)
    t0 = time.perf_counter()
    vec = MinimalVec(factory, width, num_workers=usable_cpus(), spin=spin)
    vec.reset(seed=0)
    start_s = time.perf_counter() - t0
    n = 2 if env_name == "cartpole" else 6
    bank = action_bank(n, width)
    info = {"start_s": start_s, "rows_per_step": width, "wait": "spin" if spin else "semaphore"}
    info["layout"] = {"num_workers": vec.num_workers}
    return info, lambda i: vec.step(bank[i]), vec.close


def case_sb3(env_name: str, width: int, pong_peer: str) -> tuple:
    import torch
    from stable_baselines3.common.vec_env import SubprocVecEnv

    torch.set_num_threads(1)
    if width > 64:
        raise Skip("one forkserver process per env, each importing torch: start-up of minutes")
    factory = functools.partial(make_gym_env, env_name, pong_peer)
    t0 = time.perf_counter()
    envs = SubprocVecEnv([factory] * width)
    envs.seed(0)
    envs.reset()
    start_s = time.perf_counter() - t0
    bank = action_bank(int(envs.action_space.n), width)

    def step(i: int) -> None:
        envs.step(bank[i])

    info = {"start_s": start_s, "rows_per_step": width, "start_method": "SB3 default"}
    return info, step, envs.close


def _torchrl_batch(env_name: str, pong_peer: str, k: int) -> Any:
    """TorchRL's env of one worker: a GymWrapper over a SyncVectorEnv of ``k`` envs (or one
    env)."""
    import gymnasium
    from torchrl.envs import GymWrapper

    factory = functools.partial(make_gym_env, env_name, pong_peer)
    if k == 0:
        return GymWrapper(factory())
    disabled = gymnasium.vector.AutoresetMode.DISABLED  # TorchRL resets the ended envs itself
    return GymWrapper(gymnasium.vector.SyncVectorEnv([factory] * k, autoreset_mode=disabled))


def case_torchrl(row: str, env_name: str, width: int, pong_peer: str) -> tuple:
    import torch
    from torchrl.envs import ParallelEnv

    torch.set_num_threads(1)
    if row == "torchrl-e1":
        if width > 8:
            raise Skip("one process per env: W <= 8 only")
        workers, per = width, 0
    else:
        workers = min(usable_cpus(), width)
        if width % workers:
            raise Skip(f"W={width} does not split evenly over {workers} workers")
        per = width // workers
    t0 = time.perf_counter()
    env = ParallelEnv(workers, functools.partial(_torchrl_batch, env_name, pong_peer, per))
    state = {"td": env.reset()}
    start_s = time.perf_counter() - t0
    spec = env.action_spec
    n = int(spec.shape[-1])
    bank = torch.from_numpy(action_bank(n, width))
    shape = tuple(env.batch_size)
    if type(spec).__name__ == "OneHot":
        actions = list(torch.eye(n, dtype=spec.dtype)[bank].reshape(BANK, *shape, n))
    else:
        actions = list(bank.to(spec.dtype).reshape(BANK, *spec.shape))

    def step(i: int) -> None:
        td = state["td"]
        td.set("action", actions[i])
        state["td"] = env.step_and_maybe_reset(td)[1]

    info = {"start_s": start_s, "rows_per_step": width}
    info["layout"] = {"num_workers": workers, "envs_per_worker": max(per, 1)}
    return info, step, env.close


def case_envpool(row: str, env_name: str, width: int) -> tuple:
    import envpool

    is_async = row == "envpool-async"
    batch = width // 2 if is_async else width
    threads = max(1, min(batch, usable_cpus()))  # what hub gives a pool (hub_envpool.threads)
    t0 = time.perf_counter()
    env = envpool.make_gymnasium(
        ENVPOOL_TASKS[env_name], num_envs=width, batch_size=batch, num_threads=threads, seed=0
    )
    if is_async:
        env.async_reset()
        state = {"ids": env.recv()[4]["env_id"]}
    else:
        env.reset()
    start_s = time.perf_counter() - t0
    bank = action_bank(int(env.action_space.n), batch)
    if is_async:

        def step(i: int) -> None:
            env.send(bank[i], state["ids"])
            state["ids"] = env.recv()[4]["env_id"]

    else:

        def step(i: int) -> None:
            env.step(bank[i])

    info = {"start_s": start_s, "rows_per_step": batch, "num_threads": threads}
    return info, step, env.close


def case_pufferlib(env_name: str, width: int, pong_peer: str) -> tuple:
    try:
        import pufferlib.emulation
        import pufferlib.vector
    except ImportError as err:
        raise Skip(f"PufferLib does not import here: {err}") from None
    workers = min(usable_cpus(), width)
    creator = functools.partial(
        pufferlib.emulation.GymnasiumPufferEnv,
        env_creator=functools.partial(make_gym_env, env_name, pong_peer),
    )
    t0 = time.perf_counter()
    vec = pufferlib.vector.make(
        creator, backend=pufferlib.vector.Multiprocessing, num_envs=width, num_workers=workers
    )
    vec.reset(seed=0)
    start_s = time.perf_counter() - t0
    bank = action_bank(int(vec.single_action_space.n), width)
    info = {"start_s": start_s, "rows_per_step": width, "version": pufferlib.__version__}
    info["layout"] = {"num_workers": workers}
    return info, lambda i: vec.step(bank[i]), vec.close


def build_case(row: str, env_name: str, width: int, pong_peer: str, spin: bool) -> tuple:
    """``(info, step, close)`` of one case; ``step(i)`` steps the batch with bank entry ``i``."""
    if row.startswith("hub-"):
        return case_hub(row, env_name, width)
    if row in ("gym-sync", "gym-async"):
        return case_gym(row, env_name, width, pong_peer)
    if row == "minimal":
        return case_minimal(env_name, width, pong_peer, spin)
    if row == "sb3":
        return case_sb3(env_name, width, pong_peer)
    if row.startswith("torchrl"):
        return case_torchrl(row, env_name, width, pong_peer)
    if row.startswith("envpool"):
        return case_envpool(row, env_name, width)
    if row == "pufferlib":
        return case_pufferlib(env_name, width, pong_peer)
    raise ValueError(f"unknown row {row!r}; rows are {', '.join(ROWS)}, hub-parallel-wN")


def timed_loop(step: Callable[[int], Any], seconds: float, warmup: float) -> dict[str, Any]:
    """Warm up, then step for ``seconds`` (at least 5 batch steps); steps, time and CPU."""
    i = 0
    end = time.perf_counter() + warmup
    while i < 3 or time.perf_counter() < end:
        step(i % BANK)
        i += 1
    n = 0
    cpu = tree_cpu()
    start = time.perf_counter()
    while True:
        step((i + n) % BANK)
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and n >= 5:
            used = tree_cpu()
            return {
                "batch_steps": n,
                "seconds": elapsed,
                "cpu_s": None if cpu is None else used - cpu,
            }


def _versions(names: tuple[str, ...]) -> dict[str, str | None]:
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


ROW_PACKAGES = {
    "hub": ("hub", "torch", "tensordict", "gymnasium", "envpool", "numpy"),
    "gym": ("gymnasium", "numpy", "envpool", "ale-py", "opencv-python-headless"),
    "sb3": ("stable-baselines3", "torch", "gymnasium"),
    "torchrl": ("torchrl", "tensordict", "torch", "gymnasium"),
    "envpool": ("envpool", "numpy"),
    "pufferlib": ("pufferlib", "numpy", "gymnasium"),
}


def run_case(row: str, env_name: str, width: int, args: argparse.Namespace) -> dict[str, Any]:
    """One case in this process: the result line."""
    out: dict[str, Any] = {"row": row, "env": env_name, "width": width}
    if env_name == "pong" and row in GYM_BASED_ROWS:
        out["pong_peer"] = args.pong_peer
    try:
        info, step, close = build_case(row, env_name, width, args.pong_peer, args.spin)
    except Skip as why:
        return {**out, "skipped": str(why)}
    loop = timed_loop(step, args.seconds, args.warmup)
    memory = tree_memory()
    t1 = time.perf_counter()
    close()
    close_s = time.perf_counter() - t1
    rows = info.pop("rows_per_step")
    env_steps = loop["batch_steps"] * rows
    cpu = loop.pop("cpu_s")
    kind = next((k for k in ROW_PACKAGES if row.startswith(k)), "gym")
    return {
        **out,
        **info,
        **loop,
        "rows_per_step": rows,
        "env_steps_per_s": env_steps / loop["seconds"],
        "cpu_us_per_env_step": None if cpu is None else cpu / env_steps * 1e6,
        **memory,
        "close_s": close_s,
        "versions": _versions(ROW_PACKAGES[kind]),
        "python": sys.executable,
    }


# ---------------------------------------------------------------------------- the driver


def plan(envs: list[str], widths: list[int], rows: list[str], async_case: bool) -> list[tuple]:
    """The cases of one round: ``(row, env, width)``, grouped by env and width."""
    cases = [(row, env, w) for env in envs for w in widths for row in rows]
    if async_case and ASYNC_CASE[0] in envs and ASYNC_CASE[1] not in widths:
        cases += [(row, ASYNC_CASE[0], ASYNC_CASE[1]) for row in rows if row in ASYNC_CASE[2]]
    return cases


def static_skip(row: str, env_name: str, width: int, args: argparse.Namespace) -> str | None:
    """Why a case is not run at all (no process is started for it), or ``None``."""
    if row in ("hub-parallel-e1", "torchrl-e1") and width > 8:
        return "one process per env: W <= 8 only"
    if row == "hub-native" and env_name != "cartpole":
        return "hub's native batching of Pong is the hub-envpool row"
    if row == "sb3" and width > 64:
        return "one forkserver process per env, each importing torch: start-up of minutes"
    if (env_name, width) == ("pong", 256) and row not in PONG_256_ROWS and not args.all_pong_256:
        return "Pong at W=256 runs the main rows only (--all-pong-256 runs every row)"
    if row.startswith("torchrl") and not args.torchrl_python:
        return "runs in the peer venv: pass --torchrl-python"
    if row == "pufferlib" and not args.pufferlib_python:
        return "runs in its own venv (benchmarks/setup_pufferlib_venv.sh): pass --pufferlib-python"
    return None


def python_for(row: str, env_name: str, args: argparse.Namespace) -> str:
    """The interpreter of a case: the peer venv's for its rows, this one for the rest."""
    if row == "pufferlib":
        return args.pufferlib_python
    if row in PEER_VENV_ROWS:
        return args.torchrl_python
    if env_name == "pong" and args.pong_peer == "ale" and row in GYM_BASED_ROWS:
        return args.torchrl_python or sys.executable
    return sys.executable


def spawn_case(row: str, env_name: str, width: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run one case in a fresh process; its result line (or its error)."""
    cmd = [python_for(row, env_name, args), str(HERE), "--one", f"{row}:{env_name}:{width}"]
    cmd += ["--seconds", str(args.seconds), "--warmup", str(args.warmup)]
    cmd += ["--pong-peer", args.pong_peer] + (["--spin"] if args.spin else [])
    load = os.getloadavg()[0]
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.case_timeout)
    except subprocess.TimeoutExpired:
        return {"row": row, "env": env_name, "width": width, "error": "timed out"}
    wall = time.perf_counter() - t
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-3:]
        out = {"row": row, "env": env_name, "width": width}
        return {**out, "error": f"exit {proc.returncode}: " + " | ".join(tail)}
    return {**json.loads(lines[-1]), "load_before": load, "process_wall_s": wall}


REFERENCES = {  # ratio name -> (the rows it applies to, the reference row)
    "vs_sync": (lambda r: r != "gym-sync", "gym-sync"),
    "vs_envpool": (lambda r: r in ("hub-envpool", "hub-envpool-async", "envpool-async"), "envpool"),
    "vs_envpool_async": (lambda r: r == "hub-envpool-async", "envpool-async"),
    "vs_minimal": (lambda r: r.startswith("hub-parallel"), "minimal"),
    "vs_async": (lambda r: r.startswith("hub-parallel"), "gym-async"),
}
FIELDS = (
    "env_steps_per_s",
    "cpu_us_per_env_step",
    "start_s",
    "peak_rss_mb",
    "pss_mb",
    "processes",
    "close_s",
)


def _case_order(item: tuple) -> tuple:
    (env_name, width, row), _ = item
    rank = ROWS.index(row) if row in ROWS else ROWS.index("hub-parallel") + 0.5
    return (env_name, width, rank, row)


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per case: medians and ranges over rounds, and the paired ratios (see the module)."""
    by_case: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for run in runs:
        by_case.setdefault((run["env"], run["width"], run["row"]), []).append(run)
    rate = {
        (r["env"], r["width"], r["row"], r["round"]): r["env_steps_per_s"]
        for r in runs
        if "env_steps_per_s" in r
    }
    rows = []
    for (env_name, width, row), items in sorted(by_case.items(), key=_case_order):
        entry: dict[str, Any] = {"env": env_name, "width": width, "row": row}
        ok = [i for i in items if "env_steps_per_s" in i]
        entry["rounds"] = len(ok)
        skips = {i["skipped"] for i in items if "skipped" in i}
        errors = [i["error"] for i in items if "error" in i]
        if skips:
            entry["skipped"] = sorted(skips)[0]
        if errors:
            entry["errors"] = errors
        for field in FIELDS:
            values = [i[field] for i in ok if i.get(field) is not None]
            if values:
                entry[field] = statistics.median(values)
                entry[field + "_range"] = [min(values), max(values)]
        for name, (applies, ref) in REFERENCES.items():
            if not applies(row):
                continue
            pairs = [
                i["env_steps_per_s"] / rate[(env_name, width, ref, i["round"])]
                for i in ok
                if rate.get((env_name, width, ref, i["round"]))
            ]
            if pairs:
                entry[name] = statistics.median(pairs)
                entry[name + "_range"] = [min(pairs), max(pairs)]
        for key in ("layout", "wait", "pong_peer", "start_method", "num_threads", "version"):
            if ok and key in ok[0]:
                entry[key] = ok[0][key]
        rows.append(entry)
    return rows


def machine_info() -> dict[str, Any]:
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), None
            )
    except OSError:
        pass
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return {
        "cpus": os.cpu_count(),
        "usable_cpus": usable_cpus(),
        "cpu_model": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "uptime": uptime,
        "loadavg": os.getloadavg(),
        "nice": os.nice(0),
    }


def _int_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--widths", default="8,64,256", help="comma-separated")
    parser.add_argument("--envs", default="cartpole,pong", help="cartpole, pong")
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated (see above)")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed loop per case")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds before the timing")
    parser.add_argument("--torchrl-python", default=None, help="the peer venv's python")
    parser.add_argument("--pufferlib-python", default=None, help="PufferLib's venv's python")
    parser.add_argument("--pong-peer", choices=("envpool", "ale"), default="envpool")
    parser.add_argument("--spin", action="store_true", help="the minimal row busy-waits")
    parser.add_argument("--no-async-case", action="store_true", help="no extra Pong W=16 case")
    parser.add_argument("--all-pong-256", action="store_true", help="every row at Pong W=256")
    parser.add_argument("--case-timeout", type=float, default=900.0)
    parser.add_argument("--quick", action="store_true", help="CartPole, W=64, 5 rows, 1 round")
    parser.add_argument("--out", default=str(HERE.parent / "results" / "scale.json"))
    parser.add_argument("--table", metavar="FILE", help="print a results file as Markdown")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # row:env:width, in this process
    args = parser.parse_args(argv)
    if args.quick:
        for name, value in QUICK.items():
            setattr(args, name, value)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.one:
        row, env_name, width = args.one.split(":")
        print(json.dumps(run_case(row, env_name, int(width), args)), flush=True)
        return 0
    if args.table:
        result = json.loads(Path(args.table).read_text())
        print(markdown({**result, "summary": summarize(result["runs"])}))
        return 0
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    for row in rows:
        if row not in ROWS:
            parallel_layout(row)  # raises for an unknown row
    envs = [e.strip() for e in args.envs.split(",") if e.strip()]
    cases = plan(envs, _int_list(args.widths), rows, not args.no_async_case)
    started = machine_info()
    print(f"# {len(cases)} cases x {args.rounds} rounds; {started['uptime']}", file=sys.stderr)
    runs = []
    for r in range(args.rounds):
        for row, env_name, width in cases if r % 2 == 0 else cases[::-1]:
            why = static_skip(row, env_name, width, args)
            if why is not None:
                res = {"row": row, "env": env_name, "width": width, "skipped": why}
            else:
                res = spawn_case(row, env_name, width, args)
            res["round"] = r
            runs.append(res)
            print(json.dumps(res), flush=True)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": started,
        "uptime_after": machine_info()["uptime"],
        "config": {k: v for k, v in vars(args).items() if k not in ("one", "table")},
        "versions": _versions(ROW_PACKAGES["hub"] + ("ale-py", "stable-baselines3")),
        "summary": summarize(runs),
        "runs": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(markdown(result))
    return 0


def _fmt(entry: dict[str, Any], field: str, spec: str) -> str:
    value = entry.get(field)
    if value is None:
        return ""
    text = format(value, spec)
    span = entry.get(field + "_range")
    if span and entry.get("rounds", 0) > 1 and field.startswith("vs_"):
        text += f" [{format(span[0], spec)}-{format(span[1], spec)}]"
    return text


def markdown(result: dict[str, Any]) -> str:
    """The summary as one Markdown table per env and width."""
    lines = []
    summary = result["summary"]
    groups = sorted({(e["env"], e["width"]) for e in summary})
    for env_name, width in groups:
        lines += [
            f"**{env_name} W={width}** (median of rounds; ratios paired per round [min-max])",
            "",
            "| row | env-steps/s | CPU us/env-step | vs SyncVectorEnv | vs raw EnvPool "
            "| vs minimal | vs AsyncVectorEnv | start-up s | peak RSS MB (sum) | PSS MB | procs |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for e in summary:
            if (e["env"], e["width"]) != (env_name, width):
                continue
            if "env_steps_per_s" not in e:
                why = e.get("skipped") or (e.get("errors") or ["?"])[0][:120]
                lines.append(f"| {e['row']} | {'skipped' if 'skipped' in e else 'error'}: {why} |")
                continue
            cells = [
                _fmt(e, "env_steps_per_s", ",.0f"),
                _fmt(e, "cpu_us_per_env_step", ",.1f"),
                _fmt(e, "vs_sync", ".2f"),
                _fmt(e, "vs_envpool", ".2f")
                + (f" (async {e['vs_envpool_async']:.2f})" if "vs_envpool_async" in e else ""),
                _fmt(e, "vs_minimal", ".2f"),
                _fmt(e, "vs_async", ".2f"),
                _fmt(e, "start_s", ".2f"),
                _fmt(e, "peak_rss_mb", ",.0f"),
                _fmt(e, "pss_mb", ",.0f"),
                _fmt(e, "processes", ".0f"),
            ]
            lines.append(f"| {e['row']} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
