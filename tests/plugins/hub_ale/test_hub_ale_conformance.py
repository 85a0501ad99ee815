"""The ALE plugin passes hub's conformance kit (``hub.testing``) on two games, natively batched
partial resets included."""

import pytest


@pytest.mark.hub_conformance("ale", envs=["ale:Pong-v5", "ale:Breakout-v5"])
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
