"""Export a checkpoint as one agent file: `python scripts/export.py checkpoint=PATH out=agent.urla`.

Add `out_onnx=agent.onnx` for an ONNX copy of the network, checked against torch with
onnxruntime.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
import numpy as np
from omegaconf import DictConfig, OmegaConf

from ultimate_rl.export import (
    SUFFIX,
    AgentBundle,
    BundleError,
    export_agent,
    export_onnx,
    onnx_max_difference,
)


def _check_onnx(bundle: AgentBundle, path: Path) -> str:
    """A line saying how closely the ONNX file matches torch."""
    game = bundle.make_game()
    state = game.initial_state()
    planes = [game.encode(state)]
    for action in game.legal_actions(state)[:7]:
        planes.append(game.encode(game.apply(state, int(action))))
    diff = onnx_max_difference(bundle.build_model("cpu"), path, np.stack(planes))
    return f"max |onnx - torch| = {diff:.2e} on {len(planes)} positions"


@hydra.main(version_base=None, config_path="../configs", config_name="export")
def main(cfg: DictConfig) -> None:
    checkpoint = Path(cfg.checkpoint)
    out = Path(cfg.out) if cfg.out else checkpoint.with_suffix(SUFFIX)
    search = OmegaConf.to_container(cfg.agent, resolve=True)
    metadata = OmegaConf.to_container(cfg.metadata, resolve=True) if cfg.metadata else {}
    try:
        bundle = export_agent(checkpoint, out, search=search, metadata=metadata)
    except (BundleError, ValueError, FileNotFoundError) as err:
        sys.exit(f"export: {err}")
    size_kb = out.stat().st_size / 1024
    print(
        f"wrote {out} ({size_kb:,.0f} KiB): game {bundle.game_name}, step "
        f"{bundle.metadata['step']}, encoding {bundle.encoding['version']}, defaults {search}"
    )
    if cfg.out_onnx:
        onnx_path = export_onnx(bundle.build_model("cpu"), cfg.out_onnx)
        print(f"wrote {onnx_path}: {_check_onnx(bundle, onnx_path)}")
    print(f"play it: python scripts/play.py agent={out}")


if __name__ == "__main__":
    main()
