"""Serving an ExternalEnv on loopback: actions/s and get_action round-trip latency.

Cases, each with 1, 8 and 64 clients:

- ``hub-remote``: ``PolicyServer`` + ``PolicyClient(inference="remote")`` (msgpack over TCP);
- ``hub-local``: ``PolicyClient(inference="local")``, the client runs the policy's weights and
  sends columns of transitions (``PolicyServer(local_view="bulk")``); the learner reads them in
  bulk with ``env.take_transitions()``;
- ``pickle-http``: a pickle-over-HTTP baseline of RLlib's ``PolicyServerInput`` /
  ``PolicyClient`` design (each call a ``requests.post`` of a pickled dict to a threading HTTP
  server that unpickles it, calls the same ExternalEnv and answers with a pickled reply). Ray
  2.60 no longer ships ``PolicyServerInput``; this baseline keeps its transport and
  serialization, and hub's learner side, so the difference is the protocol.

The learner (server and a loop stepping the env with the policy, or reading its transitions in
bulk for ``hub-local``) runs in this process; the
clients run as threads of one separate process (numpy + msgpack, or requests), each playing
episodes of 100 steps of a 4-float observation and a 2-way action, as fast as it can.

The cases of one client count are run one after the other, so compare them within one run;
each row gives the machine's load average as it ended.

Usage::

    python benchmarks/bench_external.py                 # every case, 5 s each
    python benchmarks/bench_external.py --cases hub-remote --clients 1 8 --seconds 3
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

EPISODE_STEPS = 100


# ---------------------------------------------------------------------- the baseline server
class PickleHTTPServer:
    """RLlib's PolicyServerInput design: pickled commands POSTed to a threading HTTP server."""

    def __init__(self, env):
        external = env

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                size = int(self.headers.get("Content-Length", 0))
                command = pickle.loads(self.rfile.read(size))  # what RLlib does: unsafe
                reply = _run_command(external, command)
                body = pickle.dumps(reply)
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.address = self.httpd.server_address
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def _run_command(env, command):
    kind = command["command"]
    if kind == "START_EPISODE":
        return {"episode_id": env.start_episode(command["episode_id"], True)}
    if kind == "GET_ACTION":
        return {"action": env.get_action(command["episode_id"], command["observation"])}
    if kind == "LOG_RETURNS":
        env.log_returns(command["episode_id"], command["reward"])
    elif kind == "END_EPISODE":
        env.end_episode(command["episode_id"], command["observation"])
    return {}


# ---------------------------------------------------------------------- the client process
def _client_main(case, address, clients, seconds):
    stop = time.monotonic() + seconds
    results = [[] for _ in range(clients)]
    errors = []

    def play(index):
        latencies = []
        if case == "pickle-http":
            import requests

            url = f"http://{address[0]}:{address[1]}"

            def send(command):
                return pickle.loads(requests.post(url, data=pickle.dumps(command)).content)

            call = {
                "start": lambda: send({"command": "START_EPISODE", "episode_id": None})[
                    "episode_id"
                ],
                "act": lambda e, o: send(
                    {"command": "GET_ACTION", "episode_id": e, "observation": o}
                )["action"],
                "reward": lambda e, r: send(
                    {"command": "LOG_RETURNS", "episode_id": e, "reward": r}
                ),
                "end": lambda e, o: send(
                    {"command": "END_EPISODE", "episode_id": e, "observation": o}
                ),
                "close": lambda: None,
            }
        else:
            from hub.external.client import PolicyClient

            inference = "local" if case == "hub-local" else "remote"
            client = PolicyClient(address, inference=inference, timeout=60, update_interval=1.0)
            call = {
                "start": client.start_episode,
                "act": client.get_action,
                "reward": client.log_returns,
                "end": client.end_episode,
                "close": client.close,
            }
        obs = np.zeros(4, np.float32)
        results[index] = latencies
        try:
            while time.monotonic() < stop:
                eid = call["start"]()
                for t in range(EPISODE_STEPS):
                    obs[0] = t
                    begin = time.perf_counter()
                    call["act"](eid, obs)
                    latencies.append(time.perf_counter() - begin)
                    call["reward"](eid, 1.0)
                call["end"](eid, obs)
            call["close"]()
        except Exception as err:  # counted: a client whose calls fail stops
            errors.append(repr(err))

    threads = [threading.Thread(target=play, args=(i,)) for i in range(clients)]
    begin = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - begin
    latencies = np.concatenate([np.asarray(r) for r in results])
    print(
        json.dumps(
            {
                "actions": int(latencies.size),
                "seconds": elapsed,
                "p50_ms": float(np.percentile(latencies, 50) * 1e3),
                "p99_ms": float(np.percentile(latencies, 99) * 1e3),
                "failed_clients": len(errors),
                "first_error": errors[0] if errors else None,
            }
        )
    )


# ---------------------------------------------------------------------- the learner process
def run_case(case, clients, seconds, wait_s=0.05):
    import torch

    from hub.external import ExternalEnv, PolicyServer
    from hub.specs import Categorical, Unbounded

    env = ExternalEnv(Unbounded((4,)), Categorical(2), max_concurrent=clients, wait_s=wait_s)
    policy = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2))
    if case == "pickle-http":
        server = PickleHTTPServer(env)
    else:
        view = "bulk" if case == "hub-local" else "step"
        server = PolicyServer(env, policy=policy, local_view=view)
    stop = threading.Event()
    learned = [0]

    def learn():
        if case == "hub-local":  # the bulk view: every queued transition at once
            while not stop.is_set():
                learned[0] += env.take_transitions(timeout=wait_s).shape[0]
            return
        td = env.reset()
        while not stop.is_set():
            td["action"] = policy(td["observation"]).argmax(-1)
            data, td = env.step_and_maybe_reset(td)
            learned[0] += int(data["next", "valid"].sum())

    learner = threading.Thread(target=learn)
    learner.start()
    proc = subprocess.run(
        [
            sys.executable,
            __file__,
            "--client",
            case,
            json.dumps(list(server.address)),
            str(clients),
            str(seconds),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    stop.set()
    learner.join()
    server.close()
    env.close()
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out.update(case=case, clients=clients, actions_per_s=out["actions"] / out["seconds"])
    out["learner_transitions"] = learned[0]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["hub-remote", "hub-local", "pickle-http"])
    parser.add_argument("--clients", nargs="+", type=int, default=[1, 8, 64])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--wait-s", type=float, default=0.05, help="the ExternalEnv's wait_s")
    parser.add_argument("--json", default=None, help="write the results to this file")
    parser.add_argument("--client", nargs=4, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        case, address, clients, seconds = args.client
        _client_main(case, tuple(json.loads(address)), int(clients), float(seconds))
        return
    rows = []
    print(f"{'case':12} {'clients':>7} {'actions/s':>10} {'p50 ms':>8} {'p99 ms':>8} failed  load")
    for clients in args.clients:
        for case in args.cases:
            row = run_case(case, clients, args.seconds, args.wait_s)
            row["load"] = os.getloadavg()[0]  # the 1-minute load average as the case ended
            rows.append(row)
            print(
                f"{case:12} {clients:7d} {row['actions_per_s']:10.0f} "
                f"{row['p50_ms']:8.3f} {row['p99_ms']:8.3f} {row['failed_clients']:6d} "
                f"{row['load']:5.1f}",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
