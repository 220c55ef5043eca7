"""Recurrent layers: one op per layer and direction over the whole sequence (``nn.RNN``, ``nn.LSTM``, ``nn.GRU``).

These are private to the registry: ``retrograd.nn.modules.rnn`` stacks them into layers and
directions, as PyTorch's ``_VF.lstm`` / ``_VF.gru`` / ``_VF.rnn_tanh`` do.

Note [Fused recurrent layers]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A recurrent layer written with the ordinary ops records a dozen small nodes per time step, and
its backward pays the engine's cost per node and step. ``rnn_layer`` is one node for a whole
layer and direction: its forward projects the inputs of every step with one product, then runs
the recurrence in NumPy, each step's gate nonlinearities in a few array passes, and keeps the
gates' activations, the states before each step and (LSTM) the cells as nondifferentiable
outputs (the workspace). Its formula is the hand-written backpropagation through time,
``rnn_layer_backward``: per step a few array passes and one product with ``weight_hh``; the
weights' gradients are one product each over all steps at the end.

That backward is not itself differentiable. Where the backward pass is recorded
(``create_graph=True``: grad mode is on while the formula runs), the formula instead re-runs the
layer with ordinary ops from the saved inputs and differentiates that with ``autograd.grad``,
so higher derivatives are exact and the gradient is connected to the inputs' histories.

Its forward derivative (Note [Forward derivatives]) linearises the cell equations: the activations of
every step come at once from the layer's own output (the state before a step is h0 or an earlier
step's output rows), and only the tangent of the state (and of LSTM's cell) runs step by step, one
product with ``weight_hh`` per step, with ordinary ops, so that tangents are differentiable.

Sequences are always in PyTorch's packed layout: ``input`` is ``(N, input_size)``, the rows of
step ``t`` follow those of step ``t - 1``, and ``batch_sizes[t]`` of them are active, never more
than at the step before. A padded ``(T, B, *)`` input is the packed layout with ``T`` steps of
``B``. At each step only the first ``batch_sizes[t]`` rows of the state advance; the others keep
theirs, which is how a packed sequence's shorter members end early (forward) or start late
(``reverse``), and how ``h_n`` holds each sequence's own last state.

Note [Gates through one tanh]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A step works on 16 or so rows, where each NumPy call costs about a microsecond whatever it does, and
a call on a non-contiguous view about two more; so an LSTM step is written in as few calls as it can
be, each on contiguous memory. Its workspace is step-major: a step's block is ``(6, rows, H)``, the
gates i, o, f, g (``_LSTM_ORDER``), then the tanh of the cell after the step and the cell before it.
The four gates go through one ``tanh``: ``sigmoid(x) = (tanh(x / 2) + 1) / 2``, so the blocks of i,
o and f in both weights and the bias are halved once per call, and after the ``tanh`` two scalar
passes over the first three blocks turn them into the sigmoids. The recurrent product is four
``(rows, H_out) x (H_out, H)`` products in one batched matmul (C-contiguous weights: OpenBLAS's
kernel for small matrices runs them about 1.5x faster than one ``(rows, H_out) x (H_out, 4H)``
product, and a transposed weight takes a slower path still), written into the block; the cell, its
tanh and the output are three calls, and the cell goes straight into the next step's block.

The backward first computes, for all steps at once, the derivatives of the pre-activations that do
not depend on the incoming gradient: each sigmoid's derivative is multiplied by the block three
places on (i by g, o by tanh(cell), f by the cell before), and tanh's derivatives of g and of the
cell by i and o, six calls on long runs. A step is then five elementwise calls and the split
product with ``weight_hh`` with its sum; the gates' gradients are reordered into rows once, and the
weights' and the input's gradients are one product each over all steps.

GRU's r and z go through one ``exp`` instead: their pre-activations are negated, so that
``1 / (1 + exp(.))`` is the sigmoid; where one is very negative, ``exp`` overflows to inf and the
sigmoid is 0, its limit.
"""
from __future__ import annotations

import numpy as np

from .._creation import zeros_like
from ..autograd import grad_mode
from ..autograd._api import grad as _autograd_grad
from ._declarations import defjvp, defop
from .joining import cat

__all__ = ["rnn_layer", "rnn_layer_backward", "GATES", "reference_layer"]

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}  # gate blocks per mode, PyTorch's order


def _steps(batch_sizes, reverse):
    """``(first row, rows)`` of each step, in the order the recurrence visits them."""
    spans = []
    start = 0
    for b in batch_sizes:
        spans.append((start, b))
        start += b
    return spans[::-1] if reverse else spans


def _empty(xp, like):
    return xp.empty((0,), dtype=like.dtype)


# See Note [Gates through one tanh]: the workspace of an LSTM step, (6, rows, H): PyTorch's gates i, o, f, g (their
# pre-activations, then the gates), the tanh of the cell after the step and the cell before it. The sigmoids come first
# and each of i, o, f is followed, three blocks on, by the block its derivative is multiplied by (g, tanh(cell), cell).
_LSTM_ORDER = (0, 3, 1, 2)


def _runs(batch_sizes):
    """``(first row, steps, rows)`` of each run of steps of equal batch size, in the order of the rows."""
    runs = []
    start = 0
    for b in batch_sizes:
        if runs and runs[-1][2] == b:
            runs[-1][1] += 1
        else:
            runs.append([start, 1, b])
        start += b
    return runs


def _blocks(flat, runs, k, hs):
    """``(first row, rows, view)`` of each run of a step-major buffer of ``k`` blocks a row: ``(steps, k, rows, hs)``."""
    return [(s, m * b, flat[k * hs * s:k * hs * (s + m * b)].reshape(m, k, b, hs)) for s, m, b in runs]


def _lstm_layer(xp, tensors, batch_sizes, reverse):
    """``_rnn_layer`` of an LSTM; see Note [Gates through one tanh]."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = tensors
    n = x.shape[0]
    hs = w_ih.shape[0] // 4
    ho = h0.shape[1]
    dt = x.dtype
    block = 6 * hs
    half = xp.asarray([0.5, 0.5, 0.5, 1.0], dtype=dt)[:, None, None]  # the pre-activations' scale, per gate
    w_in = xp.multiply(w_ih.reshape(4, hs, -1)[_LSTM_ORDER, :, :].transpose(0, 2, 1), half,
                       out=xp.empty((4, w_ih.shape[1], hs), dtype=dt))  # C-contiguous: the faster products
    w_rec = xp.multiply(w_hh.reshape(4, hs, ho)[_LSTM_ORDER, :, :].transpose(0, 2, 1), half,
                        out=xp.empty((4, ho, hs), dtype=dt))
    bias = None if b_ih is None else (b_ih + b_hh).reshape(4, 1, hs)[_LSTM_ORDER, :, :] * half
    gates = xp.empty(n * block, dtype=dt)  # step-major: the (6, rows, H) block of a step is contiguous
    for s, rows, view in _blocks(gates, _runs(batch_sizes), 6, hs):  # every step's input projection at once
        m, _, b, _ = view.shape
        pre = view[:, :4]
        xp.matmul(x[s:s + rows].reshape(m, 1, b, -1), w_in, out=pre)
        if bias is not None:
            pre += bias
    w_hr_t = None if w_hr is None else xp.ascontiguousarray(w_hr.T)
    out = xp.empty((n, ho), dtype=dt)
    h_n, c_n = xp.empty_like(h0), xp.empty_like(c0)
    rows = h0.shape[0]
    product = xp.empty(rows * 4 * hs, dtype=dt)
    scratch = xp.empty(rows * hs, dtype=dt)
    cell = xp.empty(rows * hs, dtype=dt)  # the cell after a step, where it is not written into the next step's block
    steps = _steps(batch_sizes, reverse)
    h_src = h0  # the state: its first rows are those of the sequences running now
    h_prevs = []
    for k, (s, b) in enumerate(steps):
        e = s + b
        hp = h_src[:b]
        h_prevs.append(hp)
        g = gates[block * s:block * e].reshape(6, b, hs)
        if k == 0:
            g[5] = c0[:b]
        pre = g[:4]
        pre += xp.matmul(hp, w_rec, out=product[:4 * hs * b].reshape(4, b, hs))
        xp.tanh(pre, out=pre)
        sg = g[:3]
        sg *= 0.5
        sg += 0.5  # i, o, f
        ns, nb = steps[k + 1] if k + 1 < len(steps) else (0, 0)
        cn = gates[block * ns + 5 * hs * b:block * ns + 6 * hs * b] if nb == b else cell[:hs * b]
        cn = cn.reshape(b, hs)
        t = scratch[:hs * b].reshape(b, hs)
        xp.multiply(g[2], g[5], out=cn)
        xp.multiply(g[0], g[3], out=t)
        cn += t
        xp.tanh(cn, out=g[4])
        if w_hr_t is None:
            xp.multiply(g[1], g[4], out=out[s:e])
        else:
            xp.matmul(xp.multiply(g[1], g[4], out=t), w_hr_t, out=out[s:e])
        if nb == b:
            h_src = out[s:e]
            continue
        after = gates[block * ns + 5 * hs * nb:block * ns + 6 * hs * nb].reshape(nb, hs)  # the next step's cell before
        if nb > b:  # reversed packed rows: the sequences that start next join with their initial state
            after[:b] = cn
            after[b:] = c0[b:nb]
            h_src = xp.concatenate([out[s:e], h0[b:nb]])
            continue
        after[...] = cn[:nb]  # the sequences in rows nb..b end here
        h_n[nb:b] = out[s + nb:e]
        c_n[nb:b] = cn[nb:]
        h_src = out[s:e]
    order = slice(None, None, -1) if reverse else slice(None)  # the states in the order of the rows
    empty = _empty(xp, x)
    return out, h_n, c_n, gates, empty, empty, xp.concatenate(h_prevs[order])


def _rnn_layer(xp, tensors, batch_sizes, mode, reverse=False):
    """One layer and direction over a packed sequence; see Note [Fused recurrent layers].

    Returns ``(output, h_n, c_n, gates, state_a, state_b, h_prev)``: the last four are the
    workspace of ``rnn_layer_backward`` (``c_n``, ``state_a`` and ``state_b`` are empty where the
    mode has no use for them). ``gates`` holds the activated gates of each step (LSTM: with the tanh
    of the cell after the step and the cell before it, see ``_LSTM_ORDER``); GRU: ``state_a`` is
    ``weight_hh @ h + bias_hh`` of each step.
    """
    if mode == "LSTM":
        return _lstm_layer(xp, tensors, batch_sizes, reverse)
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = tensors
    n = x.shape[0]
    hs = w_ih.shape[0] // GATES[mode]
    dt = x.dtype
    gates = x @ w_ih.T  # every step's input projection at once; becomes the activated gates in place
    if b_ih is not None:
        gates += b_ih
        if mode != "GRU":  # GRU adds its hidden bias per step: the new gate's sits inside r * (...)
            gates += b_hh
    w_hh_t = xp.ascontiguousarray(w_hh.T)  # See Note [Gates through one tanh]: the faster product
    state_a = state_b = c_n = _empty(xp, x)
    if mode == "GRU":
        gates[:, :2 * hs] *= -1  # See Note [Gates through one tanh]
        state_a = xp.empty((n, 3 * hs), dtype=dt)  # weight_hh @ h + bias_hh of each step (r scales its n part)
    out = xp.empty((n, h0.shape[1]), dtype=dt)
    h_n = xp.empty_like(h0)
    steps = _steps(batch_sizes, reverse)
    h_src = h0  # the state: its first rows are those of the sequences running now
    h_prevs = []
    with np.errstate(over="ignore"):  # exp(-x) overflows to inf for very negative x: sigmoid 0, as it should
        for k, (s, b) in enumerate(steps):
            e = s + b
            hp = h_src[:b]
            h_prevs.append(hp)
            g = gates[s:e]
            if mode == "GRU":
                hh = state_a[s:e]
                xp.matmul(hp, w_hh_t, out=hh)
                if b_hh is not None:
                    hh += b_hh
                rz = g[:, :2 * hs]
                rz -= hh[:, :2 * hs]
                xp.exp(rz, out=rz)
                rz += 1
                xp.reciprocal(rz, out=rz)
                new = g[:, 2 * hs:]
                new += g[:, :hs] * hh[:, 2 * hs:]
                xp.tanh(new, out=new)
                o = out[s:e]
                xp.subtract(hp, new, out=o)
                o *= g[:, hs:2 * hs]
                o += new
            else:
                g += hp @ w_hh_t
                if mode == "RNN_TANH":
                    xp.tanh(g, out=g)
                else:
                    xp.maximum(g, 0, out=g)
                out[s:e] = g
            nb = steps[k + 1][1] if k + 1 < len(steps) else 0
            if nb > b:  # reversed packed rows: the sequences that start next join with their initial state
                h_src = xp.concatenate([out[s:e], h0[b:nb]])
                continue
            if nb < b:  # the sequences in rows nb..b end here
                h_n[nb:b] = out[s + nb:e]
            h_src = out[s:e]
    order = slice(None, None, -1) if reverse else slice(None)  # the states in the order of the rows
    return out, h_n, c_n, gates, state_a, state_b, xp.concatenate(h_prevs[order])


def _lstm_layer_backward(xp, grad_output, grad_hy, grad_cy, tensors, gates, h_prev, batch_sizes, reverse):
    """``_rnn_layer_backward_arrays`` of an LSTM; see Note [Gates through one tanh]."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = tensors
    n = x.shape[0]
    hs = w_ih.shape[0] // 4
    dt = x.dtype
    block = 6 * hs
    dh = grad_hy.astype(dt, copy=True)
    dc = grad_cy.astype(dt, copy=True)
    runs = _runs(batch_sizes)
    coefs = xp.empty(n * 5 * hs, dtype=dt)  # step-major, a step's (5, rows, H): the derivatives of the pre-activations
    # of i, o, f by the cell (o: by m = o * tanh(cell)), of g's by the cell, of the cell by m
    for (_, _, a), (_, _, cf) in zip(_blocks(gates, runs, 6, hs), _blocks(coefs, runs, 5, hs), strict=True):
        p = cf[:, :3]
        xp.subtract(1, a[:, :3], out=p)
        p *= a[:, :3]  # the sigmoids' derivatives
        p *= a[:, 3:]  # by g, tanh(cell), the cell before
        q = cf[:, 3:]
        xp.multiply(a[:, 3:5], a[:, 3:5], out=q)
        xp.subtract(1, q, out=q)  # tanh's derivatives, of g and of the cell
        q *= a[:, :2]  # by i, o
    d_gates = xp.empty(n * 4 * hs, dtype=dt)  # step-major, a step's (4, rows, H) in PyTorch's order: i, f, g, o
    w_hh4 = w_hh.reshape(4, hs, -1)
    product = xp.empty(dh.shape[0] * 4 * dh.shape[1], dtype=dt)
    sum0 = xp.add.reduce if xp is np else xp.sum
    d_hr = None if w_hr is None else xp.empty((n, w_hr.shape[0]), dtype=dt)
    for s, b in _steps(batch_sizes, not reverse):  # backward visits the steps in the other order
        e = s + b
        dm = dh[:b]
        dm += grad_output[s:e]
        if d_hr is not None:
            d_hr[s:e] = dm
            dm = dm @ w_hr
        dg = d_gates[4 * hs * s:4 * hs * e].reshape(4, b, hs)
        cf = coefs[5 * hs * s:5 * hs * e].reshape(5, b, hs)
        dcb = dc[:b]
        xp.multiply(dm, cf[4], out=dg[0])  # the cell's gradient through m, in i's place for now
        dcb += dg[0]
        xp.multiply(dm, cf[1], out=dg[3])
        xp.multiply(dcb, cf[2:4], out=dg[1:3])
        xp.multiply(dcb, cf[0], out=dg[0])
        dcb *= gates[block * s + 2 * hs * b:block * s + 3 * hs * b].reshape(b, hs)  # f
        sum0(xp.matmul(dg, w_hh4, out=product[:b * 4 * dh.shape[1]].reshape(4, b, -1)), axis=0, out=dh[:b])
    d_rows = xp.empty((n, 4, hs), dtype=dt)  # the gates' gradients row by row: one product per input
    for s, rows, view in _blocks(d_gates, runs, 4, hs):
        m, _, b, _ = view.shape
        d_rows[s:s + rows].reshape(m, b, 4, hs)[...] = view.transpose(0, 2, 1, 3)
    d_rows = d_rows.reshape(n, 4 * hs)
    empty = _empty(xp, x)
    db_ih = empty if b_ih is None else d_rows.sum(0)
    dw_hr = empty
    if d_hr is not None:
        m_rows = xp.empty((n, hs), dtype=dt)  # m = o * tanh(cell), row by row
        for s, rows, a in _blocks(gates, runs, 6, hs):
            xp.multiply(a[:, 1], a[:, 4], out=m_rows[s:s + rows].reshape(a.shape[0], -1, hs))
        dw_hr = d_hr.T @ m_rows
    return (d_rows @ w_ih, dh, dc, d_rows.T @ x, d_rows.T @ h_prev, db_ih, empty if b_hh is None else db_ih.copy(),
            dw_hr)


def _rnn_layer_backward_arrays(xp, grad_output, grad_hy, grad_cy, tensors, gates, state_a, state_b, h_prev,
                               batch_sizes, mode, reverse=False):
    """Backpropagation through time of ``_rnn_layer``: the gradients of its eight inputs (empty where absent)."""
    if mode == "LSTM":
        return _lstm_layer_backward(xp, grad_output, grad_hy, grad_cy, tensors, gates, h_prev, batch_sizes, reverse)
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = tensors
    n = x.shape[0]
    hs = w_ih.shape[0] // GATES[mode]
    dt = x.dtype
    dh = grad_hy.astype(dt, copy=True)
    steps = _steps(batch_sizes, not reverse)  # backward visits the steps in the other order
    if mode == "GRU":
        r, z, new = (gates[:, k * hs:(k + 1) * hs] for k in range(3))
        coef_n = (1 - z) * (1 - new * new)  # d(pre-activation of n) / d(h)
        coef_z = (h_prev - new) * z * (1 - z)  # d(pre-activation of z) / d(h)
        coef_r = state_a[:, 2 * hs:] * r * (1 - r)  # d(pre-activation of r) / d(pre-activation of n)
        d_hid = xp.empty((n, 3, hs), dtype=dt)
        d_new = xp.empty((n, hs), dtype=dt)
        for s, b in steps:
            e = s + b
            dhb = dh[:b] + grad_output[s:e]
            dn = d_new[s:e]
            xp.multiply(dhb, coef_n[s:e], out=dn)
            xp.multiply(dn, coef_r[s:e], out=d_hid[s:e, 0])
            xp.multiply(dhb, coef_z[s:e], out=d_hid[s:e, 1])
            xp.multiply(dn, r[s:e], out=d_hid[s:e, 2])
            dhb *= z[s:e]
            dh[:b] = dhb + d_hid[s:e].reshape(b, 3 * hs) @ w_hh
        d_hid = d_hid.reshape(n, 3 * hs)
        d_in = d_hid.copy()
        d_in[:, 2 * hs:] = d_new
    else:
        deriv = 1 - gates * gates if mode == "RNN_TANH" else (gates > 0).astype(dt)
        d_in = d_hid = xp.empty((n, hs), dtype=dt)
        for s, b in steps:
            e = s + b
            xp.multiply(dh[:b] + grad_output[s:e], deriv[s:e], out=d_hid[s:e])
            xp.matmul(d_hid[s:e], w_hh, out=dh[:b])
    empty = _empty(xp, x)
    dx = d_in @ w_ih
    dw_ih = d_in.T @ x
    dw_hh = d_hid.T @ h_prev
    db_ih = d_in.sum(0) if b_ih is not None else empty
    db_hh = empty if b_hh is None else db_ih.copy() if d_hid is d_in else d_hid.sum(0)
    return dx, dh, empty, dw_ih, dw_hh, db_ih, db_hh, empty


# The fused backward (PyTorch's hand-written RNN backwards); not differentiable, see Note [Fused recurrent layers].
rnn_layer_backward = defop("rnn_layer_backward", _rnn_layer_backward_arrays, public=False, multi_output=True,
                           lists=("tensors",), node_name="RnnLayerBackwardBackward0",
                           tensor_args=("grad_output", "grad_hy", "grad_cy", "tensors", "gates", "state_a",
                                        "state_b", "h_prev"))


def _cell_step(mode, x, hp, cp, w_ih, w_hh, b_ih, b_hh, w_hr):
    """One step of the cell, with ordinary ops: ``(h, c)`` (``c`` None but for LSTM)."""
    gi = x.matmul(w_ih.t())
    gh = hp.matmul(w_hh.t())
    if b_ih is not None:
        gi = gi + b_ih
        gh = gh + b_hh
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = f.sigmoid() * cp + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h if w_hr is None else h.matmul(w_hr.t())), c
    if mode == "GRU":
        ir, iz, in_ = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
        new = (in_ + r * hn).tanh()
        return new + z * (hp - new), None
    pre = gi + gh
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), None


def reference_layer(tensors, batch_sizes, mode, reverse=False):
    """``rnn_layer``'s ``(output, h_n, c_n)`` computed with ordinary, differentiable ops, step by step."""
    x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr = tensors
    outs = {}
    for s, b in _steps(batch_sizes, reverse):
        hb, cb = _cell_step(mode, x[s:s + b], h[:b], None if c is None else c[:b], w_ih, w_hh, b_ih, b_hh, w_hr)
        outs[s] = hb
        h = hb if b == h.shape[0] else cat([hb, h[b:]])
        if c is not None:
            c = cb if b == c.shape[0] else cat([cb, c[b:]])
    return cat([outs[s] for s in sorted(outs)]), h, c


def _layer_grads(grads, tensors, result, batch_sizes, mode, reverse):
    """The gradients of ``rnn_layer``'s inputs: the fused backward, or, recorded, the reference layer's."""
    if grad_mode.state.grad_enabled:  # create_graph: see Note [Fused recurrent layers]
        wanted = [k for k, t in enumerate(tensors) if t is not None and t.requires_grad]
        out, h, c = reference_layer(tensors, batch_sizes, mode, reverse)
        outputs, seeds = [out, h], [grads[0], grads[1]]
        if c is not None:
            outputs.append(c)
            seeds.append(grads[2])
        got = _autograd_grad(outputs, [tensors[k] for k in wanted], seeds, create_graph=True, allow_unused=True)
        found = [None] * len(tensors)
        for k, g in zip(wanted, got, strict=True):
            found[k] = zeros_like(tensors[k]) if g is None else g
        return found
    fused = rnn_layer_backward(grads[0], grads[1], grads[2], tensors, result[3], result[4], result[5], result[6],
                               batch_sizes, mode, reverse)
    return [None if t is None else g for t, g in zip(tensors, fused, strict=True)]


# One layer and direction of a recurrent network over a packed sequence; see Note [Fused recurrent layers].
# ``tensors``: input (N, I), h0 (B, H_out), c0 (B, H) or None, weight_ih, weight_hh, bias_ih, bias_hh (or
# None), weight_hr (or None).
rnn_layer = defop("rnn_layer", _rnn_layer, public=False, multi_output=True, nondiff_outputs=(3, 4, 5, 6),
                  lists=("tensors",), node_name="RnnLayerBackward0", tensor_args=("tensors",),
                  tensors=_layer_grads)


def _advance(state, rows):
    """The full state after a step that advanced its first ``rows.shape[0]`` rows to ``rows``."""
    b = rows.shape[0]
    return rows if b == state.shape[0] else cat([rows, state[b:]])


def _in_row_order(steps, per_step):
    """Per-step row blocks (in visiting order) as one tensor in the order of the packed rows."""
    blocks = [block for _, block in sorted(zip((s for s, _ in steps), per_step, strict=True), key=lambda p: p[0])]
    return blocks[0] if len(blocks) == 1 else cat(blocks)


def _linear_t(a, a_t, w, w_t, b_t):
    """The tangent of ``a @ w^T + b``."""
    out = a_t.matmul(w.t()) + a.matmul(w_t.t())
    return out if b_t is None else out + b_t


def _rnn_layer_jvp(tensors_t, tensors, batch_sizes, mode, reverse, result):
    """The tangents of ``rnn_layer``'s output, h_n and c_n: the cell equations linearised, step after step.

    The primal activations of every step come at once from the layer's own output (the state before each step
    is h0 or an earlier step's output rows); only the tangent of the state (and LSTM's cell) is a recurrence,
    one product with ``weight_hh`` per step. Written with ordinary ops, so the tangents are differentiable.
    """
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = tensors
    x_t, h0_t, c0_t, w_ih_t, w_hh_t, b_ih_t, b_hh_t, w_hr_t = tensors_t
    out = result[0]
    steps = _steps(batch_sizes, reverse)
    h, prev = h0, []
    for s, b in steps:
        prev.append(h[:b])
        h = _advance(h, out[s:s + b])
    H = _in_row_order(steps, prev)  # the state before each row's step, row by row
    gi, gh = x.matmul(w_ih.t()), H.matmul(w_hh.t())
    if b_ih is not None:
        gi, gh = gi + b_ih, gh + b_hh
    gi_t, gh_t = _linear_t(x, x_t, w_ih, w_ih_t, b_ih_t), H.matmul(w_hh_t.t())
    if b_hh_t is not None:
        gh_t = gh_t + b_hh_t
    w_hh_T = w_hh.t()
    h_t, c_t, outs_t = h0_t, c0_t, []
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        deriv = cat([i * (1 - i), f * (1 - f), 1 - g * g, o * (1 - o)], 1)
        fixed_t = gi_t + gh_t
        c = c0
        for s, b in steps:
            e = s + b
            cp, cp_t = c[:b], c_t[:b]
            cn = f[s:e] * cp + i[s:e] * g[s:e]
            di, df, dg, do = ((fixed_t[s:e] + h_t[:b].matmul(w_hh_T)) * deriv[s:e]).chunk(4, 1)
            cn_t = df * cp + f[s:e] * cp_t + di * g[s:e] + i[s:e] * dg
            tc = cn.tanh()
            m_t = do * tc + o[s:e] * (1 - tc * tc) * cn_t
            hb_t = m_t if w_hr is None else _linear_t(o[s:e] * tc, m_t, w_hr, w_hr_t, None)
            c, c_t = _advance(c, cn), _advance(c_t, cn_t)
            h_t = _advance(h_t, hb_t)
            outs_t.append(hb_t)
        return _in_row_order(steps, outs_t), h_t, c_t, None, None, None, None
    if mode == "GRU":
        gi_r, gi_z, gi_n = gi.chunk(3, 1)
        gh_r, gh_z, gh_n = gh.chunk(3, 1)
        r, z = (gi_r + gh_r).sigmoid(), (gi_z + gh_z).sigmoid()
        new = (gi_n + r * gh_n).tanh()
        dr, dz, dn = r * (1 - r), z * (1 - z), 1 - new * new
        for s, b in steps:
            e = s + b
            hp, hp_t = H[s:e], h_t[:b]
            ghr_t, ghz_t, ghn_t = (gh_t[s:e] + hp_t.matmul(w_hh_T)).chunk(3, 1)
            gir_t, giz_t, gin_t = gi_t[s:e].chunk(3, 1)
            r_t, z_t = dr[s:e] * (gir_t + ghr_t), dz[s:e] * (giz_t + ghz_t)
            n_t = dn[s:e] * (gin_t + r_t * gh_n[s:e] + r[s:e] * ghn_t)
            hb_t = n_t + z_t * (hp - new[s:e]) + z[s:e] * (hp_t - n_t)
            h_t = _advance(h_t, hb_t)
            outs_t.append(hb_t)
        return _in_row_order(steps, outs_t), h_t, None, None, None, None, None
    deriv = 1 - out * out if mode == "RNN_TANH" else (out > 0).to(out.dtype)
    fixed_t = gi_t + gh_t
    for s, b in steps:
        e = s + b
        hb_t = deriv[s:e] * (fixed_t[s:e] + h_t[:b].matmul(w_hh_T))
        h_t = _advance(h_t, hb_t)
        outs_t.append(hb_t)
    return _in_row_order(steps, outs_t), h_t, None, None, None, None, None


defjvp(_rnn_layer_jvp, "rnn_layer")
