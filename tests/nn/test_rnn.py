"""nn.RNN, nn.LSTM, nn.GRU, their cells and nn.utils.rnn, against PyTorch on the same weights and inputs."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.nn.utils import rnn as rg_rnn

torch = pytest.importorskip("torch")
from torch.nn.utils import rnn as torch_rnn  # noqa: E402

_rng = np.random.default_rng(20261201)


def _a(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


def _pair(cls_name, *args, dtype=np.float64, **kwargs):
    """The same module in both libraries, retrograd's loaded from torch's state_dict."""
    torch.manual_seed(0)
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    tm = getattr(torch.nn, cls_name)(*args, **kwargs).to(tdtype)
    rm = getattr(rg.nn, cls_name)(*args, **kwargs).to(rg.float64 if dtype == np.float64 else rg.float32)
    rm.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return rm, tm


_MADE = []  # the leaves _leaf made since the last _compare began a library's arguments


def _leaf(lib, array):
    t = lib.tensor(array.copy(), requires_grad=True)
    _MADE.append(t)
    return t


def _made_by(make_args, lib):
    """``make_args(lib)`` and the leaves it made."""
    del _MADE[:]
    args = make_args(lib)
    return args, list(_MADE)


def _flat(out):
    if hasattr(out, "batch_sizes") and hasattr(out, "data"):  # a PackedSequence
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _np(t):
    return t.detach().numpy()


def _compare(rm, tm, make_args, tol):
    """Forward outputs, and the gradients of the inputs and parameters, equal torch's."""
    (r_args, r_leaves), (t_args, t_leaves) = _made_by(make_args, rg), _made_by(make_args, torch)
    r_out, t_out = _flat(rm(*r_args)), _flat(tm(*t_args))
    assert len(r_out) == len(t_out)
    for r, t in zip(r_out, t_out, strict=True):
        assert tuple(r.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(r), _np(t), rtol=tol, atol=tol)
    seeds = [_a(*t.shape, dtype=_np(t).dtype) for t in t_out]
    sum(((o * rg.tensor(s)).sum() for o, s in zip(r_out, seeds, strict=True)), rg.tensor(0.0)).backward()
    sum(((o * torch.tensor(s)).sum() for o, s in zip(t_out, seeds, strict=True)), torch.tensor(0.0)).backward()
    for (name, rp), (tname, tp) in zip(rm.named_parameters(), tm.named_parameters(), strict=True):
        assert name == tname
        np.testing.assert_allclose(_np(rp.grad), _np(tp.grad), rtol=tol, atol=tol, err_msg=name)
    assert len(r_leaves) == len(t_leaves)
    for r, t in zip(r_leaves, t_leaves, strict=True):
        np.testing.assert_allclose(_np(r.grad), _np(t.grad), rtol=tol, atol=tol)


CONFIGS = [
    ("LSTM", dict(num_layers=1)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=2, proj_size=3, bidirectional=True)),
    ("LSTM", dict(bias=False, batch_first=True)),
    ("GRU", dict(num_layers=2)),
    ("GRU", dict(bidirectional=True, batch_first=True, bias=False)),
    ("RNN", dict(nonlinearity="tanh", num_layers=2, bidirectional=True)),
    ("RNN", dict(nonlinearity="relu")),
]


def _states(name, kwargs, batch, hidden=5):
    """Initial states as arrays: ``h0``, or ``(h0, c0)`` for LSTM."""
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h = _a(layers, batch, kwargs.get("proj_size") or hidden)
    return (h, _a(layers, batch, hidden)) if name == "LSTM" else h


def _leaves(lib, arrays):
    return tuple(_leaf(lib, a) for a in arrays) if isinstance(arrays, tuple) else _leaf(lib, arrays)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}"
                                                      for n, kw in CONFIGS])
def test_recurrent_layer_outputs_and_gradients_match_torch_float64(name, kwargs):
    rm, tm = _pair(name, 4, 5, **kwargs)
    x = _a(3, 6, 4) if kwargs.get("batch_first") else _a(6, 3, 4)
    _compare(rm, tm, lambda lib: (_leaf(lib, x),), 1e-10)
    rm.zero_grad()
    tm.zero_grad()
    states = _states(name, kwargs, 3)
    _compare(rm, tm, lambda lib: (_leaf(lib, x), _leaves(lib, states)), 1e-10)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_recurrent_layer_float32_matches_torch(name):
    kwargs = dict(proj_size=3) if name == "LSTM" else {}
    rm, tm = _pair(name, 4, 5, num_layers=2, dtype=np.float32, **kwargs)
    x = _a(7, 2, 4, dtype=np.float32)
    _compare(rm, tm, lambda lib: (_leaf(lib, x),), 1e-5)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_unbatched_input_matches_torch(name):
    rm, tm = _pair(name, 4, 5, num_layers=2)
    x = _a(6, 4)
    h = _a(2, 5)
    state = (lambda lib: (_leaf(lib, h), _leaf(lib, h * 0.5))) if name == "LSTM" else (lambda lib: _leaf(lib, h))
    _compare(rm, tm, lambda lib: (_leaf(lib, x), state(lib)), 1e-10)


@pytest.mark.parametrize("name,kwargs", [("LSTM", dict(bidirectional=True, num_layers=2, proj_size=2)),
                                         ("GRU", dict(bidirectional=True)), ("RNN", dict(num_layers=2))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence_input_gives_packed_output_as_torch(name, kwargs, enforce_sorted):
    rm, tm = _pair(name, 3, 4, **kwargs)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    seqs = [_a(n, 3) for n in lengths]

    def args(lib):
        mod = rg_rnn if lib is rg else torch_rnn
        return (mod.pack_sequence([_leaf(lib, s) for s in seqs], enforce_sorted=enforce_sorted),)
    _compare(rm, tm, args, 1e-10)
    r_out, _ = rm(args(rg)[0])
    t_out, _ = tm(args(torch)[0])
    assert isinstance(r_out, rg_rnn.PackedSequence)
    assert r_out.batch_sizes.tolist() == t_out.batch_sizes.tolist()
    r_pad, r_len = rg_rnn.pad_packed_sequence(r_out, batch_first=True)
    t_pad, t_len = torch_rnn.pad_packed_sequence(t_out, batch_first=True)
    np.testing.assert_allclose(_np(r_pad), _np(t_pad), atol=1e-12)
    assert r_len.tolist() == t_len.tolist()


def test_packed_initial_states_are_permuted_like_torch():
    rm, tm = _pair("LSTM", 3, 4)
    seqs = [_a(n, 3) for n in (2, 4, 3)]
    h, c = _a(1, 3, 4), _a(1, 3, 4)

    def args(lib):
        mod = rg_rnn if lib is rg else torch_rnn
        return (mod.pack_sequence([_leaf(lib, s) for s in seqs], enforce_sorted=False), (_leaf(lib, h), _leaf(lib, c)))
    _compare(rm, tm, args, 1e-10)


@pytest.mark.parametrize("name,kwargs", [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}),
                                         ("RNNCell", dict(nonlinearity="relu")), ("LSTMCell", dict(bias=False))])
def test_cells_match_torch(name, kwargs):
    rm, tm = _pair(name, 4, 5, **kwargs)
    x, h = _a(3, 4), _a(3, 5)
    state = (lambda lib: (_leaf(lib, h), _leaf(lib, -h))) if name == "LSTMCell" else (lambda lib: _leaf(lib, h))
    _compare(rm, tm, lambda lib: (_leaf(lib, x), state(lib)), 1e-10)
    rm.zero_grad()
    tm.zero_grad()
    _compare(rm, tm, lambda lib: (_leaf(lib, x[0]),), 1e-10)  # unbatched, zero state


def test_state_dict_loads_both_ways_with_torch():
    tm = torch.nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2).double()
    rm = rg.nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2).double()
    assert list(rm.state_dict()) == list(tm.state_dict())
    assert [tuple(v.shape) for v in rm.state_dict().values()] == [tuple(v.shape) for v in tm.state_dict().values()]
    tm.load_state_dict({k: torch.from_numpy(_np(v).copy()) for k, v in rm.state_dict().items()})
    x = _a(4, 2, 3)
    _compare(rm, tm, lambda lib: (_leaf(lib, x),), 1e-10)


def test_parameters_have_torch_names_shapes_and_initialisation_range():
    m = rg.nn.GRU(3, 16, num_layers=2, bidirectional=True)
    t = torch.nn.GRU(3, 16, num_layers=2, bidirectional=True)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [(n, tuple(p.shape)) for n, p in
                                                                       t.named_parameters()]
    values = np.concatenate([_np(p).ravel() for p in m.parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.2  # uniform(-1/sqrt(16), 1/sqrt(16))
    assert [[tuple(w.shape) for w in ws] for ws in m.all_weights] == [[tuple(w.shape) for w in ws]
                                                                      for ws in t.all_weights]
    m.flatten_parameters()
    assert repr(rg.nn.LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True, dropout=0.5)) == repr(
        torch.nn.LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True, dropout=0.5))
    assert repr(rg.nn.RNNCell(3, 4, nonlinearity="relu", bias=False)) == repr(
        torch.nn.RNNCell(3, 4, nonlinearity="relu", bias=False))


def test_dropout_acts_between_layers_in_training_only():
    m = rg.nn.LSTM(3, 8, num_layers=2, dropout=0.5).double()
    x = rg.tensor(_a(5, 2, 3))
    a, b = m(x)[0], m(x)[0]
    assert not np.allclose(_np(a), _np(b))
    m.eval()
    np.testing.assert_array_equal(_np(m(x)[0]), _np(m(x)[0]))
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last recurrent layer"):
        rg.nn.GRU(3, 4, dropout=0.2)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e).split("\n")[0].replace("retrograd.", "torch.")  # dtypes' names
    return None


BAD_CALLS = {
    "input rank": lambda m: m.nn.RNN(3, 4)(m.randn(5, 2, 3, 1)),
    "input size": lambda m: m.nn.RNN(3, 4)(m.randn(5, 2, 4)),
    "hidden size": lambda m: m.nn.GRU(3, 4)(m.randn(5, 2, 3), m.randn(2, 2, 4)),
    "hidden rank": lambda m: m.nn.GRU(3, 4)(m.randn(5, 2, 3), m.randn(2, 4)),
    "lstm h0 size": lambda m: m.nn.LSTM(3, 4)(m.randn(5, 2, 3), (m.randn(1, 3, 4), m.randn(1, 2, 4))),
    "lstm c0 size": lambda m: m.nn.LSTM(3, 4)(m.randn(5, 2, 3), (m.randn(1, 2, 4), m.randn(1, 2, 5))),
    "lstm state rank": lambda m: m.nn.LSTM(3, 4)(m.randn(5, 2, 3), (m.randn(2, 4), m.randn(2, 4))),
    "lstm input rank": lambda m: m.nn.LSTM(3, 4)(m.randn(3)),
    "dtype": lambda m: m.nn.LSTM(3, 4)(m.randn(5, 2, 3).double()),
    "nonlinearity": lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "proj on gru": lambda m: m.nn.GRU(3, 4, proj_size=2),
    "proj too big": lambda m: m.nn.LSTM(3, 4, proj_size=4),
    "dropout range": lambda m: m.nn.LSTM(3, 4, dropout=1.5),
    "hidden type": lambda m: m.nn.LSTM(3, 4.0),
    "layers": lambda m: m.nn.LSTM(3, 4, num_layers=0),
    "cell input size": lambda m: m.nn.LSTMCell(3, 4)(m.randn(2, 5)),
    "cell batch": lambda m: m.nn.LSTMCell(3, 4)(m.randn(2, 3), (m.randn(3, 4), m.randn(2, 4))),
    "cell hidden size": lambda m: m.nn.GRUCell(3, 4)(m.randn(2, 3), m.randn(2, 5)),
    "cell input rank": lambda m: m.nn.GRUCell(3, 4)(m.randn(2, 3, 1)),
    "cell hx rank": lambda m: m.nn.LSTMCell(3, 4)(m.randn(2, 3), (m.randn(2, 4, 1), m.randn(2, 4))),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_shapes_raise_torch_errors(case):
    expected = _error(lambda: BAD_CALLS[case](torch))
    assert expected is not None
    assert _error(lambda: BAD_CALLS[case](rg)) == expected


def test_double_backward_through_lstm_passes_gradgradcheck():
    m = rg.nn.LSTM(2, 3, num_layers=2, bidirectional=True).double()
    x = rg.tensor(_a(2, 1, 2), requires_grad=True)  # small: gradgradcheck's cost grows with in x out elements
    h = rg.tensor(_a(4, 1, 3), requires_grad=True)
    c = rg.tensor(_a(4, 1, 3), requires_grad=True)

    def f(x, h, c):
        out, (hn, cn) = m(x, (h, c))
        return out, hn, cn
    assert rg.autograd.gradcheck(f, (x, h, c))
    assert rg.autograd.gradgradcheck(f, (x, h, c))


def test_lstm_second_derivatives_match_torch():
    rm, tm = _pair("LSTM", 2, 3, num_layers=2)
    x = _a(4, 2, 2)
    seeds, direction = _a(4, 2, 3), _a(4, 2, 2)
    found = []
    for lib, m in ((rg, rm), (torch, tm)):
        xt = _leaf(lib, x)
        out = m(xt)[0]
        (g,) = lib.autograd.grad(out, xt, lib.tensor(seeds), create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(direction)).sum(), m.weight_ih_l0)
        found.append((_np(g), _np(gg)))
    np.testing.assert_allclose(found[0][0], found[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(found[0][1], found[1][1], rtol=1e-10, atol=1e-12)


def test_a_layer_is_one_node_per_direction():
    m = rg.nn.GRU(3, 4)
    out, h = m(rg.randn(50, 2, 3))
    seen, stack_, count = set(), [out.grad_fn], 0
    while stack_:
        node = stack_.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        count += 1
        stack_.extend(e[0] for e in node.next_functions)
    assert count < 12  # 50 steps, yet a handful of nodes: the reshape, the layer, the weights' sinks


# -- nn.utils.rnn ----------------------------------------------------------------------------------------------
def test_pad_sequence_matches_torch():
    seqs = [_a(n, 2) for n in (3, 1, 4)]
    for kwargs in (dict(), dict(batch_first=True), dict(padding_value=-1.0, padding_side="left"),
                   dict(batch_first=True, padding_side="left")):
        r = rg_rnn.pad_sequence([rg.tensor(s) for s in seqs], **kwargs)
        t = torch_rnn.pad_sequence([torch.tensor(s) for s in seqs], **kwargs)
        np.testing.assert_array_equal(_np(r), _np(t))


def test_pack_padded_and_pad_packed_round_trip_as_torch():
    x = _a(5, 3, 2)
    for lengths, enforce in (([5, 3, 2], True), ([2, 5, 3], False)):
        for batch_first in (False, True):
            xs = x.transpose(1, 0, 2).copy() if batch_first else x
            r = rg_rnn.pack_padded_sequence(rg.tensor(xs), lengths, batch_first=batch_first, enforce_sorted=enforce)
            t = torch_rnn.pack_padded_sequence(torch.tensor(xs), lengths, batch_first=batch_first,
                                               enforce_sorted=enforce)
            np.testing.assert_array_equal(_np(r.data), _np(t.data))
            assert r.batch_sizes.tolist() == t.batch_sizes.tolist()
            for field in ("sorted_indices", "unsorted_indices"):
                rv, tv = getattr(r, field), getattr(t, field)
                assert (rv is None and tv is None) or rv.tolist() == tv.tolist()
            rp, rl = rg_rnn.pad_packed_sequence(r, batch_first=batch_first, padding_value=9.0, total_length=6)
            tp, tl = torch_rnn.pad_packed_sequence(t, batch_first=batch_first, padding_value=9.0, total_length=6)
            np.testing.assert_array_equal(_np(rp), _np(tp))
            assert rl.tolist() == tl.tolist() and rl.dtype == rg.int64


def test_pack_and_unpack_sequence_and_unpad_as_torch():
    seqs = [_a(n, 2) for n in (2, 4, 1)]
    r = rg_rnn.pack_sequence([rg.tensor(s) for s in seqs], enforce_sorted=False)
    t = torch_rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(_np(r.data), _np(t.data))
    for a, b in zip(rg_rnn.unpack_sequence(r), torch_rnn.unpack_sequence(t), strict=True):
        np.testing.assert_array_equal(_np(a), _np(b))
    padded = _a(4, 3, 2)
    for a, b in zip(rg_rnn.unpad_sequence(rg.tensor(padded), rg.tensor([4, 2, 1])),
                    torch_rnn.unpad_sequence(torch.tensor(padded), torch.tensor([4, 2, 1])), strict=True):
        np.testing.assert_array_equal(_np(a), _np(b))


def test_packing_is_differentiable():
    x = rg.tensor(_a(4, 2, 3), requires_grad=True)
    packed = rg_rnn.pack_padded_sequence(x, [4, 2])
    padded, _ = rg_rnn.pad_packed_sequence(packed)
    assert rg.autograd.gradcheck(lambda x: rg_rnn.pad_packed_sequence(rg_rnn.pack_padded_sequence(x, [4, 2]))[0],
                                 (x,))
    padded.sum().backward()
    expected = np.zeros((4, 2, 3))
    expected[:, 0] = 1
    expected[:2, 1] = 1
    np.testing.assert_array_equal(_np(x.grad), expected)


PACK_ERRORS = {
    "unsorted": lambda m, r: r.pack_padded_sequence(m.zeros(4, 3, 2), [2, 3, 1]),
    "zero length": lambda m, r: r.pack_padded_sequence(m.zeros(4, 3, 2), [3, 2, 0]),
    "count": lambda m, r: r.pack_padded_sequence(m.zeros(4, 3, 2), [3, 2]),
    "2-d lengths": lambda m, r: r.pack_padded_sequence(m.zeros(4, 3, 2), m.tensor([[3, 2, 1]])),
    "padding side": lambda m, r: r.pad_sequence([m.ones(2)], padding_side="mid"),
    "empty": lambda m, r: r.pad_sequence([]),
    "not iterable": lambda m, r: r.pad_sequence(3),
    "total length": lambda m, r: r.pad_packed_sequence(r.pack_sequence([m.ones(3)]), total_length=2),
    "pack unsorted": lambda m, r: r.pack_sequence([m.ones(2), m.ones(3)]),
}


@pytest.mark.parametrize("case", sorted(PACK_ERRORS))
def test_packing_errors_match_torch(case):
    expected = _error(lambda: PACK_ERRORS[case](torch, torch_rnn))
    assert expected is not None
    assert _error(lambda: PACK_ERRORS[case](rg, rg_rnn)) == expected


def test_packed_sequence_is_a_named_tuple_with_torch_repr_and_conversions():
    r = rg_rnn.pack_sequence([rg.tensor([1.0, 2.0]), rg.tensor([3.0])])
    data, batch_sizes, sorted_indices, unsorted_indices = r
    assert sorted_indices is None and unsorted_indices is None
    assert repr(r).startswith("PackedSequence(data=tensor(")
    assert r.double().data.dtype == rg.float64 and r.long().data.dtype == rg.int64
    assert r.to(rg.float64).batch_sizes is r.batch_sizes
    assert not r.is_cuda and not r.is_pinned()
