"""The README's cluster recipe on a simulated two-node cluster (``ray.cluster_utils.Cluster``):
training joins it by ``ray.address`` and its two actors, one CPU each, fill both nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster  # noqa: E402
from test_train_loop import tiny  # noqa: E402

from ultimate_rl.train import train  # noqa: E402


def test_training_joins_a_two_node_cluster(tmp_path: Path):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        overrides = ["selfplay.backend=ray", "selfplay.workers=2", f"ray.address={cluster.address}"]
        summary = train(tiny("train.iterations=1", "eval.every=0", *overrides), tmp_path)
        assert summary["games"] == 8
    finally:
        ray.shutdown()
        cluster.shutdown()
