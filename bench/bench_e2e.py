#!/usr/bin/env python3
"""End-to-end RTFx on one clip: libparakeet (f32, f16, q8_0) vs NeMo (PyTorch) vs onnxruntime.

    .nemo/bin/python bench/bench_e2e.py                       # 110m, clip_10s, 2 threads, 7 reps
    .nemo/bin/python bench/bench_e2e.py --reps 11 --json out.json

Needs bench/make_bench_models.py's outputs and a Release libparakeet (build-bench/ or
$PARAKEET_LIBRARY). Every engine runs in its own worker process (its peak RSS is its own) with
the same thread count; the audio is decoded before timing; each engine gets one untimed
warm-up; then the rounds run the engines one after another (the order rotates every round)
so that load changes on this shared machine hit all of them alike. Reported: the median time
per engine, RTFx = audio seconds / median seconds, ratios, and the machine load.

What each engine does per request (the whole pipeline, from float samples to token ids/text):
  ours-*  parakeet_capi_transcribe_pcm (mel, encoder, greedy TDT, detokenisation) after
          parakeet_capi_set_threads(T).
  nemo    torch.set_num_threads(T), model.eval(), torch.no_grad(): model.preprocessor ->
          model.encoder -> model.decoding.rnnt_decoder_predictions_tensor (the calls
          transcribe() makes, without its dataloader). Strategy: the model's "greedy"
          (GreedyTDTInfer) unless --nemo-strategy says otherwise.
  nemo-transcribe (optional, --engines ...,nemo-transcribe) model.transcribe([array],
          batch_size=1), dataloader and all, then model.eval() (untimed).
  ort     onnxruntime on NeMo's export (intra_op_num_threads=T): a numpy log-mel (NeMo's
          filterbank and window, same steps as NeMo's FilterbankFeatures) -> encoder-model.onnx
          -> a Python greedy TDT loop (GreedyTDTInfer's rules) calling decoder_joint-model.onnx
          once per step.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

ENGINES = ("ours-f32", "ours-f16", "ours-q8_0", "nemo", "ort")
OPTIONAL_ENGINES = ("nemo-transcribe",)


# ------------------------------------------------------------------------------------ workers

class OursEngine:
    def __init__(self, model_dir, wtype, threads, lib):
        self.pk = bl.Parakeet(os.path.join(model_dir, f"model-{wtype}.gguf"), lib)
        self.pk.set_threads(threads)

    def run(self, audio):
        t0 = time.perf_counter()
        self.pk.transcribe(audio)
        return {"seconds": time.perf_counter() - t0}

    def result(self, audio):
        j = self.pk.transcribe_json(audio)
        return {"text": j["text"], "ids": [t["id"] for t in j["tokens"]]}


class NemoEngine:
    def __init__(self, model_dir, threads, strategy):
        import torch
        from nemo.collections.asr.models import ASRModel
        torch.set_num_threads(threads)
        self.torch = torch
        self.model = ASRModel.restore_from(os.path.join(model_dir, "model.nemo"), map_location="cpu")
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


class NumpyMel:
    """NeMo's FilterbankFeatures (inference settings) in numpy: pre-emphasis 0.97, STFT
    (n_fft 512, hop 160, centred with zero padding, the model's 400-sample window centred in
    512), power, the model's mel filterbank, log(x + 2^-24), per-feature normalisation over
    the valid frames (std with N-1, + 1e-5), frames past the valid length zeroed."""

    def __init__(self, frontend_npz):
        z = np.load(frontend_npz)
        self.fb = z["fb"].astype(np.float32)  # [n_mels, 257]
        win = z["window"].astype(np.float32)
        self.window = np.zeros(512, np.float32)
        left = (512 - len(win)) // 2
        self.window[left:left + len(win)] = win

    def __call__(self, audio):
        x = np.concatenate([audio[:1], audio[1:] - 0.97 * audio[:-1]]).astype(np.float32)
        n_frames = 1 + len(x) // 160
        valid = len(x) // 160
        x = np.pad(x, 256)
        idx = np.arange(512)[None, :] + 160 * np.arange(n_frames)[:, None]
        spec = np.fft.rfft(x[idx] * self.window, axis=1)
        power = (spec.real ** 2 + spec.imag ** 2).astype(np.float32)
        mel = np.log(power @ self.fb.T + 2.0 ** -24).T  # [n_mels, frames]
        v = mel[:, :valid]
        mean = v.mean(axis=1, keepdims=True)
        std = np.sqrt(((v - mean) ** 2).sum(axis=1, keepdims=True) / (valid - 1)) + 1e-5
        mel = (mel - mean) / std
        mel[:, valid:] = 0.0
        return mel[None].astype(np.float32), valid


class OrtEngine:
    def __init__(self, model_dir, threads):
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        onnx = os.path.join(model_dir, "onnx")
        providers = ["CPUExecutionProvider"]
        self.enc = ort.InferenceSession(os.path.join(onnx, "encoder-model.onnx"), opts, providers=providers)
        self.dec = ort.InferenceSession(os.path.join(onnx, "decoder_joint-model.onnx"), opts, providers=providers)
        self.mel = NumpyMel(os.path.join(model_dir, "frontend.npz"))
        self.durations = [0, 1, 2, 3, 4]
        # Joint width = vocabulary + blank + durations; the blank id is the vocabulary size.
        self.vocab = self.dec.get_outputs()[0].shape[-1] - 1 - len(self.durations)
        dec_inputs = {i.name: i for i in self.dec.get_inputs()}
        self.state_shape = [d if isinstance(d, int) else 1 for d in dec_inputs["input_states_1"].shape]
        self.max_symbols = 10

    def _greedy_tdt(self, enc, enc_len):
        """GreedyTDTInfer._greedy_decode's rules over decoder_joint (one call per step: the
        prediction net on (last label, state) and the joint on one encoder frame)."""
        blank = self.vocab
        nd = len(self.durations)
        label = np.array([[blank]], np.int32)
        one = np.array([1], np.int32)
        h = np.zeros(self.state_shape, np.float32)
        c = np.zeros(self.state_shape, np.float32)
        ids, t = [], 0
        while t < enc_len:
            frame = enc[:, :, t:t + 1]
            symbols, need_loop = 0, True
            while need_loop and symbols < self.max_symbols:
                logits, _, h2, c2 = self.dec.run(None, {
                    "encoder_outputs": frame, "targets": label, "target_length": one,
                    "input_states_1": h, "input_states_2": c})
                logits = logits.reshape(-1)
                k = int(np.argmax(logits[:-nd]))
                skip = self.durations[int(np.argmax(logits[-nd:]))]
                if k != blank:
                    ids.append(k)
                    label = np.array([[k]], np.int32)
                    h, c = h2, c2
                symbols += 1
                t += skip
                need_loop = skip == 0
            if symbols == self.max_symbols:
                t += 1
        return ids

    def _pipeline(self, audio):
        t0 = time.perf_counter()
        mel, valid = self.mel(audio)
        t1 = time.perf_counter()
        enc, enc_len = self.enc.run(None, {"audio_signal": mel, "length": np.array([valid], np.int64)})
        t2 = time.perf_counter()
        ids = self._greedy_tdt(enc, int(enc_len[0]))
        t3 = time.perf_counter()
        return ids, t3 - t0, {"mel": t1 - t0, "encoder": t2 - t1, "decode": t3 - t2}

    def run(self, audio):
        _, total, stages = self._pipeline(audio)
        return {"seconds": total, "stages": stages}

    def result(self, audio):
        return {"text": None, "ids": self._pipeline(audio)[0]}


def worker_main(args):
    proto = bl.claim_stdout()
    audio = bl.read_wav(args.clip_path)
    t0 = time.perf_counter()
    if args.worker.startswith("ours-"):
        engine = OursEngine(args.model_dir, args.worker[5:], args.threads, args.lib)
    elif args.worker == "nemo":
        engine = NemoEngine(args.model_dir, args.threads, args.nemo_strategy)
    elif args.worker == "nemo-transcribe":
        engine = NemoTranscribeEngine(args.model_dir, args.threads, args.nemo_strategy)
    else:
        engine = OrtEngine(args.model_dir, args.threads)
    load_s = time.perf_counter() - t0

    def ready():
        return {"load_seconds": load_s, "memory": bl.memory()}

    def finish():
        return {**engine.result(audio), "memory": bl.memory()}

    bl.serve(proto, {"ready": ready, "run": lambda: engine.run(audio), "finish": finish, "quit": lambda: {}})


# ------------------------------------------------------------------------------------- parent

def worker_argv(args, engine):
    python = args.nemo_python if not engine.startswith("ours-") else sys.executable
    argv = [python, os.path.abspath(__file__), "--worker", engine, "--model-dir", args.model_dir,
            "--clip-path", args.clip_path, "--threads", str(args.threads),
            "--nemo-strategy", args.nemo_strategy]
    if args.lib:
        argv += ["--lib", args.lib]
    return argv


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="110m")
    ap.add_argument("--model-dir", default=None, help="default: .cache/bench/<model>")
    ap.add_argument("--clip", default="clip_10s")
    ap.add_argument("--clip-path", default=None, help="default: .cache/bench/clips/<clip>.wav")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="comma list of " + ",".join(ENGINES + OPTIONAL_ENGINES))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7, help="timed rounds (median reported)")
    ap.add_argument("--nemo-strategy", default="greedy", choices=("greedy", "greedy_batch"))
    ap.add_argument("--nemo-python", default=bl.NEMO_PYTHON)
    ap.add_argument("--lib", default=None, help="libparakeet.so (default: $PARAKEET_LIBRARY or build-bench)")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.model_dir = args.model_dir or os.path.join(bl.CACHE, args.model)
    args.clip_path = args.clip_path or os.path.join(bl.CACHE, "clips", args.clip + ".wav")
    if args.worker:
        return worker_main(args)

    engines = args.engines.split(",")
    audio_s = len(bl.read_wav(args.clip_path)) / 16000.0
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    workers = {}
    busy_before = bl.cpu_busy()  # before our workers exist: the other sessions' share
    try:
        for e in engines:
            workers[e] = bl.Worker(e, worker_argv(args, e), env)
        ready = {e: w.call("ready") for e, w in workers.items()}
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
    # Paired ratios: the engines of one round ran within a second or two of each other, so
    # the median of per-round ratios is less sensitive to the machine's drifting speed.
    paired = {ref: {e: bl.median([a / b for a, b in zip(times[ref], times[e])]) for e in engines}
              for ref in ("nemo", "ort") if ref in engines}
    results = {"model": args.model, "clip": args.clip, "audio_seconds": audio_s, "threads": args.threads,
               "reps": args.reps, "nemo_strategy": args.nemo_strategy, "loadavg": loads,
               "cpu_busy_before": busy_before, "others_cpu_share": others, "paired_speedup": paired, "engines": {}}
    for e in engines:
        st = {k: bl.median([s[k] for s in stages[e]]) for k in stages[e][0]} if stages[e] else None
        results["engines"][e] = {
            "median_seconds": med[e], "rtfx": audio_s / med[e], "times": times[e], "stages": st,
            "load_seconds": ready[e]["load_seconds"], "peak_rss_bytes": finals[e]["memory"]["VmHWM"],
            "memory": finals[e]["memory"], "text": finals[e]["text"], "ids": finals[e]["ids"]}

    # Transcripts: every engine's token ids against NeMo's (text too where the engine gives it).
    ref = results["engines"].get("nemo")
    checks = {}
    if ref:
        for e, r in results["engines"].items():
            if e != "nemo":
                checks[e] = {"ids_equal": r["ids"] == ref["ids"],
                             "text_equal": None if r["text"] is None else r["text"] == ref["text"]}
    results["transcript_checks"] = checks

    rows = []
    for e in engines:
        r = results["engines"][e]
        st = r["stages"]
        rows.append([e, f"{r['median_seconds'] * 1000:.0f}", f"{r['rtfx']:.1f}",
                     f"{med['nemo'] / med[e]:.2f} ({paired['nemo'][e]:.2f})" if "nemo" in med else "-",
                     f"{med['ort'] / med[e]:.2f} ({paired['ort'][e]:.2f})" if "ort" in med else "-",
                     " / ".join(f"{st[k] * 1000:.0f}" for k in ("mel", "encoder", "decode")) if st else "-",
                     f"{bl.mb(r['peak_rss_bytes']):.0f}", len(r["ids"])])
    print(f"\n{args.model}, {args.clip} ({audio_s:.1f} s), {args.threads} threads, median of {args.reps}; "
          f"load average {min(loads):.2f}..{max(loads):.2f}; CPU busy before the run "
          f"{busy_before:.0%}; other processes' CPU share per round: median {bl.median(others):.0%}, "
          f"max {max(others):.0%}\nratios: of medians (median of per-round ratios)")
    print(bl.table(["engine", "ms", "RTFx", "vs NeMo", "vs ORT", "mel / enc / dec ms", "peak RSS MB", "tokens"], rows))
    if ref:
        print("\ntranscripts vs NeMo: " + ", ".join(
            f"{e}: ids {'==' if c['ids_equal'] else '!='}"
            + ("" if c["text_equal"] is None else f", text {'==' if c['text_equal'] else '!='}")
            for e, c in checks.items()))
        print(f"NeMo text: {ref['text'][:100]!r}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
