"""Errors and argument checks shared by course_lib.

Bad input raises a ``ValueError``/``TypeError`` subclass whose message names the argument, what was
expected and what came, e.g.::

    key_padding_mask: expected bool of shape (2, 5), got torch.int64 of shape (2, 6)

The checks are plain ``if ...: raise`` statements, never ``assert`` (gone under ``python -O``).
"""

from __future__ import annotations

import torch


class CourseValueError(ValueError):
    """A value has the right type but the wrong size, range or shape."""


class CourseTypeError(TypeError):
    """A value has the wrong type or dtype."""


def describe(x) -> str:
    """A short description of ``x`` for error messages: dtype and shape for tensors."""
    if isinstance(x, torch.Tensor):
        return f"{x.dtype} of shape {tuple(x.shape)}"
    return f"{type(x).__name__} {x!r}"


def _range_text(low, high, low_open: bool = False, high_open: bool = False) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low}"
    if high is not None:
        return f"<= {high}"
    return ""


def check_int(name: str, value, low: int | None = None, high: int | None = None, *,
              optional: bool = False, what: str | None = None) -> None:
    """``value`` must be an int (not a bool) in ``[low, high]`` (either bound may be None);
    ``optional`` also accepts None; ``what`` replaces the description of what is expected."""
    if optional and value is None:
        return
    if what is None:
        if low in (0, 1) and high is None:
            what = "a positive int" if low == 1 else "a non-negative int"
        else:
            bounds = _range_text(low, high)
            what = f"an int{' ' + bounds if bounds else ''}"
        what += " or None" if optional else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise CourseTypeError(f"{name}: expected {what}, got {type(value).__name__} {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise CourseValueError(f"{name}: expected {what}, got {value}")


def check_positive_int(name: str, value) -> None:
    check_int(name, value, low=1)


def check_float(name: str, value, low: float | None = None, high: float | None = None, *,
                low_open: bool = False, high_open: bool = False) -> None:
    """``value`` must be a real number (int or float, not a bool) between ``low`` and ``high``;
    ``low_open``/``high_open`` exclude the bound itself (``low=0, low_open=True``: positive)."""
    if low == 0 and low_open and high is None:
        what = "a positive float"
    else:
        what = f"a float {_range_text(low, high, low_open, high_open)}".rstrip()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CourseTypeError(f"{name}: expected {what}, got {type(value).__name__} {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high or value != value:  # value != value: NaN
        raise CourseValueError(f"{name}: expected {what}, got {value}")


def check_dropout(value) -> None:
    check_float("dropout", value, 0, 1, high_open=True)


def check_choice(name: str, value, choices) -> None:
    """``value`` must be one of ``choices``."""
    if value not in tuple(choices):
        raise CourseValueError(f"{name}: expected one of {tuple(choices)}, got {value!r}")


def check_type(name: str, value, cls: type, what: str | None = None) -> None:
    """``value`` must be an instance of ``cls`` (``what`` describes it, default "a <cls name>")."""
    if not isinstance(value, cls):
        raise CourseTypeError(f"{name}: expected {what or 'a ' + cls.__name__}, got {type(value).__name__}")


def check_str_list(name: str, value, what: str = "a list of str") -> list[str]:
    """``value`` must be an iterable of str, not one str; returns it as a list."""
    if isinstance(value, str):
        raise CourseTypeError(f"{name}: expected {what}, got a single str (wrap it: [{value[:20]!r}])")
    try:
        items = list(value)
    except TypeError:
        raise CourseTypeError(f"{name}: expected {what}, got {type(value).__name__}") from None
    for i, item in enumerate(items):
        check_type(f"{name}[{i}]", item, str, "a str")
    return items


def check_tensor(name: str, x) -> None:
    check_type(name, x, torch.Tensor, "a torch.Tensor")


def check_floating(name: str, x) -> None:
    """``x`` must be a floating-point tensor."""
    check_tensor(name, x)
    if not x.is_floating_point():
        raise CourseTypeError(f"{name}: expected a floating-point tensor, got {describe(x)}")


def check_length(name: str, length: int, max_len: int) -> None:
    """A sequence of ``length`` positions must fit a table of ``max_len`` rows."""
    if length > max_len:
        raise CourseValueError(f"{name}: expected a sequence of at most max_len={max_len} positions, got {length}")


def check_features(name: str, x, d_model: int, max_len: int | None = None) -> None:
    """``x`` must be a floating tensor (B, T, d_model), with ``T <= max_len`` when ``max_len`` is given."""
    check_floating(name, x)
    if x.dim() != 3 or x.shape[-1] != d_model:
        raise CourseValueError(
            f"{name}: expected shape (batch, seq, d_model={d_model}), got {describe(x)}"
        )
    if max_len is not None:
        check_length(name, x.shape[1], max_len)


def check_token_ids(name: str, ids, vocab_size: int, shape: tuple | None = None,
                    size_name: str = "vocab_size") -> None:
    """``ids`` must be integer ids ``(batch, seq)`` (exactly ``shape`` if given) in ``[0, vocab_size)``."""
    check_tensor(name, ids)
    if ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
        raise CourseTypeError(f"{name}: expected integer token ids (torch.long), got {describe(ids)}")
    if shape is not None and tuple(ids.shape) != tuple(shape):
        raise CourseValueError(f"{name}: expected shape {tuple(shape)} (as the token ids), got {describe(ids)}")
    if ids.dim() != 2:
        hint = f" (add a batch axis: {name}[None])" if ids.dim() == 1 else ""
        raise CourseValueError(f"{name}: expected shape (batch, seq), got {describe(ids)}{hint}")
    if ids.numel():
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= vocab_size:
            raise CourseValueError(f"{name}: expected ids in [0, {vocab_size}) ({size_name}={vocab_size}), "
                                   f"got ids from {low} to {high}")


def check_last_dim(name: str, x, d_model: int) -> None:
    """``x`` must be a floating tensor ``(..., d_model)``: any leading axes, as ``nn.Linear`` takes."""
    check_floating(name, x)
    if x.dim() == 0 or x.shape[-1] != d_model:
        raise CourseValueError(
            f"{name}: expected shape (..., d_model={d_model}), e.g. (batch, seq, {d_model}), got {describe(x)}"
        )


def check_key_padding_mask(mask, batch: int | None, seq: int, name: str = "key_padding_mask") -> None:
    """A key padding mask is bool (batch, seq) with True = padding; ``batch=None``: one example's (seq,)."""
    if mask is None:
        return
    shape = (seq,) if batch is None else (batch, seq)
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise CourseTypeError(
            f"{name}: expected bool of shape {shape} with True = padding, got {describe(mask)} "
            "(an integer mask is ambiguous: Hugging Face's 1 = keep or 1 = pad? "
            "convert with course_lib.hf_to_key_padding_mask or `mask.bool()` explicitly)"
        )
    if tuple(mask.shape) != shape:
        raise CourseValueError(f"{name}: expected bool of shape {shape}, got {describe(mask)}")


def check_bool_2d(name: str, mask) -> None:
    """A padding mask of any size: bool ``(batch, seq)``, True = padding (the mask converters' input)."""
    check_tensor(name, mask)
    if mask.dtype != torch.bool or mask.dim() != 2:
        raise CourseTypeError(f"{name}: expected bool of shape (batch, seq) with True = padding, got {describe(mask)}")


def broadcast_shape(*shapes) -> tuple[int, ...] | None:
    """The shape that ``shapes`` broadcast to (NumPy's and torch's rules), or None when they don't.

    Plain Python: ``torch.broadcast_shapes`` would import sympy (~0.9 s) on first use.
    """
    ndim = max(len(s) for s in shapes)
    out = []
    for dims in zip(*((1,) * (ndim - len(s)) + tuple(s) for s in shapes)):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_attn_mask(mask, target_shape: tuple, name: str = "attn_mask") -> None:
    """A bool ``attn_mask`` (True = may attend) must broadcast to ``target_shape``."""
    if mask is None:
        return
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise CourseTypeError(
            f"{name}: expected bool with True = may attend, broadcastable to {tuple(target_shape)}, "
            f"got {describe(mask)}"
        )
    if broadcast_shape(tuple(mask.shape), tuple(target_shape)) != tuple(target_shape):
        raise CourseValueError(
            f"{name}: expected a bool mask broadcastable to {tuple(target_shape)}, got {describe(mask)}"
        )
