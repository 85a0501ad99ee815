"""hub: a plugin-based environment hub for reinforcement learning."""
