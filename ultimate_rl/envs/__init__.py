"""envs layer."""
