"""The JAX plugin passes hub's conformance kit (``hub.testing``) on every gymnax id it lists and
on a Brax and a Craftax env, natively batched partial resets included."""

import pytest

pytest.importorskip("gymnax")


@pytest.mark.hub_conformance("jax", envs=["gymnax:CartPole-v1"])
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
