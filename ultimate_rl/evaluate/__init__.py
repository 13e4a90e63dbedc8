"""evaluate layer."""
