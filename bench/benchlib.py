"""Shared pieces of the benchmark scripts: paths, libparakeet through cffi, WAV reading,
memory and load readings, and the worker protocol that runs each engine in its own process.

The scripts drive libparakeet through its C ABI directly (cffi, ABI mode), so they measure the
library itself, not the Python binding's audio handling; they take the binding's one cffi
declaration, loader and error checks (``parakeet_py._native``), imported when a worker loads
the library, so the NeMo and onnxruntime workers never need the package.
"""
import json
import os
import statistics
import subprocess
import sys
import time
import wave

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(REPO, ".cache", "bench")
DEFAULT_LIB = os.path.join(REPO, "build-bench", "libparakeet", "libparakeet.so")
NEMO_PYTHON = os.path.join(REPO, ".nemo", "bin", "python")

def library_path(path=None):
    return path or os.environ.get("PARAKEET_LIBRARY") or DEFAULT_LIB


_bound_path = None


def binding(lib_path=None):
    """``parakeet_py._native`` (the binding's one cffi declaration, loader and error checks) on
    the libparakeet at ``lib_path`` (default: $PARAKEET_LIBRARY, else build-bench). A process
    loads one library: each engine runs in its own worker process."""
    global _bound_path
    path = os.path.abspath(library_path(lib_path))
    if _bound_path not in (None, path):
        raise RuntimeError(f"this process already loaded {_bound_path}; {path} needs a process of its own")
    os.environ["PARAKEET_LIBRARY"] = path
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    from parakeet_py import _native
    _native.load()
    _bound_path = path
    return _native


class Parakeet:
    """One loaded model behind the C ABI. cffi releases the GIL during C calls, so Python
    threads calling transcribe() at once really run concurrently in the library.

    ``options``: the load options (``parakeet_capi_load_with``'s JSON keys: isa, bf16, ...);
    None loads with ``parakeet_capi_load``, which a library older than load_with also has."""

    def __init__(self, gguf_path, lib_path=None, options=None):
        self.native = binding(lib_path)
        self.ffi, self.lib = self.native.load()
        if options is None:
            self.ctx = self.lib.parakeet_capi_load(gguf_path.encode())
        else:
            self.ctx = self.lib.parakeet_capi_load_with(gguf_path.encode(), json.dumps(options).encode())
        if self.ctx == self.ffi.NULL:
            raise RuntimeError(self.ffi.string(self.lib.parakeet_capi_load_error()).decode())

    def _take(self, s):
        return self.native.string_result(s)

    def pcm(self, samples):
        """A cffi view of a float32 numpy array (no copy); keep `samples` alive while used."""
        return self.ffi.cast("const float*", self.ffi.from_buffer(samples))

    def transcribe(self, samples, ptr=None):
        ptr = ptr if ptr is not None else self.pcm(samples)
        return self._take(self.lib.parakeet_capi_transcribe_pcm(self.ctx, ptr, len(samples), 16000, 0))

    def transcribe_json(self, samples):
        return json.loads(self._take(self.lib.parakeet_capi_transcribe_pcm_json(
            self.ctx, self.pcm(samples), len(samples), 16000, 0)))

    def info(self):
        return json.loads(self._take(self.lib.parakeet_capi_model_info_json(self.ctx)))

    def set_threads(self, n):
        return self.lib.parakeet_capi_set_threads(n)

    def set_concurrency(self, backends, threads_each):
        return self.lib.parakeet_capi_set_concurrency(self.ctx, backends, threads_each)

    def pool_working_set_bytes(self):
        return int(self.lib.parakeet_capi_pool_working_set_bytes(self.ctx))


def read_wav(path):
    """16-bit mono WAV as float32 in [-1, 1] (what NeMo's loader gives: int16 / 32768)."""
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, path
        assert w.getframerate() == 16000, path
        out = np.empty(w.getnframes(), dtype=np.float32)
        # In blocks, so an hour of audio never exists twice (int16 and float32) in memory.
        block = 1 << 20
        for i in range(0, len(out), block):
            data = np.frombuffer(w.readframes(block), dtype="<i2")
            np.multiply(data, np.float32(1.0 / 32768.0), out=out[i:i + len(data)], casting="unsafe")
    return out


def memory():
    """This process's memory from /proc/self/status, in bytes: VmHWM (peak RSS), VmRSS,
    RssAnon (heap, arenas, repacked weights) and RssFile (mapped files: the GGUF, libraries)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[key] = int(rest.split()[0]) * 1024
    return out


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_busy(seconds=1.0):
    """Share of the machine's CPU time that was busy (not idle/iowait) over `seconds` while
    this process sleeps: how much other work is running right now. The load average alone
    misleads on these VMs (it stays at 2-3 when nothing runs)."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t0, i0 = snap()
    time.sleep(seconds)
    t1, i1 = snap()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def _proc_table():
    """(pid, start time) -> (ppid, CPU ticks incl. reaped children) for every process. The
    start time tells a reused pid from the process that had it before."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # Fields after "(comm)": state ppid ... utime(11) stime(12) cutime(13) cstime(14) ...
        # starttime(19), counted from 0.
        table[(int(name), int(rest[19]))] = (int(rest[1]), sum(int(x) for x in rest[11:15]))
    return table


class OthersCpu:
    """CPU time used by every process outside this one and its descendants between
    start() and stop(), as a share of the machine (1.0 = all cores busy): whether other
    sessions ran while we timed something.

    It is the change in the sum of the others' CPU ticks, each counting its reaped children
    (cutime, cstime): a process that ends in the interval leaves the table, and its whole
    life's ticks, those from before start() too, land in its parent's. Counting each process's
    own change instead counted those earlier ticks again (a compiler job of 10 s reaped during
    a 0.3 s run on 2 cores read as 1600 %). Short-lived processes count once their parent reaps
    them. ``read`` (the process table) and ``clock`` are parameters for the tests."""

    def __init__(self, read=_proc_table, clock=time.perf_counter):
        self._read, self._clock = read, clock
        self._tick = os.sysconf("SC_CLK_TCK")
        self._ncpu = os.cpu_count() or 1
        self._ours = set()

    def _others_ticks(self, table):
        """The others' ticks in ``table``. Ours: this process, its descendants, and processes
        that were ours at start() (a child's child orphaned since keeps its ticks out)."""
        ours = {key for key in table if key[0] == os.getpid() or key in self._ours}
        changed = True
        while changed:
            changed = False
            pids = {pid for pid, _ in ours}
            for key, (ppid, _) in table.items():
                if ppid in pids and key not in ours:
                    ours.add(key)
                    changed = True
        self._ours |= ours
        return sum(ticks for key, (_, ticks) in table.items() if key not in ours)

    def start(self):
        self._ours = set()
        self._t0, self._ticks0 = self._clock(), self._others_ticks(self._read())

    def stop(self):
        wall = self._clock() - self._t0
        ticks = self._others_ticks(self._read()) - self._ticks0
        return max(0.0, ticks / self._tick / wall / self._ncpu)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def mb(n):
    return n / 1e6


# --------------------------------------------------------------------------- worker processes
#
# The parent talks to each worker over pipes, one JSON object per line. The worker keeps the
# protocol on a private copy of its stdout and points fd 1 at stderr, so whatever libraries
# print (NeMo logs a lot) cannot corrupt it.

def claim_stdout():
    """Worker side, first thing (before importing anything chatty): keep the real stdout for
    the protocol and send everything else written to fd 1 to stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


def serve(proto, handlers):
    """Worker side: answer {"cmd": name, ...} lines with handlers[name](**args) until EOF."""
    for line in sys.stdin:
        msg = json.loads(line)
        cmd = msg.pop("cmd")
        try:
            reply = {"ok": True, **(handlers[cmd](**msg) or {})}
        except Exception as e:  # reported to the parent, which stops the run
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        proto.write(json.dumps(reply) + "\n")
        if cmd == "quit":
            break


class Worker:
    """Parent side: one engine in its own process."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=None, text=True, env=env)

    def call(self, cmd, **args):
        self.proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: worker exited (status {self.proc.wait()})")
        reply = json.loads(line)
        if not reply.pop("ok"):
            raise RuntimeError(f"{self.name}: {reply['error']}")
        return reply

    def close(self):
        try:
            self.call("quit")
        except (RuntimeError, BrokenPipeError):
            pass
        self.proc.wait()


def table(headers, rows):
    """A GitHub-markdown table."""
    cells = [[str(c) for c in r] for r in rows]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in cells]
    return "\n".join(out)
