"""selfplay layer."""
