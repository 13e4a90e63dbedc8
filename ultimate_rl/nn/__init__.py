"""Policy/value networks, their ``evaluate`` callable for search, the loss, and checkpoints.

Typical use::

    model = build_model(game, ModelConfig(arch="resnet", blocks=4, channels=64), seed=0)
    evaluate = make_evaluator(model, device="auto")      # the search contract callable
                                                         # (onnxruntime on a CPU, torch on CUDA)
    loss, terms = alphazero_loss(model, planes, masks, policies, values, full_search)
    save_checkpoint(path, model=model, model_config=model.config, game_name="uttt", step=n)
    model = load_model(path, device="auto", expected_game=game)
"""

from ultimate_rl.nn.checkpoint import (
    FORMAT_VERSION,
    Checkpoint,
    CheckpointError,
    CheckpointNotFoundError,
    WrongGameError,
    load_checkpoint,
    load_model,
    save_checkpoint,
)
from ultimate_rl.nn.config import ModelConfig, ModelConfigError
from ultimate_rl.nn.device import autocast, resolve_device, resolve_precision
from ultimate_rl.nn.evaluator import BACKENDS, NetworkEvaluator, OnnxEvaluator, make_evaluator
from ultimate_rl.nn.inference import InferenceNet, onnx_graph
from ultimate_rl.nn.losses import alphazero_loss, wdl_targets
from ultimate_rl.nn.models import (
    MASKED_LOGIT,
    MLP,
    PolicyValueNet,
    ResNet,
    build_model,
    mask_logits,
    masked_softmax,
)

__all__ = [
    "BACKENDS",
    "FORMAT_VERSION",
    "MASKED_LOGIT",
    "MLP",
    "Checkpoint",
    "CheckpointError",
    "CheckpointNotFoundError",
    "InferenceNet",
    "ModelConfig",
    "ModelConfigError",
    "NetworkEvaluator",
    "OnnxEvaluator",
    "PolicyValueNet",
    "ResNet",
    "WrongGameError",
    "alphazero_loss",
    "autocast",
    "build_model",
    "load_checkpoint",
    "load_model",
    "make_evaluator",
    "mask_logits",
    "masked_softmax",
    "onnx_graph",
    "resolve_device",
    "resolve_precision",
    "save_checkpoint",
    "wdl_targets",
]
