"""train layer."""
