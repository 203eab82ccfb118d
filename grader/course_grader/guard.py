"""What the student's code cannot switch off from Python: an audit hook, dispatcher kernels, tripwires.

Loaded by the zygote by file path (standard library and torch only). :func:`install` runs once in
the zygote, before any student code exists anywhere:

* a PEP 578 audit hook (``sys.addaudithook``: no API removes or lists hooks). It does nothing until
  the part process *arms* it (:func:`arm`, one way: a second arm ends the process). Armed, it ends
  the process on the escape hatches of the interpreter: ``ctypes``; ``gc.get_objects`` /
  ``get_referrers`` / ``get_referents``; ``sys._getframe``, ``sys._current_frames``, traceback and
  generator frames; ``sys.settrace`` / ``setprofile`` / ``addaudithook``; ``compile``, ``exec`` of any
  code but the solution cell's, ``marshal`` (so no module can be loaded or re-loaded from source:
  ``importlib.reload``, ``spec_from_file_location``); the import of any module the zygote did not
  load (course_lib above all); rebinding a function's ``__code__`` / ``__defaults__``; processes,
  signals and sockets (``os.fork``, ``subprocess``, ``os.kill``, ``socket``...); opening a file
  outside the Python installation (reading) or outside the part's private /tmp (writing; no
  writing at all where the part has no view of its own), listing, removing or renaming outside it.
* kernels registered with ``torch.library`` for torch's fused attention operators (the public
  ``scaled_dot_product_attention``, its math, flash and fused variants, ``_native_multi_head_attention``,
  ``_transformer_encoder_layer_fwd``, ``_fused_sdp_choice``) at every dispatch key that computes
  something. They replace torch's kernels in the C++ dispatcher, so ``DisableTorchFunction``,
  ``getattr`` strings and ``torch.ops.aten`` all reach them.
* tripwires: the code of torch's Python-level ready-made attention (``F.multi_head_attention_forward``,
  every method of ``nn.MultiheadAttention`` and the ``nn.Transformer*`` classes, the Python
  decompositions of SDPA) is replaced in place, so every reference to those functions reaches the
  tripwire and the original code no longer exists in the process.

Every one of them *ends* the part process (``os._exit(86)``) after writing one line, the reason, to
file descriptor 3, so catching an exception cannot undo a detection: the part gets no result and no
points, and the grader reports the reason. Nothing here holds state the student's code can reach:
the hook's state is in its closure (the hook itself is unreachable), the kernels and the tripwires
keep theirs in default arguments, and rebinding those is refused.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import types

TATTLE_FD, RESULT_FD = 3, 4
EXIT_RULE = 86
ARM_EVENT = "course_grading.arm"
CHECK_EVENT = "course_grading.check"

ATEN_OPS = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
            "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
            "_scaled_dot_product_fused_attention_overrideable", "_scaled_dot_product_attention_math_for_mps",
            "_native_multi_head_attention", "_transformer_encoder_layer_fwd", "_fused_sdp_choice",
            "_efficient_attention_forward", "_flash_attention_forward")
DISPATCH_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CPU", "CUDA", "NestedTensorCPU",
                 "NestedTensorCUDA", "MPS", "XPU")
WATCHED_NAME = re.compile(r"scaled_dot_product|multi_head_attention|multihead|native_multi_head|transformer_encoder"
                          r"|flash_attention|efficient_attention|flex_attention|sdpa", re.I)
WATCHED_CLASS = re.compile(r"^(MultiheadAttention|Transformer\w*)$")

# audit events that end the part, by exact name or by prefix (the ones ending in ".")
FORBIDDEN = ("ctypes.", "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._getframe",
             "sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile",
             "sys.addaudithook", "compile", "marshal.", "code.__new__", "os.fork", "os.forkpty", "os.exec",
             "os.posix_spawn", "os.spawn", "os.system", "subprocess.", "os.kill", "os.killpg",
             "signal.pthread_kill", "pty.", "socket.", "_posixsubprocess.", "os.setuid", "os.setgid",
             "sys.monitoring.", "cpython.")
FRAME_ATTRIBUTES = {"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "f_globals", "f_locals"}
REBOUND_ATTRIBUTES = {"__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__"}
# files: reads only under the read roots (+ the devices below), writes only under the write roots
FILE_EVENTS = ("os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.symlink", "os.link", "os.chmod",
               "os.chown", "os.truncate", "os.utime", "shutil.", "os.chflags", "os.lchown", "os.mkfifo",
               "os.mknod", "tempfile.", "os.chroot")
LISTING_EVENTS = ("os.listdir", "os.scandir", "glob.glob", "os.chdir")
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


def tattle(reason: str, _write=os.write, _exit=os._exit, _fd=TATTLE_FD, _code=EXIT_RULE) -> None:
    """Say why (one line on fd 3) and end the process at once."""
    try:
        _write(_fd, reason.encode("utf-8", "replace")[:300] + b"\n")
    except BaseException:                                   # noqa: BLE001 (fd 3 closed: the exit still says it)
        pass
    _exit(_code)


def _named(event: str, names: tuple) -> bool:
    """Whether ``event`` is one of ``names``, exactly or under one ending in "." (a prefix)."""
    return any(event.startswith(f) if f.endswith(".") else event == f for f in names)


def _writes(args) -> bool:
    mode, flags = (args[1] if len(args) > 1 else "r"), (args[2] if len(args) > 2 else 0)
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC))


def _judge(state: dict, event: str, args: tuple) -> str | None:
    """Why ``event`` ends the armed part process (None: it may happen)."""
    if event == ARM_EVENT:
        return "tried to arm the sandbox's guard a second time"
    if event == "import":
        name = str(args[0])
        return f"imports '{name}'" + (", the course's reference solution" if "course_lib" in name else
                                       ", a module the grader did not load (solutions use math, torch and numpy)")
    if event == "exec":
        return None if args and any(args[0] is code for code in state["code"]) else "runs code with exec/eval"
    if _named(event, FORBIDDEN):
        return f"uses {event}, which a solution may not use"
    if event == "object.__getattr__" and len(args) > 1 and args[1] in FRAME_ATTRIBUTES:
        return f"reads .{args[1]} (the interpreter's frames)"
    if event == "object.__setattr__" and len(args) > 1 and args[1] in REBOUND_ATTRIBUTES:
        return f"rebinds a function's {args[1]}"
    return None


#: where a file event names its paths: (index of the path, index of its dir_fd) (os.symlink: the link's
#: text, as a path of its own, and where the link is made); any other event: its first argument, no dir_fd
EVENT_PATHS = {"os.rename": ((0, 2), (1, 3)), "os.link": ((0, 2), (1, 3)), "os.symlink": ((0, None), (1, 2)),
               "os.mkdir": ((0, 2),), "os.chmod": ((0, 2),), "os.utime": ((0, 3),), "os.chown": ((0, 3),),
               "os.remove": ((0, 1),), "os.rmdir": ((0, 1),)}


def _under(path, roots, dir_fd=None) -> bool:
    """True when ``path`` is under one of ``roots``. A relative path is resolved against ``dir_fd`` when
    the event names one (where that descriptor points, read from /proc/self/fd); an open's audit event
    carries none, so there it must be under the roots from the working directory *and* from every
    directory the process holds open (``os.open('proc/self/status', dir_fd=...)`` could start from any
    of them). A relative path that climbs (``..``) is never under a root."""
    try:
        text = os.fsdecode(path)
    except (TypeError, ValueError):
        return False
    if os.path.isabs(text):
        return _inside(text, roots)
    if ".." in text.split("/"):
        return False
    bases = _bases(dir_fd)
    return bool(bases) and all(_inside(os.path.join(base, text), roots) for base in bases)


def _inside(path: str, roots) -> bool:
    try:
        real = os.path.realpath(path)
    except (TypeError, ValueError, OSError):
        return False
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


def _bases(dir_fd) -> list:
    """The directories a relative path may start from: ``dir_fd``'s alone when one is named (not
    AT_FDCWD), else the working directory and every directory descriptor the process holds."""
    if isinstance(dir_fd, int) and dir_fd >= 0:
        where = _fd_path(dir_fd)
        return [where] if where else []
    try:
        bases = [os.getcwd()]
    except OSError:
        return []
    for fd in range(1024):
        try:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                where = _fd_path(fd)
                if not where:
                    return []
                bases.append(where)
        except OSError:
            continue
    return bases


def _fd_path(fd: int) -> str | None:
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return where if where.startswith("/") else None


def _judge_file(state: dict, event: str, args: tuple) -> str | None:
    """Files: a solution reads nothing but Python's own files and writes only in its private /tmp
    (where it has one); anything else ends the part (the view behind it holds nothing anyway)."""
    if event == "open":
        path = args[0] if args else None
        if isinstance(path, int):
            return None
        if _writes(args):
            return None if _under(path, state["write_roots"]) else f"opens {path!r} for writing"
        ok = _under(path, state["read_roots"] + state["write_roots"] + DEVICES)
        return None if ok else f"opens {path!r}, outside what a solution may read"
    listing = event in LISTING_EVENTS
    if listing or _named(event, FILE_EVENTS):
        roots = state["read_roots"] + state["write_roots"] if listing else state["write_roots"]
        for at, fd_at in EVENT_PATHS.get(event, ((0, None),)):
            where = args[at] if len(args) > at and isinstance(args[at], (str, bytes)) else None
            dir_fd = args[fd_at] if fd_at is not None and len(args) > fd_at else None
            if where is None or not _under(where, roots, dir_fd):
                return f"uses {event} on {where!r}"
        return None
    return None


#: the standard library's own uses of what the guard refuses a solution: ``typing`` (and
#: ``typing_extensions``, which torch loads) read ``sys._getframe`` for a module name, ``namedtuple`` and
#: ``dataclass`` compile and exec the methods they generate. Only the code that raised the event is judged:
#: these events pass when it is one of these files (a solution cannot make code with their file name, as
#: ``compile`` and ``code.__new__`` are refused), and end the part when it is the solution's own code.
STDLIB_EVENTS = ("sys._getframe", "compile", "exec")
STDLIB_MODULES = ("typing", "typing_extensions", "collections", "dataclasses")


def _trusted_files() -> tuple:
    files = []
    for name in STDLIB_MODULES:
        module = sys.modules.get(name)
        if module is None:
            try:
                module = __import__(name)
            except ImportError:
                continue
        if getattr(module, "__file__", None):
            files.append(os.path.realpath(module.__file__))
    return tuple(files)


def install(torch, watched: list | None = None) -> None:
    """The audit hook (disarmed), the dispatcher kernels, the tripwires (run once, in the zygote).
    ``watched``: :func:`watched_functions`, if the interpreter this zygote was forked from found them."""
    tripped = list(watched_functions() if watched is None else watched)
    for func in tripped:
        _trip(func)
    lib, kernels = _dispatcher_kernels(torch)
    kept = [lib]                                            # their C++ handles live as long as the hook
    state = {"armed": False, "code": None, "read_roots": (), "write_roots": (), "kept": kept, "busy": False,
             "trusted": _trusted_files()}
    # what must stay as installed, checked at the part's end (:func:`check`): the code and the defaults
    # of every tripwire, kernel and of tattle itself (a default changed in place switches a tripwire off)
    watch = [(f, f.__code__, f.__kwdefaults__, dict(f.__kwdefaults__ or {}), f.__defaults__)
             for f in [*tripped, *kernels, tattle]]

    def intact() -> str:
        for f, code, kwdefaults, values, defaults in watch:
            now = f.__kwdefaults__
            if (f.__code__ is not code or now is not kwdefaults or f.__defaults__ is not defaults
                    or len(now or {}) != len(values) or any((now or {}).get(k) is not v for k, v in values.items())):
                return f"changed {getattr(f, '__qualname__', '?')}"
        return "intact"

    def raised_by_stdlib(_getframe=sys._getframe, _realpath=os.path.realpath) -> bool:
        """Whether the code that raised the event (the frame below the hook) is one of the trusted files."""
        state["busy"] = True                                # the look at the frame raises events of its own
        try:
            return _realpath(_getframe(2).f_code.co_filename) in state["trusted"]
        except BaseException:                               # noqa: BLE001 (no such frame: not the stdlib)
            return False
        finally:
            state["busy"] = False

    def hook(event, args):
        if not state["armed"]:
            if event == ARM_EVENT:
                state.update(armed=True, code=args[0], read_roots=tuple(args[1]), write_roots=tuple(args[2]),
                             roots=(tuple(args[1]), tuple(args[2])))
            return
        if event == CHECK_EVENT:
            if args and isinstance(args[0], list):
                same = (state["read_roots"], state["write_roots"]) == state["roots"]
                args[0].append(intact() if same else "changed its roots")
            return
        if state["busy"]:
            return
        reason = _judge(state, event, args) or _judge_file(state, event, args)
        if reason is not None and event in STDLIB_EVENTS and raised_by_stdlib():
            return
        if reason is not None:
            tattle("the solution cell " + reason)

    sys.addaudithook(hook)


def arm(codes: tuple, read_roots, write_roots) -> None:
    """From here on the hook refuses; nothing can switch it back (part process only). ``codes``: the
    compiled solution cells, the only code it may ``exec`` (once each, by the part process)."""
    sys.audit(ARM_EVENT, tuple(codes), tuple(read_roots), tuple(write_roots))


def check() -> str:
    """At the end of a part: ``"intact"`` when the armed guard answers and finds its tripwires, kernels
    and tattle as installed; else what it found (or ``"silent"``: the hook no longer answers, it was
    disarmed or replaced). Advisory too (a part with raw memory access can fake it), but a submission
    that switched the guard off the way earlier red-team cases did is named to the instructor."""
    out: list = []
    sys.audit(CHECK_EVENT, out)
    return str(out[0]) if out else "silent"


def _trip(func) -> None:
    """Replace ``func``'s code, in place, by one that tattles: every reference to the function (a class
    attribute, a decomposition table, a ``functools.wraps`` wrapper) now reaches the tripwire, and the
    original code object is gone (and with ``compile`` refused, cannot be made again)."""
    n = len(func.__code__.co_freevars)
    names = [f"v{i}" for i in range(n)]
    source = ("def outer():\n" + "".join(f"    {v} = None\n" for v in names)
              + "    def tripwire(*args, _tattle, _reason, **kwargs):\n"
              + (f"        {', '.join(names)}\n" if names else "")
              + "        _tattle(_reason)\n    return tripwire\n")
    made: dict = {}
    exec(compile(source, "<tripwire>", "exec"), made)
    func.__code__ = made["outer"]().__code__
    func.__kwdefaults__ = {"_tattle": tattle, "_reason": f"the solution cell calls {func.__qualname__}, torch's "
                                                         "ready-made attention; this part must compute it explicitly"}


def _dispatcher_kernels(torch):
    """Replace the fused attention operators' kernels; the Library keeps them registered."""
    import warnings
    lib = torch.library.Library("aten", "IMPL")
    kernels = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                     # "overriding a previously registered kernel"
        for op in ATEN_OPS:
            for key in DISPATCH_KEYS:
                try:
                    if torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", key):
                        kernels.append(_make_kernel(f"aten::{op}"))
                        lib.impl(op, kernels[-1], key)
                except (RuntimeError, AttributeError):
                    continue
    import weakref
    for f in list(getattr(weakref.finalize, "_registry", {})):
        info = f.peek()
        if info and info[0] is lib:
            f.detach()                                      # nobody can run the finalizer that unregisters them
    return lib, kernels


def _make_kernel(name: str):
    def kernel(*args, _name=name, _tattle=tattle, **kwargs):
        _tattle(f"the solution cell calls {_name}, torch's ready-made attention; this part must compute "
                "attention explicitly")
    return kernel


def watched_functions() -> list:
    """torch's Python-level ready-made attention, in every torch module loaded now (each once)."""
    import warnings
    found: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, module in list(sys.modules.items()):
            if (name == "torch" or name.startswith("torch.")) and module is not None:
                found.update((id(f), f) for f in _watched_in(module))
    return list(found.values())


def _watched_in(module) -> list:
    found = []
    for attr, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and WATCHED_NAME.search(attr):
            found.append(value)
        elif isinstance(value, type) and WATCHED_CLASS.match(attr) and value.__module__.startswith("torch"):
            found += [v for v in vars(value).values() if isinstance(v, types.FunctionType)]
    return found


# ------------------------------------------------------------------ the references of the dependencies

def _attention_of(modules: list):
    """``F.scaled_dot_product_attention`` for the references: the loaded references' own explicit
    ``scaled_dot_product_attention`` (course_lib.attention's, bool mask True = may attend, which
    returns ``(out, weights)``), so that no attention is computed by anything but the course's code
    (torch's fused kernels are the guard's tripwires in a part process)."""
    found = [m.scaled_dot_product_attention for m in modules
             if callable(getattr(m, "scaled_dot_product_attention", None))]

    def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, **options):
        if not found or options:
            raise RuntimeError("the grader's references called F.scaled_dot_product_attention with "
                               f"{sorted(options)} or without course_lib's attention loaded")
        return found[0](query, key, value, attn_mask=attn_mask, dropout_p=dropout_p)[0]
    return scaled_dot_product_attention


def load_dependencies(package: str, modules: list, exports: dict, arrays: list) -> dict:
    """Exec the references' modules as ``package.<module>``: ``modules`` is [[module, index]], the code
    the grader compiled from their source (the graded part's definition already removed), marshalled
    in ``arrays[index]``; their ``F.scaled_dot_product_attention`` is their own explicit attention
    (:func:`_attention_of`). {public name: object}."""
    if not modules:                                         # a part with no dependencies (half of them)
        return {}
    import marshal

    import torch.nn.functional as F
    explicit_f = types.ModuleType("torch.nn.functional")
    explicit_f.__dict__.update(vars(F))
    pkg = types.ModuleType(package)
    pkg.__path__, pkg.__package__ = [], package
    made = {package: pkg}
    sys.modules[package] = pkg
    try:
        for name, index in modules:
            code = marshal.loads(arrays[index].tobytes())
            if not isinstance(code, types.CodeType):
                raise TypeError(f"the reference module {name} is not code")
            mod = types.ModuleType(f"{package}.{name}")
            mod.__package__ = package
            sys.modules[mod.__name__] = made[mod.__name__] = mod
            exec(code, mod.__dict__)
            if "F" in mod.__dict__:
                mod.F = explicit_f
            setattr(pkg, name, mod)
    finally:
        for name in made:
            sys.modules.pop(name, None)
    explicit_f.scaled_dot_product_attention = _attention_of(list(made.values()))
    return {public: getattr(made[f"{package}.{mod}"], attr) for public, (mod, attr) in exports.items()}
