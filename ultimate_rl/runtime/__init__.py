"""The process runtime below every layer: where numba caches kernels, how worker processes
start, and the failpoints of the fault-injection tests. Imports nothing else of ours."""
