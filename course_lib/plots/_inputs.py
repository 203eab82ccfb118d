"""What the plot helpers accept: tensors or arrays turned into NumPy, token labels, masks, indices.

Checks go through :mod:`course_lib.errors`, so a plot rejects bad input with the same messages as
the model does (argument, expected, got).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..errors import CourseTypeError, CourseValueError, check_int, check_key_padding_mask, describe


def to_numpy(name: str, x, *, allow_bool: bool = False) -> np.ndarray:
    """A float64 (or bool) NumPy copy of a tensor / array / nested list, detached and on the CPU."""
    if isinstance(x, torch.Tensor):
        x = x.detach().to("cpu")
        if x.is_complex():
            raise CourseTypeError(f"{name}: expected a real tensor, got {describe(x)}")
        arr = x.numpy() if x.dtype == torch.bool else x.to(torch.float64).numpy()
    elif isinstance(x, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError as exc:  # ragged lists
            raise CourseValueError(f"{name}: expected a rectangular array, got a ragged list") from exc
        if arr.dtype != bool and not np.issubdtype(arr.dtype, np.number):
            raise CourseTypeError(f"{name}: expected numbers, got an array of {arr.dtype}")
        if arr.dtype != bool:
            arr = arr.astype(np.float64)
    else:
        raise CourseTypeError(f"{name}: expected a torch.Tensor or a NumPy array, got {type(x).__name__}")
    if arr.dtype == bool and not allow_bool:
        arr = arr.astype(np.float64)
    return arr


def shape_text(arr: np.ndarray) -> str:
    return f"shape {tuple(arr.shape)}"


def padding_mask(name: str, mask, batch: int | None, length: int) -> np.ndarray | None:
    """A bool key padding mask (True = padding) as NumPy: ``(length,)`` for one example
    (``batch=None``) or ``(batch, length)``; checked by ``errors.check_key_padding_mask``."""
    if mask is None:
        return None
    if isinstance(mask, (np.ndarray, list, tuple)):
        mask = torch.as_tensor(np.asarray(mask))
    check_key_padding_mask(mask, batch, length, name=name)
    return mask.detach().to("cpu").numpy()


def labels(name: str, values, length: int, pad: np.ndarray | None = None,
           pad_token: str = "<pad>") -> list[str] | None:
    """Tick labels: one str per position. A list shorter than ``length`` is accepted when it names
    exactly the unpadded positions (as ``load_minilm``'s tokenizer returns them); the padded
    positions are then labelled ``pad_token``."""
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise CourseTypeError(f"{name}: expected a list of str, got {type(values).__name__}")
    values = [str(t) for t in values]
    if len(values) == length:
        return values
    if pad is not None and len(values) == int((~pad).sum()):
        it = iter(values)
        return [pad_token if p else next(it) for p in pad]
    raise CourseValueError(f"{name}: expected {length} labels (one per position), got {len(values)}")


def indices(name: str, value, size: int) -> list[int]:
    """None -> all of range(size); an int or a sequence of ints -> that list, range-checked
    (negative indices count from the end, as in Python)."""
    if value is None:
        return list(range(size))
    items = [value] if isinstance(value, (int, np.integer)) else list(value)
    if not items:
        raise CourseValueError(f"{name}: expected at least one index, got an empty list")
    out = []
    for v in items:
        v = int(v) if isinstance(v, np.integer) else v
        if not isinstance(v, bool) and isinstance(v, int) and -size <= v < 0:
            v += size
        try:
            check_int(name, v, 0, size - 1)
        except CourseValueError:
            raise CourseValueError(f"{name}: expected indices in [0, {size}), got {v}") from None
        out.append(v)
    return out


def pick_example(value, example):
    """With ``example=``, a (B, T) mask or a list of B label lists gives its example-th row."""
    if value is None or example is None:
        return value
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return value[example] if value.ndim == 2 else value
    if isinstance(value, Sequence) and value and not isinstance(value[0], str) and isinstance(value[0], Sequence):
        return value[example]
    return value


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each run of True in a 1-D bool array."""
    out, start = [], None
    for i, f in enumerate(list(flags) + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i - start))
            start = None
    return out
