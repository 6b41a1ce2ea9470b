"""Parameter space noise (Plappert et al., 2018, "Parameter Space Noise for Exploration"):
explore by acting with a perturbed copy of the network, not by perturbing its actions.

In training, the policy acts with a copy of its network (the Q network of a value agent,
the actor of a deterministic actor-critic) whose every dense layer's weights and biases
carry Gaussian noise of standard deviation ``sigma``; a new perturbation is drawn whenever
an episode ends. ``sigma`` adapts so that the perturbed policy stays a set distance from
the unperturbed one on the states it acts on: every ``adaptation_period`` decisions, both
networks answer the same states and ``sigma`` is divided by ``adaptation_coefficient`` if
they are further apart than the target, multiplied by it otherwise. The distance is, for
discrete actions, the KL divergence between the softmax of the two networks' Q-values,
whose target is that of epsilon-greedy with ``epsilon`` (``-log(1 - epsilon + epsilon /
|A|)``); for continuous actions, the root mean square difference of the actions, whose
target is ``action_std``. Evaluation acts on the unperturbed network, greedily.

The original Coach's ParameterNoise made every dense layer a noisy one with learned noise
(NoisyNet, here ``noisy=True`` on a network's head, `coach.networks.heads.NoisyLinear`);
this is the adaptive scheme of the parameter-noise paper, for any agent that acts on
Q-values or a deterministic actor.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces
from torch import nn

from coach import validation as check
from coach.core.run_phase import RunPhase
from coach.core.spaces import first_action
from coach.errors import CoachError
from coach.exploration.exploration_policy import ExplorationPolicy


@dataclass(slots=True, kw_only=True)
class ParameterNoiseParameters:
    """Adaptive Gaussian noise on the acting network's weights."""

    initial_std: float = 0.1
    """The noise's first standard deviation ``sigma``."""
    epsilon: float = 0.1
    """Discrete actions: the epsilon-greedy exploration whose KL the perturbation aims at."""
    action_std: float = 0.2
    """Continuous actions: the root mean square action change the perturbation aims at
    (in the agent's action units)."""
    adaptation_coefficient: float = 1.01
    """What ``sigma`` is multiplied or divided by at each adaptation."""
    adaptation_period: int = 50
    """Decisions between two adaptations."""

    def validate(self) -> None:
        check.number("initial_std", self.initial_std, 0, low_open=True)
        check.number("epsilon", self.epsilon, 0, 1, low_open=True)
        check.number("action_std", self.action_std, 0, low_open=True)
        check.number("adaptation_coefficient", self.adaptation_coefficient, 1, low_open=True)
        check.whole("adaptation_period", self.adaptation_period, 1)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> ParameterNoise:
        return ParameterNoise(action_space, rng, self)


def perturb(module: nn.Module, std: float, rng: np.random.Generator) -> None:
    """Add N(0, std^2) noise to the weights and biases of every linear layer of ``module``,
    drawn from ``rng`` layer by layer, in the modules' order."""
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, nn.Linear):
                for tensor in (layer.weight, layer.bias):
                    if tensor is not None:
                        noise = rng.normal(0.0, std, tuple(tensor.shape)).astype(np.float32)
                        tensor.add_(torch.from_numpy(noise).to(tensor.device))


class ParameterNoise(ExplorationPolicy):
    """Acts greedily on what a perturbed network computed; keeps that network (`outputs`)
    and adapts its noise."""

    def __init__(
        self,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        params: ParameterNoiseParameters,
    ) -> None:
        if isinstance(action_space, spaces.Discrete):
            actions = int(action_space.n)
            eps = params.epsilon
            self.target = -math.log(1 - eps + eps / actions) if actions > 1 else 0.0
            self.key = "q"
        elif isinstance(action_space, spaces.Box) and action_space.is_bounded("both"):
            self.target = params.action_std
            self.key = "policy"
        else:
            raise CoachError(
                f"parameter noise needs a Discrete or a bounded Box action space, got "
                f"{action_space}"
            )
        super().__init__(action_space, rng)
        self.params = params
        self.std = params.initial_std
        """The noise's current standard deviation."""
        self.distance = 0.0
        """The last measured distance between the perturbed and unperturbed policies."""
        self.perturbed: nn.Module | None = None
        self.stale = True
        """A new perturbation is due before the next decision."""
        self.pending: dict[str, Any] | None = None
        """A checkpoint's perturbed weights, for the copy made at the first decision."""

    def outputs(self, network: Any, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The perturbed copy of ``network``'s outputs for a batch of states (no gradient),
        adapting the noise when due."""
        if self.perturbed is None or self.stale:
            self.perturbed = copy.deepcopy(network.online).requires_grad_(False)
            if self.pending is not None:
                self.perturbed.load_state_dict(self.pending)
                self.pending = None
            else:
                perturb(self.perturbed, self.std, self.rng)
            self.stale = False
        with torch.no_grad():
            outputs: dict[str, torch.Tensor] = self.perturbed(inputs)
            if self.key not in outputs:
                raise CoachError(
                    f"parameter noise acts on a network's {self.key!r} output (Q-values, or "
                    f"a deterministic actor's actions); this one answers {sorted(outputs)}"
                )
            self.steps += 1
            if self.steps % self.params.adaptation_period == 0:
                self.adapt(network(inputs)[self.key], outputs[self.key])
        return outputs

    def adapt(self, clean: torch.Tensor, noisy: torch.Tensor) -> None:
        """Measure the distance between the two policies' answers and move ``sigma``."""
        if self.key == "q":
            log_p, log_q = F.log_softmax(clean.double(), -1), F.log_softmax(noisy.double(), -1)
            self.distance = float((log_p.exp() * (log_p - log_q)).sum(-1).mean())
        else:
            self.distance = float((clean.double() - noisy.double()).square().mean().sqrt())
        coefficient = self.params.adaptation_coefficient
        self.std = self.std / coefficient if self.distance > self.target else self.std * coefficient

    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        if self.key == "q":
            if action_values.ndim != 2:
                raise CoachError(
                    f"parameter noise acts on Q-values (B, A), got {action_values.shape}: an "
                    f"ensemble of heads explores with bootstrapped or UCB exploration"
                )
            return action_values.argmax(axis=1) + first_action(self.action_space)
        box = self.action_space
        assert isinstance(box, spaces.Box)
        return np.clip(action_values, box.low, box.high).astype(box.dtype, copy=False)

    def evaluation_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        box = self.action_space
        return (box.low, box.high) if isinstance(box, spaces.Box) else None

    def episode_ended(self, env_mask: np.ndarray) -> None:
        if env_mask.any():
            self.stale = True

    def values(self) -> dict[str, float]:
        return {"parameter_noise_std": self.std, "parameter_noise_distance": self.distance}

    def state_dict(self) -> dict[str, Any]:
        perturbed = None
        if self.perturbed is not None and not self.stale:
            perturbed = {k: v.cpu().clone() for k, v in self.perturbed.state_dict().items()}
        return {
            "steps": self.steps,
            "std": self.std,
            "distance": self.distance,
            "perturbed": perturbed,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        self.std, self.distance = float(state["std"]), float(state["distance"])
        self.pending = state["perturbed"]
        self.perturbed, self.stale = None, True


__all__ = ["ParameterNoise", "ParameterNoiseParameters", "perturb"]
