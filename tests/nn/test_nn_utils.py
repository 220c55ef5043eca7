"""retrograd.nn.utils: gradient clipping and parameter vectors, against PyTorch on the same numbers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), (2, 2, 1)]


def _pair(scale=3.0, seed=0, with_none=False):
    """The same parameters with the same .grad in both libraries (the last without one if asked)."""
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s) for s in SHAPES]
    grads = [scale * rng.standard_normal(s) for s in SHAPES]
    ours = [rg.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    for i, g in enumerate(grads):
        if with_none and i == len(grads) - 1:
            continue
        ours[i].grad, theirs[i].grad = rg.tensor(g), torch.tensor(g)
    return ours, theirs


def _assert_grads_equal(ours, theirs):
    for p, t in zip(ours, theirs):
        assert (p.grad is None) == (t.grad is None)
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, 0.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours, theirs = _pair()
    total = rg.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.shape == () and total.dtype == rg.float64
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    _assert_grads_equal(ours, theirs)


def test_clip_grad_norm_scales_down_never_up():
    ours, _ = _pair(scale=1e-3)
    before = [p.grad.numpy().copy() for p in ours]
    rg.nn.utils.clip_grad_norm_(ours, 10.0)
    for p, b in zip(ours, before):
        np.testing.assert_array_equal(p.grad.numpy(), b)


def test_clip_grad_norm_skips_parameters_without_grad():
    ours, theirs = _pair(with_none=True)
    np.testing.assert_allclose(rg.nn.utils.clip_grad_norm_(ours, 1.0).item(),
                               torch.nn.utils.clip_grad_norm_(theirs, 1.0).item(), rtol=1e-12)
    _assert_grads_equal(ours, theirs)


def test_clip_grad_norm_of_a_module_and_of_one_tensor():
    rg.manual_seed(0)
    net = rg.nn.Linear(4, 3)
    net(rg.randn(5, 4)).pow(2).sum().backward()
    expected = np.sqrt(sum((p.grad.numpy().astype(np.float64) ** 2).sum() for p in net.parameters()))
    assert rg.nn.utils.clip_grad_norm_(net.parameters(), 0.1).item() == pytest.approx(expected, rel=1e-5)
    assert rg.nn.utils.get_total_norm([p.grad for p in net.parameters()]).item() == pytest.approx(0.1, rel=1e-4)
    w = rg.tensor([3.0, 4.0], requires_grad=True)
    w.grad = rg.tensor([3.0, 4.0])
    assert rg.nn.utils.clip_grad_norm_(w, 1.0).item() == 5.0
    np.testing.assert_allclose(w.grad.numpy(), [0.6, 0.8], rtol=1e-5)


def test_clip_grad_norm_does_not_record_a_graph():
    ours, _ = _pair()
    total = rg.nn.utils.clip_grad_norm_(ours, 1.0)
    assert not total.requires_grad and all(p.grad.grad_fn is None for p in ours)


def test_clip_grad_norm_nonfinite_raises_when_asked():
    ours, theirs = _pair()
    ours[0].grad[0, 0] = float("nan")
    theirs[0].grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError) as mine:
        rg.nn.utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ref:
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    assert str(mine.value) == str(ref.value)
    assert np.isnan(rg.nn.utils.clip_grad_norm_(ours, 1.0).item())  # scales by the nan norm, as PyTorch


def test_clip_grad_norm_empty():
    assert rg.nn.utils.clip_grad_norm_([], 1.0).item() == torch.nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient clipping will occur."):
        rg.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rg.nn.utils.clip_grad_norm_([], 1.0)  # a list that is empty is not warned about


def test_clip_grad_norm_deprecated_alias_warns():
    ours, theirs = _pair()
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        total = rg.nn.utils.clip_grad_norm(ours, 1.0)
    assert total.item() == pytest.approx(torch.nn.utils.clip_grad_norm_(theirs, 1.0).item(), rel=1e-12)


def test_get_total_norm_and_clip_grads_with_norm_compose_to_clip_grad_norm():
    ours, theirs = _pair()
    total = rg.nn.utils.get_total_norm([p.grad for p in ours], 3.0)
    rg.nn.utils.clip_grads_with_norm_(ours, 2.0, total)
    torch.nn.utils.clip_grad_norm_(theirs, 2.0, norm_type=3.0)
    _assert_grads_equal(ours, theirs)


def test_clip_grad_norm_float32_grads_keep_their_dtype():
    w = rg.tensor([3.0, 4.0], requires_grad=True)
    w.grad = rg.tensor([30.0, 40.0])
    assert rg.nn.utils.clip_grad_norm_([w], 1.0).dtype == rg.float32
    assert w.grad.dtype == rg.float32


@pytest.mark.parametrize("clip_value", [0.5, 2, 100.0])
def test_clip_grad_value_matches_torch(clip_value):
    ours, theirs = _pair(with_none=True)
    assert rg.nn.utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    _assert_grads_equal(ours, theirs)


def test_parameters_to_vector_and_back_match_torch():
    ours, theirs = _pair()
    vec = rg.nn.utils.parameters_to_vector(ours)
    ref = torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vec.detach().numpy(), ref.detach().numpy())
    vec.sum().backward()  # differentiable in the parameters, as PyTorch's
    assert all(np.all(p.grad.numpy() != 0) for p in ours)
    new = np.arange(vec.numel(), dtype=np.float64)
    rg.nn.utils.vector_to_parameters(rg.tensor(new), ours)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs)
    for p, t in zip(ours, theirs):
        np.testing.assert_array_equal(p.detach().numpy(), t.detach().numpy())
        assert p.requires_grad and p.is_leaf


def test_vector_to_parameters_refuses_a_non_tensor():
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        rg.nn.utils.vector_to_parameters([1.0], [rg.zeros(1)])
