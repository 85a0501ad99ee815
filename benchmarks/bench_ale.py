"""Env-steps/s of hub's ``ale:`` envs against ale-py's own ``AtariVectorEnv``, with EnvPool's
figures beside, in one process, rounds interleaved.

Cases (W sub-envs of Pong with EnvPool's preprocessing: 4 stacked 84 x 84 grayscale frames,
frame skip 4, no reward clipping; the same pre-drawn random actions everywhere; every case on its
own env seeded alike; the same number of C++ threads everywhere, ``--threads``):

* ``raw_vector``: ``AtariVectorEnv.step(actions)`` (its next-step autoreset inside): the baseline;
* ``raw_ale``: its C++ ``send`` / ``recv`` without the Python method around them (what hub calls);
* ``runner``: :class:`hub_ale.AleRunner` alone: its step, then its masked reset of the sub-envs
  that ended (hub's semantics), on numpy arrays: the floor of hub's backend;
* ``hub_loop``: ``env.step_and_maybe_reset(td)`` on ``hub.make_env("ale:Pong-v5", num_envs=W)``;
* ``hub_rollout``: ``env.rollout(100, policy, break_when_any_done=False)`` calls;
* ``envpool_raw``: ``envpool.make("Pong-v5", num_envs=W).step(actions)`` (EnvPool's autoreset);
* ``envpool_hub_loop``: ``step_and_maybe_reset`` on ``hub.make_env("envpool:Pong-v5", ...)``.

The raw loops count their hidden reset steps (the step after an end, whose action is dropped) as
steps; hub's count only real transitions and reset the ended sub-envs with an extra call.

Usage:
    python benchmarks/bench_ale.py [--num-envs 8 16] [--steps 200] [--rounds 5]
        [--out benchmarks/results/ale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from typing import Any

import numpy as np
import torch

import hub

OPTIONS = {"reward_clipping": False, "max_num_frames_per_episode": 108000}


def actions(num_envs: int, steps: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 6, (steps, num_envs)).astype(np.int32)


def raw_vector_case(num_envs: int, threads: int, acts: np.ndarray, *, direct: bool) -> Any:
    from ale_py.vector_env import AtariVectorEnv

    vec = AtariVectorEnv("pong", num_envs, num_threads=threads, **OPTIONS)
    vec.reset(seed=0)
    paddle = np.ones(num_envs, np.float32)

    def run(steps: int) -> float:
        start = time.perf_counter()
        if direct:
            for t in range(steps):
                vec.ale.send(acts[t], paddle)
                vec.ale.recv()
        else:
            for t in range(steps):
                vec.step(acts[t].astype(np.int64))
        return time.perf_counter() - start

    return run


def runner_case(num_envs: int, threads: int, acts: np.ndarray) -> Any:
    from hub_ale.options import vector_env_kwargs
    from hub_ale.runner import AleRunner

    runner = AleRunner("pong", num_envs, {**vector_env_kwargs({}), "num_threads": threads})
    runner.seed(0)
    runner.reset(None)

    def run(steps: int) -> float:
        start = time.perf_counter()
        for t in range(steps):
            runner.step(acts[t])
            if runner.ended.any():
                runner.reset(runner.ended.copy())
        return time.perf_counter() - start

    return run


def hub_loop_case(uri: str, num_envs: int, threads: int, acts: np.ndarray) -> Any:
    env = hub.make_env(
        uri, num_envs=num_envs, categorical_action_encoding=True, num_threads=threads, seed=0
    )
    holder = {"td": env.reset()}
    torch_acts = torch.from_numpy(acts.astype(np.int64))

    def run(steps: int) -> float:
        td = holder["td"]
        start = time.perf_counter()
        for t in range(steps):
            td.set("action", torch_acts[t])
            _, td = env.step_and_maybe_reset(td)
        elapsed = time.perf_counter() - start
        holder["td"] = td
        return elapsed

    return run


def hub_rollout_case(num_envs: int, threads: int, acts: np.ndarray) -> Any:
    env = hub.make_env(
        "ale:Pong-v5", num_envs=num_envs, categorical_action_encoding=True, num_threads=threads
    )
    env.set_seed(0)
    torch_acts = torch.from_numpy(acts.astype(np.int64))
    counter = {"t": 0}

    def policy(td: Any) -> Any:
        td.set("action", torch_acts[counter["t"] % len(torch_acts)])
        counter["t"] += 1
        return td

    holder = {"td": env.reset()}

    def run(steps: int) -> float:
        start = time.perf_counter()
        done = 0
        while done < steps:
            chunk = min(100, steps - done)
            data = env.rollout(
                chunk, policy, break_when_any_done=False, auto_reset=False, tensordict=holder["td"]
            )
            td = hub.step_mdp(data[..., -1])
            if td["done"].any():
                td["_reset"] = td["done"].clone()
                td = env.reset(td)
            holder["td"] = td
            done += chunk
        return time.perf_counter() - start

    return run


def envpool_raw_case(num_envs: int, threads: int, acts: np.ndarray) -> Any:
    import envpool

    pool = envpool.make(
        "Pong-v5", env_type="gymnasium", num_envs=num_envs, num_threads=threads, seed=0
    )
    pool.reset()

    def run(steps: int) -> float:
        start = time.perf_counter()
        for t in range(steps):
            pool.step(acts[t])
        return time.perf_counter() - start

    return run


def cases(num_envs: int, threads: int, acts: np.ndarray) -> dict[str, Any]:
    out = {
        "raw_vector": raw_vector_case(num_envs, threads, acts, direct=False),
        "raw_ale": raw_vector_case(num_envs, threads, acts, direct=True),
        "runner": runner_case(num_envs, threads, acts),
        "hub_loop": hub_loop_case("ale:Pong-v5", num_envs, threads, acts),
        "hub_rollout": hub_rollout_case(num_envs, threads, acts),
    }
    try:
        out["envpool_raw"] = envpool_raw_case(num_envs, threads, acts)
        out["envpool_hub_loop"] = hub_loop_case("envpool:Pong-v5", num_envs, threads, acts)
    except ImportError:
        pass
    return out


def measure(num_envs: int, args: argparse.Namespace) -> dict[str, Any]:
    acts = actions(num_envs, args.steps)
    runs = cases(num_envs, args.threads, acts)
    names = list(runs)
    rates: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        this = {name: num_envs * args.steps / runs[name](args.steps) for name in order}
        for name, rate in this.items():
            rates[name].append(rate)
            ratios[name].append(rate / this["raw_vector"])
    summary = {
        name: {
            "env_steps_per_s_median": statistics.median(rates[name]),
            "ratio_to_raw_vector_median": statistics.median(ratios[name]),
        }
        for name in names
    }
    for name, row in summary.items():
        print(
            f"W={num_envs:<3d} {name:17s} {row['env_steps_per_s_median']:10,.0f} env-steps/s  "
            f"{row['ratio_to_raw_vector_median']:.3f}x raw"
        )
    return {"summary": summary, "rates": rates, "ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, nargs="*", default=[8, 16])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=min(2, len(os.sched_getaffinity(0))))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    result: dict[str, Any] = {
        "benchmark": "bench_ale",
        "steps": args.steps,
        "rounds": args.rounds,
        "threads": args.threads,
        "load_before": os.getloadavg(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": _versions(),
        "widths": {},
    }
    for num_envs in args.num_envs:
        result["widths"][str(num_envs)] = measure(num_envs, args)
    result["load_after"] = os.getloadavg()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for dist in ("ale-py", "envpool", "gymnasium", "torch", "tensordict"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    return out


if __name__ == "__main__":
    main()
