"""Coach's optimizers: torch's Adam and AdamW with a leaner step, and without importing
TorchDynamo while nothing is compiled.

torch's ``Optimizer.step`` wraps the update in hooks, a profiler range, a grad-mode guard that
imports ``torch._dynamo`` (and sympy with it) and the regrouping of every parameter's state;
for the small networks of RL that costs about 20 µs a step, against about 30 µs for the
fused update itself. `Adam` and `AdamW` keep torch's classes, state and checkpoints (their
``state_dict`` is torch's) and run the same update: torch builds each state on the first
step, and after that a fused group calls torch's fused kernel on lists kept from step to
step, exactly as torch's own fused step calls it (the same numbers, bit for bit). Anything
else (a closure, step hooks, a gradient missing, a tensor learning rate, mixed devices or
dtypes, a non-fused group) takes torch's functional update, still without the wrapper.

A step flushes denormal floats to zero while it runs (`torch.set_flush_denormal`, in the
stepping thread, put back after). Adam's moments of a unit that stopped learning (a dead
ReLU, its gradient zero) decay geometrically into the denormal range, where the CPU takes a
slow path for every operation on them: a fused step over a 400x300 layer of denormal moments
takes 4.1 ms instead of 0.23 ms. At 114,000 steps of BipedalWalker_TD3, 76% of its critics'
hidden layer's first moments were denormal and the optimizer step took 35% of the run
(Atari_ClippedPPO_LSTM's dense layer: 36% at 440,000 steps). Flushed, they are zero: the
update they made was nil already. Only the step flushes, so that code around Coach keeps
IEEE floats (hypothesis, for one, refuses to run without them).

Four of `torch.optim.Optimizer`'s methods (``add_param_group``, ``zero_grad``,
``state_dict``, ``load_state_dict``) are wrapped by ``torch._disable_dynamo`` so that a
compiled function calling them runs them eagerly; the wrapper imports ``torch._dynamo`` on
its first call, about 0.9 s of every process. Until dynamo has been imported by someone
else nothing can be compiling, and disabling it changes nothing: `defer_dynamo_import` gives
each wrapper the cached callable it looks for, which calls the method itself while dynamo is
not loaded and builds torch's own disabled function once it is
(``NetworkParameters.compile``, or a user's ``torch.compile``). The wrapper's layout (its
code, the cache attribute it looks up) is torch's private detail: on a torch where it looks
otherwise nothing is seeded, optimizers import dynamo as before, and
``tests/unit/networks/test_optimizer.py`` fails (every method seeded; no dynamo import).

This is a shortcut kept by measure: with torch's own step, ``zero_grad`` and
``clip_grad_norm_`` in its place and TorchDynamo imported as torch's step imports it (the
``stock optimizer`` column of ``python -m benchmarks.whole_runs``), whole runs took 16.0%
more CPU for CartPole_DQN, 10.6% for Pendulum_TD3 and 32.1% for CartPole_ClippedPPO (best of
2 each, on a quiet 2-core machine).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.optim import optimizer as torch_optimizer
from torch.optim.adam import adam

CACHE = "__dynamo_disable"
WRAPPED = ("add_param_group", "zero_grad", "state_dict", "load_state_dict")
TORCH_WRAPPER = "_disable_dynamo.<locals>.inner"
"""The qualified name of the code of ``torch._disable_dynamo``'s wrapper."""

_SUBNORMAL, _ONE = np.float32(1e-39), np.float32(1.0)
"""A float32 below the smallest normal, and what multiplies it unchanged unless this thread
flushes denormals to zero (0.3 µs to ask, against 7 µs for a torch op)."""


def _deferred(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What ``torch._disable_dynamo`` caches for ``fn`` (with its default, recursive), built
    when dynamo is first loaded."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if "torch._dynamo" not in sys.modules:
            return fn(*args, **kwargs)
        disabled = torch._dynamo.disable(fn, recursive=True, wrapping=False)  # type: ignore[no-untyped-call]
        setattr(fn, CACHE, disabled)
        return disabled(*args, **kwargs)

    return call


def defer_dynamo_import() -> list[str]:
    """Seed the dynamo-disable wrappers of `torch.optim.Optimizer`'s methods; the names of
    the methods seeded (none where torch's wrapper is not the one described above).

    A wrapper is recognised by its code (``torch._disable_dynamo``'s inner function) and
    names the method it wraps as ``__wrapped__`` (``functools.wraps``); the four methods
    take the decorator's default, ``recursive=True``.
    """
    seeded = []
    for name in WRAPPED:
        wrapper = getattr(torch.optim.Optimizer, name, None)
        code = getattr(wrapper, "__code__", None)
        fn = getattr(wrapper, "__wrapped__", None)
        if getattr(code, "co_qualname", None) != TORCH_WRAPPER or not callable(fn):
            continue
        if getattr(fn, CACHE, None) is None:
            setattr(fn, CACHE, _deferred(fn))
        seeded.append(name)
    return seeded


def clip_grad_norm(parameters: Sequence[torch.Tensor], max_norm: float) -> torch.Tensor:
    """``torch.nn.utils.clip_grad_norm_(parameters, max_norm, foreach=True)``: the norm of
    all the gradients before clipping, as a tensor, the gradients scaled down to
    ``max_norm`` in place. Where every gradient is a CPU or CUDA tensor of one device and
    dtype (a network's), the same ops are called directly, without torch's regrouping,
    checks and decorators (about 40 µs a step for a small network; the same numbers)."""
    grads: list[torch.Tensor] = [p.grad for p in parameters if p.grad is not None]
    first = grads[0] if grads else None
    if (
        first is None
        or first.device.type not in ("cpu", "cuda")
        or any(g.device != first.device or g.dtype != first.dtype for g in grads)
    ):
        norm: torch.Tensor = torch.nn.utils.clip_grad_norm_(parameters, max_norm, foreach=True)
        return norm
    with torch.no_grad():
        total: torch.Tensor = torch.linalg.vector_norm(
            torch.stack(torch._foreach_norm(grads, 2.0)), 2.0
        )
        scale = torch.clamp(float(max_norm) / (total + 1e-6), max=1.0)
        torch._foreach_mul_(grads, scale)
    return total


class _FusedGroup:
    """One fused group's tensors, kept from step to step: its parameters and their state."""

    def __init__(self, params: list[torch.Tensor], state: dict[Any, Any]) -> None:
        self.params = params
        self.exp_avgs = [state[p]["exp_avg"] for p in params]
        self.exp_avg_sqs = [state[p]["exp_avg_sq"] for p in params]
        self.steps = [state[p]["step"] for p in params]


class _LeanStep(torch.optim.Optimizer):
    """The step of `Adam` and `AdamW` (module docstring); before torch's class in their
    bases."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fused_groups: list[_FusedGroup | None] | None = None

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        super().add_param_group(param_group)
        self._fused_groups = None

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self._fused_groups = None

    def zero_grad(self, set_to_none: bool = True) -> None:
        if not set_to_none:
            super().zero_grad(set_to_none=False)
            return
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def _hooked(self) -> bool:
        return bool(
            self._optimizer_step_pre_hooks
            or self._optimizer_step_post_hooks
            or torch_optimizer._global_optimizer_pre_hooks
            or torch_optimizer._global_optimizer_post_hooks
        )

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        if _SUBNORMAL * _ONE == 0:  # flushed already, by the caller
            return self._step(closure)
        torch.set_flush_denormal(True)  # this thread's CPU state, for the step alone
        try:
            return self._step(closure)
        finally:
            torch.set_flush_denormal(False)

    def _step(self, closure: Callable[[], float] | None) -> float | None:
        if closure is not None or self._hooked():
            # torch's step, with the hooks and profiler range torch wraps it in.
            torch_step = torch.optim.Adam.__dict__["step"]
            while getattr(torch_step, "hooked", False):
                torch_step = torch_step.__wrapped__
            hooked = torch.optim.Optimizer.profile_hook_step(torch_step)
            with torch.enable_grad():
                return hooked(self, closure)  # type: ignore[no-any-return]
        fused = self._fused_groups
        for i, group in enumerate(self.param_groups):
            kept = fused[i] if fused is not None else None
            if kept is None or not self._fused_step(group, kept):
                self._functional_step(group)
        if fused is None:
            self._fused_groups = [self._keep(group) for group in self.param_groups]
        return None

    def _keep(self, group: dict[str, Any]) -> _FusedGroup | None:
        """The group's tensors, if its steps can call the fused kernel directly."""
        params = group["params"]
        if not (group["fused"] and params) or group["amsgrad"] or group["maximize"]:
            return None
        if group["capturable"] or group["differentiable"] or isinstance(group["lr"], torch.Tensor):
            return None
        if any(p not in self.state or "exp_avg" not in self.state[p] for p in params):
            return None
        if len({(p.device, p.dtype) for p in params}) != 1 or any(p.is_complex() for p in params):
            return None
        if (
            getattr(self, "grad_scale", None) is not None
            or getattr(self, "found_inf", None) is not None
        ):
            return None
        return _FusedGroup(list(params), self.state)

    def _fused_step(self, group: dict[str, Any], kept: _FusedGroup) -> bool:
        grads: list[torch.Tensor] = [p.grad for p in kept.params]  # type: ignore[misc]
        if any(g is None for g in grads) or isinstance(group["lr"], torch.Tensor):
            return False
        beta1, beta2 = group["betas"]
        torch._foreach_add_(kept.steps, 1)
        kernel = torch._fused_adamw_ if group["decoupled_weight_decay"] else torch._fused_adam_
        kernel(
            kept.params,
            grads,
            kept.exp_avgs,
            kept.exp_avg_sqs,
            [],
            kept.steps,
            amsgrad=False,
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=False,
            grad_scale=None,
            found_inf=None,
        )
        return True

    def _functional_step(self, group: dict[str, Any]) -> None:
        """torch's own update of one group, as ``Adam.step`` makes it."""
        params: list[torch.Tensor] = []
        grads: list[torch.Tensor] = []
        exp_avgs: list[torch.Tensor] = []
        exp_avg_sqs: list[torch.Tensor] = []
        max_exp_avg_sqs: list[torch.Tensor] = []
        steps: list[torch.Tensor] = []
        has_complex = self._init_group(  # type: ignore[attr-defined]
            group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps
        )
        beta1, beta2 = group["betas"]
        adam(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            max_exp_avg_sqs,
            steps,
            amsgrad=group["amsgrad"],
            has_complex=has_complex,
            beta1=beta1,
            beta2=beta2,
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=group["maximize"],
            foreach=group["foreach"],
            capturable=group["capturable"],
            differentiable=group["differentiable"],
            fused=group["fused"],
            grad_scale=getattr(self, "grad_scale", None),
            found_inf=getattr(self, "found_inf", None),
            decoupled_weight_decay=group["decoupled_weight_decay"],
        )


# Torch wraps an optimizer class's step in its hooks and profiler range when the first
# instance is built, unless the step says it is wrapped already: `_LeanStep.step` runs torch's
# wrapped step itself whenever there are hooks (or a closure) to honour.
_LeanStep.step.hooked = True  # type: ignore[attr-defined]


class Adam(_LeanStep, torch.optim.Adam):
    """`torch.optim.Adam` with Coach's leaner step (module docstring)."""


class AdamW(_LeanStep, torch.optim.AdamW):
    """`torch.optim.AdamW` with Coach's leaner step (module docstring)."""


__all__ = ["Adam", "AdamW", "clip_grad_norm", "defer_dynamo_import"]
