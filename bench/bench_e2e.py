#!/usr/bin/env python3
"""End-to-end RTFx on one clip: libparakeet (every weight type, at each ISA level) vs NeMo (PyTorch)
vs onnxruntime (f32 and int8, our driver and onnx-asr) vs OpenVINO (default, f32, NNCF int8)
vs parakeet.cpp; or the encoder alone (--encoder-only).

    .nemo/bin/python bench/bench_e2e.py                       # 110m, clip_10s, 2 threads, 7 reps
    .nemo/bin/python bench/bench_e2e.py --reps 11 --json out.json
    .nemo/bin/python bench/bench_e2e.py --lib-base build-base/libparakeet/libparakeet.so \
        --engines ours-q8_0,ours-base-q8_0,onnx-asr-int8,nemo
    .nemo/bin/python bench/bench_e2e.py --encoder-only --engines ours-q8_0,ours-f32,ort,ov,ov-f32,ov-int8

Needs bench/make_bench_models.py's outputs and a Release libparakeet (build-bench/ or
$PARAKEET_LIBRARY); the pcpp-* engines need bench/setup_parakeet_cpp.sh. Every engine runs in
its own worker process (its peak RSS is its own) with the same thread count; the audio is
decoded before timing; each engine gets one untimed warm-up; then the rounds run the engines
one after another (the order rotates every round) so that load changes on this shared machine
hit all of them alike. Reported: the median time per engine, RTFx = audio seconds / median
seconds, ratios, the machine load, the instruction set each engine ran (OpenVINO: the settings
its compiled encoder resolved to), the issue's targets as PASS/FAIL lines (a benchmark's
printout, not a test), and each engine's token ids against NeMo's (onnxruntime f32's when NeMo
did not run): how many agree. The bench models have random weights, where a rounding
difference can flip a token, so disagreement is reported, not judged.

Engines (the whole pipeline per request, from float samples to token ids/text):
  ours-W[@L]  W = any weight type bench/make_bench_models.py writes (f32 | f16 | q8_0 | q6_k
          | q5_k | q4_k | q5_0 | q4_0): parakeet_capi_transcribe_pcm (mel, encoder, greedy TDT,
          detokenisation) on model-W.gguf after parakeet_capi_set_threads(T). "@L" loads it
          with the load option {"isa": L} (scalar | avx2 | avx512); a plain ours-W in --engines
          becomes one engine per --levels entry. The worker reads back the level that ran
          (model info "isa") and the run stops if it is not the one asked for.
  ours-W+bf16[@avx512] (optional) W = f32 | f16 loaded with {"bf16": true}: the encoder's
          matrices rounded to bfloat16 at load, products on vdpbf16ps (needs AVX512_BF16;
          only the avx512 level has it). Not an f32 engine for the targets below.
  ours-base-W  the same on --lib-base (a libparakeet built from an older commit, e.g. the
          issue's base 67e3060); its own dispatch (that commit has no avx512 level to pick).
          An older library has no load options: "@L" reaches it as PARAKEET_CPU=L.
  nemo    torch.set_num_threads(T), model.eval(), torch.no_grad(): model.preprocessor ->
          model.encoder -> model.decoding.rnnt_decoder_predictions_tensor (the calls
          transcribe() makes, without its dataloader). Strategy: the model's "greedy"
          (GreedyTDTInfer) unless --nemo-strategy says otherwise.
  nemo-transcribe (optional, --engines ...,nemo-transcribe) model.transcribe([array],
          batch_size=1), dataloader and all, then model.eval() (untimed).
  ort, ort-int8  onnxruntime on NeMo's export (intra_op_num_threads=T), f32 or the
          quantize_dynamic int8 files: a numpy log-mel (NeMo's filterbank and window, same
          steps as NeMo's FilterbankFeatures) -> encoder-model[.int8].onnx -> a Python greedy
          TDT loop (GreedyTDTInfer's rules) calling decoder_joint-model[.int8].onnx per step.
  onnx-asr, onnx-asr-int8  the onnx-asr package on the same files, as its users run it:
          load_model("nemo-conformer-tdt", <model>/onnx, quantization=None | "int8",
          sess_options with intra_op_num_threads=T), recognize(samples) (its numpy mel and
          its TDT loop).
  ov, ov-f32, ov-int8  OpenVINO's CPU plugin on the same ONNX files, INFERENCE_NUM_THREADS=T,
          through the ort engines' numpy mel and Python TDT loop (openvino_engine.py). ov: the
          plugin's default settings (bf16 where the CPU has bf16 instructions, AMX or
          AVX512_BF16);
          ov-f32: INFERENCE_PRECISION_HINT f32; ov-int8: the encoder quantised by NNCF
          post-training quantisation (make_ov_int8.py, run once when its IR is missing).
  pcpp-W  parakeet.cpp (ggml), the PyPI wheel parakeet-cpp-cuda with its CUDA libraries
          stubbed (CPU backend), on the same model-W.gguf: parakeet_capi_transcribe_pcm after
          pk::set_num_threads(T). Its "isa" is what its ggml CPU backend was built with.

--encoder-only times the encoder stage of the same requests, for the engines that can:
  ort*, ov*  the encoder graph's call (subsampling and conformer layers; the mel is before it).
  nemo    model.encoder(...) (the same; model.preprocessor is before it).
  ours-W  the same request through parakeet_capi_transcribe_pcm_json_progress, from the
          progress report 0 to the last report before 1 (OursEngine.time_encoder): the log-mel,
          the subsampling and the conformer layers. Ours carries its mel in this figure (the
          C API reports no point between the mel and the subsampling; bench_stages splits them).
onnx-asr, nemo-transcribe, pcpp-W and ours-base-W cannot time their encoder alone and are
refused. The PASS/FAIL targets are end-to-end figures and are not printed in this mode.
"""
import argparse
import difflib
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
from onnx_tdt import NumpyMel, OnnxTdtEngine, onnx_path  # noqa: E402
from openvino_engine import VARIANTS as OV_ENGINES, OvEngine, int8_encoder_path  # noqa: E402

ENGINES = ("ours-f32", "ours-f16", "ours-q8_0", "nemo", "ort", "ort-int8", "onnx-asr", "onnx-asr-int8") + OV_ENGINES
OPTIONAL_ENGINES = ("nemo-transcribe", "ours-base-W (with --lib-base)", "pcpp-W", "ours-W@L", "ours-W+bf16")
LEVELS = ("scalar", "avx2", "avx512")
# The engines that time their encoder alone (--encoder-only).
ENCODER_STAGE_ENGINES = ("ours-W[@L][+bf16]", "nemo", "ort", "ort-int8") + OV_ENGINES
PCPP_DIR = os.path.join(bl.REPO, ".cache", "pcpp")


# ------------------------------------------------------------------------------------ workers

class OursEngine:
    """encoder_stage: run() times the call with a progress callback and reports the encoder's
    stage too (time_encoder)."""

    def __init__(self, model_dir, wtype, threads, lib, options=None, encoder_stage=False):
        wtype, _, conversion = wtype.partition("+")
        if conversion == "bf16":
            options = dict(options or {}, bf16=True)
        self.pk = bl.Parakeet(os.path.join(model_dir, f"model-{wtype}.gguf"), lib, options)
        self.pk.set_threads(threads)
        info = self.pk.info()
        self.isa = info.get("isa")  # None from a library older than the field
        if conversion == "bf16":
            if not info.get("bf16_encoder"):
                raise RuntimeError("the bf16 load option did not give a bfloat16 encoder")
            self.isa += "+bf16"
        self.marks = []
        self.on_progress = self.pk.ffi.callback("parakeet_progress_fn", self._mark) if encoder_stage else None

    def _mark(self, fraction, _user_data):
        self.marks.append((time.perf_counter(), fraction))
        return 0

    def run(self, audio):
        if self.on_progress is not None:
            return self.time_encoder(audio)
        t0 = time.perf_counter()
        self.pk.transcribe(audio)
        return {"seconds": time.perf_counter() - t0}

    def time_encoder(self, audio):
        """The same request through parakeet_capi_transcribe_pcm_json_progress. A greedy request
        reports 0 once it holds its backend, then after the subsampling and the conformer
        layers' row chunks, and 1 when the transcript is made; greedy decoding reports
        nothing (model.cpp, model.h). So the encoder stage is from the 0 to the last report
        before 1: resampling check, log-mel, subsampling and the conformer layers. The
        callback runs a few hundred times (Python, under the GIL): well under 1 ms."""
        self.marks = []
        t0 = time.perf_counter()
        self.pk._take(self.pk.lib.parakeet_capi_transcribe_pcm_json_progress(
            self.pk.ctx, self.pk.pcm(audio), len(audio), 16000, 0, self.on_progress, self.pk.ffi.NULL))
        seconds = time.perf_counter() - t0
        if self.marks[0][1] != 0.0 or self.marks[-1][1] != 1.0:
            raise RuntimeError(f"progress reports {self.marks[0][1]}..{self.marks[-1][1]}, not 0..1")
        encoder_end = [t for t, f in self.marks if f < 1.0][-1]
        return {"seconds": seconds, "stages": {"encoder": encoder_end - self.marks[0][0]}}

    def result(self, audio):
        j = self.pk.transcribe_json(audio)
        return {"text": j["text"], "ids": [t["id"] for t in j["tokens"]]}


class NemoEngine:
    def __init__(self, model_dir, threads, strategy, attention=None):
        import torch
        from nemo.collections.asr.models import ASRModel
        torch.set_num_threads(threads)
        self.torch = torch
        self.model = ASRModel.restore_from(os.path.join(model_dir, "model.nemo"), map_location="cpu")
        if attention is not None:  # NeMo's long-audio route: local attention on the same weights
            self.model.change_attention_model("rel_pos_local_attn", list(attention))
        if strategy != self.model.cfg.decoding.strategy:
            from omegaconf import open_dict
            cfg = self.model.cfg.decoding
            with open_dict(cfg):
                cfg.strategy = strategy
            self.model.change_decoding_strategy(cfg, verbose=False)
        self.model.eval()

    def _pipeline(self, audio):
        torch = self.torch
        with torch.no_grad():
            t0 = time.perf_counter()
            x = torch.from_numpy(audio)[None]
            mel, mel_len = self.model.preprocessor(input_signal=x, length=torch.tensor([len(audio)]))
            t1 = time.perf_counter()
            enc, enc_len = self.model.encoder(audio_signal=mel, length=mel_len)
            t2 = time.perf_counter()
            hyp = self.model.decoding.rnnt_decoder_predictions_tensor(
                encoder_output=enc, encoded_lengths=enc_len, return_hypotheses=True)[0]
            t3 = time.perf_counter()
        stages = {"mel": t1 - t0, "encoder": t2 - t1, "decode": t3 - t2}
        return hyp, t3 - t0, stages

    def run(self, audio):
        _, total, stages = self._pipeline(audio)
        return {"seconds": total, "stages": stages}

    def result(self, audio):
        hyp = self._pipeline(audio)[0]
        ids = [int(i) for i in hyp.y_sequence]
        return {"text": hyp.text, "ids": ids}


class NemoTranscribeEngine(NemoEngine):
    """model.transcribe([array], batch_size=1): what a NeMo user calls, dataloader included."""

    def _transcribe(self, audio):
        t0 = time.perf_counter()
        hyp = self.model.transcribe([audio], batch_size=1, verbose=False)[0]
        seconds = time.perf_counter() - t0
        # transcribe() leaves the submodules in training mode (dropout on) when it returns.
        self.model.eval()
        return hyp, seconds

    def run(self, audio):
        return {"seconds": self._transcribe(audio)[1]}

    def result(self, audio):
        hyp = self._transcribe(audio)[0]
        return {"text": hyp.text, "ids": [int(i) for i in hyp.y_sequence]}


def ort_options(threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return opts


class OrtEngine(OnnxTdtEngine):
    def __init__(self, model_dir, threads, suffix):
        import onnxruntime as ort
        opts = ort_options(threads)
        providers = ["CPUExecutionProvider"]
        self.enc = ort.InferenceSession(onnx_path(model_dir, "encoder", suffix), opts, providers=providers)
        self.dec = ort.InferenceSession(onnx_path(model_dir, "decoder_joint", suffix), opts, providers=providers)
        self.mel = NumpyMel(os.path.join(model_dir, "frontend.npz"))
        dec_inputs = {i.name: i for i in self.dec.get_inputs()}
        self._set_joint_shape(self.dec.get_outputs()[0].shape[-1],
                              [d if isinstance(d, int) else 1 for d in dec_inputs["input_states_1"].shape])

    def _encode(self, feeds):
        return self.enc.run(None, feeds)

    def _joint(self, feeds):
        logits, _, h, c = self.dec.run(None, feeds)
        return logits, h, c


class OnnxAsrEngine:
    """onnx-asr's own pipeline (what its users run) on the files make_bench_models.py lays out
    for it in <model>/onnx."""

    def __init__(self, model_dir, threads, quantization):
        import onnx_asr
        onnx = os.path.join(model_dir, "onnx")
        self.model = onnx_asr.load_model("nemo-conformer-tdt", onnx, quantization=quantization,
                                         sess_options=ort_options(threads), providers=["CPUExecutionProvider"])
        self.timestamped = self.model.with_timestamps()
        # Its results carry token strings ("\u2581" shown as a space); map them back to ids.
        with open(os.path.join(onnx, "vocab.txt")) as f:
            self.ids = {tok.replace("\u2581", " "): int(i) for tok, i in (line.rstrip("\n").split(" ") for line in f)}

    def run(self, audio):
        t0 = time.perf_counter()
        self.model.recognize(audio, sample_rate=16000)
        return {"seconds": time.perf_counter() - t0}

    def result(self, audio):
        r = self.timestamped.recognize(audio, sample_rate=16000)
        return {"text": r.text, "ids": [self.ids[t] for t in r.tokens]}


class PcppEngine:
    """parakeet.cpp's libparakeet.so from the parakeet-cpp-cuda wheel. Its C calls for
    loading and transcribing have our signatures; the thread count is the library's C++
    pk::set_num_threads (exported, no C wrapper). This is another library than ours (its
    context is opaque here, plus its C++ and ggml symbols), so it has its own small
    declaration; ours comes from parakeet_py._native.CDEF through benchlib."""

    CDEF = """
        void* parakeet_capi_load(const char* gguf_path);
        char* parakeet_capi_transcribe_pcm(void* ctx, const float* samples, int n_samples,
                                           int sample_rate, int decoder);
        char* parakeet_capi_transcribe_path_json(void* ctx, const char* wav_path, int decoder);
        const char* parakeet_capi_last_error(void* ctx);
        void parakeet_capi_free_string(char* s);
        void _ZN2pk15set_num_threadsEi(int n);
        int ggml_cpu_has_avx2(void);
        int ggml_cpu_has_avx512(void);
        int ggml_cpu_has_avx512_vnni(void);
        int ggml_cpu_has_avx512_bf16(void);
    """

    def __init__(self, model_dir, wtype, threads, lib_path, clip_path):
        import ctypes
        import cffi
        libdir = os.path.dirname(lib_path)
        # As the wheel's own loader does: its ggml libraries first, global, in dependency order
        # (they are found by soname only once loaded; their RUNPATH points at the build tree).
        for dep in ("libggml-base.so", "libggml-cpu.so", "libggml-cuda.so", "libggml.so"):
            ctypes.CDLL(os.path.join(libdir, dep), mode=ctypes.RTLD_GLOBAL)
        self.ffi = cffi.FFI()
        self.ffi.cdef(self.CDEF)
        self.lib = self.ffi.dlopen(lib_path)
        cpu = self.ffi.dlopen(os.path.join(libdir, "libggml-cpu.so"))
        self.isa = "ggml:" + ",".join(n for n in ("avx2", "avx512", "avx512_vnni", "avx512_bf16")
                                      if getattr(cpu, f"ggml_cpu_has_{n}")())
        self.lib._ZN2pk15set_num_threadsEi(threads)
        self.clip_path = clip_path
        self.ctx = self.lib.parakeet_capi_load(os.path.join(model_dir, f"model-{wtype}.gguf").encode())
        if self.ctx == self.ffi.NULL:
            raise RuntimeError(f"parakeet.cpp could not load model-{wtype}.gguf")

    def _take(self, s):
        if s == self.ffi.NULL:
            raise RuntimeError(self.ffi.string(self.lib.parakeet_capi_last_error(self.ctx)).decode())
        try:
            return self.ffi.string(s).decode()
        finally:
            self.lib.parakeet_capi_free_string(s)

    def run(self, audio):
        ptr = self.ffi.cast("const float*", self.ffi.from_buffer(audio))
        t0 = time.perf_counter()
        out = self.lib.parakeet_capi_transcribe_pcm(self.ctx, ptr, len(audio), 16000, 0)
        seconds = time.perf_counter() - t0
        self._take(out)
        return {"seconds": seconds}

    def result(self, audio):
        # Its JSON call takes a path only (the same clip the worker decoded).
        j = json.loads(self._take(self.lib.parakeet_capi_transcribe_path_json(self.ctx, self.clip_path.encode(), 0)))
        return {"text": j["text"], "ids": [t["id"] for t in j["tokens"]]}


def make_engine(args):
    name, _, level = args.worker.partition("@")
    if name.startswith("ours-base-"):  # an older library: the level came as PARAKEET_CPU (worker_env)
        return OursEngine(args.model_dir, name[len("ours-base-"):], args.threads, args.lib_base)
    if name.startswith("ours-"):
        return OursEngine(args.model_dir, name[len("ours-"):], args.threads, args.lib,
                          {"isa": level} if level else None, encoder_stage=args.encoder_only)
    if name.startswith("pcpp-"):
        return PcppEngine(args.model_dir, name[len("pcpp-"):], args.threads, args.pcpp_lib, args.clip_path)
    if name in ("nemo", "nemo-transcribe"):
        cls = NemoEngine if name == "nemo" else NemoTranscribeEngine
        return cls(args.model_dir, args.threads, args.nemo_strategy, parse_attention(args.nemo_attention))
    if name in ("ort", "ort-int8"):
        return OrtEngine(args.model_dir, args.threads, ".int8" if name == "ort-int8" else "")
    if name in ("onnx-asr", "onnx-asr-int8"):
        return OnnxAsrEngine(args.model_dir, args.threads, "int8" if name == "onnx-asr-int8" else None)
    if name in OV_ENGINES:
        return OvEngine(args.model_dir, args.threads, name)
    raise SystemExit(f"unknown engine {args.worker}")


def worker_main(args):
    proto = bl.claim_stdout()
    audio = bl.read_wav(args.clip_path)
    t0 = time.perf_counter()
    engine = make_engine(args)
    load_s = time.perf_counter() - t0

    def ready():
        return {"load_seconds": load_s, "memory": bl.memory(), "isa": getattr(engine, "isa", None),
                "config": getattr(engine, "config", None)}

    def run():
        rep = engine.run(audio)
        if args.encoder_only:  # the timed figure is the encoder's stage
            rep["seconds"] = rep["stages"]["encoder"]
        return rep

    def finish():
        return {**engine.result(audio), "memory": bl.memory()}

    bl.serve(proto, {"ready": ready, "run": run, "finish": finish, "quit": lambda: {}})


# ------------------------------------------------------------------------------------- parent

def parse_attention(text):
    """'L,R' -> (L, R); None or '' -> None (the model's own full attention)."""
    if not text:
        return None
    left, right = (int(x) for x in text.split(","))
    return left, right


def worker_argv(args, engine):
    if engine.startswith("ours-"):
        python = sys.executable
    elif engine.startswith("pcpp-"):
        python = args.pcpp_python
    else:
        python = args.nemo_python
    argv = [python, os.path.abspath(__file__), "--worker", engine, "--model-dir", args.model_dir,
            "--clip-path", args.clip_path, "--threads", str(args.threads),
            "--nemo-strategy", args.nemo_strategy]
    if args.nemo_attention:
        argv += ["--nemo-attention", args.nemo_attention]
    if args.encoder_only:
        argv.append("--encoder-only")
    for opt in ("lib", "lib_base", "pcpp_lib"):
        if getattr(args, opt):
            argv += ["--" + opt.replace("_", "-"), getattr(args, opt)]
    return argv


def worker_env(args, engine):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    # Our library takes the level and bf16 as load options (make_engine); only an older base
    # library reads them from the environment.
    env.pop("PARAKEET_CPU", None)
    env.pop("PARAKEET_BF16", None)
    if engine.startswith("ours-base-") and "@" in engine:
        env["PARAKEET_CPU"] = engine.split("@")[1]
    if engine.startswith("pcpp-"):
        stub = os.path.join(PCPP_DIR, "stub")
        env["LD_LIBRARY_PATH"] = stub + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def has_encoder_stage(engine):
    return (engine.startswith("ours-") and not engine.startswith("ours-base-")) or engine in ENCODER_STAGE_ENGINES


def make_ov_int8_ir(args):
    """ov-int8's quantised encoder, made once (bench/make_ov_int8.py) outside the timed workers."""
    if not os.path.exists(int8_encoder_path(args.model_dir)):
        subprocess.run([args.nemo_python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_ov_int8.py"),
                        "--model-dir", args.model_dir], check=True)


def machine_levels():
    """The ISA levels this CPU has, by libparakeet's rules (cpu_features.cpp): avx2 needs
    AVX2+FMA+F16C, avx512 needs AVX512 F/BW/VL/VNNI."""
    with open("/proc/cpuinfo") as f:
        flags = set(next(line for line in f if line.startswith("flags")).split(":")[1].split())
    levels = []
    if {"avx2", "fma", "f16c"} <= flags:
        levels.append("avx2")
        if {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"} <= flags:
            levels.append("avx512")
    return levels


def expand_engines(names, levels):
    """A plain ours-W becomes ours-W@L for every level; "auto" keeps it as is (the library's
    own choice, no isa option)."""
    out = []
    for e in names:
        if e.startswith("ours-") and not e.startswith("ours-base-") and "@" not in e:
            # bfloat16 products exist only at the avx512 level.
            lv_e = [lv for lv in levels if lv in ("auto", "avx512")] if "+bf16" in e else levels
            out += [e if lv == "auto" else f"{e}@{lv}" for lv in lv_e]
        else:
            out.append(e)
    for e in out:
        if "@" in e and e.split("@")[1] not in LEVELS:
            raise SystemExit(f"{e}: the level must be one of {', '.join(LEVELS)}")
    return out


def agreeing_tokens(ref, ids):
    """How many of `ids` line up with `ref` (difflib's matching blocks): a count that one
    inserted or dropped token lowers by one, not by the rest of the sequence."""
    return sum(b.size for b in difflib.SequenceMatcher(None, ref, ids, autojunk=False).get_matching_blocks())


def fastest(med, names):
    present = [e for e in names if e in med]
    return min(present, key=med.get) if present else None


KQUANTS = ("q6_k", "q5_k", "q4_k")


def targets(args, med, rtfx, peak, ref_ort_int8, machine):
    """The targets of the issues that measure with this script, one line per libparakeet
    variant that they name (ours-W or ours-W@L). ORT references are the fastest onnxruntime
    engine of that precision in this run; `machine` is the levels this CPU has."""
    lines = []

    def line(ok, text):
        lines.append(f"{'PASS' if ok else 'FAIL'}  {text}")

    def variants(wtype):
        return [e for e in med if e.split("@")[0] == f"ours-{wtype}"]

    def same_level(e, wtype):  # ours-<wtype> at e's level, if it ran
        twin = f"ours-{wtype}" + (e[e.index("@"):] if "@" in e else "")
        return twin if twin in med else None

    def level(e):
        return e.split("@")[1] if "@" in e else machine[-1]

    if args.model == "110m":
        for e in variants("q8_0") if ref_ort_int8 else []:
            r = med[ref_ort_int8] / med[e]
            line(r >= 3.5, f"110M q8_0 >= 3.5x onnxruntime int8: {e} {r:.2f}x {ref_ort_int8}")
    if args.model == "600m":
        for e in variants("q8_0"):
            if level(e) == "avx512":
                line(rtfx[e] >= 40, f"0.6B q8_0 RTFx >= 40 (avx512): {e} RTFx {rtfx[e]:.1f}")
    for t in KQUANTS:  # the K-quants against parakeet.cpp on the same file
        if f"pcpp-{t}" in med:
            for e in variants(t):
                r = med[f"pcpp-{t}"] / med[e]
                line(r >= 3.0, f"{t} >= 3x parakeet.cpp on the same file: {e} {r:.2f}x pcpp-{t}")
    for e in variants("q4_k"):
        q8 = same_level(e, "q8_0")
        if q8:
            r = med[q8] / med[e]
            line(r >= 0.9, f"q4_k >= 0.9x our q8_0 speed: {e} {r:.2f}x {q8}")
            if args.model == "600m":
                r = peak[e] / peak[q8]
                line(r <= 0.6, f"0.6B q4_k peak RSS <= 0.6x our q8_0's: {e} {r:.2f}x {q8}")
    # The AVX2 level's targets are judged where AVX2 is all the CPU has: on an AVX-512 machine
    # onnxruntime runs its VNNI kernels, so the ratio to it says nothing about an AVX2 laptop.
    for e in (x for x in variants("q8_0") if level(x) == "avx2"):
        f32 = same_level(e, "f32")
        if f32:
            r = med[f32] / med[e]
            line(r >= 1.6, f"avx2 q8_0 >= 1.6x our f32: {e} {r:.2f}x {f32}")
        if ref_ort_int8 and machine[-1] == "avx2":
            r = med[ref_ort_int8] / med[e]
            line(r >= 3.0, f"avx2 q8_0 >= 3x onnxruntime int8 (AVX2-only CPU): {e} {r:.2f}x {ref_ort_int8}")
    for t in KQUANTS:
        for e in (x for x in variants(t) if level(x) == "avx2"):
            f32 = same_level(e, "f32")
            if f32:
                r = med[f32] / med[e]
                line(r >= 1.0, f"avx2 {t} >= our f32: {e} {r:.2f}x {f32}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="110m")
    ap.add_argument("--model-dir", default=None, help="default: .cache/bench/<model>")
    ap.add_argument("--clip", default="clip_10s")
    ap.add_argument("--clip-path", default=None, help="default: .cache/bench/clips/<clip>.wav")
    ap.add_argument("--engines", default=None,
                    help="comma list of " + ",".join(ENGINES + OPTIONAL_ENGINES) + " (W = a weight type: f32, f16, q8_0, q6_k, q5_k, q4_k, q5_0, q4_0, ...; "
                    "L = " + ", ".join(LEVELS) + "); default: " + ",".join(ENGINES) +
                    ", plus ours-base-q8_0 with --lib-base and pcpp-q8_0 when bench/setup_parakeet_cpp.sh has run")
    ap.add_argument("--levels", default=None,
                    help="ISA levels for each plain ours-W engine, comma list of " + ", ".join(LEVELS) +
                    " or auto (no isa load option); default: the levels this CPU has")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7, help="timed rounds (median reported)")
    ap.add_argument("--settle", type=float, default=0.5,
                    help="seconds of pause before each timed call (lets the previous engine's threads go idle)")
    ap.add_argument("--nemo-strategy", default="greedy", choices=("greedy", "greedy_batch"))
    ap.add_argument("--nemo-attention", default=None, metavar="L,R",
                    help="run NeMo with change_attention_model('rel_pos_local_attn', [L, R]) (long audio; "
                         "ours picks its attention by PARAKEET_ATT_CONTEXT or auto)")
    ap.add_argument("--encoder-only", action="store_true",
                    help="time the encoder stage alone (engines " + ", ".join(ENCODER_STAGE_ENGINES) + "); see above")
    ap.add_argument("--nemo-python", default=bl.NEMO_PYTHON)
    ap.add_argument("--lib", default=None, help="libparakeet.so (default: $PARAKEET_LIBRARY or build-bench)")
    ap.add_argument("--lib-base", default=None, help="a second libparakeet.so for the ours-base-* engines")
    ap.add_argument("--pcpp-python", default=os.path.join(PCPP_DIR, "venv", "bin", "python"))
    ap.add_argument("--pcpp-lib", default=None, help="parakeet.cpp's libparakeet.so (default: the wheel's)")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.model_dir = args.model_dir or os.path.join(bl.CACHE, args.model)
    if args.clip_path:
        args.clip = os.path.splitext(os.path.basename(args.clip_path))[0]  # the name reported
    args.clip_path = args.clip_path or os.path.join(bl.CACHE, "clips", args.clip + ".wav")
    if args.pcpp_lib is None:
        found = glob.glob(os.path.join(PCPP_DIR, "venv", "lib", "python3*", "site-packages", "parakeet", "lib",
                                       "libparakeet.so"))
        args.pcpp_lib = found[0] if found else None
    if args.worker:
        return worker_main(args)

    if args.engines is None:
        names = list(ENGINES) + (["ours-base-q8_0"] if args.lib_base else []) + \
            (["pcpp-q8_0"] if args.pcpp_lib and os.path.exists(args.pcpp_python) else [])
        names = [e for e in names if has_encoder_stage(e)] if args.encoder_only else names
    else:
        names = args.engines.split(",")
    levels = args.levels.split(",") if args.levels else machine_levels()
    engines = expand_engines(names, levels)
    if args.encoder_only:
        lacking = [e for e in engines if not has_encoder_stage(e)]
        if lacking:
            raise SystemExit(f"--encoder-only: {', '.join(lacking)} cannot time the encoder alone "
                             f"(those that can: {', '.join(ENCODER_STAGE_ENGINES)})")
    if "ov-int8" in engines:
        make_ov_int8_ir(args)
    audio_s = len(bl.read_wav(args.clip_path)) / 16000.0
    workers = {}
    busy_before = bl.cpu_busy()  # before our workers exist: the other sessions' share
    try:
        for e in engines:
            workers[e] = bl.Worker(e, worker_argv(args, e), worker_env(args, e))
        ready = {e: w.call("ready") for e, w in workers.items()}
        for e in engines:  # a run must prove which instruction set each libparakeet used
            if "@" in e and ready[e]["isa"].split("+")[0] != e.split("@")[1]:
                raise RuntimeError(f"{e}: the library ran {ready[e]['isa']!r}")
        for e, w in workers.items():  # warm-up
            w.call("run")
        times = {e: [] for e in engines}
        stages = {e: [] for e in engines}
        loads = [bl.loadavg()]
        others, meter = [], bl.OthersCpu()
        for r in range(args.reps):
            order = engines[r % len(engines):] + engines[:r % len(engines)]
            meter.start()
            for e in order:
                # Thread pools keep spinning for a while after a call (OpenMP in PyTorch and ggml,
                # onnxruntime's intra-op pool): a pause first, so that one engine's spin-wait does
                # not steal the cores of the engine timed after it.
                time.sleep(args.settle)
                rep = workers[e].call("run")
                times[e].append(rep["seconds"])
                if "stages" in rep:
                    stages[e].append(rep["stages"])
            others.append(meter.stop())
            loads.append(bl.loadavg())
            print(f"round {r + 1}/{args.reps} load {loads[-1]:.2f} others {others[-1]:.0%}: " +
                  " ".join(f"{e}={times[e][-1]:.3f}s" for e in engines), file=sys.stderr, flush=True)
        finals = {e: w.call("finish") for e, w in workers.items()}
    finally:
        for w in workers.values():
            w.close()

    med = {e: bl.median(times[e]) for e in engines}
    rtfx = {e: audio_s / med[e] for e in engines}
    ref_f32 = fastest(med, ("ort", "onnx-asr"))
    ref_int8 = fastest(med, ("ort-int8", "onnx-asr-int8"))
    refs = [r for r in ("nemo" if "nemo" in med else None, ref_f32, ref_int8) if r]
    # Paired ratios: the engines of one round ran within a second or two of each other, so
    # the median of per-round ratios is less sensitive to the machine's drifting speed.
    paired = {ref: {e: bl.median([a / b for a, b in zip(times[ref], times[e])]) for e in engines}
              for ref in refs}
    results = {"model": args.model, "clip": args.clip, "audio_seconds": audio_s, "threads": args.threads,
               "reps": args.reps, "nemo_strategy": args.nemo_strategy, "nemo_attention": args.nemo_attention, "loadavg": loads,
               "cpu_busy_before": busy_before, "others_cpu_share": others, "paired_speedup": paired,
               "libs": {"ours": bl.library_path(args.lib), "base": args.lib_base, "pcpp": args.pcpp_lib},
               "ort_references": {"f32": ref_f32, "int8": ref_int8}, "engines": {}}
    for e in engines:
        st = {k: bl.median([s[k] for s in stages[e]]) for k in stages[e][0]} if stages[e] else None
        results["engines"][e] = {
            "median_seconds": med[e], "rtfx": rtfx[e], "times": times[e], "stages": st, "isa": ready[e]["isa"],
            "load_seconds": ready[e]["load_seconds"], "peak_rss_bytes": finals[e]["memory"]["VmHWM"],
            "memory": finals[e]["memory"], "text": finals[e]["text"], "ids": finals[e]["ids"],
            "config": ready[e]["config"]}

    # Transcripts: every engine's token ids against NeMo's, or onnxruntime f32's when NeMo did
    # not run (text too where both give it). Random weights: a report, not a verdict.
    ref_name = next((e for e in ("nemo", "ort") if e in med), None)
    ref = results["engines"].get(ref_name)
    checks = {}
    if ref:
        for e, r in results["engines"].items():
            if e != ref_name:
                checks[e] = {"ids_equal": r["ids"] == ref["ids"], "agreeing_tokens": agreeing_tokens(ref["ids"], r["ids"]),
                             "of": max(len(ref["ids"]), len(r["ids"])),
                             "text_equal": None if None in (r["text"], ref["text"]) else r["text"] == ref["text"]}
    results["transcript_reference"] = ref_name
    results["transcript_checks"] = checks

    def ratio(ref, e):
        return f"{med[ref] / med[e]:.2f} ({paired[ref][e]:.2f})" if ref else "-"

    rows = []
    for e in engines:
        r = results["engines"][e]
        st = r["stages"]
        rows.append([e, r["isa"] or "-", f"{r['median_seconds'] * 1000:.0f}", f"{r['rtfx']:.1f}",
                     ratio("nemo" if "nemo" in med else None, e), ratio(ref_f32, e), ratio(ref_int8, e),
                     " / ".join(f"{st[k] * 1000:.0f}" if k in st else "-" for k in ("mel", "encoder", "decode"))
                     if st else "-",
                     f"{bl.mb(r['peak_rss_bytes']):.0f}", len(r["ids"])])
    what = "the encoder alone (--encoder-only)" if args.encoder_only else "end to end"
    print(f"\n{args.model}, {args.clip} ({audio_s:.1f} s), {what}, {args.threads} threads, median of {args.reps}; "
          f"load average {min(loads):.2f}..{max(loads):.2f}; CPU busy before the run "
          f"{busy_before:.0%}; other processes' CPU share per round: median {bl.median(others):.0%}, "
          f"max {max(others):.0%}\nratios: of medians (median of per-round ratios); ORT f32 = {ref_f32 or '-'}, "
          f"ORT int8 = {ref_int8 or '-'} (the faster onnxruntime engine of each precision)")
    print(bl.table(["engine", "isa", "ms", "RTFx", "vs NeMo", "vs ORT f32", "vs ORT int8", "mel / enc / dec ms",
                    "peak RSS MB", "tokens"], rows))
    peak = {e: results["engines"][e]["peak_rss_bytes"] for e in engines}
    # The targets are end-to-end figures.
    goals = [] if args.encoder_only else targets(args, med, rtfx, peak, ref_int8, machine_levels())
    results["targets"] = goals
    if goals:
        print("\ntargets (this run only: judge them from a run whose load and other processes' CPU share are "
              "low):\n" + "\n".join(goals))
    settings = {e: r["config"]["summary"] for e, r in results["engines"].items() if r["config"]}
    if settings:
        print("\nsettings (read back from the engine):\n" + "\n".join(f"  {e}: {v}" for e, v in settings.items()))
    if ref:
        print(f"\ntokens vs {ref_name} ({len(ref['ids'])} tokens; agreeing = tokens in the longest matching "
              "blocks, of the longer sequence):\n" + "\n".join(
                  f"  {e}: {c['agreeing_tokens']}/{c['of']} agree, ids {'==' if c['ids_equal'] else '!='}"
                  + ("" if c["text_equal"] is None else f", text {'==' if c['text_equal'] else '!='}")
                  for e, c in checks.items()))
        if ref["text"] is not None:
            print(f"{ref_name} text: {ref['text'][:100]!r}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
