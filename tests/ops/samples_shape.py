"""Samples of the shape ops (retrograd/ops/shape.py) and composites built on them; format in samples.py."""
import numpy as np

from samples import A, B, Const, I, Sample, add, nc

add("view",
    Sample(lambda m, x: x.view(3, 2), A(2, 3), ref=lambda x: x.reshape(3, 2)),
    Sample(lambda m, x: x.view((-1,)), A(2, 3), ref=lambda x: x.reshape(-1)),
    Sample(lambda m, x: x.view(1, -1, 1), A(), ref=lambda x: x.reshape(1, 1, 1)),
    Sample(lambda m, x: x.view(()), A(1, 1), ref=lambda x: x.reshape(())),
    Sample(lambda m, x: x.view(0, 2), A(0, 3, 2), ref=lambda x: x.reshape(0, 2)),
    Sample(lambda m, x: x.view(2, 3), nc(A(6)), ref=lambda x: x.reshape(2, 3), note="strided 1-D"),
    Sample(lambda m, x, y: x.view_as(y), A(6), Const(A(3, 2))),
    Sample(lambda m, x: x.view(2, 3), I(5, 6), ref=lambda x: x.reshape(2, 3)))
add("reshape",
    Sample(lambda m, x: m.reshape(x, (3, 2)), A(2, 3), ref=lambda x: x.reshape(3, 2)),
    Sample(lambda m, x: x.reshape(-1), nc(A(2, 3)), ref=lambda x: x.reshape(-1), note="copies"),
    Sample(lambda m, x: x.reshape(2, -1), A(2, 3, 2), ref=lambda x: x.reshape(2, -1)),
    Sample(lambda m, x: x.reshape(()), A(1), ref=lambda x: x.reshape(())),
    Sample(lambda m, x: x.reshape(3, 0), A(0, 3), ref=lambda x: x.reshape(3, 0)),
    Sample(lambda m, x, y: x.reshape_as(y), A(6), Const(A(2, 3))))
add("flatten",
    Sample(lambda m, x: m.flatten(x), A(2, 3, 2), ref=lambda x: x.reshape(-1)),
    Sample(lambda m, x: x.flatten(1), A(2, 3, 2), ref=lambda x: x.reshape(2, 6)),
    Sample(lambda m, x: x.flatten(0, -2), nc(A(2, 3, 2)), ref=lambda x: x.reshape(6, 2)),
    Sample(lambda m, x: m.flatten(x), A(), ref=lambda x: x.reshape(1)))
add("unflatten", Sample(lambda m, x: x.unflatten(1, (2, 3)), A(2, 6), ref=lambda x: x.reshape(2, 2, 3)))
add("transpose",
    Sample(lambda m, x: m.transpose(x, 0, 1), A(2, 3), ref=lambda x: x.T),
    Sample(lambda m, x: x.transpose(-1, 0), A(2, 3, 2), ref=lambda x: np.swapaxes(x, -1, 0)),
    Sample(lambda m, x: x.transpose(1, 1), A(2, 3), ref=lambda x: x, note="transpose(d, d)"),
    Sample(lambda m, x: x.transpose(0, -1), A(), ref=lambda x: x),
    Sample(lambda m, x: x.transpose(0, 1), A(0, 3), ref=lambda x: x.T),
    Sample(lambda m, x: x.mT, nc(A(2, 2, 3)), ref=lambda x: np.swapaxes(x, -1, -2)),
    Sample(lambda m, x: m.swapaxes(x, 0, 1), A(2, 3), ref=lambda x: x.T))
add("t",
    Sample(lambda m, x: x.t(), A(2, 3), ref=lambda x: x.T),
    Sample(lambda m, x: m.t(x), A(3), ref=lambda x: x, note="t() of a 1-D tensor"),
    Sample(lambda m, x: m.t(x), A(), ref=lambda x: x, note="t() of a 0-d tensor"),
    Sample(lambda m, x: x.t(), nc(A(3, 2)), ref=lambda x: x.T, note="non-contiguous"),
    Sample(lambda m, x: x.t(), A(0, 3), ref=lambda x: x.T))
add("permute",
    Sample(lambda m, x: m.permute(x, (2, 0, 1)), A(2, 3, 2), ref=lambda x: x.transpose(2, 0, 1)),
    Sample(lambda m, x: x.permute(1, -3, 2), nc(A(2, 3, 2)), ref=lambda x: x.transpose(1, 0, 2)),
    Sample(lambda m, x: x.permute(()), A(), ref=lambda x: x),
    Sample(lambda m, x: x.T, A(2, 3, 4), ref=lambda x: x.transpose(2, 1, 0)),
    Sample(lambda m, x: m.movedim(x, 0, -1), A(2, 3, 2), ref=lambda x: np.moveaxis(x, 0, -1)),
    Sample(lambda m, x: m.permute(x, (1, 0)), A(0, 3), ref=lambda x: x.T))
add("unsqueeze",
    Sample(lambda m, x: m.unsqueeze(x, 1), A(2, 3), ref=lambda x: x[:, None]),
    Sample(lambda m, x: x.unsqueeze(-1), nc(A(2, 3)), ref=lambda x: x[..., None]),
    Sample(lambda m, x: x.unsqueeze(0), A(), ref=lambda x: x[None]),
    Sample(lambda m, x: x.unsqueeze(-1), A(), ref=lambda x: x[None]),
    Sample(lambda m, x: x.unsqueeze(0), A(0, 2), ref=lambda x: x[None]))
add("squeeze",
    Sample(lambda m, x: m.squeeze(x), A(1, 3, 1), ref=np.squeeze),
    Sample(lambda m, x: x.squeeze(0), A(1, 3, 1), ref=lambda x: x[0]),
    Sample(lambda m, x: x.squeeze(1), A(1, 3, 1), ref=lambda x: x, note="size is not 1: unchanged"),
    Sample(lambda m, x: x.squeeze(-1), nc(A(2, 1)), ref=lambda x: x[:, 0]),
    Sample(lambda m, x: x.squeeze((0, 2)), A(1, 3, 1), ref=lambda x: x[0, :, 0]),
    Sample(lambda m, x: x.squeeze(0), A(), ref=lambda x: x),
    Sample(lambda m, x: x.squeeze(), A(), ref=lambda x: x),
    Sample(lambda m, x: x.squeeze(), A(1, 0), ref=lambda x: x.reshape(0)))
add("expand",
    Sample(lambda m, x: x.expand(2, 3), A(3), ref=lambda x: np.broadcast_to(x, (2, 3))),
    Sample(lambda m, x: x.expand(2, -1, 3), A(2, 1), ref=lambda x: np.broadcast_to(x, (2, 2, 3))),
    Sample(lambda m, x: x.expand((2, 2)), A(), ref=lambda x: np.broadcast_to(x, (2, 2))),
    Sample(lambda m, x: m.broadcast_to(x, (3, 2)), nc(A(1, 2)), ref=lambda x: np.broadcast_to(x, (3, 2))),
    Sample(lambda m, x, y: x.expand_as(y), A(2, 1), Const(A(2, 3)), ref=lambda x, y: np.broadcast_to(x, y.shape)),
    Sample(lambda m, x: x.expand(0, 3), A(1, 3), ref=lambda x: np.broadcast_to(x, (0, 3))))
add("as_strided",
    Sample(lambda m, x: x.as_strided((2, 3), (1, 2)), A(6), ref=lambda x: _as_strided_ref(x, (2, 3), (1, 2))),
    Sample(lambda m, x: m.as_strided(x, (4, 3), (1, 1)), A(6), ref=lambda x: _as_strided_ref(x, (4, 3), (1, 1)),
           note="overlapping windows"),
    Sample(lambda m, x: x.as_strided([2, 2], [3, 1], 1), A(2, 3), ref=lambda x: _as_strided_ref(x, (2, 2), (3, 1), 1),
           note="an offset"),
    Sample(lambda m, x: x.as_strided((3,), (0,), 2), A(2, 2), ref=lambda x: _as_strided_ref(x, (3,), (0,), 2),
           note="stride 0"),
    Sample(lambda m, x: x.as_strided((0, 2), (1, 1)), A(3), ref=lambda x: np.zeros((0, 2)), note="empty"))
add("alias",
    Sample(lambda m, x: x.as_subclass(m.Tensor), A(2, 3), ref=lambda x: x),
    Sample(lambda m, x: x.t().as_subclass(m.Tensor), A(2, 3), ref=lambda x: x.T, note="a view"))
add("repeat",
    Sample(lambda m, x: x.repeat(2, 1), A(2, 3), ref=lambda x: np.tile(x, (2, 1))),
    Sample(lambda m, x: x.repeat((2, 1, 3)), A(2, 3), ref=lambda x: np.tile(x, (2, 1, 3)), note="a new leading dim"),
    Sample(lambda m, x: x.repeat([1, 2]), nc(A(2, 3)), ref=lambda x: np.tile(x, (1, 2)), note="a list"),
    Sample(lambda m, x: x.repeat(x.shape), A(2, 1), ref=lambda x: np.tile(x, (2, 1)), note="a Size"),
    Sample(lambda m, x: x.repeat(3), A(), ref=lambda x: np.tile(x, 3), note="0-d"),
    Sample(lambda m, x: x.repeat(0, 2), A(2, 3), ref=lambda x: np.tile(x, (0, 2)), note="zero copies"),
    Sample(lambda m, x: x.repeat(2, 2), I(5, 2, 2), ref=lambda x: np.tile(x, (2, 2))))
add("diagonal_copy",
    Sample(lambda m, x: m.diagonal_copy(x), A(3, 3), ref=np.diagonal),
    Sample(lambda m, x: m.diagonal_copy(x, -1, 2, 0), A(2, 3, 2), ref=lambda x: np.diagonal(x, -1, 2, 0)))
add("diagonal",
    Sample(lambda m, x: m.diagonal(x), A(3, 3), ref=np.diagonal),
    Sample(lambda m, x: x.diagonal(1), A(3, 4), ref=lambda x: np.diagonal(x, 1)),
    Sample(lambda m, x: x.diagonal(-1, 0, 1), A(3, 2), ref=lambda x: np.diagonal(x, -1)),
    Sample(lambda m, x: x.diagonal(0, -1, 0), nc(A(2, 3, 2)), ref=lambda x: np.diagonal(x, 0, 2, 0)),
    Sample(lambda m, x: x.diagonal(5), A(2, 3), ref=lambda x: np.diagonal(x, 5), note="empty diagonal"))
add("diagonal_backward",
    Sample(lambda m, g: m.ops._declarations.REGISTRY["diagonal_backward"].function(g, (3, 4), 1, 0, 1), A(3),
           torch_call=lambda m, g: m.ops.aten.diagonal_backward(g, (3, 4), 1, 0, 1)),
    Sample(lambda m, g: m.ops._declarations.REGISTRY["diagonal_backward"].function(g, (2, 3, 2), 0, -1, 0), A(3, 2),
           torch_call=lambda m, g: m.ops.aten.diagonal_backward(g, (2, 3, 2), 0, -1, 0)))
add("cat",
    Sample(lambda m, x, y: m.cat([x, y]), A(2, 3), A(1, 3), ref=lambda x, y: np.concatenate([x, y])),
    Sample(lambda m, x, y: m.cat((x, y), dim=-1), nc(A(2, 3)), A(2, 1), ref=lambda x, y: np.concatenate([x, y], 1)),
    Sample(lambda m, x, y, z: m.cat([x, y, z], 1), A(2, 0), A(2, 2), Const(A(2, 1)),
           ref=lambda x, y, z: np.concatenate([x, y, z], 1)),
    Sample(lambda m, x, y: m.cat([x, y]), A(0), A(2, 3), ref=lambda x, y: y, note="legacy empty 1-D operand"),
    Sample(lambda m, x: m.cat([x]), A(3), ref=lambda x: x),
    Sample(lambda m, x, y: m.cat([x, y]), A(2), I(3, 2), ref=lambda x, y: np.concatenate([x, y]),
           note="dtypes promote"),
    Sample(lambda m, x, y: m.concat([x, y], 0), A(1, 2), A(1, 2), ref=lambda x, y: np.concatenate([x, y])))
add("stack",
    Sample(lambda m, x, y: m.stack([x, y]), A(2, 3), A(2, 3), ref=lambda x, y: np.stack([x, y])),
    Sample(lambda m, x, y: m.stack((x, y), -1), nc(A(2, 3)), A(2, 3), ref=lambda x, y: np.stack([x, y], -1)),
    Sample(lambda m, x, y: m.stack([x, y], 0), A(), Const(A()), ref=lambda x, y: np.stack([x, y])),
    Sample(lambda m, x, y: m.stack([x, y], 1), A(0, 2), A(0, 2), ref=lambda x, y: np.stack([x, y], 1)))
add("split",
    Sample(lambda m, x: m.split(x, 2), A(5, 2), ref=lambda x: (x[:2], x[2:4], x[4:])),
    Sample(lambda m, x: x.split([1, 3], 1), A(2, 4), ref=lambda x: (x[:, :1], x[:, 1:])),
    Sample(lambda m, x: x.split(2, -1)[1], nc(A(2, 4)), ref=lambda x: x[:, 2:], note="one output used"),
    Sample(lambda m, x: m.split(x, 3), A(0, 2), ref=lambda x: (x,)),
    Sample(lambda m, x: m.chunk(x, 2, 1), A(2, 3), ref=lambda x: (x[:, :2], x[:, 2:])),
    Sample(lambda m, x: x.chunk(3), A(6), ref=lambda x: (x[:2], x[2:4], x[4:])),
    Sample(lambda m, x: m.split(x, [0, 2], 0), A(2, 2), ref=lambda x: (x[:0], x)))
add("unbind",
    Sample(lambda m, x: m.unbind(x), A(2, 3), ref=lambda x: (x[0], x[1])),
    Sample(lambda m, x: x.unbind(-1), nc(A(2, 2)), ref=lambda x: (x[:, 0], x[:, 1])),
    Sample(lambda m, x: x.unbind(1)[0], A(2, 3), ref=lambda x: x[:, 0], note="one output used"))
add("flip",
    Sample(lambda m, x: m.flip(x, (0,)), A(2, 3), ref=lambda x: x[::-1]),
    Sample(lambda m, x: x.flip(0, -1), nc(A(2, 3)), ref=lambda x: x[::-1, ::-1]),
    Sample(lambda m, x: x.flip([]), A(2, 3), ref=lambda x: x),
    Sample(lambda m, x: x.flip(0), A(), ref=lambda x: x),
    Sample(lambda m, x: x.flip(1), A(0, 3), ref=lambda x: x))
add("roll",
    Sample(lambda m, x: m.roll(x, 1, 0), A(3, 2), ref=lambda x: np.roll(x, 1, 0)),
    Sample(lambda m, x: x.roll(-1), nc(A(2, 3)), ref=lambda x: np.roll(x, -1)),
    Sample(lambda m, x: x.roll((1, 2), (0, -1)), A(2, 3), ref=lambda x: np.roll(x, (1, 2), (0, 1))),
    Sample(lambda m, x: x.roll(1, 0), A(0, 3), ref=lambda x: x))
for _name in ("tril", "triu"):
    _f = getattr(np, _name)
    add(_name,
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), A(3, 3), ref=_f),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(1), A(2, 3), ref=lambda x, _f=_f: _f(x, 1)),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(diagonal=-1), nc(A(2, 3, 3)), ref=lambda x, _f=_f: _f(x, -1)),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(), A(0, 3), ref=_f))
add("clone",
    Sample(lambda m, x: m.clone(x), A(2, 3), ref=lambda x: x),
    Sample(lambda m, x: x.clone(), nc(A(2, 3)), ref=lambda x: x),
    Sample(lambda m, x: x.clone(), A(), ref=lambda x: x),
    Sample(lambda m, x: x.contiguous(), nc(A(2, 2)), ref=lambda x: x),
    Sample(lambda m, x: x.clone(), I(3, 2), ref=lambda x: x))
add("to_mkldnn",  # MKL-DNN has no float64: through float32, as _to_copy's first sample
    Sample(lambda m, x: x.float().to_mkldnn().to_dense().double(), A(2, 3), eps=1e-2, atol=1e-4,
           ref=lambda x: x.astype(np.float32).astype(np.float64)))
add("to_dense",
    Sample(lambda m, x: x.float().to_mkldnn().to_dense().double(), A(3), eps=1e-2, atol=1e-4,
           ref=lambda x: x.astype(np.float32).astype(np.float64)))
add("_to_copy",
    Sample(lambda m, x: x.to(m.float32).to(m.float64), A(2, 3), eps=1e-2, atol=1e-4,
           ref=lambda x: x.astype(np.float32).astype(np.float64)),
    Sample(lambda m, x: x.float(), A(3), grad=False, ref=lambda x: x.astype(np.float32)),
    Sample(lambda m, x: x.to(dtype=m.float64), I(3, 3), ref=lambda x: x.astype(np.float64)),
    Sample(lambda m, x: x.long(), Const(A(3) * 3), ref=lambda x: x.astype(np.int64)),
    Sample(lambda m, x: x.bool(), I(2, 4), ref=lambda x: x.astype(bool)))


def _copy_into(m, x, src):
    y = x * 1
    y.copy_(src)
    return y


def _fill(m, x, v):
    y = x * 1
    y[0].fill_(v) if v.dim() == 0 else None
    return y


add("copy",
    Sample(_copy_into, A(2, 3), A(2, 3), ref=lambda x, s: s),
    Sample(_copy_into, A(2, 3), nc(A(3)), ref=lambda x, s: np.broadcast_to(s, (2, 3)), note="broadcast src"),
    Sample(_copy_into, A(3), I(3, 3), ref=lambda x, s: s.astype(np.float64), note="int src"),
    Sample(lambda m, x, s: x.clone().copy_(s), Const(A(2)), A(2), ref=lambda x, s: s,
           note="into a tensor that does not require grad"))
add("fill",
    Sample(lambda m, x: (x * 1).fill_(1.5), A(2, 3), ref=lambda x: np.full_like(x, 1.5)),
    Sample(lambda m, x: (x * 1).fill_(-2), A(3), ref=lambda x: np.full_like(x, -2.), note="an int value"),
    Sample(lambda m, x, v: (x * 1).fill_(v), A(2, 3), A(), ref=lambda x, v: np.full_like(x, v)),
    Sample(_fill, A(2, 3), A(), note="fill_ on a view"))
add("zero",
    Sample(lambda m, x: (x * 1).zero_(), A(3), ref=np.zeros_like),
    Sample(lambda m, x: (x * 1).zero_(), A(), ref=np.zeros_like))


def _setitem(index):
    def call(m, x, v):
        y = x * 1
        y[index] = v
        return y
    return call


def _put(x, index, v):
    out = x.copy()
    out[index] = v
    return out


# x[i] = v with basic indices copies v into the view x[i], as PyTorch (the base's node is a CopySlices).
add("copy",
    Sample(_setitem(1), A(3, 2), A(2), ref=lambda x, v: _put(x, (1,), v), note="__setitem__ int"),
    Sample(_setitem((slice(None), slice(0, 2))), A(2, 3), A(2, 1),
           ref=lambda x, v: _put(x, (slice(None), slice(0, 2)), v), note="__setitem__ slices"),
    Sample(_setitem(-1), nc(A(3, 2)), A(), ref=lambda x, v: _put(x, (-1,), v), note="__setitem__ negative"),
    Sample(_setitem((None, Ellipsis, 0)), A(2, 3), A(1, 1, 2), ref=lambda x, v: _put(x, (Ellipsis, 0), v[0, 0]),
           note="__setitem__ None, Ellipsis; leading 1s of the value dropped"),
    Sample(_setitem(Ellipsis), A(2, 2), Const(A(2)), ref=lambda x, v: np.broadcast_to(v, (2, 2)),
           note="__setitem__ everything, value broadcast"))
add("fill",
    Sample(lambda m, x: _setitem(slice(1, None))(m, x, 2.5), A(3, 2), ref=lambda x: _put(x, (slice(1, None),), 2.5),
           note="__setitem__ of a number fills the view"))

# -- rotations, flips, diagonal embeddings, sliding windows, tiling -----------------------------------------
add("transpose", Sample(lambda m, x: m.swapdims(x, 0, -1), A(2, 3), ref=lambda x: x.T, note="swapdims"),
    Sample(lambda m, x: x.swapdims(1, 0), A(2, 3), ref=lambda x: x.T, note="swapdims method"))
add("fliplr",
    Sample(lambda m, x: m.fliplr(x), A(2, 3), ref=np.fliplr),
    Sample(lambda m, x: x.fliplr(), nc(A(2, 3, 2)), ref=np.fliplr))
add("flipud",
    Sample(lambda m, x: m.flipud(x), A(2, 3), ref=np.flipud),
    Sample(lambda m, x: x.flipud(), A(3), ref=np.flipud))
add("rot90",
    Sample(lambda m, x: m.rot90(x), A(2, 3), ref=np.rot90),
    Sample(lambda m, x: x.rot90(2), nc(A(2, 3)), ref=lambda x: np.rot90(x, 2)),
    Sample(lambda m, x: x.rot90(-1, (1, 2)), A(2, 3, 2), ref=lambda x: np.rot90(x, -1, (1, 2))),
    Sample(lambda m, x: x.rot90(5, [-1, 0]), A(2, 3), ref=lambda x: np.rot90(x, 5, (1, 0))),
    Sample(lambda m, x: x.rot90(0), I(5, 2, 2), ref=lambda x: x))


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n))
    rows = np.arange(x.shape[-1]) + max(-offset, 0)
    out[..., rows, rows + offset] = x
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


add("diag_embed",
    Sample(lambda m, x: m.diag_embed(x), A(2, 3), ref=_diag_embed_ref),
    Sample(lambda m, x: x.diag_embed(1), A(3), ref=lambda x: _diag_embed_ref(x, 1)),
    Sample(lambda m, x: m.diag_embed(x, -1, 0, 2), nc(A(2, 2)), ref=lambda x: _diag_embed_ref(x, -1, 0, 2)),
    Sample(lambda m, x: m.diag_embed(x, 0, 2, 0), A(2, 2), ref=lambda x: _diag_embed_ref(x, 0, 2, 0)))


def _unfold_ref(x, d, size, step):
    return np.lib.stride_tricks.sliding_window_view(x, size, axis=d)[(slice(None),) * d + (slice(None, None, step),)]


add("unfold",
    Sample(lambda m, x: x.unfold(1, 2, 1), A(2, 4), ref=lambda x: _unfold_ref(x, 1, 2, 1)),
    Sample(lambda m, x: x.unfold(0, 2, 2), A(5, 2), ref=lambda x: _unfold_ref(x, 0, 2, 2), note="a row left over"),
    Sample(lambda m, x: x.unfold(-1, 3, 2), nc(A(2, 7)), ref=lambda x: _unfold_ref(x, 1, 3, 2)),
    Sample(lambda m, x: x.unfold(0, 1, 1), A(), ref=lambda x: x.reshape(1), note="0-d"),
    Sample(lambda m, x: x.unfold(0, 2, 1).sum(), A(4), ref=lambda x: _unfold_ref(x, 0, 2, 1).sum(), note="overlaps"))
add("unfold_backward",
    Sample(lambda m, g: m.ops._declarations.REGISTRY["unfold_backward"].function(g, (2, 4), 1, 2, 1), A(2, 3, 2),
           torch_call=lambda m, g: m.ops.aten.unfold_backward(g, (2, 4), 1, 2, 1)),
    Sample(lambda m, g: m.ops._declarations.REGISTRY["unfold_backward"].function(g, (5,), 0, 2, 2), A(2, 2),
           torch_call=lambda m, g: m.ops.aten.unfold_backward(g, (5,), 0, 2, 2)))
add("tile",
    Sample(lambda m, x: m.tile(x, (2,)), A(2, 3), ref=lambda x: np.tile(x, (2,))),
    Sample(lambda m, x: x.tile((2, 1, 2)), A(2, 3), ref=lambda x: np.tile(x, (2, 1, 2))),
    Sample(lambda m, x: x.tile((3,)), A(), ref=lambda x: np.tile(x, 3)))
add("repeat_interleave",
    Sample(lambda m, x: m.repeat_interleave(x, 2), A(2, 3), ref=lambda x: np.repeat(x, 2)),
    Sample(lambda m, x: x.repeat_interleave(3, dim=0), A(2, 3), ref=lambda x: np.repeat(x, 3, 0)),
    Sample(lambda m, x, r: x.repeat_interleave(r, dim=-1), nc(A(2, 3)), np.array([1, 0, 2]),
           ref=lambda x, r: np.repeat(x, r, 1)),
    Sample(lambda m, x, r: x.repeat_interleave(r, 0, output_size=4), A(2, 2), np.array([3, 1]),
           ref=lambda x, r: np.repeat(x, r, 0)),
    Sample(lambda m, x: x.repeat_interleave(2), A(), ref=lambda x: np.repeat(x, 2), note="0-d"),
    Sample(lambda m, r: m.repeat_interleave(r), np.array([2, 0, 1]), ref=lambda r: np.repeat(np.arange(3), r)),
    Sample(lambda m, x, r: x.repeat_interleave(r, dim=0), A(3), np.array([2]), ref=lambda x, r: np.repeat(x, 2),
           note="one count for all"))


def _as_strided_ref(x, size, stride, offset=0):
    """``as_strided`` of a contiguous array in NumPy (strides in elements)."""
    flat = x.reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, size, tuple(s * x.itemsize for s in stride)).copy()
add("split_with_sizes",
    Sample(lambda m, x: m.split_with_sizes(x, [1, 3], 1), A(2, 4), ref=lambda x: (x[:, :1], x[:, 1:])),
    Sample(lambda m, x: x.split_with_sizes((2, 0, 1), -1)[0], nc(A(2, 3)), ref=lambda x: x[:, :2],
           note="an empty piece, one output used"))
add("unsafe_split",
    Sample(lambda m, x: m.unsafe_split(x, 2), A(5, 2), ref=lambda x: (x[:2], x[2:4], x[4:])),
    Sample(lambda m, x: x.unsafe_split(2, -1)[1], nc(A(2, 4)), ref=lambda x: x[:, 2:], note="one output used"),
    Sample(lambda m, x: m.unsafe_chunk(x, 2, 1), A(2, 3), ref=lambda x: (x[:, :2], x[:, 2:])))
add("unsafe_split_with_sizes",
    Sample(lambda m, x: m.unsafe_split_with_sizes(x, [2, 1]), A(3, 2), ref=lambda x: (x[:2], x[2:])))


def _as_strided_scatter_ref(x, s, size, stride, offset=0):
    out = x.copy().reshape(-1)
    np.lib.stride_tricks.as_strided(out[offset:], size, tuple(st * 8 for st in stride))[...] = s
    return out.reshape(x.shape)


add("as_strided_scatter",
    Sample(lambda m, x, s: m.as_strided_scatter(x, s, (3,), (2,), 1), Const(A(6)), A(3),
           ref=lambda x, s: _as_strided_scatter_ref(x, s, (3,), (2,), 1), note="the src gradient against PyTorch's"),
    Sample(lambda m, x, s: x.as_strided_scatter(s, (2, 2), (3, 1)), A(2, 3), A(2, 2), torch=False,
           ref=lambda x, s: _as_strided_scatter_ref(x, s, (2, 2), (3, 1)),
           note="PyTorch's input gradient is wrong (it fails its own gradcheck): finite differences only"),
    Sample(lambda m, x, s: m.as_strided_scatter(x.t(), s, (2,), (1,), 1), A(2, 2), A(2), torch=False,
           note="a non-contiguous input, whose gradient PyTorch refuses"))
