"""Experiments over whole training runs: recipes trained at equal wall-clock and rated in one
pool (``compare``), reported with each run's machine (``results``), above both the training loop
and the evaluator."""
