"""Cost of hub's exports over the raw library, measured paired (raw and export alternate).

Two cases on CartPole-v1:

* ``step``: one ``to_gymnasium(hub.make_env("gymnasium:CartPole-v1"))`` step against one raw
  ``gymnasium.make("CartPole-v1")`` step (fixed action, ``reset`` at episode ends): the
  overhead in microseconds per step;
* ``ppo``: Stable-Baselines3's PPO end to end (``learn``) on the export of one env
  (``to_gymnasium``; SB3 wraps it in its ``DummyVecEnv``) against PPO on the raw
  ``gymnasium.make("CartPole-v1")``: the ratio of the two times;
* ``ppo-vec``: the same with ``N`` envs: ``hub.to_sb3(hub.make_env("gymnasium:CartPole-v1",
  num_envs=N))`` (hub runs a gymnasium ``SyncVectorEnv`` inside) against SB3's ``DummyVecEnv``
  of ``N`` raw envs.

Each round times raw then export (the order alternates between rounds), so both see the same
machine load; the figures are medians over rounds, with the per-round values kept. Time is the
calling thread's CPU time (``--wall`` for wall-clock): on a shared machine, waiting for a CPU
is not counted. torch runs one thread (PPO's small networks gain nothing from more).

Usage:
    python benchmarks/bench_export.py                       # every case, results/export.json
    python benchmarks/bench_export.py --case step --rounds 15 --steps 20000

Example:
    >>> out = measure_step(steps=200)
    >>> sorted(out)
    ['export', 'raw']
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

ENV_ID = "CartPole-v1"
CLOCK = time.thread_time
RESULTS = Path(__file__).resolve().parent / "results" / "export.json"


def _loop(env: Any, steps: int) -> float:
    """Seconds for ``steps`` steps of a gymnasium-API env (fixed action, resets at ends)."""
    env.reset(seed=0)
    step, reset = env.step, env.reset
    start = CLOCK()
    for _ in range(steps):
        _, _, terminated, truncated, _ = step(0)
        if terminated or truncated:
            reset()
    return CLOCK() - start


def measure_step(steps: int, order: tuple[str, ...] = ("raw", "export")) -> dict[str, float]:
    """Microseconds per step of raw gymnasium and of the export, timed one after the other."""
    import gymnasium

    import hub

    envs = {
        "raw": gymnasium.make(ENV_ID),
        "export": hub.to_gymnasium(hub.make_env(f"gymnasium:{ENV_ID}")),
    }
    for env in envs.values():
        _loop(env, min(steps, 500))  # warm up
    out = {name: _loop(envs[name], steps) / steps * 1e6 for name in order}
    for env in envs.values():
        env.close()
    return out


def _ppo_seconds(venv: Any, timesteps: int) -> float:
    from stable_baselines3 import PPO

    venv.seed(0)
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=4, seed=0, device="cpu")
    start = CLOCK()
    model.learn(total_timesteps=timesteps)
    elapsed = CLOCK() - start
    venv.close()
    return elapsed


def measure_ppo(
    timesteps: int, num_envs: int, order: tuple[str, ...] = ("raw", "export")
) -> dict[str, float]:
    """Seconds of PPO's ``learn`` on SB3's DummyVecEnv of raw envs and on hub's export."""
    import gymnasium
    from stable_baselines3.common.vec_env import DummyVecEnv

    import hub

    def make(name: str) -> Any:
        if num_envs == 1:  # SB3 wraps a gymnasium env in a DummyVecEnv itself
            if name == "raw":
                return DummyVecEnv([lambda: gymnasium.make(ENV_ID)])
            return DummyVecEnv([lambda: hub.to_gymnasium(hub.make_env(f"gymnasium:{ENV_ID}"))])
        if name == "raw":
            return DummyVecEnv([lambda: gymnasium.make(ENV_ID)] * num_envs)
        return hub.to_sb3(hub.make_env(f"gymnasium:{ENV_ID}", num_envs=num_envs))

    return {name: _ppo_seconds(make(name), timesteps) for name in order}


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    result: dict[str, Any] = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "clock": "wall" if args.wall else "thread CPU",
        "rounds": args.rounds,
    }
    if args.case in ("step", "all"):
        rounds = []
        for i in range(args.rounds):
            order = ("raw", "export") if i % 2 == 0 else ("export", "raw")
            rounds.append(measure_step(args.steps, order))
        over = [r["export"] - r["raw"] for r in rounds]
        result["step"] = {
            "steps": args.steps,
            "raw_us": statistics.median(r["raw"] for r in rounds),
            "export_us": statistics.median(r["export"] for r in rounds),
            "overhead_us_median": statistics.median(over),
            "overhead_us_rounds": [round(x, 2) for x in over],
        }
        print(
            f"step: raw {result['step']['raw_us']:.2f} us, export "
            f"{result['step']['export_us']:.2f} us, overhead (median of paired rounds) "
            f"{result['step']['overhead_us_median']:.2f} us"
        )
    cases = {"ppo": 1, "ppo-vec": args.num_envs}
    for case, num_envs in cases.items():
        if args.case not in (case, "all"):
            continue
        rounds = []
        for i in range(args.ppo_rounds):
            order = ("raw", "export") if i % 2 == 0 else ("export", "raw")
            rounds.append(measure_ppo(args.timesteps, num_envs, order))
        ratios = [r["export"] / r["raw"] for r in rounds]
        result[case] = {
            "timesteps": args.timesteps,
            "num_envs": num_envs,
            "raw_s": statistics.median(r["raw"] for r in rounds),
            "export_s": statistics.median(r["export"] for r in rounds),
            "ratio_median": statistics.median(ratios),
            "ratio_rounds": [round(x, 4) for x in ratios],
        }
        print(
            f"{case}: raw {result[case]['raw_s']:.2f} s, export {result[case]['export_s']:.2f} s, "
            f"ratio (median of paired rounds) {result[case]['ratio_median']:.3f}x"
        )
    return result


def main(argv: list[str] | None = None) -> None:
    global CLOCK
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", choices=["step", "ppo", "ppo-vec", "all"], default="all")
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--timesteps", type=int, default=8192)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--ppo-rounds", type=int, default=6)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.wall:
        CLOCK = time.perf_counter
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
