"""Attacks on a PolicyServer over loopback: what hostile peers cost it, and whether it serves on.

Cases (each in one run; the attacker is a separate process, the server and its learner run in
this one, with the file-descriptor limit raised as far as the hard limit allows):

- ``idle``: ``--connections`` (10,000) connections that never say ``hello`` are held open;
  meanwhile new well-behaved clients connect one after the other, each authenticating and
  playing a short episode. Reported: the server's threads before and while they are held, its
  RSS growth, and the p50 / p99 of a new client's time from ``connect`` to ``welcome``.
- ``preauth``: ``--preauth`` (1,000) connections each send the largest ``hello`` allowed minus
  one byte (4,095 of 4,096 announced bytes of nested msgpack arrays: the server holds them,
  waiting for the last), then all at once the last byte and 256 KiB more; RSS is sampled every
  10 ms. Reported: the RSS growth per held connection and the peak growth per connection.
- ``fuzz``: ``--messages`` (100,000) random messages (random bytes, random msgpack, typed
  messages with random fields, some after a valid ``hello``) from 64 concurrent connections.
  Reported: messages sent, the server's ``internal`` answers and failures in its log (both must
  be 0), and whether a well-behaved client is served afterwards.

Usage::

    python benchmarks/bench_external_attack.py                      # all three
    python benchmarks/bench_external_attack.py --cases idle --connections 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import resource
import struct
import subprocess
import sys
import threading
import time

import msgpack
import numpy as np
import psutil


def raise_fd_limit() -> tuple[int, int]:
    """Raise the soft limit of open files to the hard limit; ``(soft, hard)`` after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else 1 << 20
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


# ---------------------------------------------------------------------- the attacker process
async def _hold_idle(port: int, count: int) -> None:
    conns = []
    for start in range(0, count, 200):
        batch = [asyncio.open_connection("127.0.0.1", port) for _ in range(min(200, count - start))]
        conns += await asyncio.gather(*batch)
    print(json.dumps({"held": len(conns)}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    for _, writer in conns:
        writer.transport.abort()


async def _preauth(port: int, count: int) -> None:
    conns = []
    header = struct.pack(">I", 4096)
    for start in range(0, count, 200):
        batch = [asyncio.open_connection("127.0.0.1", port) for _ in range(min(200, count - start))]
        for reader, writer in await asyncio.gather(*batch):
            writer.write(header + b"\x91" * 4095)  # one byte short of the largest hello
            conns.append((reader, writer))
    print(json.dumps({"held": len(conns)}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    for _, writer in conns:  # then all at once: the last byte and 256 KiB more
        writer.write(b"\x90" + b"\x00" * (256 << 10))
    await asyncio.sleep(2.0)
    print(json.dumps({"sent": len(conns)}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    for _, writer in conns:
        writer.transport.abort()


def _random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, -1, 2**31, 2**63 - 1, rng.randrange(-(2**40), 2**40)])
    if kind == 3:
        return rng.choice([float("nan"), float("inf"), rng.uniform(-1e9, 1e9)])
    if kind == 4:
        return "".join(rng.choice("abc\u00e9\u4e2d") for _ in range(rng.randrange(40)))
    if kind == 5:
        return rng.randbytes(rng.randrange(40))
    if kind in (6, 7):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {str(rng.randrange(9)): _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


_KINDS = [
    "hello", "start_episode", "get_action", "log_action", "log_returns", "end_episode",
    "log_batch", "log_transitions", "get_weights", "bye", "ok",
]  # fmt: skip
_FIELDS = ["episode_id", "observation", "action", "reward", "info", "events", "token", "client"]


def _random_frames(rng: random.Random) -> list[bytes]:
    """A few frames of one fuzzed connection."""
    style = rng.randrange(4)
    if style == 0:  # bytes
        return [rng.randbytes(rng.randrange(1, 64))]
    if style == 1:  # msgpack as hello
        body = msgpack.packb(_random_value(rng), use_bin_type=True)
        return [struct.pack(">I", len(body)) + body]
    hello = {"v": 1, "type": "hello", "token": None, "client": "fuzz"}
    frames = [hello] if style == 3 else []
    for _ in range(rng.randrange(1, 4)):
        message = {"v": rng.choice([1, 1, 1, 2]), "type": rng.choice(_KINDS)}
        for name in rng.sample(_FIELDS, rng.randrange(4)):
            message[name] = _random_value(rng)
        if rng.random() < 0.3:
            message["observation"] = {
                "observation": {
                    "dtype": rng.choice(["float32", "int64", "object"]),
                    "shape": [rng.choice([0, 2, -1, 2**33]) for _ in range(rng.randrange(3))],
                    "data": rng.randbytes(rng.randrange(16)),
                }
            }
        frames.append(message)
    out = []
    for frame in frames:
        body = msgpack.packb(frame, use_bin_type=True)
        out.append(struct.pack(">I", len(body)) + body)
    return out


async def _fuzz(port: int, messages: int, seed: int) -> None:
    rng = random.Random(seed)
    sent = [0]
    internal = [0]
    lock = asyncio.Lock()

    async def one(frames: list[bytes]) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
        except (OSError, asyncio.TimeoutError):
            return
        writer.write(b"".join(frames))
        try:
            while True:
                header = await asyncio.wait_for(reader.readexactly(4), 0.5)
                (size,) = struct.unpack(">I", header)
                body = await asyncio.wait_for(reader.readexactly(size), 0.5)
                reply = msgpack.unpackb(body, raw=False)
                if reply.get("code") == "internal":
                    internal[0] += 1
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.transport.abort()

    async def worker() -> None:
        while True:
            async with lock:
                if sent[0] >= messages:
                    return
                frames = _random_frames(rng)
                sent[0] += len(frames)
            await one(frames)

    await asyncio.gather(*[worker() for _ in range(64)])
    print(json.dumps({"sent": sent[0], "internal_answers": internal[0]}), flush=True)


def attacker_main(case: str, port: int, count: int) -> None:
    raise_fd_limit()
    if case == "idle":
        asyncio.run(_hold_idle(port, count))
    elif case == "preauth":
        asyncio.run(_preauth(port, count))
    else:
        asyncio.run(_fuzz(port, count, seed=0))


# ---------------------------------------------------------------------- the server's side
class Served:
    """An ExternalEnv served in this process, with a learner thread stepping it."""

    def __init__(self, **server_options):
        from hub.external import ExternalEnv, PolicyServer
        from hub.specs import Categorical, Unbounded

        logging.getLogger("hub.external.server").addHandler(logging.NullHandler())  # quiet
        self.env = ExternalEnv(Unbounded((4,)), Categorical(2), max_concurrent=16, wait_s=0.05)
        self.server = PolicyServer(self.env, **server_options)
        self._stop = threading.Event()
        self._learner = threading.Thread(target=self._learn, name="bench-learner")
        self._learner.start()

    def _learn(self):
        td = self.env.reset()
        while not self._stop.is_set():
            _, td = self.env.step_and_maybe_reset(self.env.rand_action(td))

    def client_session(self) -> float:
        """One well-behaved client: seconds from connect to welcome, then a 3-step episode."""
        from hub.external.client import PolicyClient

        begin = time.perf_counter()
        client = PolicyClient(self.server.address, timeout=30, reconnect_s=5)
        welcomed = time.perf_counter() - begin
        eid = client.start_episode()
        obs = np.zeros(4, np.float32)
        for _ in range(3):
            client.get_action(eid, obs)
            client.log_returns(eid, 1.0)
        client.end_episode(eid, obs)
        client.close()
        return welcomed

    def close(self):
        self._stop.set()
        self._learner.join()
        self.server.close()
        self.env.close()


def _attacker(case: str, port: int, count: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, "--attacker", case, str(port), str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _rss() -> int:
    return psutil.Process().memory_info().rss


def case_idle(count: int) -> dict:
    served = Served(handshake_timeout=600.0)
    try:
        for _ in range(5):
            served.client_session()  # warm up: imports, first episodes
        threads_before, rss_before = threading.active_count(), _rss()
        proc = _attacker("idle", served.server.address[1], count)
        held = json.loads(proc.stdout.readline())["held"]
        while served.server.connection_count < held:
            time.sleep(0.05)
        rss_held, threads_held = _rss(), threading.active_count()
        seen = served.server.connection_count
        times = [served.client_session() for _ in range(200)]
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait()
        return {
            "case": "idle",
            "connections": held,
            "server_connections_seen": seen,
            "threads_before": threads_before,
            "threads_held": threads_held,
            "rss_growth_mb": (rss_held - rss_before) / 1e6,
            "rss_per_connection_kb": (rss_held - rss_before) / held / 1e3,
            "new_client_welcome_p50_ms": float(np.percentile(times, 50) * 1e3),
            "new_client_welcome_p99_ms": float(np.percentile(times, 99) * 1e3),
            "load": load(),
        }
    finally:
        served.close()


def case_preauth(count: int) -> dict:
    served = Served(handshake_timeout=600.0)
    try:
        served.client_session()
        rss_before = _rss()
        peak = [rss_before]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], _rss())
                time.sleep(0.01)

        sampler = threading.Thread(target=sample)
        sampler.start()
        proc = _attacker("preauth", served.server.address[1], count)
        held = json.loads(proc.stdout.readline())["held"]
        while served.server.connection_count < held:
            time.sleep(0.05)
        time.sleep(1.0)  # every stalled hello has arrived
        held_growth = _rss() - rss_before
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.stdout.readline()  # the hellos were completed and refused
        served_ok = served.client_session() >= 0
        stop.set()
        sampler.join()
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait()
        return {
            "case": "preauth",
            "connections": held,
            "held_rss_per_connection_kb": held_growth / held / 1e3,
            "peak_rss_growth_mb": (peak[0] - rss_before) / 1e6,
            "peak_rss_per_connection_kb": (peak[0] - rss_before) / held / 1e3,
            "served_meanwhile": served_ok,
            "load": load(),
        }
    finally:
        served.close()


def case_fuzz(messages: int) -> dict:
    failures = []

    class Failures(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.ERROR:
                failures.append(record.getMessage())

    logger = logging.getLogger("hub.external.server")
    logger.addHandler(Failures())
    logger.propagate = False  # the refusals' warnings are many; keep the output short
    served = Served(handshake_timeout=2.0, client_timeout=2.0)
    try:
        threads_before = threading.active_count()
        begin = time.monotonic()
        proc = _attacker("fuzz", served.server.address[1], messages)
        out = json.loads(proc.stdout.readline())
        proc.wait()
        seconds = time.monotonic() - begin
        served.client_session()
        return {
            "case": "fuzz",
            "messages_sent": out["sent"],
            "seconds": seconds,
            "internal_answers": out["internal_answers"],
            "failures_logged": len(failures),
            "threads_before": threads_before,
            "threads_after": threading.active_count(),
            "served_after": True,
            "load": load(),
        }
    finally:
        served.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["idle", "preauth", "fuzz"])
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--preauth", type=int, default=1_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--json", default=None, help="write the results to this file")
    parser.add_argument("--attacker", nargs=3, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attacker:
        case, port, count = args.attacker
        attacker_main(case, int(port), int(count))
        return
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    soft, hard = raise_fd_limit()
    print(f"open-file limit: soft {before[0]} -> {soft} (hard {hard}); load {load()}", flush=True)
    rows = []
    for case in args.cases:
        if case == "idle":
            row = case_idle(args.connections)
        elif case == "preauth":
            row = case_preauth(args.preauth)
        else:
            row = case_fuzz(args.messages)
        row["fd_limit"] = [soft, hard]
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
