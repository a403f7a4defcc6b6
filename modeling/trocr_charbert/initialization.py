# Copied from modeling/common/initialization.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Weight initialisation for recognizers trained from scratch.

transformers 5 applies a model's `_init_weights` to every sub-module of a new model and to the
weights a checkpoint lacks; the `transformers.initialization` functions used here skip tensors
already loaded from a checkpoint.
"""

from torch import nn
from transformers import initialization as init


def init_recognizer_weights(module: nn.Module, embedding_std: float) -> None:
    """He initialisation for convolutions, Xavier for linear layers and recurrent weights, normal
    `embedding_std` for embeddings (padding row zero), identity for normalisation layers."""
    if isinstance(module, (nn.Conv1d, nn.Conv2d)):
        init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
        if module.bias is not None:
            init.zeros_(module.bias)
    elif isinstance(module, nn.Linear):
        init.xavier_uniform_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        init.normal_(module.weight, mean=0.0, std=embedding_std)
        if module.padding_idx is not None and not getattr(module.weight, "_is_hf_initialized", False):
            init.zeros_(module.weight[module.padding_idx])
    elif isinstance(module, (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell)):
        for name, parameter in module.named_parameters():
            if "weight" in name:
                init.xavier_uniform_(parameter)
            else:
                init.zeros_(parameter)
    elif isinstance(module, (nn.LayerNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.GroupNorm)):
        if module.weight is not None:
            init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)
        if getattr(module, "running_mean", None) is not None:
            init.zeros_(module.running_mean)
            init.ones_(module.running_var)
            init.zeros_(module.num_batches_tracked)
