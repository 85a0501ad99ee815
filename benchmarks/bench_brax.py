"""Env-steps/s of hub's ``brax:`` envs against Brax's own jitted batch step and TorchRL's
``BraxEnv``, in one process, rounds interleaved.

TorchRL has no gymnax wrapper; its JAX path is ``torchrl.envs.libs.brax.BraxEnv`` (and Jumanji's),
so this is where hub meets TorchRL on JAX envs. Run it in a venv that holds TorchRL 0.14.1
(tensordict 0.14.3) beside jax and brax; without TorchRL the TorchRL rows are left out.

Cases (W sub-envs of Brax's ``fast`` env by default: a step costs little, so the wrappers'
own costs show; the same constant action everywhere):

* ``raw_vmap``: ``brax.envs.create(name, batch_size=W)`` (Brax's training wrappers: episode
  limit, vmap, auto-reset) with its ``step`` jitted, waiting for each step's observations: the
  baseline;
* ``runner``: :class:`hub_jax.JaxRunner` alone (its step, then the reset of the ended sub-envs);
* ``hub_loop``: ``env.step_and_maybe_reset(td)`` on ``hub.make_env("brax:<name>", num_envs=W)``;
* ``torchrl_loop``: the same loop on ``torchrl.envs.libs.brax.BraxEnv(name, batch_size=[W])``.

Usage:
    python benchmarks/bench_brax.py [--env fast] [--num-envs 4096] [--steps 200] [--rounds 5]
        [--out benchmarks/results/brax.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import time
from typing import Any

import torch

import hub


def raw_case(name: str, num_envs: int, seed: int) -> Any:
    import jax
    import jax.numpy as jnp

    with contextlib.redirect_stdout(io.StringIO()):
        from brax import envs

    env = envs.create(name, batch_size=num_envs, episode_length=1000, auto_reset=True)
    reset = jax.jit(env.reset)
    step = jax.jit(env.step)
    holder = {"state": reset(jax.random.PRNGKey(seed))}  # Brax's VmapWrapper splits it
    action = jnp.zeros((num_envs, env.action_size))
    for _ in range(3):  # the first steps compile (a reset's state has weak types a step's lacks)
        holder["state"] = step(holder["state"], action)

    def run(steps: int) -> float:
        state = holder["state"]
        start = time.perf_counter()
        for _ in range(steps):
            state = step(state, action)
            state.obs.block_until_ready()
        elapsed = time.perf_counter() - start
        holder["state"] = state
        return elapsed

    return run


def runner_case(name: str, num_envs: int, seed: int) -> Any:
    import numpy as np
    from hub_jax.brax_family import brax_simulator
    from hub_jax.runner import JaxRunner

    sim = brax_simulator(name)
    runner = JaxRunner(sim, num_envs)
    runner.seed(seed)
    runner.reset(None)
    size = sim.action_spec((), False).shape[-1]
    action = np.zeros((num_envs, size), np.float32)

    def one_step() -> None:
        runner.step(action, None)["observation"].block_until_ready()
        if runner.ended.any():
            runner.reset(runner.ended.copy())

    one_step()

    def run(steps: int) -> float:
        start = time.perf_counter()
        for _ in range(steps):
            one_step()
        return time.perf_counter() - start

    return run


def loop_case(env: Any, num_envs: int) -> Any:
    td = env.reset()
    action = torch.zeros(env.action_spec.shape)
    holder = {"td": td}

    def run(steps: int) -> float:
        td = holder["td"]
        start = time.perf_counter()
        for _ in range(steps):
            td.set("action", action)
            _, td = env.step_and_maybe_reset(td)
        elapsed = time.perf_counter() - start
        holder["td"] = td
        return elapsed

    run(2)
    return run


def torchrl_env(name: str, num_envs: int, seed: int) -> Any:
    from torchrl.envs.libs.brax import BraxEnv

    with contextlib.redirect_stdout(io.StringIO()):
        env = BraxEnv(name, batch_size=[num_envs])
    env.set_seed(seed)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="fast")
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    n = args.num_envs
    runs = {
        "raw_vmap": raw_case(args.env, n, args.seed),
        "runner": runner_case(args.env, n, args.seed),
        "hub_loop": loop_case(hub.make_env(f"brax:{args.env}", num_envs=n, seed=args.seed), n),
    }
    torchrl_error = None
    try:
        runs["torchrl_loop"] = loop_case(torchrl_env(args.env, n, args.seed), n)
    except Exception as err:  # noqa: BLE001 - recorded in the results
        torchrl_error = f"{type(err).__name__}: {err}"
    names = list(runs)
    rates: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        this = {name: n * args.steps / runs[name](args.steps) for name in order}
        for name, rate in this.items():
            rates[name].append(rate)
            ratios[name].append(rate / this["raw_vmap"])
    summary = {
        name: {
            "env_steps_per_s_median": statistics.median(rates[name]),
            "ratio_to_raw_vmap_median": statistics.median(ratios[name]),
            "us_per_batch_step_median": 1e6 * n / statistics.median(rates[name]),
        }
        for name in names
    }
    for name, row in summary.items():
        print(
            f"{name:13s} {row['env_steps_per_s_median']:14,.0f} env-steps/s  "
            f"{row['us_per_batch_step_median']:9.1f} us/step  "
            f"{row['ratio_to_raw_vmap_median']:.3f}x raw"
        )
    if torchrl_error:
        print("torchrl:", torchrl_error)
    if args.out:
        result = {
            "benchmark": "bench_brax",
            "env": args.env,
            "num_envs": n,
            "steps": args.steps,
            "rounds": args.rounds,
            "load_before": os.getloadavg(),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "torchrl_error": torchrl_error,
            "summary": summary,
            "rates": rates,
        }
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
