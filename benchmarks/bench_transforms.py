"""Per-step cost of a transform stack, hub against TorchRL, in one run.

The stack is ``Compose(StepCounter(), RewardSum(), DoubleToFloat())`` on gymnasium's
``CartPole-v1`` (hub through ``make_env("gymnasium:CartPole-v1")``, TorchRL through its
``GymEnv``) and on a counting env written for each framework (almost no env work, so the
framework is all that is measured). For each framework, the cost of the stack is the time per
step of the transformed env minus that of the bare env, measured side by side. Two loops: a
manual ``rand_action`` + ``step_and_maybe_reset`` loop, and ``rollout(N,
break_when_any_done=False)``. Episodes end and restart inside the timed loops (CartPole's last
about 22 random steps; the counting env's 50).

Each round runs every case once for ``--steps`` steps, in an order that alternates between
rounds; figures are medians over rounds. Times are the CPU time of the measuring thread
(``time.thread_time``, torch on one thread): the machines this runs on are shared, and CPU time
is much less disturbed by other processes than wall time (``--clock wall`` for wall time).

Run (TorchRL side by side needs the peer venv: benchmarks/setup_peer_venv.sh):

    .bench-venv/bin/python benchmarks/bench_transforms.py --rounds 7
    .venv/bin/python benchmarks/bench_transforms.py --hub-only

Writes ``benchmarks/results/transforms.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

RESULTS = Path(__file__).resolve().parent / "results" / "transforms.json"
EPISODE = 50  # steps per episode of the counting envs


# ---------------------------------------------------------------- hub side
def hub_counting() -> Any:
    from hub.envs.builtin import CountingEnv

    return CountingEnv(max_steps=EPISODE)


def hub_cartpole() -> Any:
    import hub

    return hub.make_env("gymnasium:CartPole-v1")


def hub_stack() -> Any:
    from hub.transforms import Compose, DoubleToFloat, RewardSum, StepCounter

    return Compose(StepCounter(), RewardSum(), DoubleToFloat())


def hub_transformed(make: Callable[[], Any]) -> Callable[[], Any]:
    def build() -> Any:
        from hub.transforms import TransformedEnv

        return TransformedEnv(make(), hub_stack())

    return build


# ---------------------------------------------------------------- TorchRL side
def torchrl_counting() -> Any:
    from tensordict import TensorDict
    from torchrl.data import Categorical, Composite, Unbounded
    from torchrl.envs import EnvBase

    class Counting(EnvBase):
        def __init__(self) -> None:
            super().__init__()
            self.observation_spec = Composite(observation=Unbounded((1,), dtype=torch.int64))
            self.action_spec = Categorical(2, shape=(1,))
            self.reward_spec = Unbounded((1,))
            self.done_spec = Composite(
                done=Categorical(2, (1,), dtype=torch.bool),
                terminated=Categorical(2, (1,), dtype=torch.bool),
                truncated=Categorical(2, (1,), dtype=torch.bool),
            )
            self.count = torch.zeros(1, dtype=torch.int64)

        def _reset(self, tensordict: Any = None, **kwargs: Any) -> Any:
            self.count.zero_()
            false = torch.zeros(1, dtype=torch.bool)
            return TensorDict(
                {
                    "observation": self.count.clone(),
                    "done": false,
                    "terminated": false.clone(),
                    "truncated": false.clone(),
                },
                [],
            )

        def _step(self, tensordict: Any) -> Any:
            self.count += 1
            term = self.count >= EPISODE
            return TensorDict(
                {
                    "observation": self.count.clone(),
                    "reward": tensordict["action"].to(torch.float32),
                    "done": term.clone(),
                    "terminated": term,
                    "truncated": torch.zeros(1, dtype=torch.bool),
                },
                [],
            )

        def _set_seed(self, seed: Any) -> None:
            pass

    return Counting()


def torchrl_cartpole() -> Any:
    from torchrl.envs import GymEnv

    return GymEnv("CartPole-v1")


def torchrl_transformed(make: Callable[[], Any]) -> Callable[[], Any]:
    def build() -> Any:
        from torchrl.envs import Compose, DoubleToFloat, RewardSum, StepCounter, TransformedEnv

        return TransformedEnv(make(), Compose(StepCounter(), RewardSum(), DoubleToFloat()))

    return build


# ---------------------------------------------------------------- timing
class Case:
    """One env and one loop; keeps its env and its running tensordict between rounds."""

    def __init__(self, name: str, build: Callable[[], Any], loop: str) -> None:
        self.name = name
        self.env = build()
        self.env.set_seed(0)
        self.loop = loop
        self.td = self.env.reset()

    def run(self, steps: int, clock: Callable[[], float]) -> float:
        env = self.env
        if self.loop == "rollout":
            start = clock()
            env.rollout(steps, break_when_any_done=False)
            return (clock() - start) / steps
        td = self.td
        start = clock()
        for _ in range(steps):
            td = env.rand_action(td)
            _, td = env.step_and_maybe_reset(td)
        elapsed = clock() - start
        self.td = td
        return elapsed / steps


def available(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def build_cases(hub_only: bool, loops: list[str]) -> dict[str, Case]:
    envs: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("hub counting", hub_counting, hub_transformed(hub_counting)),
    ]
    if available("gymnasium"):
        envs.append(("hub CartPole", hub_cartpole, hub_transformed(hub_cartpole)))
    if not hub_only and available("torchrl"):
        envs.append(("torchrl counting", torchrl_counting, torchrl_transformed(torchrl_counting)))
        if available("gymnasium"):
            envs.append(
                ("torchrl CartPole", torchrl_cartpole, torchrl_transformed(torchrl_cartpole))
            )
    cases = {}
    for label, bare, transformed in envs:
        for loop in loops:
            cases[f"{label} | {loop} | bare"] = Case(label, bare, loop)
            cases[f"{label} | {loop} | transformed"] = Case(label, transformed, loop)
    return cases


def measure(
    cases: dict[str, Case], rounds: int, steps: int, clock: Callable[[], float]
) -> dict[str, list[float]]:
    names = list(cases)
    for name in names:  # warm-up
        cases[name].run(max(steps // 10, 20), clock)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else list(reversed(names))
        for name in order:
            samples[name].append(cases[name].run(steps, clock) * 1e6)
    return samples


def summarize(samples: dict[str, list[float]]) -> list[dict[str, Any]]:
    """One row per (env, loop): bare and transformed µs/step and the stack's cost."""
    rows = []
    keys = sorted({name.rsplit(" | ", 1)[0] for name in samples})
    for key in keys:
        bare = samples[f"{key} | bare"]
        trans = samples[f"{key} | transformed"]
        paired = [t - b for t, b in zip(trans, bare)]
        env, loop = key.split(" | ")
        rows.append(
            {
                "env": env,
                "loop": loop,
                "bare_us": statistics.median(bare),
                "transformed_us": statistics.median(trans),
                "stack_cost_us": statistics.median(paired),
                "stack_cost_min_max_us": [min(paired), max(paired)],
            }
        )
    return rows


def compare(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """hub's stack cost over TorchRL's, per env kind and loop."""
    out = []
    by = {(r["env"], r["loop"]): r for r in rows}
    for (env, loop), row in by.items():
        if not env.startswith("hub "):
            continue
        peer = by.get(("torchrl " + env[4:], loop))
        if peer is None:
            continue
        out.append(
            {
                "env": env[4:],
                "loop": loop,
                "hub_stack_cost_us": row["stack_cost_us"],
                "torchrl_stack_cost_us": peer["stack_cost_us"],
                "ratio": row["stack_cost_us"] / peer["stack_cost_us"],
            }
        )
    return out


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("hub", "torch", "tensordict", "torchrl", "gymnasium", "numpy"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--loops", default="loop,rollout")
    parser.add_argument("--hub-only", action="store_true")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    loops = [loop.strip() for loop in args.loops.split(",") if loop.strip()]
    cases = build_cases(args.hub_only, loops)
    load_before = os.getloadavg()
    samples = measure(cases, args.rounds, args.steps, clock)
    rows = summarize(samples)
    comparison = compare(rows)
    print(f"{'env':<18} {'loop':<8} {'bare µs':>9} {'+stack µs':>10} {'stack cost µs':>14}")
    for row in rows:
        print(
            f"{row['env']:<18} {row['loop']:<8} {row['bare_us']:>9.1f} "
            f"{row['transformed_us']:>10.1f} {row['stack_cost_us']:>14.1f}"
        )
    for row in comparison:
        print(
            f"{row['env']} ({row['loop']}): hub {row['hub_stack_cost_us']:.1f} µs vs TorchRL "
            f"{row['torchrl_stack_cost_us']:.1f} µs per step -> {row['ratio']:.2f}x"
        )
    result = {
        "benchmark": "per-step cost of Compose(StepCounter(), RewardSum(), DoubleToFloat())",
        "method": (
            f"{args.rounds} rounds x {args.steps} steps per case, interleaved (order flips every "
            f"round), median over rounds; clock: {args.clock} "
            "(thread CPU time unless 'wall'); torch.set_num_threads(1); stack cost = "
            "transformed - bare, paired per round"
        ),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_before": list(load_before),
        "load_average_after": list(os.getloadavg()),
        "versions": versions(),
        "rows": rows,
        "comparison": comparison,
        "samples_us": samples,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
