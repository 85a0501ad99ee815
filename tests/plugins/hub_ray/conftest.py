"""The Ray tests run inside a network namespace with only loopback (see docs/ray.md):
``unshare -n sh -c 'ip link set lo up && exec pytest tests/plugins/hub_ray'``."""
