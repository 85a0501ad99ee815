"""The plugin that serves the ``hub:`` namespace: hub's pure-torch envs (``hub:Pendulum``,
``hub:Counting``, ...), registered through the ``hub.plugins`` entry point exactly like a
third-party plugin. The hook implementations are in :mod:`hub_builtin.plugin`.
"""
