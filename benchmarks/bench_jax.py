"""Env-steps/s of hub's JAX envs against the raw jitted ``jax.vmap`` loop, and the floor of hub's
own runner, in one process, rounds interleaved.

Cases (W sub-envs of gymnax's CartPole-v1 by default, the same constant action everywhere, every
case on its own env seeded alike):

* ``raw_vmap``: ``jax.jit(jax.vmap(env.step))`` of gymnax's own auto-resetting step, with the
  keys split inside the jitted function, waiting for each step's observations (a consumer reads
  them every step): the baseline;
* ``runner``: :class:`hub_jax.JaxRunner` alone: its step (no auto-reset, the reset of the ended
  sub-envs prepared inside it), then its reset of the ended sub-envs (taking the prepared
  resets), on JAX arrays, with the bookkeeping of the ended sub-envs: the floor of hub's backend;
* ``runner_torch``: the same, with the action coming from a torch tensor (a numpy view) and
  every output read into torch through DLPack (what hub adds at the least);
* ``hub_loop``: ``env.step_and_maybe_reset(td)`` on ``hub.make_env("gymnax:CartPole-v1",
  num_envs=W)``, the loop of a collector;
* ``hub_rollout``: ``env.rollout(100, policy, break_when_any_done=False)`` calls, each going on
  from the last, with the data of every step kept (stacked by hub).

TorchRL has no gymnax wrapper (``torchrl/envs/libs`` has brax and jumanji; checked on TorchRL's
main branch), so no TorchRL row here; ``--env brax:<name>`` measures a Brax env the same way.

Ratios are paired: each round divides a case's rate by ``raw_vmap``'s rate of the same round; the
summary gives the median over rounds. Run it on a quiet machine, or read the ratios.

Usage:
    python benchmarks/bench_jax.py [--num-envs 4096] [--steps 300] [--rounds 5]
        [--out benchmarks/results/jax.json]
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


def raw_vmap_case(env_id: str, num_envs: int, seed: int) -> Any:
    """gymnax's auto-resetting step, vmapped and jitted: ``run(steps)`` -> seconds."""
    import gymnax
    import jax
    import jax.numpy as jnp

    env, params = gymnax.make(env_id)

    @jax.jit
    def reset(keys: Any) -> Any:
        return jax.vmap(env.reset, in_axes=(0, None))(keys, params)

    @jax.jit
    def step(keys: Any, state: Any, action: Any) -> Any:
        both = jax.vmap(jax.random.split)(keys)
        obs, state, reward, done, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            both[:, 1], state, action, params
        )
        return both[:, 0], obs, state, reward, done

    keys = jax.vmap(jax.random.PRNGKey)(jnp.arange(num_envs, dtype=jnp.uint32) + seed)
    obs, state = reset(keys)
    action = jnp.zeros(num_envs, jnp.int32)
    keys, obs, state, reward, done = step(keys, state, action)
    holder = {"keys": keys, "state": state}

    def run(steps: int) -> float:
        keys, state = holder["keys"], holder["state"]
        start = time.perf_counter()
        for _ in range(steps):
            keys, obs, state, reward, done = step(keys, state, action)
            obs.block_until_ready()
        elapsed = time.perf_counter() - start
        holder["keys"], holder["state"] = keys, state
        return elapsed

    return run


def runner_case(env_id: str, num_envs: int, seed: int, *, torch_io: bool) -> Any:
    """hub_jax's runner without hub around it (``torch_io``: actions and outputs via DLPack)."""
    import jax
    from hub_jax.gymnax_family import gymnax_simulator
    from hub_jax.runner import JaxRunner

    runner = JaxRunner(gymnax_simulator(env_id), num_envs)
    runner.seed(seed)
    runner.reset(None)
    action_t = torch.zeros(num_envs, dtype=torch.int32)
    action_j = jax.device_put(action_t.numpy(), jax.devices("cpu")[0])
    from_dlpack = torch.from_dlpack

    def one_step() -> None:
        action = action_t.numpy() if torch_io else action_j
        out = runner.step(action, None)
        if torch_io:
            for value in out.values():
                from_dlpack(value)
        else:
            out["observation"].block_until_ready()
        if runner.ended.any():
            first = runner.reset(runner.ended.copy())
            if torch_io:
                from_dlpack(first["observation"])

    one_step()

    def run(steps: int) -> float:
        start = time.perf_counter()
        for _ in range(steps):
            one_step()
        return time.perf_counter() - start

    return run


def hub_loop_case(uri: str, num_envs: int, seed: int) -> Any:
    env = hub.make_env(uri, num_envs=num_envs, categorical_action_encoding=True, seed=seed)
    td = env.reset()
    action = torch.zeros(num_envs, dtype=torch.int64)
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


def hub_rollout_case(uri: str, num_envs: int, seed: int) -> Any:
    env = hub.make_env(uri, num_envs=num_envs, categorical_action_encoding=True, seed=seed)
    action = torch.zeros(num_envs, dtype=torch.int64)

    def policy(td: Any) -> Any:
        return td.set("action", action)

    holder = {"td": env.reset()}

    def run(steps: int) -> float:
        start = time.perf_counter()
        done = 0
        while done < steps:
            chunk = min(100, steps - done)
            data = env.rollout(
                chunk,
                policy,
                break_when_any_done=False,
                auto_reset=False,
                tensordict=holder["td"],
            )
            holder["td"] = hub.step_mdp(data[..., -1])
            if holder["td"]["done"].any():
                reset = holder["td"].clone()
                reset["_reset"] = reset["done"].clone()
                holder["td"] = env.reset(reset)
            done += chunk
        return time.perf_counter() - start

    run(2)
    return run


CASES = {
    "raw_vmap": lambda a: raw_vmap_case(a.env, a.num_envs, a.seed),
    "runner": lambda a: runner_case(a.env, a.num_envs, a.seed, torch_io=False),
    "runner_torch": lambda a: runner_case(a.env, a.num_envs, a.seed, torch_io=True),
    "hub_loop": lambda a: hub_loop_case(f"gymnax:{a.env}", a.num_envs, a.seed),
    "hub_rollout": lambda a: hub_rollout_case(f"gymnax:{a.env}", a.num_envs, a.seed),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    runs = {name: CASES[name](args) for name in args.cases}
    rates: dict[str, list[float]] = {name: [] for name in runs}
    ratios: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        this = {name: args.num_envs * args.steps / runs[name](args.steps) for name in order}
        for name, rate in this.items():
            rates[name].append(rate)
            ratios[name].append(rate / this["raw_vmap"])
    summary = {
        name: {
            "env_steps_per_s_median": statistics.median(rates[name]),
            "ratio_to_raw_vmap_median": statistics.median(ratios[name]),
            "us_per_batch_step_median": 1e6 * args.num_envs / statistics.median(rates[name]),
        }
        for name in names
    }
    result = {
        "benchmark": "bench_jax",
        "env": args.env,
        "num_envs": args.num_envs,
        "steps": args.steps,
        "rounds": args.rounds,
        "load_before": os.getloadavg(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": _versions(),
        "summary": summary,
        "rates": rates,
    }
    for name, row in summary.items():
        print(
            f"{name:14s} {row['env_steps_per_s_median']:14,.0f} env-steps/s  "
            f"{row['us_per_batch_step_median']:9.1f} us/step  "
            f"{row['ratio_to_raw_vmap_median']:.3f}x raw"
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for dist in ("jax", "jaxlib", "gymnax", "torch", "tensordict"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    return out


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
