"""CartPole driven by simulator processes through ``PolicyClient``; a policy trained on the learner.

The learner (this process) serves an ``ExternalEnv`` with ``PolicyServer`` and starts client
processes. Each client runs gymnasium's CartPole-v1 in its own loop and asks the server for
actions (remote inference). The learner steps the env with a small policy that samples its
actions, gathers each slot's valid transitions into episodes, and updates the policy with
REINFORCE on batches of episodes, until the mean return of the last 20 episodes reaches 195.

Run::

    python examples/external_cartpole.py              # 8 clients
    python examples/external_cartpole.py --clients 4 --target 195
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np


def client_main(address: str, seed: int) -> None:
    """One simulator: CartPole episodes until the server goes away."""
    import gymnasium as gym

    from hub.external.client import PolicyClient
    from hub.external.protocol import ProtocolError

    game = gym.make("CartPole-v1")
    try:
        client = PolicyClient(address, reconnect_s=10, timeout=60)
        episode = 0
        while True:
            eid = client.start_episode()
            obs, _ = game.reset(seed=seed * 100_000 + episode)
            while True:
                action = client.get_action(eid, obs)
                obs, reward, terminated, truncated, _ = game.step(int(action))
                client.log_returns(eid, float(reward))
                if terminated or truncated:
                    client.end_episode(eid, obs, truncated=truncated and not terminated)
                    break
            episode += 1
    except (ProtocolError, ConnectionError):
        pass  # the learner closed the server: done


def learner_main(clients: int, target: float, max_minutes: float) -> None:
    import torch

    from hub.external import ExternalEnv, PolicyServer
    from hub.specs import Categorical, Unbounded

    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = ExternalEnv(Unbounded((4,)), Categorical(2), max_concurrent=clients, wait_s=0.5)
    server = PolicyServer(env)
    address = f"{server.address[0]}:{server.address[1]}"
    procs = [
        subprocess.Popen([sys.executable, __file__, "--client", address, "--seed", str(i)])
        for i in range(clients)
    ]
    policy = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    slots = [[] for _ in range(clients)]  # the running episode of each slot: (obs, action, reward)
    finished, returns = [], []
    start = time.monotonic()
    td = env.reset()
    try:
        while time.monotonic() - start < max_minutes * 60:
            with torch.no_grad():
                logits = policy(td["observation"])
            td["action"] = torch.distributions.Categorical(logits=logits).sample()
            data, td = env.step_and_maybe_reset(td)
            for i in data["next", "valid"].nonzero().flatten().tolist():
                step = data[i]
                slots[i].append(
                    (step["observation"], step["action"], float(step["next", "reward"]))
                )
                if bool(step["next", "done"]):
                    finished.append(slots[i])
                    returns.append(sum(r for _, _, r in slots[i]))
                    slots[i] = []
            if len(finished) >= 16:
                _reinforce(policy, optimizer, finished)
                finished = []
                recent = float(np.mean(returns[-20:]))
                print(
                    f"episodes {len(returns):5d}  mean return (last 20) {recent:6.1f}", flush=True
                )
                if len(returns) >= 20 and recent >= target:
                    break
    finally:
        server.close()
        env.close()
        for proc in procs:
            proc.wait()
    recent = float(np.mean(returns[-20:]))
    minutes = (time.monotonic() - start) / 60
    print(f"done: {len(returns)} episodes in {minutes:.1f} min, mean return (last 20) {recent:.1f}")


def _reinforce(policy, optimizer, episodes, gamma=0.99):
    import torch

    observations, actions, advantages = [], [], []
    for episode in episodes:
        running, to_go = 0.0, []
        for _, _, reward in reversed(episode):
            running = reward + gamma * running
            to_go.append(running)
        to_go.reverse()
        observations += [obs for obs, _, _ in episode]
        actions += [action for _, action, _ in episode]
        advantages += to_go
    obs = torch.stack(observations)
    action = torch.stack(actions)
    adv = torch.tensor(advantages)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    log_prob = torch.distributions.Categorical(logits=policy(obs)).log_prob(action)
    loss = -(log_prob * adv).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--target", type=float, default=195.0)
    parser.add_argument("--max-minutes", type=float, default=20.0)
    parser.add_argument("--client", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(args.client, args.seed)
    else:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        learner_main(args.clients, args.target, args.max_minutes)


if __name__ == "__main__":
    main()
