"""Messages between the grader, the zygote and a part process: JSON headers and raw arrays, no pickle.

A message is frames on a pipe or socket: 8 bytes of big-endian length, then the payload. The first
frame is a JSON header (a dict whose ``"arrays"`` says how many frames follow); each following frame
is one array: a JSON descriptor (dtype, shape) and its raw bytes (:func:`npy`), numbers only. Tensors,
arrays, dicts, lists and plain JSON values are encoded with :func:`encode` (a tensor or array becomes
``{"__array__": i}``; the same object twice becomes the same index, so ``key is query`` survives the
trip).

Standard library and numpy only (torch is imported only to build tensors back): the zygote loads
this file by path, without course_lib.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time


class _Numpy:
    """numpy, imported when first used: the grader starts its sandbox before it needs numpy (~50 ms)."""

    def __getattr__(self, name):
        import numpy
        globals()["np"] = numpy
        return getattr(numpy, name)


np = _Numpy()

MAX_HEADER = 64 << 20
MAX_ARRAY_ELEMENTS = 10_000_000
MAX_RESULT_ARRAYS = 4096          # arrays in a part's result: a part's cases have a few hundred outputs in all


class TooManyArrays(ValueError):
    """A part's result with more arrays than any part's cases have outputs."""


def frame(payload: bytes) -> bytes:
    return struct.pack(">Q", len(payload)) + payload


def npy(a) -> bytes:
    """One array: 2 bytes of length, a JSON descriptor ({"dtype": "<f4", "shape": [2, 3]}), then its
    bytes in C order. Like .npy without np.save's and np.load's cost (~40 us an array, and a part's
    request holds hundreds)."""
    a = np.asarray(a)
    desc = json.dumps({"dtype": a.dtype.str, "shape": list(a.shape)}).encode()
    return len(desc).to_bytes(2, "big") + desc + a.tobytes(order="C")


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_message(fd: int, header: dict, arrays: list = ()) -> None:
    header = dict(header, arrays=len(arrays))
    write_all(fd, frame(json.dumps(header).encode()) + b"".join(frame(npy(a)) for a in arrays))


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, left = [], n
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise TimeoutError("no answer in time")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int, deadline: float | None, limit: int) -> bytes:
    (n,) = struct.unpack(">Q", _read_exact(fd, 8, deadline))
    if n > limit:
        raise ValueError("frame too large")
    return _read_exact(fd, n, deadline)


def read_blob(fd: int, deadline: float | None = None, limit: int = 1 << 27) -> bytes:
    """One frame of raw bytes (what a part process wrote, passed on by the zygote)."""
    return _read_frame(fd, deadline, limit)


def read_message(fd: int, deadline: float | None = None, limit: int = MAX_HEADER) -> tuple[dict, list]:
    """One message from ``fd``: (header, arrays). Raises EOFError, TimeoutError or ValueError."""
    header = json.loads(_read_frame(fd, deadline, limit).decode())
    if not isinstance(header, dict) or not isinstance(header.get("arrays", 0), int):
        raise ValueError("bad header")
    return header, [load_array(_read_frame(fd, deadline, limit)) for _ in range(header.get("arrays", 0))]


def load_array(data: bytes) -> np.ndarray:
    """The array of :func:`npy`'s bytes (a writable copy); ValueError for anything but numbers and
    booleans, or bytes that do not match the descriptor."""
    try:
        n = int.from_bytes(data[:2], "big")
        desc = json.loads(data[2:2 + n].decode())
        dtype, shape = np.dtype(str(desc["dtype"])), tuple(int(d) for d in desc["shape"])
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as e:
        raise ValueError(f"bad array ({type(e).__name__})") from None
    size = int(np.prod(shape, dtype=np.int64))
    if (dtype.kind not in "fiub" or dtype.fields is not None or any(d < 0 for d in shape)
            or size > MAX_ARRAY_ELEMENTS or len(data) - 2 - n != size * dtype.itemsize):
        raise ValueError("bad array")
    return np.frombuffer(data, dtype, size, 2 + n).reshape(shape).copy()


def parse(data: bytes, max_arrays: int = MAX_RESULT_ARRAYS) -> tuple[dict, list]:
    """A header and its arrays from the raw bytes a part process wrote; ValueError on anything odd,
    :class:`TooManyArrays` (before any array is read) for more than ``max_arrays`` arrays."""
    frames, pos = [], 0
    while pos < len(data):
        if len(frames) > max_arrays:
            raise TooManyArrays("too many arrays")
        if pos + 8 > len(data):
            raise ValueError("truncated frame")
        (n,) = struct.unpack(">Q", data[pos:pos + 8])
        if n > len(data) - pos - 8:
            raise ValueError("truncated frame")
        frames.append(data[pos + 8:pos + 8 + n])
        pos += 8 + n
    if not frames:
        raise ValueError("no result")
    header = json.loads(frames[0].decode())
    if not isinstance(header, dict):
        raise ValueError("bad header")
    return header, [load_array(f) for f in frames[1:]]


# ------------------------------------------------------------------ values with tensors inside

def encode(value, arrays: list, seen: dict | None = None):
    """A JSON-able copy of ``value``; its tensors and arrays are appended to ``arrays``."""
    seen = {} if seen is None else seen
    if isinstance(value, np.ndarray) or type(value).__module__ == "torch" and hasattr(value, "numpy"):
        if id(value) not in seen:
            is_tensor = not isinstance(value, np.ndarray)
            arrays.append(value.detach().cpu().numpy() if is_tensor else value)
            seen[id(value)] = {"__array__": len(arrays) - 1, "torch": is_tensor}
        return seen[id(value)]
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, arrays, seen), encode(v, arrays, seen)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"__list__" if isinstance(value, list) else "__tuple__": [encode(v, arrays, seen) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot send a {type(value).__name__}")


def decode(value, arrays: list, made: dict | None = None):
    """The inverse of :func:`encode` (tensors come back as torch tensors, shared ones shared)."""
    made = {} if made is None else made
    if isinstance(value, dict):
        if "__array__" in value:
            i = value["__array__"]
            if i not in made:
                if value.get("torch"):
                    import torch
                    made[i] = torch.from_numpy(np.array(arrays[i]))
                else:
                    made[i] = arrays[i]
            return made[i]
        if "__dict__" in value:
            return {decode(k, arrays, made): decode(v, arrays, made) for k, v in value["__dict__"]}
        if "__list__" in value:
            return [decode(v, arrays, made) for v in value["__list__"]]
        if "__tuple__" in value:
            return tuple(decode(v, arrays, made) for v in value["__tuple__"])
        raise ValueError("unknown encoded value")
    return value
