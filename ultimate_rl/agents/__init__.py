"""agents layer."""
