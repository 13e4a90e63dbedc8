"""Exported agents: one ``.urla`` file per agent (see ``bundle``); ONNX export of the net."""

from ultimate_rl.export.bundle import (
    FORMAT_NAME,
    FORMAT_VERSION,
    SUFFIX,
    AgentBundle,
    BundleError,
    BundleNotFoundError,
    bundle_from_checkpoint,
    encoding_version,
    export_agent,
    read_bundle,
)
from ultimate_rl.export.onnx_export import export_onnx, onnx_max_difference

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "SUFFIX",
    "AgentBundle",
    "BundleError",
    "BundleNotFoundError",
    "bundle_from_checkpoint",
    "encoding_version",
    "export_agent",
    "export_onnx",
    "onnx_max_difference",
    "read_bundle",
]
