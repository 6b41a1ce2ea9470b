"""Coach's Adam and AdamW: torch's numbers bit for bit, torch's checkpoints, and no
TorchDynamo import while nothing compiles."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import torch

from coach.networks.optimizer import Adam, AdamW, clip_grad_norm, defer_dynamo_import

TORCH = {Adam: torch.optim.Adam, AdamW: torch.optim.AdamW}


def _train(cls, steps=30, reload_at=None, freeze_at=None, **kwargs):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    optimizer = cls(net.parameters(), **kwargs)
    generator = torch.Generator().manual_seed(1)
    for i in range(steps):
        optimizer.zero_grad(set_to_none=True)
        net(torch.randn(16, 4, generator=generator)).pow(2).mean().backward()
        if freeze_at is not None and i >= freeze_at:
            net[2].bias.grad = None  # a parameter without a gradient is skipped
        optimizer.step()
        if reload_at == i:
            state = optimizer.state_dict()
            optimizer = cls(net.parameters(), **kwargs)
            optimizer.load_state_dict(state)
        optimizer.param_groups[0]["lr"] *= 0.97  # a schedule moves the learning rate
    return [p.detach().clone() for p in net.parameters()], optimizer.state_dict()


@pytest.mark.parametrize("cls", [Adam, AdamW])
@pytest.mark.parametrize("fused", [True, False, None])
@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
def test_the_same_numbers_and_state_as_torch(cls, fused, weight_decay):
    kwargs = {"lr": 3e-3, "weight_decay": weight_decay, "fused": fused}
    ours, our_state = _train(cls, reload_at=7, freeze_at=20, **kwargs)
    theirs, their_state = _train(TORCH[cls], reload_at=7, freeze_at=20, **kwargs)
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))
    assert our_state["param_groups"] == their_state["param_groups"]
    for index, fields in their_state["state"].items():
        for name, value in fields.items():
            assert torch.equal(our_state["state"][index][name], value), (index, name)


def test_a_torch_checkpoint_loads_and_continues_identically():
    torch.manual_seed(3)
    trained = torch.nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(trained.parameters(), lr=1e-2, fused=True)
    for _ in range(5):
        optimizer.zero_grad()
        trained(torch.randn(8, 4)).pow(2).sum().backward()
        optimizer.step()
    saved = (copy.deepcopy(trained.state_dict()), copy.deepcopy(optimizer.state_dict()))
    continued = []
    for cls in (AdamW, torch.optim.AdamW):
        net = torch.nn.Linear(4, 2)
        net.load_state_dict(saved[0])
        resumed = cls(net.parameters(), lr=1e-2, fused=True)
        resumed.load_state_dict(copy.deepcopy(saved[1]))
        generator = torch.Generator().manual_seed(4)
        for _ in range(5):
            resumed.zero_grad()
            net(torch.randn(8, 4, generator=generator)).pow(2).sum().backward()
            resumed.step()
        continued.append([p.detach().clone() for p in net.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*continued, strict=True))


def test_step_hooks_and_closures_still_run():
    net = torch.nn.Linear(2, 1)
    optimizer = AdamW(net.parameters(), lr=0.1, fused=True)
    calls = []
    optimizer.register_step_pre_hook(lambda *_: calls.append("pre"))
    optimizer.register_step_post_hook(lambda *_: calls.append("post"))

    def closure():
        optimizer.zero_grad()
        loss = net(torch.ones(1, 2)).sum()
        loss.backward()
        return loss

    assert optimizer.step(closure) is not None
    assert calls == ["pre", "post"]


def test_every_wrapped_method_is_seeded_on_this_torch():
    assert sorted(defer_dynamo_import()) == sorted(
        ["add_param_group", "zero_grad", "state_dict", "load_state_dict"]
    )


def test_building_stepping_and_checkpointing_do_not_import_dynamo():
    code = (
        "import sys, torch\n"
        "from coach.networks.optimizer import Adam, AdamW\n"
        "net = torch.nn.Linear(3, 2)\n"
        "for cls, fused in ((AdamW, True), (Adam, False)):\n"
        "    opt = cls(net.parameters(), lr=1e-3, fused=fused)\n"
        "    net(torch.ones(4, 3)).sum().backward()\n"
        "    opt.step(); opt.zero_grad()\n"
        "    opt.load_state_dict(opt.state_dict())\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_once_dynamo_is_loaded_the_methods_are_disabled_for_it():
    import torch._dynamo  # what torch.compile loads

    net = torch.nn.Linear(3, 2)
    optimizer = AdamW(net.parameters(), lr=1e-3, fused=True)
    fn = torch.optim.Optimizer.add_param_group.__wrapped__
    cached = getattr(fn, "__dynamo_disable")
    assert getattr(cached, "__name__", "") != "call"  # torch's own disabled function now
    net(torch.ones(1, 3)).sum().backward()
    optimizer.step()


@pytest.mark.parametrize("max_norm", [0.05, 1e6])  # clipped, and left alone
def test_clipping_gives_torch_numbers(max_norm):
    results = []
    for clip in (clip_grad_norm, lambda ps, m: torch.nn.utils.clip_grad_norm_(ps, m, foreach=True)):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
        net(torch.randn(8, 5)).pow(2).sum().backward()
        net[2].bias.grad = None  # a parameter without a gradient is left out
        norm = clip(list(net.parameters()), max_norm)
        results.append((norm, [p.grad.clone() for p in net.parameters() if p.grad is not None]))
    (ours, our_grads), (theirs, their_grads) = results
    assert torch.equal(ours, theirs)
    assert all(torch.equal(a, b) for a, b in zip(our_grads, their_grads, strict=True))


def test_clipping_without_gradients_is_torch_s():
    net = torch.nn.Linear(2, 2)
    assert torch.equal(clip_grad_norm(list(net.parameters()), 1.0), torch.tensor(0.0))


def _subnormals_kept() -> bool:
    return (torch.tensor([1e-39]) * 1.0).item() != 0.0


@pytest.mark.parametrize("flushing", [False, True], ids=["ieee", "caller-flushes"])
def test_a_step_flushes_the_denormal_moments_of_a_dead_unit_and_puts_the_flag_back(
    flushing: bool,
) -> None:
    """Adam's moments of a unit whose gradient is zero decay into the denormal range, where
    every step on them takes the CPU's slow path: the step flushes them to zero, and leaves
    the thread's floats as it found them."""
    net = torch.nn.Linear(3, 2)
    optimizer = Adam(net.parameters(), lr=1e-3, fused=True)
    for p in net.parameters():
        p.grad = torch.zeros_like(p)
    optimizer.step()  # builds the state
    for state in optimizer.state.values():
        state["exp_avg"].fill_(1e-39)  # decayed below float32's smallest normal
        state["exp_avg_sq"].fill_(1e-39)
    torch.set_flush_denormal(flushing)
    try:
        optimizer.step()
        assert _subnormals_kept() is not flushing
    finally:
        torch.set_flush_denormal(False)
    for state in optimizer.state.values():
        assert not state["exp_avg"].any() and not state["exp_avg_sq"].any()
