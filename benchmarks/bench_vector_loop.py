"""hub's vector loop against the raw backends and against its floor, paired in one process.

For gymnasium (``SyncVectorEnv``) and EnvPool CartPole at each width, the loops of ``hub
bench`` (:mod:`hub.cli.bench_loops`: the seed's 4->64->64->2 tanh MLP, argmax, in every loop)
and the floor run in one process pinned to one core, in chunks of ``--chunk`` vector steps that
alternate between the loops, so that the machine's drifts fall on all of them alike:

* ``raw``: the library's own vector env and autoreset (``build_loop("gymnasium"|"envpool")``);
  every EnvPool loop here, raw, floor and hub, has one worker thread per CPU the process may
  run on (one, pinned), hub's default;
* ``raw_default_threads`` (EnvPool): the raw loop with EnvPool's own ``num_threads`` (one per
  CPU of the machine: two threads on the one core), what the thread count costs;
* ``raw_hub_semantic``: the raw loop (numpy in and out, no tensordict) with hub's semantic:
  autoreset disabled and ended sub-envs reset before the next step, with the floor's calls
  (below). What the semantic costs, without any TensorDict work;
* ``hub``: ``hub.make_env("<backend>:CartPole-v1", num_envs=W)`` stepped with
  ``step_and_maybe_reset``, the policy's index one-hot encoded into the tensordict (hub's
  default action encoding), as ``hub bench`` runs it;
* ``hub_categorical``: ``hub`` with ``categorical_action_encoding=True`` (the policy's index is
  the action: no one-hot encoding in the loop nor decoding in hub);
* ``floor``: the least TensorDict loop on the same backend calls with hub's semantic (the true
  last observation under ``"next"``, ended sub-envs reset before the next step, every
  transition real): the policy reads ``td["observation"]`` and writes the one-hot action into
  ``td``; the action goes to the backend as indices (``argmax``); the step's observation,
  reward and three done flags come back as tensors in a new ``"next"`` tensordict (built
  without tensordict's checks); the next input is a new tensordict of the observation and done
  flags, with the ended sub-envs reset. gymnasium: ``SyncVectorEnv`` with autoreset disabled,
  ``env.step``, then ``env.envs[i].reset()`` for each ended sub-env (with the vector env's own
  bookkeeping of a masked reset). EnvPool: its C++ calls, ``_send``/``_recv`` for the step and
  ``_reset(ended ids)``/``_recv`` for the resets, as hub's runner makes them. No action check,
  no spec, no generic dispatch.

Chunks are timed in CPU time of the process (``time.process_time``: every thread, EnvPool's
workers too, all pinned to the one core), which other processes on a loaded machine disturb far
less than wall time (``--clock wall`` for wall time). Each loop steps its own env seeded alike. Ratios are of the time of the same chunks: a loop's
actions/s over the raw loop's, summed over the run (``ratio``) and per round of chunks (median,
min, max), and the ratio of the fastest chunks (``ratio_of_fastest``: each loop's least loaded
chunk, the estimate that a loaded machine disturbs least). Absolute figures vary with the
machine's load; only the ratios of one run compare.

Usage:
    python benchmarks/bench_vector_loop.py [--widths 1 8 64] [--backends gymnasium envpool]
        [--chunks 100] [--chunk 20] [--core 0] [--clock cpu] [--out benchmarks/results/vector_loop.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any

import numpy as np
import torch

from hub.cli.bench_loops import build_loop, envpool_threads, mlp_policy, numpy_loop
from hub.envs.utils import prebuilt_tensordict

ENV_ID = "CartPole-v1"


def _flags(done: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, n: int) -> dict:
    return {
        "terminated": torch.from_numpy(terminated.reshape(n, 1)),
        "truncated": torch.from_numpy(truncated.reshape(n, 1)),
        "done": torch.from_numpy(done.reshape(n, 1)),
    }


def _not_done(n: int) -> dict:
    zeros = np.zeros(n, dtype=bool)
    return _flags(zeros, zeros.copy(), zeros.copy(), n)


def _policy_step(policy: Any, eye: torch.Tensor, td: Any) -> np.ndarray:
    """The policy's part of a hub loop (as :mod:`hub.cli.bench_loops`), and the action as
    indices for the backend."""
    with torch.no_grad():
        index = policy(td.get("observation").to(torch.float32)).argmax(-1)
    td.set("action", eye[index])
    return td.get("action").view(torch.uint8).argmax(-1).numpy()


def floor_gymnasium(width: int, seed: int) -> tuple[Any, Any]:
    """The floor loop over a gymnasium ``SyncVectorEnv`` (autoreset disabled)."""
    import gymnasium
    from gymnasium.vector import AutoresetMode

    env = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make(ENV_ID)] * width, autoreset_mode=AutoresetMode.DISABLED
    )
    batch = torch.Size([width])
    policy = mlp_policy(4, 2, seed)
    eye = torch.eye(2, dtype=torch.bool)
    obs, _ = env.reset(seed=seed)
    first = {"observation": torch.from_numpy(np.array(obs, dtype=np.float32)), **_not_done(width)}
    state = {"td": prebuilt_tensordict(first, batch)}
    envs = env.envs

    def step() -> None:
        td = state["td"]
        action = _policy_step(policy, eye, td)
        obs, reward, terminated, truncated, _ = env.step(action)
        observation = np.array(obs, dtype=np.float32)
        done = terminated | truncated
        nxt = {
            "observation": torch.from_numpy(observation),
            "reward": torch.from_numpy(np.array(reward, dtype=np.float32).reshape(width, 1)),
            **_flags(done, terminated, truncated, width),
        }
        td.set("next", prebuilt_tensordict(nxt, batch))
        if done.any():
            observation = observation.copy()
            env._terminations[done] = False
            env._truncations[done] = False
            env._autoreset_envs[done] = False
            for i in np.flatnonzero(done).tolist():
                env._env_obs[i], _ = envs[i].reset(seed=None, options={})
                observation[i] = env._env_obs[i]
            nxt = {"observation": torch.from_numpy(observation), **_not_done(width)}
        else:
            nxt = {key: nxt[key] for key in ("observation", "terminated", "truncated", "done")}
        state["td"] = prebuilt_tensordict(nxt, batch)

    return step, env.close


def floor_envpool(width: int, seed: int) -> tuple[Any, Any]:
    """The floor loop over EnvPool's C++ calls, hub's resets of the ended envs."""
    import envpool

    pool = envpool.make_gymnasium(
        ENV_ID, num_envs=width, seed=seed, num_threads=envpool_threads(width)
    )
    slot = {key: i for i, key in enumerate(pool._state_keys)}
    i_obs, i_rew, i_done, i_trunc = slot["obs"], slot["reward"], slot["done"], slot["trunc"]
    i_id = slot["info:env_id"]
    send, recv, reset = pool._send, pool._recv, pool._reset
    ids = np.arange(width, dtype=np.int32)
    batch = torch.Size([width])
    policy = mlp_policy(4, 2, seed)
    eye = torch.eye(2, dtype=torch.bool)
    reset(ids)
    states = recv()
    first = {"observation": torch.from_numpy(states[i_obs]), **_not_done(width)}
    state = {"td": prebuilt_tensordict(first, batch)}

    def step() -> None:
        td = state["td"]
        action = _policy_step(policy, eye, td).astype(np.int32)
        send([ids, ids, action])
        states = recv()
        observation, done, truncated = states[i_obs], states[i_done], states[i_trunc]
        terminated = np.greater(done, truncated)
        nxt = {
            "observation": torch.from_numpy(observation),
            "reward": torch.from_numpy(states[i_rew].reshape(width, 1)),
            **_flags(done, terminated, truncated, width),
        }
        td.set("next", prebuilt_tensordict(nxt, batch))
        if done.any():
            reset(np.flatnonzero(done).astype(np.int32))
            rows = recv()
            observation = observation.copy()
            observation[rows[i_id]] = rows[i_obs]
            nxt = {"observation": torch.from_numpy(observation), **_not_done(width)}
        else:
            nxt = {key: nxt[key] for key in ("observation", "terminated", "truncated", "done")}
        state["td"] = prebuilt_tensordict(nxt, batch)

    return step, pool.close


def semantic_gymnasium(width: int, seed: int) -> tuple[Any, Any]:
    """The raw loop (numpy in and out, no tensordict) with hub's semantic: autoreset disabled,
    ended sub-envs reset through ``env.envs[i].reset()`` before the next step."""
    import gymnasium
    from gymnasium.vector import AutoresetMode

    env = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make(ENV_ID)] * width, autoreset_mode=AutoresetMode.DISABLED
    )
    policy = mlp_policy(4, 2, seed)
    obs, _ = env.reset(seed=seed)
    state = {"obs": obs}
    envs = env.envs

    def step() -> None:
        with torch.no_grad():
            x = torch.from_numpy(np.asarray(state["obs"], dtype=np.float32))
            action = policy(x).argmax(-1).numpy()
        obs, _, terminated, truncated, _ = env.step(action)
        done = terminated | truncated
        if done.any():
            env._terminations[done] = False
            env._truncations[done] = False
            env._autoreset_envs[done] = False
            for i in np.flatnonzero(done).tolist():
                env._env_obs[i], _ = envs[i].reset(seed=None, options={})
                obs[i] = env._env_obs[i]
        state["obs"] = obs

    return step, env.close


def semantic_envpool(width: int, seed: int) -> tuple[Any, Any]:
    """The raw loop on EnvPool's C++ calls with hub's semantic: ended envs reset with
    ``_reset(ids)``/``_recv`` before the next step (no tensordict)."""
    import envpool

    pool = envpool.make_gymnasium(
        ENV_ID, num_envs=width, seed=seed, num_threads=envpool_threads(width)
    )
    slot = {key: i for i, key in enumerate(pool._state_keys)}
    i_obs, i_done, i_id = slot["obs"], slot["done"], slot["info:env_id"]
    send, recv, reset = pool._send, pool._recv, pool._reset
    ids = np.arange(width, dtype=np.int32)
    policy = mlp_policy(4, 2, seed)
    reset(ids)
    state = {"obs": recv()[i_obs]}

    def step() -> None:
        with torch.no_grad():
            action = policy(torch.from_numpy(state["obs"])).argmax(-1).numpy().astype(np.int32)
        send([ids, ids, action])
        states = recv()
        obs, done = states[i_obs], states[i_done]
        if done.any():
            reset(np.flatnonzero(done).astype(np.int32))
            rows = recv()
            obs = obs.copy()
            obs[rows[i_id]] = rows[i_obs]
        state["obs"] = obs

    return step, pool.close


def raw_envpool_default_threads(width: int, seed: int) -> tuple[Any, Any]:
    """The raw EnvPool loop with EnvPool's own ``num_threads`` (one per CPU of the machine)."""
    import envpool

    pool = envpool.make_gymnasium(ENV_ID, num_envs=width, seed=seed)
    return numpy_loop(pool, width, seed, {})


def hub_categorical(backend: str, width: int, seed: int) -> tuple[Any, Any]:
    """hub's loop with ``categorical_action_encoding=True``: the policy's index is the action."""
    import hub

    env = hub.make_env(
        f"{backend}:{ENV_ID}", num_envs=width, seed=seed, categorical_action_encoding=True
    )
    policy = mlp_policy(4, 2, seed)
    dtype = env.action_spec.dtype
    state = {"td": env.reset()}

    def step() -> None:
        td = state["td"]
        with torch.no_grad():
            index = policy(td.get("observation").to(torch.float32)).argmax(-1)
        td.set("action", index.to(dtype))
        state["td"] = env.step_and_maybe_reset(td)[1]

    return step, env.close


def loops_for(backend: str, width: int, seed: int) -> dict[str, tuple[Any, Any]]:
    if backend == "gymnasium":
        return {
            "raw": build_loop("gymnasium", ENV_ID, width, seed),
            "hub": build_loop("hub-gymnasium", ENV_ID, width, seed),
            "raw_hub_semantic": semantic_gymnasium(width, seed),
            "hub_categorical": hub_categorical(backend, width, seed),
            "floor": floor_gymnasium(width, seed),
        }
    return {
        "raw": build_loop("envpool", ENV_ID, width, seed),
        "raw_default_threads": raw_envpool_default_threads(width, seed),
        "raw_hub_semantic": semantic_envpool(width, seed),
        "hub": build_loop("hub-envpool", ENV_ID, width, seed),
        "hub_categorical": hub_categorical(backend, width, seed),
        "floor": floor_envpool(width, seed),
    }


def measure(
    backend: str, width: int, chunks: int, chunk: int, seed: int, clock: str = "cpu"
) -> dict[str, Any]:
    """Interleaved chunks of ``chunk`` vector steps of every loop; per-loop totals and ratios."""
    loops = loops_for(backend, width, seed)
    for step, _ in loops.values():  # warm-up
        for _ in range(max(chunk // 2, 20)):
            step()
    times: dict[str, list[float]] = {name: [] for name in loops}
    perf = time.process_time if clock == "cpu" else time.perf_counter
    for _ in range(chunks):
        for name, (step, _) in loops.items():
            start = perf()
            for _ in range(chunk):
                step()
            times[name].append(perf() - start)
    for _, close in loops.values():
        close()
    raw = times["raw"]
    out: dict[str, Any] = {}
    for name, ts in times.items():
        per_round = [r / t for r, t in zip(raw, ts)]
        out[name] = {
            "us_per_vector_step": 1e6 * sum(ts) / (chunks * chunk),
            "actions_per_s": chunks * chunk * width / sum(ts),
            "ratio": sum(raw) / sum(ts),
            "ratio_median": statistics.median(per_round),
            "ratio_of_fastest": min(raw) / min(ts),
            "ratio_min": min(per_round),
            "ratio_max": max(per_round),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--backends", nargs="+", default=["gymnasium", "envpool"])
    parser.add_argument("--chunks", type=int, default=100, help="rounds of chunks")
    parser.add_argument("--chunk", type=int, default=20, help="vector steps per chunk")
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--clock",
        choices=["cpu", "wall"],
        default="cpu",
        help="time the chunks in CPU time of the process (all its threads: EnvPool's too) or "
        "wall time",
    )
    parser.add_argument("--out", default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    torch.set_num_threads(1)
    results: dict[str, Any] = {}
    for backend in args.backends:
        for width in args.widths:
            cell = measure(backend, width, args.chunks, args.chunk, args.seed, args.clock)
            results[f"{backend}/W={width}"] = cell
            for name, row in cell.items():
                print(
                    f"{backend:9s} W={width:<3d} {name:16s} {row['us_per_vector_step']:8.1f} us "
                    f"{row['actions_per_s']:10.0f} act/s  x{row['ratio']:.2f} "
                    f"median x{row['ratio_median']:.2f} "
                    f"(rounds {row['ratio_min']:.2f}-{row['ratio_max']:.2f}) "
                    f"fastest x{row['ratio_of_fastest']:.2f}",
                    flush=True,
                )
    if args.out:
        import envpool
        import gymnasium
        import tensordict

        meta = {
            "command": " ".join([os.path.basename(sys.argv[0]), *(argv or sys.argv[1:])]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "tensordict": tensordict.__version__,
            "gymnasium": gymnasium.__version__,
            "envpool": envpool.__version__,
            "chunks": args.chunks,
            "chunk": args.chunk,
            "core": args.core,
            "clock": args.clock,
            "load_average": os.getloadavg(),
        }
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
