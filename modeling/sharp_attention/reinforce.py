"""REINFORCE for hard and sharp attention (the hybrid learning rule): the drawn column's reward is the log
likelihood of the target token, and its advantage is taken against a moving-average baseline."""

import torch
from torch import nn


class RewardBaseline(nn.Module):
    """The moving-average baseline of REINFORCE: b_j = momentum b_{j-1} + (1 - momentum) mean(r_j), b_0 = 0.

    Calling it with the rewards of mini-batch j returns b_{j-1}, the baseline their advantages use, and
    stores b_j (a persistent buffer, saved with the model).
    """

    def __init__(self, momentum: float):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("value", torch.zeros(()))

    def forward(self, rewards: torch.Tensor) -> torch.Tensor:
        previous = self.value.clone()
        with torch.no_grad():
            self.value.mul_(self.momentum).add_((1 - self.momentum) * rewards.detach().float().mean())
        return previous
