"""Per-step cost of hub's env machinery against TorchRL's, on the same counting env.

The env does almost nothing (a counter, a reward, done flags), so what is measured is the
framework: ``step``, ``step_and_maybe_reset`` and ``rollout``. "raw" is the env's own tensor work
written as a plain loop; the overhead of a framework is its time per step minus raw's. Each
round measures every case once, in an order that alternates between rounds; the figures are
medians over rounds, all in one process. Times are the CPU time of the measuring thread
(``time.thread_time``, torch limited to one thread): the machines this runs on are shared, and
CPU time is far less disturbed by other processes than wall time. ``--clock wall`` uses
``time.perf_counter`` instead.

Run (TorchRL side by side needs the peer venv, see benchmarks/setup_peer_venv.sh):

    .bench-venv/bin/python benchmarks/bench_core.py --rounds 5
    .venv/bin/python benchmarks/bench_core.py --rounds 5     # hub only (tensordict 0.15)

Writes ``benchmarks/results/core.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import tensordict
import torch
from tensordict import TensorDict

import hub
from hub.specs import Categorical, Composite, Unbounded

CLOCK = time.thread_time  # --clock wall switches to time.perf_counter
MAX_STEPS = 10**9  # the counter never ends an episode: every step is a plain step


class HubCounting(hub.EnvBase):
    """The benchmark env, written for hub."""

    def __init__(self, max_steps: int = MAX_STEPS, batch_size=()):
        super().__init__(batch_size=batch_size)
        bs = self.batch_size
        self.observation_spec = Composite(
            observation=Unbounded(bs + (1,), dtype=torch.int64), shape=bs
        )
        self.action_spec = Categorical(2, shape=bs + (1,))
        self.reward_spec = Unbounded(bs + (1,))
        self.done_spec = Categorical(2, shape=bs + (1,), dtype=torch.bool)
        self.count = torch.zeros(bs + (1,), dtype=torch.int64)
        self.max_steps = max_steps

    def _reset(self, tensordict=None, **kwargs):
        self.count.zero_()
        false = torch.zeros_like(self.count, dtype=torch.bool)
        return TensorDict(
            {
                "observation": self.count.clone(),
                "done": false,
                "terminated": false.clone(),
                "truncated": false.clone(),
            },
            batch_size=self.batch_size,
        )

    def _step(self, tensordict):
        self.count += 1
        terminated = self.count >= self.max_steps
        return TensorDict(
            {
                "observation": self.count.clone(),
                "reward": tensordict["action"].to(torch.float32),
                "done": terminated,
                "terminated": terminated.clone(),
                "truncated": torch.zeros_like(terminated),
            },
            batch_size=self.batch_size,
        )

    def _set_seed(self, seed):
        pass


def make_torchrl_counting():
    """The same env written for TorchRL (``None`` when TorchRL is not installed)."""
    try:
        from torchrl.data import Categorical as TCategorical
        from torchrl.data import Composite as TComposite
        from torchrl.data import Unbounded as TUnbounded
        from torchrl.envs import EnvBase as TEnvBase
    except ImportError:
        return None

    class TorchRLCounting(TEnvBase):
        def __init__(self, max_steps: int = MAX_STEPS, batch_size=()):
            super().__init__(batch_size=batch_size)
            bs = self.batch_size
            self.observation_spec = TComposite(
                observation=TUnbounded(bs + (1,), dtype=torch.int64), shape=bs
            )
            self.action_spec = TCategorical(2, shape=bs + (1,))
            self.reward_spec = TUnbounded(bs + (1,))
            self.done_spec = TCategorical(2, shape=bs + (1,), dtype=torch.bool)
            self.count = torch.zeros(bs + (1,), dtype=torch.int64)
            self.max_steps = max_steps

        _reset = HubCounting._reset
        _step = HubCounting._step

        def _set_seed(self, seed):
            pass

    return TorchRLCounting()


def raw_loop(n: int) -> float:
    """The env's own tensor work, with no framework."""
    count = torch.zeros(1, dtype=torch.int64)
    action = torch.ones(1, dtype=torch.int64)
    start = CLOCK()
    for _ in range(n):
        count += 1
        terminated = count >= MAX_STEPS
        out = {
            "observation": count.clone(),
            "reward": action.to(torch.float32),
            "done": terminated,
            "terminated": terminated.clone(),
            "truncated": torch.zeros_like(terminated),
        }
    del out
    return (CLOCK() - start) / n


def step_loop(env, n: int) -> float:
    td = env.reset()
    td["action"] = torch.ones(1, dtype=torch.int64)
    step = env.step
    start = CLOCK()
    for _ in range(n):
        step(td)
    return (CLOCK() - start) / n


def step_and_maybe_reset_loop(env, n: int) -> float:
    td = env.reset()
    action = torch.ones(1, dtype=torch.int64)
    td["action"] = action
    smr = env.step_and_maybe_reset
    start = CLOCK()
    for _ in range(n):
        _, td = smr(td)
        td["action"] = action
    return (CLOCK() - start) / n


def rollout_random(env, n: int) -> float:
    start = CLOCK()
    env.rollout(n, break_when_any_done=False)
    return (CLOCK() - start) / n


def rollout_policy(env, n: int) -> float:
    action = torch.ones(1, dtype=torch.int64)

    def policy(td):
        td["action"] = action
        return td

    start = CLOCK()
    env.rollout(n, policy, break_when_any_done=False)
    return (CLOCK() - start) / n


CASES = {
    "step": step_loop,
    "step_and_maybe_reset": step_and_maybe_reset_loop,
    "rollout (random actions)": rollout_random,
    "rollout (fixed policy)": rollout_policy,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "core.json"))
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    torch.set_num_threads(1)
    envs = {"hub": HubCounting()}
    torchrl_env = make_torchrl_counting()
    if torchrl_env is not None:
        envs["torchrl"] = torchrl_env
    samples: dict[str, dict[str, list[float]]] = {name: {c: [] for c in CASES} for name in envs}
    raw: list[float] = []
    for r in range(args.rounds):
        order = list(envs) if r % 2 == 0 else list(reversed(envs))
        raw.append(raw_loop(args.steps))
        for case, fn in CASES.items():
            for name in order:
                fn(envs[name], args.steps // 10)  # warm-up
                samples[name][case].append(fn(envs[name], args.steps))
    raw_us = statistics.median(raw) * 1e6
    table = []
    for case in CASES:
        row = {"case": case, "raw_us": round(raw_us, 2)}
        for name in envs:
            us = statistics.median(samples[name][case]) * 1e6
            row[f"{name}_us"] = round(us, 2)
            row[f"{name}_overhead_us"] = round(us - raw_us, 2)
        if "torchrl" in envs:
            row["overhead_ratio_hub_over_torchrl"] = round(
                row["hub_overhead_us"] / row["torchrl_overhead_us"], 3
            )
        table.append(row)
    result = {
        "benchmark": "core per-step overhead (counting env)",
        "rounds": args.rounds,
        "clock": args.clock,
        "steps": args.steps,
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "tensordict": tensordict.__version__,
            "hub": hub.__version__,
            "torchrl": __import__("torchrl").__version__ if "torchrl" in envs else None,
        },
        "table": table,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    header = f"{'case':28s} {'raw':>7s} " + " ".join(
        f"{n + ' µs':>12s} {'overhead':>9s}" for n in envs
    )
    print(header)
    for row in table:
        line = f"{row['case']:28s} {row['raw_us']:7.1f} "
        line += " ".join(f"{row[n + '_us']:12.1f} {row[n + '_overhead_us']:9.1f}" for n in envs)
        if "overhead_ratio_hub_over_torchrl" in row:
            line += f"   hub/torchrl overhead = {row['overhead_ratio_hub_over_torchrl']:.2f}"
        print(line)


if __name__ == "__main__":
    main()
