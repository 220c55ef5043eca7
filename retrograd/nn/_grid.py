"""Spatial transformers: ``affine_grid`` (the sampling grid of a batch of affine maps) and ``grid_sample`` (an
input read at a grid's points: bilinear, nearest or bicubic, with zeros, border or reflection padding).

Both are composites of registered ops (PyTorch's nodes are ``AffineGridGeneratorBackward0`` and
``GridSampler2DBackward0``): a grid point's source coordinates are differentiable ops of the grid, its
neighbours' integer positions are read off them (no gradient, as PyTorch's), and each neighbour's value is a
``gather`` from the flattened input times its weight, so the gradients with respect to the input and the grid,
and the higher ones, are those of the ops.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _creation
from .._dtype import scalar_type_name
from ..ops.pointwise import where as _where

__all__ = ["affine_grid", "grid_sample", "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES"]

# PyTorch's enums of grid_sample's modes (torch.grid_sampler's integer arguments).
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample "
                  "for details.")
_CUBIC_A = -0.75  # the cubic convolution's coefficient, as PyTorch's bicubic kernels


def _base_coordinates(steps, align_corners, like):
    """PyTorch's ``linspace_from_neg_one``: ``steps`` points over [-1, 1] (the pixels' centres unless
    ``align_corners``, which puts the first and last on the corners)."""
    if steps <= 1:
        values = np.zeros(max(steps, 0))
    else:
        values = np.linspace(-1.0, 1.0, steps)
        if not align_corners:
            values = values * (steps - 1) / steps
    return values.astype(like.dtype.np if like.dtype.np.kind == "f" else np.float64)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of a batch of affine maps ``theta``
    ``(N, 2, 3)`` (``(N, 3, 4)``) for an output of ``size`` ``(N, C, H, W)`` (``(N, C, D, H, W)``), in
    ``grid_sample``'s normalized coordinates.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.affine_grid(rg.tensor([[[1., 0., 0.], [0., 1., 0.]]]), (1, 1, 1, 2), align_corners=True)
        tensor([[[[-1.,  0.],
                  [ 1.,  0.]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    spatial = [int(s) for s in spatial]
    axes = [_base_coordinates(s, align_corners, theta) for s in reversed(spatial)]  # x (width) first
    mesh = list(np.meshgrid(*axes[::-1], indexing="ij"))[::-1]  # over (D,) H, W: the x, y (, z) coordinates
    base = np.stack(mesh + [np.ones_like(mesh[0])], -1).reshape(1, -1, len(spatial) + 1)
    points = _creation.tensor(base, dtype=theta.dtype, device=theta.device).matmul(theta.mT)
    return points.view([size[0]] + list(spatial) + [len(spatial)])


# -- grid_sample ---------------------------------------------------------------------------------------------------
def _values(t):
    """``t``'s values as a float64 array (bfloat16 included), to read positions off."""
    return np.asarray(t.detach().double().numpy())


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """``coord`` reflected into [twice_low / 2, twice_high / 2] as many times as it takes (PyTorch's
    ``reflect_coordinates``)."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = (coord - low).abs()
    extra = dist.fmod(span)
    flips = np.floor(_values(dist) / span)
    even = _creation.tensor(flips % 2 == 0, device=coord.device)
    return _where(even, extra + low, span - extra + low)


def _pad(coord, size, padding_mode, align_corners):
    """The source coordinate under ``padding_mode`` (PyTorch's ``compute_coordinates``)."""
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        return coord.clamp(0, size - 1)
    return coord


def _integer_pad(pos, size, padding_mode, align_corners):
    """``_pad`` of integer positions, as arrays (bicubic's taps)."""
    if padding_mode == "border":
        return np.clip(pos, 0, size - 1)
    if padding_mode == "reflection":
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if low == high:
            return np.zeros_like(pos)
        span = (high - low) / 2
        dist = np.abs(pos - low / 2)
        extra, flips = np.fmod(dist, span), np.floor(dist / span)
        return np.clip(np.where(flips % 2 == 0, extra + low / 2, span - extra + low / 2), 0, size - 1)
    return pos


def _tap(flat, xs, ys, height, width):
    """The input's values at integer positions ``(ys, xs)`` (arrays of the grid's shape ``(N, Ho, Wo)``), zero
    outside: ``(N, C, Ho, Wo)``."""
    n, c = flat.shape[:2]
    inside = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
    index = (np.clip(ys, 0, height - 1) * width + np.clip(xs, 0, width - 1)).astype(np.int64)
    index = _creation.tensor(index.reshape(n, 1, -1), device=flat.device).expand(n, c, index[0].size)
    values = flat.gather(2, index).view((n, c) + xs.shape[1:])
    return values, _creation.tensor(inside, dtype=flat.dtype, device=flat.device).unsqueeze(1)


def _cubic_weights(t):
    """The four weights of the cubic convolution at fractional offset ``t`` (PyTorch's
    ``get_cubic_upsample_coefficients``)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """The input ``(N, C, H, W)`` read at the points of ``grid`` ``(N, Ho, Wo, 2)`` (x, y in [-1, 1] over the
    input's width and height): ``(N, C, Ho, Wo)``. ``mode``: ``"bilinear"``, ``"nearest"`` or ``"bicubic"``;
    ``padding_mode`` (points outside): ``"zeros"``, ``"border"`` or ``"reflection"``; ``align_corners``: -1 and 1
    are the corner pixels' centres (True) or the corners themselves (False, the default).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> x = rg.tensor([[[[1., 2.], [3., 4.]]]])
        >>> F.grid_sample(x, rg.tensor([[[[0., 0.]]]]), align_corners=True)
        tensor([[[[2.5000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _check_sampler(input, grid, mode)
    n, c, height, width = input.shape
    flat = input.reshape(n, c, height * width)
    x = _unnormalize(grid.select(-1, 0), width, align_corners)
    y = _unnormalize(grid.select(-1, 1), height, align_corners)
    if mode == "bicubic":
        x0 = np.floor(_values(x))
        y0 = np.floor(_values(y))
        wx = _cubic_weights((x - _creation.tensor(x0, dtype=x.dtype, device=x.device)).unsqueeze(1))
        wy = _cubic_weights((y - _creation.tensor(y0, dtype=y.dtype, device=y.device)).unsqueeze(1))
        out = None
        for j in range(4):
            row = None
            ys = _integer_pad(y0 - 1 + j, height, padding_mode, align_corners)
            for i in range(4):
                xs = _integer_pad(x0 - 1 + i, width, padding_mode, align_corners)
                values, inside = _tap(flat, xs, ys, height, width)
                term = values * inside * wx[i]
                row = term if row is None else row + term
            out = row * wy[j] if out is None else out + row * wy[j]
        return out
    x = _pad(x, width, padding_mode, align_corners)
    y = _pad(y, height, padding_mode, align_corners)
    xa, ya = _values(x), _values(y)
    if mode == "nearest":
        values, inside = _tap(flat, np.rint(xa), np.rint(ya), height, width)
        return values * inside
    x0, y0 = np.floor(xa), np.floor(ya)
    fx = (x - _creation.tensor(x0, dtype=x.dtype, device=x.device)).unsqueeze(1)
    fy = (y - _creation.tensor(y0, dtype=y.dtype, device=y.device)).unsqueeze(1)
    out = None
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            values, inside = _tap(flat, x0 + dx, y0 + dy, height, width)
            term = values * inside * (wx * wy)
            out = term if out is None else out + term
    return out


def _check_sampler(input, grid, mode):
    """PyTorch's checks of ``grid_sampler``'s arguments."""
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(grid.dtype)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    nd = 4 if input.dim() == 4 else 5
    if input.dim() != nd or grid.dim() != nd:
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if nd == 5:
        if mode == "bicubic":
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("retrograd's grid_sample reads 4-D inputs (2-D sampling) only")
