"""Task options EnvPool's C++ code would end the process on are refused with a hub error first.

The bad values run in one child process: before hub checked them, the first one killed it
(``num_threads=-5``: "terminate called without an active exception", exit code -6)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hub_envpool.options import InvalidOptionError, check_options

import hub

# (task, options): each ended the process (abort or segfault) or failed a bare assert
BAD = [
    ("CartPole-v1", {"num_threads": -5}),
    ("CartPole-v1", {"num_threads": 2.5}),
    ("CartPole-v1", {"max_num_players": 0}),
    ("Pong-v5", {"stack_num": 0}),
    ("Pong-v5", {"noop_max": 0}),
    ("Pong-v5", {"img_height": 0}),
    ("Pong-v5", {"create_env_kwargs": {"img_width": 0}}),
]

SCRIPT = """
import json, sys
import hub
for task, options in json.loads(sys.argv[1]):
    try:
        hub.make_env("envpool:" + task, num_envs=2, **options).reset()
        print(json.dumps(["built", task, options]), flush=True)
    except hub.errors.HubError as err:
        print(json.dumps([type(err).__name__, str(err)]), flush=True)
"""


def test_out_of_range_options_raise_a_hub_error_before_envpool_sees_them():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(BAD)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    assert [kind for kind, _ in answers] == ["InvalidOptionError"] * len(BAD), answers
    assert answers[0][1] == (
        "EnvPool option num_threads must be an int >= 0 (0: one thread per CPU this process "
        "may use), got -5."
    )
    assert "stack_num must be an int >= 1, got 0" in answers[3][1]


def test_the_error_is_a_value_error_and_good_values_pass():
    with pytest.raises(ValueError):
        check_options("CartPole-v1", {"num_threads": -1})
    check_options("Pong-v5", {"num_threads": 0, "stack_num": 1, "noop_max": 1, "img_height": 8})
    assert issubclass(InvalidOptionError, hub.errors.HubError)


def test_num_threads_zero_still_means_the_default():
    with hub.make_env("envpool:CartPole-v1", num_envs=2, num_threads=0) as env:
        env.reset()
        assert int(env._env.config["num_threads"]) >= 1
