"""nn.Transformer and its layers: PyTorch's submodule names (state dicts load both ways), outputs and gradients."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd import nn

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(99)


def _to_ours(ours, theirs):
    ours.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


def _to_theirs(theirs, ours):
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy().copy()) for k, v in ours.state_dict().items()})


def _build(lib, name, kwargs):
    m = lib.nn
    kwargs = dict(kwargs)
    if kwargs.get("activation") == "callable":
        kwargs["activation"] = m.functional.silu
    if name == "encoder_layer":
        return m.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, **kwargs)
    if name == "decoder_layer":
        return m.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, **kwargs)
    if name == "encoder":
        layer = m.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, **kwargs)
        return m.TransformerEncoder(layer, 2, norm=m.LayerNorm(8), enable_nested_tensor=False)
    if name == "decoder":
        layer = m.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, **kwargs)
        return m.TransformerDecoder(layer, 2, norm=m.LayerNorm(8))
    return m.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=12, dropout=0.0, **kwargs)


def _inputs(lib, name, batch_first, arrays, masks):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    causal = lib.tensor(masks["causal"])
    padding = lib.tensor(masks["padding"])
    if name == "encoder_layer":
        return xs, {"src_mask": causal, "src_key_padding_mask": padding}
    if name == "encoder":
        return xs, {"mask": causal, "src_key_padding_mask": padding}
    if name in ("decoder_layer", "decoder"):
        return xs, {"tgt_mask": lib.tensor(masks["tgt"]), "memory_key_padding_mask": padding}
    return xs, {"src_mask": causal, "tgt_mask": lib.tensor(masks["tgt"]), "src_key_padding_mask": padding,
                "memory_key_padding_mask": padding}


CONFIGS = [{}, {"activation": "gelu"}, {"activation": "callable"}, {"norm_first": True}, {"batch_first": True},
           {"bias": False, "layer_norm_eps": 1e-3}]


@pytest.mark.parametrize("name", ["encoder_layer", "decoder_layer", "encoder", "decoder", "transformer"])
@pytest.mark.parametrize("config", CONFIGS)
def test_torch_weights_give_our_outputs_and_gradients_and_ours_load_back(name, config):
    theirs = _build(torch, name, config).double()
    ours = _build(rg, name, config).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _to_ours(ours, theirs)
    batch_first = config.get("batch_first", False)
    n, s, t = 2, 5, 4
    shape = (lambda length: (n, length, 8)) if batch_first else (lambda length: (length, n, 8))
    arrays = [_rng.standard_normal(shape(t if name in ("decoder_layer", "decoder") else s))]
    if name in ("decoder_layer", "decoder"):
        arrays.append(_rng.standard_normal(shape(s)))
    elif name == "transformer":
        arrays.append(_rng.standard_normal(shape(t)))
    padding = np.zeros((n, s), dtype=bool)
    padding[0, -2:] = True
    masks = {"causal": np.triu(np.full((s, s), -np.inf), 1), "tgt": np.triu(np.full((t, t), -np.inf), 1),
             "padding": padding}
    results = []
    for lib, model in ((rg, ours), (torch, theirs)):
        xs, kwargs = _inputs(lib, name, batch_first, arrays, masks)
        out = model(*xs, **kwargs)
        (out * out).sum().backward()
        results.append((out, xs, dict(model.named_parameters())))
    (o, xs, ps), (to, txs, tps) = results
    np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy(), rtol=1e-7, atol=1e-9)
    for a, b in zip(xs, txs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-7, atol=1e-9)
    assert set(ps) == set(tps)
    for key, p in ps.items():
        np.testing.assert_allclose(p.grad.numpy(), tps[key].grad.numpy(), rtol=1e-7, atol=1e-9, err_msg=key)
    # and back: our weights into a fresh torch model give the same outputs
    fresh = _build(torch, name, config).double()
    _to_theirs(fresh, ours)
    xs, kwargs = _inputs(torch, name, batch_first, arrays, masks)
    np.testing.assert_allclose(fresh(*xs, **kwargs).detach().numpy(), o.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_generate_square_subsequent_mask_equals_torch():
    ours = nn.Transformer.generate_square_subsequent_mask(4)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert ours.dtype == rg.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=rg.float64).dtype == rg.float64


def test_encoder_detects_a_causal_mask_and_gives_the_same_result_as_the_hint():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0)
    encoder = nn.TransformerEncoder(layer, 2)
    x = rg.randn(5, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    a = encoder(x, mask=mask)
    b = encoder(x, mask=mask, is_causal=True)
    c = encoder(x, mask=rg.ones(5, 5, dtype=rg.bool).triu(1))
    assert rg.allclose(a, b, atol=1e-6) and rg.allclose(a, c, atol=1e-6)
    assert not rg.allclose(a, encoder(x), atol=1e-4)


def test_layers_are_independent_copies_and_reset_is_xavier():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=12)
    encoder = nn.TransformerEncoder(layer, 3)
    assert len(encoder.layers) == 3
    assert encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight
    assert rg.equal(encoder.layers[0].linear1.weight, encoder.layers[2].linear1.weight)  # copies of one layer
    model = nn.Transformer(16, 2, 1, 1, dim_feedforward=32)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6.0 / (16 + 32))
    assert [n for n, _ in model.named_parameters()] == \
        [n for n, _ in torch.nn.Transformer(16, 2, 1, 1, dim_feedforward=32).named_parameters()]


def test_transformer_errors_match_torch():
    def cases(lib):
        model = lib.nn.Transformer(8, 2, 1, 1, dim_feedforward=12)
        yield lambda: model(lib.ones(5, 2, 8), lib.ones(4, 3, 8))
        yield lambda: model(lib.ones(5, 2, 6), lib.ones(4, 2, 6))
        yield lambda: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    for ours, theirs in zip(cases(rg), cases(torch), strict=True):
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(expected.type) as got:
            ours()
        assert str(got.value) == str(expected.value)


def test_encoder_layer_trains_with_dropout_and_is_deterministic_in_eval():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.5, batch_first=True)
    x = rg.randn(2, 4, 8)
    layer.eval()
    assert rg.equal(layer(x), layer(x))
    layer.train()
    rg.manual_seed(1)
    a = layer(x)
    rg.manual_seed(2)
    assert not rg.equal(a, layer(x))
    a.sum().backward()
    assert all(p.grad is not None for p in layer.parameters())


@pytest.mark.parametrize("kwargs", [{}, {"batch_first": True}, {"batch_first": True, "norm_first": True},
                                    {"batch_first": True, "activation": "callable"}])
def test_encoder_warns_about_nested_tensors_as_torch(kwargs):
    messages = []
    for lib in (rg, torch):
        layer = _build(lib, "encoder_layer", kwargs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            encoder = lib.nn.TransformerEncoder(layer, 1)
        messages.append(([str(w.message) for w in caught if "nested" in str(w.message)], encoder.use_nested_tensor))
    assert messages[0] == messages[1]
