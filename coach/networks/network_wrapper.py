"""An online network, its optional target copy, and its optimizer.

The online weights are what acting reads; the target copy and the optimizer belong to
learning, and an agent that only acts (a rollout worker's) builds its networks without
them (``learning=False``).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from gymnasium import spaces

from coach.networks.model import Model, initialize
from coach.networks.optimizer import AdamW, clip_grad_norm, defer_dynamo_import
from coach.networks.parameters import AUTOCAST_ROWS, NetworkParameters

# Optimizers are built without importing TorchDynamo until something compiles (0.9 s a process).
defer_dynamo_import()


class NetworkWrapper:
    """Owns one network's online and target copies and the optimizer of the online one.

    Args:
        params: What to build.
        observation_space: The agent's (filtered) observation space.
        action_space: The agent's action space.
        device: Where the tensors live.
        generator: Torch generator for the initial weights.
        learning: Build the target copy (if the parameters ask for one) and the optimizer;
            without them the network only acts.
    """

    def __init__(
        self,
        params: NetworkParameters,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        device: torch.device,
        generator: torch.Generator,
        learning: bool = True,
    ) -> None:
        online = Model(params, observation_space, action_space)
        initialize(online, generator)
        self._adopt(params, online, device, learning)

    def _adopt(
        self, params: NetworkParameters, online: Model, device: torch.device, learning: bool
    ) -> None:
        """Take ``online`` as the network (its weights as they are): its call, its target copy
        and its optimizer where ``learning``."""
        self.params = params
        self.device = device
        self.online = online
        self.online.to(device)
        self._bfloat16 = params.precision == "bfloat16" or (
            params.precision == "auto" and native_bfloat16(device)
        )
        """Learning's batches run their products in bfloat16 (`NetworkParameters.precision`)."""
        self._forward: Any = self.online
        """What a call runs: the online network, or its compiled version."""
        if params.compile is not None:
            self._forward = torch.compile(self.online, mode=params.compile)
        self._parameters = list(self.online.parameters())
        """The online weights, listed once (clipping takes a list, not a generator)."""
        self.target: Model | None = None
        self._target_forward: Any = self._forward  # the target's call, once there is one
        self._online_tensors: list[torch.Tensor] = []
        self._target_tensors: list[torch.Tensor] = []
        self.optimizer: torch.optim.Optimizer | None = None
        if not learning:
            return
        if params.create_target_network:
            self.target = copy.deepcopy(self.online)
            self.target.requires_grad_(False)
            self._target_forward = (
                self.target
                if params.compile is None
                else torch.compile(self.target, mode=params.compile)
            )
            self._online_tensors = [t.data for t in self.online.parameters()]
            self._target_tensors = [t.data for t in self.target.parameters()]
        self.optimizer = AdamW(
            self.online.parameters(),
            lr=params.learning_rate,
            eps=params.adam_epsilon,
            weight_decay=params.weight_decay,
            # One fused kernel instead of a loop over parameter tensors (CPU and CUDA).
            fused=device.type in ("cpu", "cuda"),
        )

    def __call__(self, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        # bfloat16 where gradients flow (learning); acting, without them, stays float32.
        if self._bfloat16 and torch.is_grad_enabled() and learning_batch(inputs):
            return self._autocast(self._forward, inputs)
        outputs: dict[str, torch.Tensor] = self._forward(inputs)
        return outputs

    def _autocast(self, forward: Any, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``forward(inputs)`` with its products in bfloat16, its outputs float32."""
        with torch.autocast(self.device.type, dtype=torch.bfloat16):
            outputs: dict[str, torch.Tensor] = forward(inputs)
        return {name: value.float() for name, value in outputs.items()}

    @property
    def recurrent(self) -> bool:
        """Whether the network carries a hidden state (it is called with `unroll`)."""
        return self.online.recurrent

    def initial_state(self, batch: int) -> torch.Tensor:
        """Zero hidden states for ``batch`` sequences (`Model.initial_state`)."""
        return self.online.initial_state(batch)

    def unroll(
        self,
        inputs: dict[str, torch.Tensor],
        hidden: torch.Tensor,
        starts: torch.Tensor | None = None,
        before_starts: dict[int, torch.Tensor] | None = None,
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """The online recurrent network over time-major sequences (`Model.unroll`)."""
        return self.online.unroll(inputs, hidden, starts, before_starts)

    def target_unroll(
        self,
        inputs: dict[str, torch.Tensor],
        hidden: torch.Tensor,
        starts: torch.Tensor | None = None,
        before_starts: dict[int, torch.Tensor] | None = None,
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """The target copy over sequences (the online one's when there is no target)."""
        with torch.no_grad():
            return (self.target or self.online).unroll(inputs, hidden, starts, before_starts)

    def target_predict(self, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The target copy's outputs (the online one's when there is no target)."""
        with torch.no_grad():
            if self._bfloat16 and learning_batch(inputs):
                return self._autocast(self._target_forward, inputs)
            outputs: dict[str, torch.Tensor] = self._target_forward(inputs)
        return outputs

    def train_step(self, loss: torch.Tensor) -> torch.Tensor | None:
        """One gradient step on ``loss``; the gradient norm before clipping, for a network
        that clips (``gradient_clip_norm``), else ``None``."""
        return train_steps([(self, loss)])[0]

    def _clip_and_step(self) -> torch.Tensor | None:
        """Clip the gradients (when the parameters ask for it) and take the optimizer's step;
        the norm before clipping, when clipped.

        The norm is computed only to clip, by one foreach call over every gradient, and stays
        a tensor on the network's device: read back every step, it would make the host wait
        for the device's whole step on a GPU.
        """
        assert self.optimizer is not None, "an acting-only network does not learn"
        max_norm = self.params.gradient_clip_norm
        norm = None
        if max_norm is not None:
            norm = clip_grad_norm(self._parameters, max_norm)
        self.optimizer.step()
        return norm

    def update_target(self, tau: float = 1.0) -> None:
        """Move the target towards the online weights: ``target = tau*online + (1-tau)*target``."""
        if self.target is None:
            return
        with torch.no_grad():
            if tau >= 1.0:
                self.target.load_state_dict(self.online.state_dict())
                return
            # One fused call over every tensor: soft updates run after each gradient step.
            torch._foreach_lerp_(self._target_tensors, self._online_tensors, tau)

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"online": self.online.state_dict()}
        if self.optimizer is not None:
            state["optimizer"] = self.optimizer.state_dict()
        if self.target is not None:
            state["target"] = self.target.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.online.load_state_dict(state["online"])
        if self.optimizer is not None:
            # A copy: torch's optimizer would otherwise share the moment tensors it was given.
            self.optimizer.load_state_dict(copy.deepcopy(state["optimizer"]))
        if self.target is not None:
            self.target.load_state_dict(state["target"])


def native_bfloat16(device: torch.device) -> bool:
    """Whether ``device`` multiplies bfloat16 matrices in hardware: a CPU with AVX512-BF16 or
    AMX instructions, a GPU from Ampere (compute capability 8) on."""
    if device.type == "cuda":
        return torch.cuda.get_device_capability(device)[0] >= 8
    if device.type == "cpu":
        probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
        return any(getattr(torch.cpu, probe, lambda: False)() for probe in probes)
    return False


def learning_batch(inputs: dict[str, torch.Tensor]) -> bool:
    """Whether ``inputs`` are a batch a bfloat16 network runs in bfloat16: `AUTOCAST_ROWS`
    rows or more, and not being exported (an exported policy acts in float32, on any number
    of rows: its batch size stays free)."""
    # torch.jit.is_tracing is public (torch's docs) but neither annotated nor re-exported.
    tracing = torch.jit.is_tracing()  # type: ignore[attr-defined, no-untyped-call]
    if tracing or torch.compiler.is_exporting():
        return False
    return len(next(iter(inputs.values()))) >= AUTOCAST_ROWS


def train_steps(steps: list[tuple[NetworkWrapper, torch.Tensor]]) -> list[torch.Tensor | None]:
    """One gradient step of each network on its own loss, all in one backward pass; each
    network's gradient norm before clipping (``None`` for a network that does not clip).

    The networks share no weights, so each gets the gradients a step of its own would give
    it; one pass instead of several saves the autograd engine's fixed cost (an actor and a
    critic updated together, for instance).
    """
    for network, _ in steps:
        assert network.optimizer is not None, "an acting-only network does not learn"
        network.optimizer.zero_grad(set_to_none=True)
    if len(steps) == 1:
        steps[0][1].backward()
    else:
        torch.autograd.backward([loss for _, loss in steps])
    return [network._clip_and_step() for network, _ in steps]
