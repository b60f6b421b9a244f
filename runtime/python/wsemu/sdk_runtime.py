"""``SdkRuntime``: the SDK's host API over wsemu's virtual wafer.

The signatures are the SDK's (``cerebras.sdk.runtime.sdkruntimepybind``), so that an SDK run
script works unchanged; the work is done by runtime/host's C++ ``SdkRuntime`` (the ``_wsemu``
extension). What this layer adds: the SDK's argument forms (symbol ids from ``get_id``, stream
ids, numpy arrays of any 32-bit dtype, typed launch arguments), checks that turn every bad
argument into a clear ``wsemu.errors`` exception before anything reaches the wafer, task
handles for ``nonblock=True``, and the recording that ``wsemu python --trace/--stats`` asks for
through the environment.

Contract: host calls are serialized and each one completes before it returns (the C++
runtime's rule), so a ``nonblock=True`` call returns a task that is already done and tasks
complete in the order they were issued, deterministically. Never prints, except the one
summary line on stderr at ``stop()`` and the kernel's dprint lines on stdout, which ``wsemu python``
asks for (``WSEMU_REPORT``).
"""

import atexit
import enum
import json
import os
import struct
import sys
import weakref

import numpy as np

from wsemu import _wsemu
from wsemu.errors import DtypeError, Error, NoHardwareError, UnknownSymbolError, UsageError


class MemcpyDataType(enum.IntEnum):
    """Element width of a memcpy: 32-bit (f32, i32, u32) or 16-bit (f16, i16, u16)."""

    MEMCPY_32BIT = 0
    MEMCPY_16BIT = 1


class MemcpyOrder(enum.IntEnum):
    """ROW_MAJOR: the host array is the C-order tensor [h][w][elems]; COL_MAJOR: its Fortran order."""

    ROW_MAJOR = 0
    COL_MAJOR = 1


class SymbolId(int):
    """What ``get_id`` returns: an int (as in the SDK) that remembers the name it stands for."""

    def __new__(cls, value, name, kind):
        obj = super().__new__(cls, value)
        obj.name = name
        obj.kind = kind
        return obj

    def __repr__(self):
        return f"SymbolId({int(self)}, {self.name!r})"


class Task:
    """The handle of a host call (``nonblock=True``); wsemu completes each call before it returns."""

    def __init__(self, runtime, number, what):
        self._runtime = weakref.ref(runtime)
        self.id = number
        self.what = what
        self.done = True

    def __repr__(self):
        return f"<wsemu task {self.id}: {self.what} (done)>"


# One trace / stats file per environment request: the first runtime of the process records
# into FILE, later ones into FILE.1, FILE.2, ... (a script may open several runtimes).
_env_use_count = {}
_live_runtimes = weakref.WeakSet()
_runtimes_by_dir = {}  # bindir -> the latest SdkRuntime on it (for cerebras.sdk.debug)

_ACCEPTED_KWARGS = ("cmaddr", "suppress_simfab_trace", "simfab_numthreads", "msg_level", "threads",
                    "max_cycles", "backdoor", "channels", "profile", "trace", "stats", "memcpy_required")
_MSG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _env_path(variable):
    path = os.environ.get(variable)
    if not path:
        return None
    n = _env_use_count.get(variable, 0)
    _env_use_count[variable] = n + 1
    return path if n == 0 else f"{path}.{n}"


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _launch_word(value, index, function):
    """One launch argument as the u32 word the firmware passes in MEMCPY_ARGS."""
    where = f"launch {function}: argument {index}"
    if isinstance(value, (bool, np.bool_)):
        return int(bool(value))
    if isinstance(value, np.integer):
        bits = value.dtype.itemsize * 8
        if bits > 32:
            v = int(value)
            if not -(1 << 31) <= v < (1 << 32):
                raise UsageError(f"{where}: {value!r} does not fit in 32 bits")
            return v & 0xFFFFFFFF
        return int(value) & 0xFFFFFFFF  # signed values sign-extended to the 32-bit word
    if isinstance(value, int):
        if not -(1 << 31) <= value < (1 << 32):
            raise UsageError(f"{where}: {value} does not fit in 32 bits")
        return value & 0xFFFFFFFF
    if isinstance(value, np.float16):
        return int(np.array(value, dtype=np.float16).view(np.uint16))
    if isinstance(value, (float, np.floating)):
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    raise DtypeError(f"{where}: {type(value).__name__} is not a launch argument type "
                     f"(int, bool, float or a numpy scalar)")


class SdkRuntime:
    """A session on the virtual wafer with the executable of a compile output directory.

    ``SdkRuntime(bindir, cmaddr=None, suppress_simfab_trace=False, simfab_numthreads=None,
    msg_level="WARNING")`` as in the SDK; ``bindir`` holds ``out.wsx`` (written by
    ``wsemu cslc -o DIR`` or ``wsemu build ... -o DIR/out.wsx``), or is a ``.wsx`` file.
    wsemu's own keywords: ``threads`` (emulator threads; results are identical for any
    count), ``max_cycles``, ``backdoor`` (copy through the SRAM back door, no fabric cost),
    ``channels`` (host I/O channels, 1..16), ``profile`` (["key=value", ...] architecture
    overrides), ``trace`` (record a .wstrace), ``stats`` (write the stats JSON at stop()).
    """

    def __init__(self, bindir, platform=None, **kwargs):
        # SdkRuntime(compile_artifacts, platform, memcpy_required=False) of the SdkLayout API: the
        # artifacts are the compile's output folder, the platform says only the arch, which the
        # executable already holds; memcpy_required is what the layout compiled for.
        if platform is not None and not hasattr(platform, "target"):
            raise TypeError(f"SdkRuntime: the second argument must be a platform from get_platform(), "
                            f"not {type(platform).__name__}")
        unknown = sorted(set(kwargs) - set(_ACCEPTED_KWARGS))
        if unknown:
            raise TypeError(f"SdkRuntime() got unexpected keyword argument(s) {', '.join(unknown)}; "
                            f"wsemu accepts {', '.join(_ACCEPTED_KWARGS)}")
        cmaddr = kwargs.get("cmaddr")
        if cmaddr is not None and cmaddr != "":  # "" is the simulator too: scripts default --cmaddr to it
            raise NoHardwareError(
                f"SdkRuntime: cmaddr={cmaddr!r} names a real CS system, but wsemu has no hardware: it runs "
                f"the program on its virtual wafer. Leave cmaddr out (or None or "") to run on wsemu.")
        msg_level = kwargs.get("msg_level", "WARNING")
        if not isinstance(msg_level, str) or msg_level.upper() not in _MSG_LEVELS:
            raise UsageError(f"SdkRuntime: msg_level {msg_level!r} is not one of {', '.join(_MSG_LEVELS)}")
        self.msg_level = msg_level.upper()
        self.suppress_simfab_trace = bool(kwargs.get("suppress_simfab_trace", False))

        threads = kwargs.get("threads", kwargs.get("simfab_numthreads"))
        if threads is None:
            threads = int(os.environ.get("WSEMU_THREADS", "1"))
        if not _is_int(threads) or not 1 <= int(threads) <= 256:
            raise UsageError(f"SdkRuntime: threads / simfab_numthreads must be 1..256, not {threads!r}")
        max_cycles = kwargs.get("max_cycles", int(os.environ.get("WSEMU_MAX_CYCLES", "1000000000")))
        if not _is_int(max_cycles) or int(max_cycles) <= 0:
            raise UsageError(f"SdkRuntime: max_cycles must be a positive integer, not {max_cycles!r}")
        channels = kwargs.get("channels", 1)
        if not _is_int(channels) or not 1 <= int(channels) <= 16:
            raise UsageError(f"SdkRuntime: channels must be 1..16, not {channels!r}")
        profile = kwargs.get("profile", ())
        if isinstance(profile, str):
            profile = [profile]
        # `wsemu python --profile key=value` (WSEMU_PROFILE, comma-separated) applies after the script's own.
        profile = [*profile, *filter(None, os.environ.get("WSEMU_PROFILE", "").split(","))]

        self.bindir = os.fspath(bindir)
        wsx = self.bindir if self.bindir.endswith(".wsx") else os.path.join(self.bindir, "out.wsx")
        if not os.path.isfile(wsx):
            raise FileNotFoundError(
                f"SdkRuntime: no executable {wsx} (compile with `wsemu cslc layout.csl ... -o {self.bindir}` or "
                f"build with `wsemu build layout.wsl -o {os.path.join(self.bindir, 'out.wsx')}`)")
        self._session = _wsemu.Session(wsx, int(threads), int(max_cycles), bool(kwargs.get("backdoor", False)),
                                       int(channels), [str(p) for p in profile])
        self.executable = self._session.executable()
        self._symbols = {s["name"]: s for s in self.executable["symbols"]}
        self._functions = {f["name"]: f for f in self.executable["functions"]}
        names = [(s["name"], "symbol") for s in self.executable["symbols"]]
        names += [(f["name"], "function") for f in self.executable["functions"]]
        self._ids = {name: SymbolId(i, name, kind) for i, (name, kind) in enumerate(names)}
        self._by_id = {int(v): v for v in self._ids.values()}

        self._trace_request = kwargs.get("trace") or _env_path("WSEMU_TRACE")
        self._stats_path = kwargs.get("stats") or _env_path("WSEMU_STATS")
        self._report = bool(os.environ.get("WSEMU_REPORT"))
        self._started = False
        self._stopped = False
        self._finished = False
        self._tasks = 0
        self._prints = []
        self._pending_streams = []  # SdkLayout sends and receives not moved yet
        self._stream_table = []
        _live_runtimes.add(self)
        _runtimes_by_dir[os.path.abspath(self.bindir)] = self

    # ---- the SDK's calls ----

    def get_id(self, symbol):
        """The id of an exported symbol or function, to pass to memcpy (an int, as in the SDK)."""
        if not isinstance(symbol, str):
            raise DtypeError(f"get_id: the name must be a str, not {type(symbol).__name__}")
        if symbol not in self._ids:
            raise UnknownSymbolError(f"get_id: '{symbol}' is not exported by the program (it exports: "
                                     f"{', '.join(self._ids) or 'nothing'})")
        return self._ids[symbol]

    def load(self):
        """Places the programs and routes on the wafer and starts the memcpy firmware."""
        # SdkLayout's set_symbol values, in place before any task runs.
        path = os.path.join(self.bindir, "sdklayout_symbols.json")
        if os.path.isfile(path) and not self._session.loaded():
            with open(path, encoding="utf-8") as f:
                for sym in json.load(f):
                    self._call(self._session.initial_symbol, sym["x"], sym["y"], sym["name"],
                               np.asarray(sym["words"], np.uint32))
        self._call(self._session.load)
        if self._trace_request:
            env = os.environ.get
            self.start_trace(self._trace_request, env("WSEMU_TRACE_EVENTS") or "all", env("WSEMU_TRACE_RECT"),
                             env("WSEMU_TRACE_COLORS"), env("WSEMU_TRACE_CYCLES"))

    def run(self):
        """Starts the program. On wsemu the wafer runs inside every host call, so this only checks
        the order of calls (load() first)."""
        self._require_loaded("run")
        self._started = True

    def send(self, stream, data, nonblock=False):
        """SdkLayout: ``data`` (a numpy array) into the wafer through ``stream``'s fabric edge, one
        32-bit wavelet an element (16-bit elements zero-extended). Nonblocking sends and receives
        move together at the next blocking one, or at stop()."""
        words = _stream_words("send", data)
        self._pending_streams.append((self._stream_spec("send", stream, True), words, 0, None))
        if not nonblock:
            self._move_streams()
        return self._task("send")

    def receive(self, stream, dest, size, nonblock=False):
        """SdkLayout: ``size`` wavelets out of the wafer through ``stream`` into ``dest`` (a numpy
        array; 16-bit dtypes take each wavelet's low half)."""
        if not isinstance(dest, np.ndarray) or dest.size < int(size):
            raise UsageError(f"receive: dest must be a numpy array of at least {size} elements")
        self._pending_streams.append((self._stream_spec("receive", stream, False), np.zeros(0, np.uint32), int(size),
                                      dest))
        if not nonblock:
            self._move_streams()
        return self._task("receive")

    def _stream_spec(self, call, stream, into_wafer):
        if not self._stream_table:
            path = os.path.join(self.bindir, "sdklayout_streams.json")
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    self._stream_table = json.load(f)
        index = getattr(stream, "index", stream)
        if not _is_int(index) or not 0 <= int(index) < len(self._stream_table):
            raise UsageError(f"{call}: {stream!r} is not a stream of this layout ({len(self._stream_table)} streams)")
        spec = self._stream_table[int(index)]
        if spec["into_wafer"] != into_wafer:
            raise UsageError(f"{call}: stream {index} is an {'input' if spec['into_wafer'] else 'output'} stream")
        return spec

    def _move_streams(self):
        pending, self._pending_streams = self._pending_streams, []
        if not pending:
            return
        specs = [(p[0]["x"], p[0]["y"], p[0]["side"], p[0]["color"], p[1], p[2]) for p in pending]
        got = self._call(self._session.edge_streams, specs)
        for (spec, _, size, dest), words in zip(pending, got):
            if dest is None:
                continue
            flat = dest.reshape(-1)
            if flat.dtype.itemsize == 2:
                flat[:size] = (words[:size] & 0xFFFF).astype(np.uint16).view(flat.dtype)
            else:
                flat[:size] = words[:size].view(flat.dtype) if flat.dtype.itemsize == 4 else words[:size]

    def stop(self):
        """Ends the session: closes the trace, writes the stats file (when asked for); later calls
        are usage errors. A second stop() does nothing."""
        if self._stopped:
            return
        self._move_streams()
        self._stopped = True
        self._finish()
        # The C++ session stays readable: cerebras.sdk.debug reads symbols after stop(), as the
        # SDK's post-mortem tools read the simulator's core files. This object refuses calls.

    def memcpy_h2d(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                   data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR, nonblock=False):
        """Copies ``src`` (w*h*elem_per_pe elements) to symbol ``dest`` on PEs (px, py)..(px+w-1,
        py+h-1) of its rectangle, or streams it to the kernel (``streaming=True``; ``dest`` is then
        a stream id, a symbol id or the name of a rectangle, symbol or function)."""
        call = "memcpy_h2d"
        data_type, order = self._memcpy_enums(call, data_type, order)
        name = self._target(call, dest, streaming)
        words = self._words_from(call, src, data_type)
        px, py, w, h, elem_per_pe = self._ints(call, px, py, w, h, elem_per_pe)
        # A stream id is the stream's color (the SDK's MEMCPYH2D_DATA_*_ID); a name leaves the
        # choice to the runtime (the program's only stream).
        color = int(dest) if streaming and _is_int(dest) and not isinstance(dest, SymbolId) else -1
        self._call(self._session.memcpy_h2d, name, words, px, py, w, h, elem_per_pe, bool(streaming),
                   order == MemcpyOrder.COL_MAJOR, data_type == MemcpyDataType.MEMCPY_16BIT, color)
        return self._task(f"memcpy_h2d {name}")

    def memcpy_d2h(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                   data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR, nonblock=False):
        """Copies symbol ``src`` from PEs (px, py)..(px+w-1, py+h-1) of its rectangle into the
        numpy array ``dest`` (w*h*elem_per_pe elements, C-contiguous, writeable), or takes the
        kernel's stream (``streaming=True``)."""
        call = "memcpy_d2h"
        data_type, order = self._memcpy_enums(call, data_type, order)
        name = self._target(call, src, streaming)
        px, py, w, h, elem_per_pe = self._ints(call, px, py, w, h, elem_per_pe)
        out, in_place = self._output_words(call, dest, data_type)
        self._call(self._session.memcpy_d2h, out, name, px, py, w, h, elem_per_pe, bool(streaming),
                   order == MemcpyOrder.COL_MAJOR, data_type == MemcpyDataType.MEMCPY_16BIT)
        if not in_place:
            dest.reshape(-1)[...] = (out & 0xFFFF).astype(np.uint16).view(dest.dtype)
        return self._task(f"memcpy_d2h {name}")

    def memcpy_h2d_rowbcast(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                            data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR, nonblock=False):
        """Row broadcast: ``src`` holds h*elem_per_pe elements, row y's data for every PE of row y
        (into symbol ``dest``, or with ``streaming=True`` onto each PE's stream ``dest``, as in memcpy_h2d)."""
        return self._broadcast("memcpy_h2d_rowbcast", self._session.memcpy_h2d_rowbcast, dest, src, px, py, w, h,
                               elem_per_pe, streaming, data_type, order)

    def memcpy_h2d_colbcast(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                            data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR, nonblock=False):
        """Column broadcast: ``src`` holds w*elem_per_pe elements, column x's data for every PE of column x."""
        return self._broadcast("memcpy_h2d_colbcast", self._session.memcpy_h2d_colbcast, dest, src, px, py, w, h,
                               elem_per_pe, streaming, data_type, order)

    def launch(self, name, *args, nonblock=False):
        """Calls exported function ``name`` on every PE of its rectangle with up to 8 arguments
        (ints, bools, floats, numpy scalars), which it finds in MEMCPY_ARGS as 32-bit words."""
        fn = self._function_name("launch", name)
        words = [_launch_word(a, i, fn) for i, a in enumerate(args)]
        return self._launch(fn, words)

    def call(self, name, args=(), nonblock=False):
        """The SDK's older form of launch: ``args`` is a list (or array) of raw u32 words."""
        fn = self._function_name("call", name)
        if isinstance(args, np.ndarray):
            if args.dtype.itemsize != 4:
                raise DtypeError(f"call {fn}: args has dtype {args.dtype}; pass 32-bit words (uint32)")
            args = args.reshape(-1).view(np.uint32).tolist()
        words = []
        for i, a in enumerate(args):
            if not _is_int(a) or not -(1 << 31) <= int(a) < (1 << 32):
                raise UsageError(f"call {fn}: argument {i} ({a!r}) is not a 32-bit word")
            words.append(int(a) & 0xFFFFFFFF)
        return self._launch(fn, words)

    def task_wait(self, task):
        """Waits for a task of a nonblock call (wsemu's tasks are complete when returned)."""
        self._check_task("task_wait", task)

    def is_task_done(self, task):
        self._check_task("is_task_done", task)
        return True

    def read_symbol(self, px, py, symbol, dtype=None):
        """The whole symbol on PE (px, py) of its rectangle, through the back door (debugging).
        ``dtype``: how to view the elements (default: the symbol's own type)."""
        name = self._symbol_name("read_symbol", symbol)
        px, py = self._ints("read_symbol", px, py)
        # After stop() too, as the SDK's SdkLayout tutorials read their results.
        words = self._session.read_symbol(px, py, name) if self._stopped else self._call(self._session.read_symbol, px, py, name)
        return _view_words(words, np.dtype(dtype) if dtype is not None else _symbol_dtype(self._symbols[name]),
                           "read_symbol")

    def dump_core(self, corefile="corefile.cs1"):
        """Writes the state of every PE of the program's rectangles (registers, tasks, queues,
        descriptors, stats; fabric coordinates) as text into ``corefile``; returns its path."""
        self._require_loaded("dump_core")
        with open(corefile, "w", encoding="utf-8") as f:
            for r in self.executable["rects"]:
                for y in range(r["y"], r["y"] + r["height"]):
                    for x in range(r["x"], r["x"] + r["width"]):
                        f.write(self._session.dump_core(x, y))
                        f.write("\n")
        return corefile

    # ---- wsemu's additions ----

    def core_text(self, fx, fy):
        """The state of fabric PE (fx, fy) as text."""
        fx, fy = self._ints("core_text", fx, fy)
        return self._session.dump_core(fx, fy)

    def cycles(self):
        """Fabric cycles since load()."""
        return self._session.cycles()

    def clock_mhz(self):
        return self._session.clock_mhz()

    def time_us(self):
        """The cycles at the profile's clock, in microseconds."""
        return self.cycles() / self.clock_mhz()

    def stats(self):
        """The wafer's counters plus a "host" section (cycles per kind of call, phases, ...)."""
        return json.loads(self._session.stats_json())

    def stats_json(self):
        return self._session.stats_json()

    def kernel_prints(self):
        """The kernel's dprint / dprintr lines so far: [{cycle, x, y, text}] (fabric coordinates).
        Under `wsemu python` they are also printed as they come, as `wsemu run` prints them."""
        self._collect_prints()
        return list(self._prints)

    def hang_report(self):
        """The hang report of the wafer's current state (who waits on what), or None before load()."""
        return self._session.hang_report()

    def run_until_quiescent(self):
        """Runs until nothing is left to do; a wafer still blocked then raises HangError."""
        return self._call(self._session.run_until_quiescent)

    def run_cycles(self, cycles):
        """Runs at most ``cycles`` cycles; returns {status, cycles_run, cycle, fault, hang}."""
        if not _is_int(cycles) or not 0 <= int(cycles) < (1 << 64):
            raise UsageError(f"run_cycles: {cycles!r} is not a cycle count (0 .. 2^64-1)")
        return self._call(self._session.run_cycles, int(cycles))

    def start_trace(self, path, events="all", rect=None, colors=None, cycles=None):
        """Records the fabric's events into a .wstrace file (the options of `wsemu run --trace`)."""
        self._session.start_trace(os.fspath(path), events, rect or "", colors or "", cycles or "")

    def stop_trace(self):
        """Ends the recording; returns {path, events, bytes}, or None when nothing was recorded."""
        return self._session.finish_trace()

    def summary_line(self):
        """The line `wsemu run` prints: cycles, time, the split per kind of call, host overhead."""
        s = self.stats()["host"]
        phases = s["phases"]
        backdoor = " (back door)" if phases and phases[0]["backdoor"] else ""
        e = self.executable
        return (f"{s['cycles']} cycles = {s['cycles'] / s['clock_mhz']:.3f} us at {s['clock_mhz']:.0f} MHz "
                f"({e['arch']} {e['fabric_width']}x{e['fabric_height']}; memcpy {s['memcpy_cycles']} cycles"
                f"{backdoor}, launch {s['launch_cycles']}, run {s['run_cycles']}); host overhead "
                f"{s['host_overhead_us']:.0f} us for {s['transactions']} transactions")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- internals ----

    def _call(self, fn, *args):
        if self._stopped:
            raise UsageError("the runtime was stopped; create a new SdkRuntime")
        try:
            return fn(*args)
        except Error as e:
            if not isinstance(e, UsageError):
                self._finish()
            raise
        finally:
            self._collect_prints()

    def _collect_prints(self):
        for line in self._session.take_log():
            self._prints.append({k: line[k] for k in ("cycle", "x", "y", "text")})
            if self._report:
                print(line["line"], flush=True)

    def _finish(self):
        """Closes the trace and writes the stats file, once (at stop, at a wafer failure, at exit)."""
        if self._finished:
            return
        self._finished = True
        info = self._session.finish_trace() if self._session.tracing() else None
        if info and self._report:
            print(f"wsemu python: wrote trace {info['path']}: {info['events']} events, "
                  f"{info['bytes'] / 1024:.1f} KiB (view: wsemu trace {info['path']} summary)", file=sys.stderr)
        self._collect_prints()
        if self._stats_path:
            stats = self.stats()
            stats["dprint"] = self._prints  # as `wsemu run --stats` writes them
            with open(self._stats_path, "w", encoding="utf-8") as f:
                json.dump(stats, f, indent=2)
                f.write("\n")
        if self._report and self._session.loaded():
            print(f"wsemu python: {self.summary_line()}", file=sys.stderr)

    def _require_loaded(self, call):
        if self._stopped:
            raise UsageError(f"{call}: the runtime was stopped")
        if not self._session.loaded():
            raise UsageError(f"{call}: call load() first")

    def _task(self, what):
        self._tasks += 1
        return Task(self, self._tasks, what)

    def _check_task(self, call, task):
        if not isinstance(task, Task) or task._runtime() is not self:
            raise UsageError(f"{call}: {task!r} is not a task of this runtime (pass what a nonblock call returned)")

    def _launch(self, fn, words):
        if len(words) > 8:
            raise UsageError(f"launch {fn}: {len(words)} arguments, at most 8")
        self._call(self._session.launch, fn, words)
        return self._task(f"launch {fn}")

    def _memcpy_enums(self, call, data_type, order):
        try:
            data_type = MemcpyDataType(data_type)
        except ValueError:
            raise DtypeError(f"{call}: data_type {data_type!r} is not a MemcpyDataType") from None
        try:
            order = MemcpyOrder(order)
        except ValueError:
            raise DtypeError(f"{call}: order {order!r} is not a MemcpyOrder") from None
        return data_type, order

    def _ints(self, call, *values):
        out = []
        for v in values:
            if not _is_int(v):
                raise DtypeError(f"{call}: {v!r} is not an integer (PE coordinates, sizes and counts are ints)")
            v = int(v)
            if not -(1 << 24) <= v < (1 << 24):  # far beyond any fabric; keeps x + w in range
                raise UsageError(f"{call}: {v} is out of range")
            out.append(v)
        return out

    def _resolve_id(self, call, dest):
        if isinstance(dest, SymbolId):
            return dest.name
        if int(dest) in self._by_id:
            return self._by_id[int(dest)].name
        raise UnknownSymbolError(f"{call}: {int(dest)} is not an id of this program (get_id gives them: "
                                 f"{', '.join(f'{n}={int(i)}' for n, i in self._ids.items())})")

    def _symbol_name(self, call, dest):
        if isinstance(dest, str):
            name = dest
        elif _is_int(dest):
            name = self._resolve_id(call, dest)
        else:
            raise DtypeError(f"{call}: the symbol must be a name or an id from get_id, not {type(dest).__name__}")
        if name not in self._symbols:
            raise UnknownSymbolError(f"{call}: no exported symbol '{name}' (the program exports: "
                                     f"{', '.join(self._symbols) or 'none'})")
        return name

    def _function_name(self, call, name):
        if isinstance(name, SymbolId):
            name = name.name
        if not isinstance(name, str):
            raise DtypeError(f"{call}: the function must be named by a str, not {type(name).__name__}")
        if name not in self._functions:
            raise UnknownSymbolError(f"{call}: no exported function '{name}' (the program exports: "
                                     f"{', '.join(self._functions) or 'none'})")
        return name

    def _target(self, call, dest, streaming):
        if not streaming:
            return self._symbol_name(call, dest)
        # Streaming: the name of the rectangle; a host-to-device stream id (its color) also goes
        # to the firmware, which delivers on it (firmware/README.md).
        if isinstance(dest, SymbolId):
            return dest.name
        if isinstance(dest, str):
            if dest in self._symbols or dest in self._functions or any(r["name"] == dest
                                                                        for r in self.executable["rects"]):
                return dest
            raise UnknownSymbolError(f"{call} (streaming): '{dest}' names no rectangle, symbol or function")
        if not _is_int(dest):
            raise DtypeError(f"{call} (streaming): the stream must be an id (int) or a name, not "
                             f"{type(dest).__name__}")
        hosting = sorted({s["rect"] for s in self.executable["symbols"]} |
                         {f["rect"] for f in self.executable["functions"]})
        if not hosting:  # a program that only streams exports nothing: its rectangle, if one
            hosting = list(range(len(self.executable["rects"])))
        if len(hosting) != 1:
            names = [self.executable["rects"][i]["name"] for i in hosting]
            raise UsageError(f"{call} (streaming): stream id {int(dest)} is ambiguous in a program with "
                             f"{len(hosting)} host-visible rectangles ({', '.join(names)}); pass the rectangle's name")
        return self.executable["rects"][hosting[0]]["name"]

    def _words_from(self, call, src, data_type):
        size = _check_memcpy_array(call, src, "data", data_type, "input_array_to_u32")
        flat = np.ascontiguousarray(src).reshape(-1)
        if size == 4:
            return flat.view(np.uint32)
        return flat.view(np.uint16).astype(np.uint32)

    def _output_words(self, call, dest, data_type):
        size = _check_memcpy_array(call, dest, "output", data_type, "memcpy_view")
        if not dest.flags.c_contiguous:
            raise UsageError(f"{call}: the output array must be C-contiguous (np.ascontiguousarray, or np.zeros)")
        if not dest.flags.writeable:
            raise UsageError(f"{call}: the output array is read-only")
        if size == 4:
            return dest.reshape(-1).view(np.uint32), True
        return np.zeros(dest.size, dtype=np.uint32), False

    def _broadcast(self, call, fn, dest, src, px, py, w, h, elem_per_pe, streaming, data_type, order):
        data_type, order = self._memcpy_enums(call, data_type, order)
        name = self._target(call, dest, streaming)
        words = self._words_from(call, src, data_type)
        px, py, w, h, elem_per_pe = self._ints(call, px, py, w, h, elem_per_pe)
        color = int(dest) if streaming and _is_int(dest) and not isinstance(dest, SymbolId) else -1
        self._call(fn, name, words, px, py, w, h, elem_per_pe, bool(streaming), order == MemcpyOrder.COL_MAJOR,
                   data_type == MemcpyDataType.MEMCPY_16BIT, color)
        return self._task(f"{call} {name}")


def _check_memcpy_array(call, array, role, data_type, helper):
    """The itemsize of `array` (the call's data or output) after checking that `data_type` takes
    its dtype; `helper` is the SDK function that makes 16-bit data fit a 32-bit word."""
    if not isinstance(array, np.ndarray):
        raise DtypeError(f"{call}: the {role} must be a numpy array, not {type(array).__name__}")
    size = array.dtype.itemsize
    if array.dtype.kind not in "uif" or size not in (2, 4) or (size == 2 and data_type != MemcpyDataType.MEMCPY_16BIT):
        allowed = ("float32, int32 or uint32" if data_type == MemcpyDataType.MEMCPY_32BIT else
                   f"uint32 or int32 (16-bit data in the low half, see {helper}), or float16, int16, uint16")
        raise DtypeError(f"{call}: the {role} has dtype {array.dtype}; {data_type.name} takes {allowed} arrays")
    return size


_SYMBOL_DTYPES = {"f32": np.float32, "i32": np.int32, "u32": np.uint32, "f16": np.float16, "i16": np.int16,
                  "u16": np.uint16}


def _stream_words(call, data):
    a = np.ascontiguousarray(data).reshape(-1)
    if a.dtype.itemsize == 4:
        return a.view(np.uint32).copy()
    if a.dtype.itemsize == 2:
        return a.view(np.uint16).astype(np.uint32)
    raise DtypeError(f"{call}: data must have 16- or 32-bit elements, not {a.dtype}")


def _symbol_dtype(symbol):
    return np.dtype(_SYMBOL_DTYPES.get(symbol["type"], np.uint32 if symbol["bytes"] == 4 else np.uint16))


def _view_words(words, dtype, call):
    if dtype.itemsize == 4:
        return words.view(dtype)
    if dtype.itemsize == 2:
        return (words & 0xFFFF).astype(np.uint16).view(dtype)
    raise DtypeError(f"{call}: dtype {dtype} is neither a 16- nor a 32-bit type")


def runtime_for(bindir):
    """The latest SdkRuntime opened on ``bindir`` in this process, or None (for cerebras.sdk.debug)."""
    return _runtimes_by_dir.get(os.path.abspath(os.fspath(bindir)))


@atexit.register
def _finish_all():
    # A script that never calls stop() still gets its trace closed and its stats written.
    for rt in list(_live_runtimes):
        try:
            rt._finish()
        except Exception as e:  # noqa: BLE001 - at exit, report and go on with the others
            print(f"wsemu: error while closing a runtime at exit: {e}", file=sys.stderr)
