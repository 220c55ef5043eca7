"""``differentiable=True``: the optimizer's step is recorded, so a meta-gradient flows through it, as in PyTorch.

Each scenario runs with retrograd and with torch on the same numbers. See Note [Optimizer updates].
"""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

W0 = [0.5, -1.5, 2.0]
X = [1.0, 2.0, -0.5]

CONFIGS = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum": ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.05)),
    "sgd_nesterov": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    "adam": ("Adam", dict(lr=0.05)),
    "adam_amsgrad": ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    "adamw": ("AdamW", dict(lr=0.05, weight_decay=0.1)),
}


def _meta_gradient(lib, config, steps, lr_tensor=False):
    """Unrolls ``steps`` steps from w0, then differentiates the final loss with respect to w0 (and lr)."""
    name, kwargs = CONFIGS[config]
    kwargs = dict(kwargs)
    w0 = lib.tensor(W0, dtype=lib.float64, requires_grad=True)
    x = lib.tensor(X, dtype=lib.float64)
    lr = None
    if lr_tensor:
        lr = kwargs["lr"] = lib.tensor(kwargs["lr"], dtype=lib.float64, requires_grad=True)
    p = w0.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **kwargs)
    for _ in range(steps):
        q = p.clone()  # what the gradient's graph saves is q: the step may then modify p in place
        loss = ((q * x).sum() - 1.0) ** 2 + (q ** 4).sum() * 0.1
        p.grad, = lib.autograd.grad(loss, q, create_graph=True)
        opt.step()
    final = ((p * x).sum() - 1.0) ** 2 + (p * p).sum()
    inputs = (w0, lr) if lr_tensor else (w0,)
    grads = lib.autograd.grad(final, inputs)
    return p.detach().numpy(), [g.detach().numpy() for g in grads], p._version


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_meta_gradient_through_the_step_matches_torch(config, steps):
    if config == "adam_amsgrad" and steps > 1:
        # PyTorch's amsgrad saves exp_avg_sq for torch.maximum's backward, then the next step modifies it in place
        for lib in (rg, torch):
            with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation has been "
                                                   r"modified by an inplace operation: \[\w+.DoubleTensor \[3\]\]"):
                _meta_gradient(lib, config, steps)
        return
    ours = _meta_gradient(rg, config, steps)
    theirs = _meta_gradient(torch, config, steps)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-8, atol=1e-10)
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    assert ours[2] == theirs[2]


def _first_sentence(lib, fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e).replace(lib.__name__ + ".", "").split(". ")[0]


def test_tensor_lr_with_momentum_raises_on_the_second_step_as_torch():
    # The update saves the momentum buffer for lr's gradient, and the next step modifies it in place.
    ours, theirs = (_first_sentence(lib, lambda: _meta_gradient(lib, "sgd_momentum", 2, lr_tensor=True))
                    for lib in (rg, torch))
    assert ours == theirs == ("one of the variables needed for gradient computation has been modified by an inplace "
                              "operation: [DoubleTensor [3]], which is output 0 of Add, is at version 2; expected "
                              "version 0 instead")


@pytest.mark.parametrize("config", ["sgd", "adam", "adamw"])
def test_meta_gradient_for_a_tensor_lr_matches_torch(config):
    ours = _meta_gradient(rg, config, 2, lr_tensor=True)
    theirs = _meta_gradient(torch, config, 2, lr_tensor=True)
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    assert abs(ours[1][1]) > 0  # the learning rate does get a gradient


def test_differentiable_step_of_a_leaf_raises_as_torch():
    def run(lib):
        p = lib.tensor(W0, requires_grad=True)
        (p * p).sum().backward()
        try:
            lib.optim.SGD([p], lr=0.1, differentiable=True).step()
        except RuntimeError as e:
            return str(e)
    assert run(rg) == run(torch) == "a leaf Variable that requires grad is being used in an in-place operation."


def test_differentiable_step_matches_the_plain_step_in_value():
    for config in sorted(CONFIGS):
        name, kwargs = CONFIGS[config]
        values = []
        for differentiable in (False, True):
            w = rg.tensor(W0, dtype=rg.float64, requires_grad=True)
            p = w.clone() if differentiable else w
            opt = getattr(rg.optim, name)([p], differentiable=differentiable, **kwargs)
            for _ in range(3):
                p.grad = rg.autograd.grad((p ** 4).sum(), p)[0].detach()
                opt.step()
            values.append(p.detach().numpy())
        # Adam's differentiable formula computes its bias corrections in the step's float32, as PyTorch's
        np.testing.assert_allclose(values[0], values[1], rtol=1e-12 if name == "SGD" else 1e-5)


def test_meta_gradient_gradcheck():
    x = rg.tensor(X, dtype=rg.float64)

    def unrolled(w0, lr):
        p = w0.clone()
        opt = rg.optim.SGD([p], lr=lr, differentiable=True)
        for _ in range(2):
            q = p.clone()
            p.grad, = rg.autograd.grad(((q * x).sum() - 1.0) ** 2, q, create_graph=True)
            opt.step()
        return p * 1
    assert rg.autograd.gradcheck(unrolled, (rg.tensor(W0, dtype=rg.float64, requires_grad=True),
                                            rg.tensor(0.1, dtype=rg.float64, requires_grad=True)))
