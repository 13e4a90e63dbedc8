"""Experiments over whole training runs: recipes trained at equal wall-clock and rated in one
pool (``compare``), above both the training loop and the evaluator."""
