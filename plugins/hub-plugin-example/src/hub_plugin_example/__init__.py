"""hub-plugin-example: a template for third-party hub plugins.

It serves the ``example`` namespace (one env, ``example:Chain-v0``), converts its own space type
(:class:`~hub_plugin_example.spaces.Interval`) to a hub spec, and has one version-dispatched
function (:func:`~hub_plugin_example.compat.as_float_array`). It uses only hub's public API.

Example:
    >>> import hub
    >>> env = hub.make_env("example:Chain-v0", length=4)
    >>> env.rollout(10).batch_size
    torch.Size([3])
"""

__version__ = "0.1.0"
