"""nn layer."""
