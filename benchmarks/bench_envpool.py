"""Env-steps/s of hub's EnvPool envs against raw EnvPool and TorchRL's MultiThreadedEnv.

For each task (Pong-v5, CartPole-v1 by default) and round, in one process and in a rotating
order, with the same pre-drawn actions everywhere, each case on a new env of its own seeded
alike (so that every case steps the same stretch of its envs' lives):

* ``raw_step``: EnvPool's own ``step(actions)`` loop (its autoreset inside; the baseline);
* ``raw_cpp``: EnvPool's C++ ``_send``/``_recv`` without its Python layer (what hub calls);
* ``raw_cpp_copies``: the same, keeping every step's observations and copying them into a
  rollout-shaped buffer every 100 steps, twice (``observation`` and ``("next",
  "observation")``), with hub's own stacking function: the cost of a rollout's data with no
  Python layer at all, the ceiling of any rollout;
* ``td_floor_loop``: the least a TensorDict-speaking loop does per step: the policy writes the
  action into a tensordict, the action goes to EnvPool as its dtype, and the observation and
  done flags come back in a new tensordict (no reward, no ``"next"``, EnvPool's own autoreset);
* ``td_floor_rollout``: that loop with a rollout's data (the reward too), stacked every 100
  steps into one reused buffer as ``rollout(out=)`` does, with hub's stacking function: the
  least a TensorDict rollout into ``out=`` can cost here; ``td_floor_rollout_new`` stacks
  into new memory instead, as ``rollout`` without ``out=`` does;
* ``hub_rollout``: ``hub.make_env("envpool:<task>", num_envs=N).rollout(100, policy)`` calls,
  each going on from the last (as a collector does);
* ``hub_rollout_out``: the same, each call writing into the previous call's output
  (``rollout(..., out=data)``), as a collector reusing its batch buffer does: no new memory;
* ``hub_loop``: a manual ``step_and_maybe_reset`` loop on the same env;
* ``hub_loop_unchecked`` / ``hub_rollout_unchecked`` / ``hub_rollout_out_unchecked`` (only when
  named in ``--cases``): the same on an env whose check of discrete action values (out-of-range
  categories, which crash EnvPool) is taken out, to measure that check's cost; the summary gives
  the paired ratio of each checked case to its unchecked twin;
* ``torchrl_rollout`` / ``torchrl_rollout_out`` / ``torchrl_loop``: TorchRL's ``MultiThreadedEnv``, where TorchRL is
  installed (``benchmarks/setup_peer_venv.sh``). TorchRL 0.14.1 fails on EnvPool >= 1.1 (it
  converts gymnasium spaces under the gym backend); the benchmark then patches it, here only:
  its ``_make_specs`` runs under the gymnasium backend, and a stub stands in for ``treevalue``
  if that is missing. The failure is recorded in the results.

hub resets a finished env with an extra EnvPool call (EnvPool's own autoreset would drop an
action; see docs/envpool.md), so its env-steps are all real transitions while the raw and
TorchRL loops count EnvPool's hidden reset steps as steps.

Ratios are paired: each round divides a case's rate by ``raw_step``'s rate of the same round;
the summary gives the median over rounds. The machine may be shared: read the ratios.

Usage:
    python benchmarks/bench_envpool.py [--tasks Pong-v5 CartPole-v1] [--rounds 3]
        [--num-envs 8] [--steps N] [--cases NAME ...] [--action-check-cost]
        [--out benchmarks/results/envpool.json]

Example:
    /tmp/benchvenv/bin/python benchmarks/bench_envpool.py --rounds 3

Pong's medians are tightest with many short rounds, which keep each case next to raw EnvPool in
time while the machine's speed drifts:
    /tmp/benchvenv/bin/python benchmarks/bench_envpool.py --tasks Pong-v5 --steps 300 --rounds 40
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

# batch steps per timed run (each steps every env once)
DEFAULT_STEPS = {"Pong-v5": 1500, "CartPole-v1": 20000}
WARMUP_FRACTION = 0.1
# steps per rollout call: collectors gather short rollouts; one call of the whole run would
# keep every Pong frame (about 0.45 MB per batch step) and measure memory, not the env
CHUNK = 100


def _timed(run: Callable[[int], None], steps: int) -> tuple[float, float]:
    """Wall seconds and main-thread CPU seconds of ``run(steps)``, after a warm-up of 10% of
    the steps, and at least two rollouts of :data:`CHUNK` steps.

    Two rollouts, because a rollout loop's memory is only in its steady state from its third
    rollout on: each rollout's output stays alive while the next one runs (the next input views
    its last step), so the first two map new memory for their outputs and the later ones reuse
    what the one before last freed. New memory for a rollout of Pong frames costs 5-25 ms per
    23 MB here (page faults, huge-page compaction), reused memory 0.8 ms; a collector pays that
    once, but a case that starts each round with none would pay it in every timed run.

    The main thread's CPU time is the Python work of the loop (EnvPool steps its envs in its
    own threads): it shows each stack's overhead even when the machine is loaded.
    """
    run(max(2 * CHUNK, int(steps * WARMUP_FRACTION)))
    start, cpu = time.perf_counter(), time.thread_time()
    run(steps)
    return time.perf_counter() - start, time.thread_time() - cpu


# ---------------------------------------------------------------------- raw EnvPool
def raw_cases(
    task: str, num_envs: int, actions: np.ndarray, actions_t: torch.Tensor
) -> dict[str, Callable[[int], None]]:
    """EnvPool's ``step`` loop, its C++ ``_send``/``_recv`` loop, and three references built on
    the C++ loop: with a rollout's copies, with the least TensorDict work, and with both."""
    import envpool

    from hub.envs.serial_ops import empty_cpu, stack_tensors
    from hub.envs.utils import prebuilt_tensordict

    pool = envpool.make(task, env_type="gymnasium", num_envs=num_envs, seed=0)
    pool.reset()
    ids = np.arange(num_envs, dtype=np.int32)
    index = {"t": 0}
    keys = list(pool._state_keys)
    obs_slot, done_slot, trunc_slot, reward_slot = (
        keys.index(k) for k in ("obs", "done", "trunc", "reward")
    )
    buffers: dict[Any, Any] = {}
    send, recv = pool._send, pool._recv  # EnvPool's C++ calls, without its Python layer
    batch = torch.Size([num_envs])

    def step(steps: int) -> None:
        t = index["t"]
        for i in range(steps):
            pool.step(actions[(t + i) % len(actions)])
        index["t"] = t + steps

    def cpp(steps: int) -> None:
        t = index["t"]
        for i in range(steps):
            send([ids, ids, actions[(t + i) % len(actions)]])
            recv()
        index["t"] = t + steps

    def reused(key: Any, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """The buffer kept under ``key``, allocated at its first use (a collector's reused
        batch buffer)."""
        out = buffers.get(key)
        if out is None:
            out = buffers[key] = empty_cpu(shape, dtype)
        return out

    def cpp_copies(steps: int) -> None:
        t = index["t"]
        last = buffers.get("last")
        for start in range(0, steps, CHUNK):
            n = min(CHUNK, steps - start)
            frames, next_frames = [], []
            for i in range(n):
                send([ids, ids, actions[(t + start + i) % len(actions)]])
                obs = torch.from_numpy(recv()[obs_slot])
                frames.append(obs if last is None else last)
                next_frames.append(obs)
                last = obs
            for name, column in (("obs", frames), ("next", next_frames)):
                shape = (num_envs, n, *column[0].shape[1:])
                stack_tensors(column, 1, out=reused(f"{name}{n}", shape, column[0].dtype))
        buffers["last"] = last
        index["t"] = t + steps

    def floor_input(key: str) -> Any:
        """The input a floor loop goes on from (kept under ``key``), or a first one."""
        td = buffers.get(key)
        if td is None:
            send([ids, ids, actions[0]])
            first = recv()[obs_slot]
            td = prebuilt_tensordict({"observation": torch.from_numpy(first)}, batch)
        return td

    def floor_step(td: Any, t: int, with_reward: bool) -> Any:
        """The least TensorDict step: the policy writes the action into ``td``, the action
        goes to EnvPool in its dtype, the observation and done flags (and the reward) come back
        in a new tensordict."""
        td.set("action", actions_t[t % len(actions_t)])  # the policy
        send([ids, ids, td.get("action").numpy().astype(actions.dtype)])
        states = recv()
        done, trunc = states[done_slot], states[trunc_slot]
        flags = np.stack([done, np.greater(done, trunc), trunc]).reshape(3, num_envs, 1)
        flag_done, terminated, truncated = torch.from_numpy(flags).unbind(0)
        out = {
            "observation": torch.from_numpy(states[obs_slot]),
            "done": flag_done,
            "terminated": terminated,
            "truncated": truncated,
        }
        if with_reward:
            out["reward"] = torch.from_numpy(states[reward_slot]).reshape(num_envs, 1)
        return prebuilt_tensordict(out, batch)

    def td_floor(steps: int) -> None:
        t = index["t"]
        td = floor_input("td")
        for i in range(steps):
            td = floor_step(td, t + i, with_reward=False)
        buffers["td"] = td
        index["t"] = t + steps

    def td_floor_rollout(steps: int, reuse: bool = True) -> None:
        t = index["t"]
        td = floor_input("rollout_td")
        names = ("observation", "done", "terminated", "truncated", "reward")
        for start in range(0, steps, CHUNK):
            n = min(CHUNK, steps - start)
            kept = [td]
            for i in range(n):
                td = floor_step(td, t + start + i, with_reward=True)
                kept.append(td)
            columns = {
                "observation": [k.get("observation") for k in kept[:-1]],
                "action": [k.get("action") for k in kept[:-1]],
            }
            columns.update({("next", name): [k.get(name) for k in kept[1:]] for name in names})
            for key, column in columns.items():
                if not reuse:  # new memory, as rollout() without out= takes
                    stack_tensors(column, 1)
                    continue
                shape = (num_envs, n, *column[0].shape[1:])
                stack_tensors(column, 1, out=reused((key, n), shape, column[0].dtype))
        buffers["rollout_td"] = td
        index["t"] = t + steps

    return {
        "raw_step": step,
        "raw_cpp": cpp,
        "raw_cpp_copies": cpp_copies,
        "td_floor_loop": td_floor,
        "td_floor_rollout": td_floor_rollout,
        "td_floor_rollout_new": lambda steps: td_floor_rollout(steps, reuse=False),
    }


# ---------------------------------------------------------------------- hub
def _policy(actions: torch.Tensor) -> Callable[[Any], Any]:
    index = {"t": 0}

    def policy(td: Any) -> Any:
        td.set("action", actions[index["t"] % len(actions)])
        index["t"] += 1
        return td

    return policy


def _env_cases(env: Any, actions: torch.Tensor) -> tuple[Callable, Callable, Callable]:
    """``rollout`` in chunks of :data:`CHUNK` steps (each goes on from where the last one
    stopped, as a collector does), the same into one reused buffer (``out=``, as a collector
    keeps its batch buffer), and a manual ``step_and_maybe_reset`` loop; the same code for hub
    and TorchRL."""
    policy = _policy(actions)
    state: dict[str, Any] = {"td": env.reset(), "out": None}

    def chunks(steps: int, reuse: bool) -> None:
        # the input is taken out of the state while the case runs: a collector holds only its
        # current input, and an old one would keep an old output's memory alive (a view of its
        # last step), so that the rollouts of the call could not reuse it
        td = state.pop("td")
        for start in range(0, steps, CHUNK):
            n = min(CHUNK, steps - start)
            out = state["out"] if reuse and n == CHUNK else None
            data = env.rollout(
                n, policy, break_when_any_done=False, auto_reset=False, tensordict=td, out=out
            )
            if reuse and n == CHUNK:
                state["out"] = data
            td = env.step_mdp(data[..., -1])
            done = td.get("done")
            if bool(done.any()):
                td.set("_reset", done.clone())
                td = env.reset(td)
        state["td"] = td

    def rollout(steps: int) -> None:
        chunks(steps, reuse=False)

    def rollout_out(steps: int) -> None:
        chunks(steps, reuse=True)

    def loop(steps: int) -> None:
        td = state.pop("td")
        for _ in range(steps):
            td = policy(td)
            _, td = env.step_and_maybe_reset(td)
        state["td"] = td

    return rollout, rollout_out, loop


def _drop_action_value_checks(env: Any) -> None:
    """Take the check of discrete action values out of ``env`` (here only, to measure it):
    each of the env's action checks ends with its value check (``None``: none)."""
    import dataclasses

    keys = env.env_keys
    checks = tuple(check._replace(values_ok=None) for check in keys.action_checks)
    env._keys_cache = dataclasses.replace(keys, action_checks=checks)


def hub_cases(
    task: str, num_envs: int, actions: torch.Tensor, value_checks: bool = True
) -> dict[str, Callable[[int], None]]:
    """``rollout`` and a manual ``step_and_maybe_reset`` loop of ``make_env("envpool:...")``;
    with ``value_checks=False``, on an env without the check of discrete action values (the
    ``_unchecked`` cases)."""
    import hub

    env = hub.make_env(
        f"envpool:{task}", num_envs=num_envs, seed=0, categorical_action_encoding=True
    )
    suffix = ""
    if not value_checks:
        _drop_action_value_checks(env)
        suffix = "_unchecked"
    rollout, rollout_out, loop = _env_cases(env, actions)
    return {
        f"hub_rollout{suffix}": rollout,
        f"hub_rollout_out{suffix}": rollout_out,
        f"hub_loop{suffix}": loop,
    }


def action_check_cost(task: str, num_envs: int, pairs: int = 15) -> dict[str, float]:
    """Microseconds that the check of discrete action values adds to the action checks of one
    batch step (``EnvBase.check_step_input``), for integer and one-hot actions: the median over
    ``pairs`` of the paired difference of the best of 3 timings of 20,000 calls, with and
    without the check. CPU work in the main thread only, so the machine's load disturbs it
    far less than the env-steps/s of the loops."""
    import timeit

    import hub

    out = {}
    for encoding, categorical in (("categorical", True), ("one_hot", False)):
        calls = []
        for checked in (True, False):
            env = hub.make_env(
                f"envpool:{task}", num_envs=num_envs, categorical_action_encoding=categorical
            )
            td = env.rand_action(env.reset())
            if not checked:
                _drop_action_value_checks(env)
            calls.append((env, td))
        diffs, unchecked = [], []
        for _ in range(pairs):
            best = [
                min(timeit.repeat(lambda e=e, t=t: e.check_step_input(t), number=20000, repeat=3))
                / 20000
                * 1e6
                for e, t in calls
            ]
            diffs.append(best[0] - best[1])
            unchecked.append(best[1])
        out[f"{encoding}_check_us"] = statistics.median(diffs)
        out[f"{encoding}_other_action_checks_us"] = statistics.median(unchecked)
        for env, _ in calls:
            env.close()
    return out


# ---------------------------------------------------------------------- TorchRL
def _patch_torchrl(error: Exception) -> str:
    """Make TorchRL's MultiThreadedEnv run on EnvPool >= 1.1 (only inside this benchmark)."""
    from torchrl.envs.libs import envpool as trl_envpool
    from torchrl.envs.libs.gym import set_gym_backend

    if "treevalue" not in sys.modules:
        try:
            import treevalue  # noqa: F401
        except ImportError:
            stub = types.ModuleType("treevalue")
            stub.TreeValue = type("TreeValue", (), {})
            stub.FastTreeValue = stub.TreeValue
            sys.modules["treevalue"] = stub

    def make_specs(self: Any, env: Any) -> None:
        # TorchRL's own spec code, run under the backend whose spaces EnvPool >= 1.1 returns
        with set_gym_backend("gymnasium"):
            self.action_spec = self._get_action_spec()
            output_spec = self._get_output_spec()
            self.observation_spec = output_spec["full_observation_spec"]
            self.reward_spec = output_spec["full_reward_spec"]
            self.done_spec = output_spec["full_done_spec"]

    trl_envpool.MultiThreadedEnvWrapper._make_specs = make_specs
    return f"{type(error).__name__}: {error}"


def torchrl_cases(
    task: str, num_envs: int, actions: torch.Tensor, notes: dict[str, Any]
) -> dict[str, Callable[[int], None]]:
    """TorchRL's MultiThreadedEnv: ``rollout`` and a ``step_and_maybe_reset`` loop."""
    try:
        from torchrl.envs import MultiThreadedEnv
    except ImportError:
        return {}
    try:
        env = MultiThreadedEnv(num_envs, task, create_env_kwargs={"seed": 0})
    except Exception as err:  # noqa: BLE001 - the failure is the result to record
        notes.setdefault("torchrl_unpatched_error", _patch_torchrl(err))
        env = MultiThreadedEnv(num_envs, task, create_env_kwargs={"seed": 0})
    rollout, rollout_out, loop = _env_cases(env, actions)
    return {"torchrl_rollout": rollout, "torchrl_rollout_out": rollout_out, "torchrl_loop": loop}


# ---------------------------------------------------------------------- driver
def _one_env_per_case(
    build: Callable[[], dict[str, Callable[[int], None]]], wanted: Callable[[str], bool]
) -> dict[str, Callable[[int], None]]:
    """The wanted cases of ``build()``, each from a call of its own, so each on an env of its
    own, new and seeded alike.

    Every case then steps the same stretch of its envs' lives. Cases that share an env take
    turns along its life instead, and Pong's 8 envs, started together, end their first
    episodes together (at about 1,000 batch steps, each reset about 5 ms): the case whose turn
    held those resets measured 10% slower than its neighbours, round after round, since the
    rotation of the order keeps neighbours together.
    """
    first = build()
    names = [name for name in first if wanted(name)]
    return {name: (first if i == 0 else build())[name] for i, name in enumerate(names)}


def run_round(
    task: str,
    num_envs: int,
    steps: int,
    round_index: int,
    notes: dict[str, Any],
    only: list[str] | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """One round of every case for ``task`` (or of the cases named in ``only``, with
    ``raw_step``, the baseline, always): env-steps/s, and main-thread CPU microseconds per batch
    step, by case."""
    import envpool

    rng = np.random.default_rng(round_index)
    n_actions = int(envpool.make_spec(task).action_space.n)
    actions = rng.integers(0, n_actions, size=(steps, num_envs)).astype(np.int32)
    actions_t = torch.from_numpy(actions.astype(np.int64))

    def wanted(name: str) -> bool:
        return only is None or name == "raw_step" or name in only

    cases: dict[str, Callable[[int], None]] = {}
    cases.update(_one_env_per_case(lambda: raw_cases(task, num_envs, actions, actions_t), wanted))
    if only is None or any(name.startswith("hub_") for name in only):
        cases.update(_one_env_per_case(lambda: hub_cases(task, num_envs, actions_t), wanted))
    if only is not None and any(name.endswith("_unchecked") for name in only):
        build = lambda: hub_cases(task, num_envs, actions_t, value_checks=False)  # noqa: E731
        cases.update(_one_env_per_case(build, wanted))
    if only is None or any(name.startswith("torchrl_") for name in only):
        build = lambda: torchrl_cases(task, num_envs, actions_t, notes)  # noqa: E731
        cases.update(_one_env_per_case(build, wanted))
    if only is not None:
        unknown = sorted(set(only) - set(cases))
        if unknown:
            raise SystemExit(f"unknown case(s) {unknown}; the cases are {sorted(cases)}")
    names = list(cases)
    shift = round_index % len(names)
    order = names[shift:] + names[:shift]
    if round_index % 2:
        order.reverse()
    rates, cpu = {}, {}
    for name in order:
        with torch.no_grad():
            seconds, cpu_seconds = _timed(cases[name], steps)
        rates[name] = steps * num_envs / seconds
        cpu[name] = cpu_seconds / steps * 1e6
    return rates, cpu


def summarize(
    rounds: list[dict[str, float]], cpu: list[dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Per case: median rate, median paired ratio to ``raw_step`` (with min and max), and
    median main-thread CPU microseconds per batch step."""
    out = {}
    for name in rounds[0]:
        rates = [r[name] for r in rounds]
        ratios = [r[name] / r["raw_step"] for r in rounds]
        out[name] = {
            "median_steps_per_s": statistics.median(rates),
            "ratio_vs_raw_step": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "main_thread_cpu_us_per_batch_step": statistics.median(c[name] for c in cpu),
        }
        twin = name.removesuffix("_unchecked")
        if twin != name and twin in rounds[0]:  # the cost of the action value check
            paired = [r[twin] / r[name] for r in rounds]
            out[name]["checked_vs_unchecked_ratio"] = statistics.median(paired)
            out[name]["checked_vs_unchecked_ratio_min_max"] = [min(paired), max(paired)]
            out[name]["checked_minus_unchecked_cpu_us"] = statistics.median(
                c[twin] - c[name] for c in cpu
            )
    return out


def _versions() -> dict[str, str]:
    import envpool
    import tensordict

    versions = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "tensordict": tensordict.__version__,
        "envpool": envpool.__version__,
        "numpy": np.__version__,
    }
    try:
        import torchrl

        versions["torchrl"] = torchrl.__version__
    except ImportError:
        pass
    return versions


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(DEFAULT_STEPS))
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=None, help="batch steps per run")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--cases", nargs="+", default=None, help="run only these cases (raw_step always runs)"
    )
    parser.add_argument(
        "--action-check-cost",
        action="store_true",
        help="also time the check of discrete action values alone (action_check_cost)",
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "versions": _versions(),
        "num_envs": args.num_envs,
        "tasks": {},
    }
    for task in args.tasks:
        steps = args.steps or DEFAULT_STEPS.get(task, 2000)
        notes: dict[str, Any] = {}
        rounds, cpu = [], []
        loads = []
        for r in range(args.rounds):
            loads.append(os.getloadavg()[0])
            rates, cpu_us = run_round(task, args.num_envs, steps, r, notes, args.cases)
            rounds.append(rates)
            cpu.append(cpu_us)
            print(f"{task} round {r}: " + ", ".join(f"{k} {v:,.0f}" for k, v in rates.items()))
        summary = summarize(rounds, cpu)
        if args.action_check_cost:
            notes["action_check_cost"] = action_check_cost(task, args.num_envs)
            print(f"{task}: the action value check alone: {notes['action_check_cost']}")
        results["tasks"][task] = {
            "batch_steps_per_run": steps,
            "load_average_before_rounds": loads,
            "rounds": rounds,
            "main_thread_cpu_us_per_batch_step": cpu,
            "summary": summary,
            **notes,
        }
        print(f"\n{task}, {args.num_envs} envs ({args.rounds} rounds, median):")
        print(
            f"  {'case':18s} {'env-steps/s':>12s} {'vs raw_step':>12s} {'[min-max]':>12s} {'CPU us/step':>12s}"
        )
        for name, row in summary.items():
            span = f"[{row['ratio_min']:.2f}-{row['ratio_max']:.2f}]"
            print(
                f"  {name:18s} {row['median_steps_per_s']:12,.0f} "
                f"{row['ratio_vs_raw_step']:12.2f} {span:>12s} "
                f"{row['main_thread_cpu_us_per_batch_step']:12.0f}"
            )
            if "checked_vs_unchecked_ratio" in row:
                print(
                    f"  {'':18s} checked / unchecked: rate x{row['checked_vs_unchecked_ratio']:.3f}"
                    f", CPU {row['checked_minus_unchecked_cpu_us']:+.1f} us per batch step"
                )
        print()
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
