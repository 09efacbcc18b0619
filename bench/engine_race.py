"""Shared pieces of the benches that race libparakeet against the same network in PyTorch and
onnxruntime (bench_ced.py, bench_speaker.py): the onnxruntime session of a PyTorch module,
interleaved timing, and the side-by-side table of medians and ratios.

Each engine is timed by wall clock and by this process's CPU time: on a shared machine the CPU
time is the steadier measure of what a call costs (a preempted call's wall time grows, its CPU
time does not). An engine's thread pool may keep its workers spinning after a call returns
(PyTorch's OpenMP workers burn 9-10 ms of CPU after each 2-thread call, 8.6 of it in the first
20 ms; ours 0.9 ms): that CPU is the engine's own cost. So each engine's turn is an untimed call
(on cores the engine before it has left, after a pause: the engine's threads and caches are warm
when its timed call starts, as in a loop of calls), then the timed call, whose CPU window runs on
through a pause in which its workers spin down. Timed back to back as before, PyTorch's spin was
charged to the engine after it, onnxruntime f32 (77-84 ms against 67-70 ms per 10 s of CAM++ at 2
threads with PyTorch's workers passive).
"""
import io
import json
import statistics
import tempfile
import time
import warnings
from pathlib import Path

from benchlib import OthersCpu


def onnx_session(module, example_inputs, input_names, threads, dynamic_axes=None, int8=False):
    """An onnxruntime CPU session (intra-op `threads`, one inter-op thread) of `module` traced on
    `example_inputs` (a tuple of tensors) with torch.onnx's TorchScript exporter, as a function
    that runs it on numpy inputs and returns its first output. `dynamic_axes` (torch.onnx's
    form) names the input axes whose size may differ from the example's. With `int8` the export
    is quantised by onnxruntime's quantize_dynamic (int8 weights, activations quantised per call),
    as the published int8 ONNX models are made: the peer of our q8_0."""
    import onnxruntime as ort
    import torch

    buf = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer warnings
        torch.onnx.export(module, example_inputs, buf, dynamo=False, input_names=list(input_names),
                          dynamic_axes=dynamic_axes)
    model = buf.getvalue()
    if int8:
        model = quantized_int8(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Its workers would otherwise spin between runs, stealing the CPU from the engines timed
    # after it in the same process.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return lambda *arrays: session.run(None, dict(zip(input_names, arrays)))[0]


def quantized_int8(model: bytes) -> bytes:
    """The ONNX model `model` with its weights in int8 by onnxruntime's quantize_dynamic at its
    defaults (signed weights, per tensor)."""
    import onnx
    from onnxruntime.quantization import quantize_dynamic

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "int8.onnx"
        quantize_dynamic(onnx.load_from_string(model), out)
        return out.read_bytes()


# How long after a call its pool's workers are given to go idle. Measured as the process's CPU
# during a pause after a 2-thread PyTorch call: 8.6 ms in a 20 ms pause, 9.1-10.5 in 50-200 ms
# pauses; ours 0.9 ms in any of them.
SETTLE_SECONDS = 0.1


def race(engines, rounds):
    """Runs every engine (name -> no-argument function) `rounds` times, interleaved (A B C A B C
    ...) so that load changes hit every engine alike. Each turn is an untimed call, then a timed
    one: its wall time ends when it returns, its CPU time (the whole process's) runs on through
    SETTLE_SECONDS after it, so that what its pool's workers spend spinning down is charged to
    it and not to the next engine. Returns (name -> [(wall seconds, CPU seconds), ...], the share
    of the machine other processes used meanwhile: above ~0.1 the figures, PyTorch's most, are
    inflated by the contention)."""
    times = {name: [] for name in engines}
    others = OthersCpu()
    others.start()
    for _ in range(rounds):
        for name, fn in engines.items():
            fn()
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            done = time.perf_counter()
            time.sleep(SETTLE_SECONDS)
            times[name].append((done - wall, time.process_time() - cpu))
    return times, others.stop()


def report(times, others_cpu, audio_seconds, ours, theirs, extra, as_json):
    """Prints the medians (ms per call and per audio second, wall and CPU) and the ratio of each
    of `theirs` to each of `ours` (> 1: ours is faster), as a table or one JSON object that also
    holds `extra`."""
    med = {name: (statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts))
           for name, ts in times.items()}
    results = dict(extra, audio_seconds=audio_seconds, rounds=len(next(iter(times.values()))),
                   others_cpu=round(others_cpu, 2))
    for name, (wall, cpu) in med.items():
        results[f"{name}_wall_ms"] = round(1000 * wall, 1)
        results[f"{name}_cpu_ms"] = round(1000 * cpu, 1)
    for mine in ours:
        for other in theirs:
            results[f"{mine}_vs_{other}_wall"] = round(med[other][0] / med[mine][0], 2)
            results[f"{mine}_vs_{other}_cpu"] = round(med[other][1] / med[mine][1], 2)
    if as_json:
        print(json.dumps(results))
        return
    print(", ".join(f"{k} {v}" for k, v in extra.items()) + f"; other processes used {others_cpu:.0%} of the CPUs")
    print(f"{'engine':>14} {'wall ms':>9} {'CPU ms':>9} {'CPU ms per audio s':>19}")
    for name, (wall, cpu) in med.items():
        print(f"{name:>14} {1000 * wall:9.1f} {1000 * cpu:9.1f} {1000 * cpu / audio_seconds:19.2f}")
    for mine in ours:
        print(f"{mine}: " + ", ".join(f"{results[f'{mine}_vs_{other}_cpu']}x {other} (wall "
                                      f"{results[f'{mine}_vs_{other}_wall']}x)" for other in theirs))
