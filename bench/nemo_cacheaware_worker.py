#!/usr/bin/env python3
"""NeMo's side of bench/bench_cacheaware.py: runs in the NeMo venv (.nemo/bin/python), builds
random-weight NeMo models of the synthetic cache-aware shapes with NeMo's own classes (the
fixture configs of tools/fixtures/nemo_fixtures/cacheaware.py at those sizes), and answers
requests on stdin, one JSON line each, {"model": name, "context": [L, R], "seconds": s,
"max_steps": n (optional)}, with
the (wall, process CPU) seconds of each conformer_stream_step after the first and before the last (the streaming script's loop:
CacheAwareStreamingAudioBuffer, the caches and previous hypotheses carried), one JSON line.
The features are computed for the whole clip up front, as NeMo's buffer does, so NeMo's time
per step is the encoder and decoder only. torch runs on --threads threads.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import torch

# The answers go to the real stdout; anything NeMo, torch or SentencePiece print goes to stderr.
PROTOCOL = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "fixtures"))
sys.path.insert(0, ROOT)

from nemo_fixtures import build, cacheaware  # noqa: E402
from parakeet_py.synthetic_model import ARCHS  # noqa: E402 (the shapes only; no library needed)


def nemo_arch(name: str) -> cacheaware.CacheAwareArch:
    a = ARCHS[name]
    return cacheaware.CacheAwareArch("hybrid_rnnt_ctc", n_mels=a.n_mels, d_model=a.d_model, n_layers=a.n_layers,
                                     n_heads=a.n_heads, sub_channels=a.subsampling_channels,
                                     pred_hidden=a.pred_hidden, joint_hidden=a.joint_hidden,
                                     att_context_size=[list(c) for c in a.att_contexts], conv_kernel=a.conv_kernel)


def step_times(model, context, audio, max_steps=None):
    from nemo.collections.asr.parts.utils.streaming_utils import CacheAwareStreamingAudioBuffer

    model.encoder.set_default_att_context_size(list(context))
    buf = CacheAwareStreamingAudioBuffer(model=model, online_normalization=False, pad_and_drop_preencoded=False)
    buf.append_audio(audio, stream_id=-1)
    channel, tcache, channel_len = model.encoder.get_initial_cache_state(batch_size=1, dtype=torch.float32)
    previous, pred_out, times = None, None, []
    for step, (chunk, lengths) in enumerate(iter(buf)):
        drop = 0 if step == 0 else model.encoder.streaming_cfg.drop_extra_pre_encoded
        t0, c0 = time.perf_counter(), time.process_time()
        with torch.inference_mode():
            (pred_out, _, channel, tcache, channel_len, previous) = model.conformer_stream_step(
                processed_signal=chunk, processed_signal_length=lengths, cache_last_channel=channel,
                cache_last_time=tcache, cache_last_channel_len=channel_len, keep_all_outputs=buf.is_buffer_empty(),
                previous_hypotheses=previous, previous_pred_out=pred_out, drop_extra_pre_encoded=drop,
                return_transcription=True)
        if step > 0 and not buf.is_buffer_empty():
            times.append((time.perf_counter() - t0, time.process_time() - c0))
            if max_steps is not None and len(times) >= max_steps:
                break
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    models = {}
    with tempfile.TemporaryDirectory() as tmp:
        tok = build.train_tokenizer(os.path.join(tmp, "tok"), 1024, 0, 3000, rich=True)
        for name in args.models.split(","):
            arch = nemo_arch(name)
            model = build.build_model(arch, tok, 0, perturb=False, config=cacheaware.model_config)
            cacheaware.select_head(model, arch, "rnnt")
            model.eval()
            models[name] = model
    print(json.dumps({"ready": list(models), "torch": torch.__version__, "threads": torch.get_num_threads()}),
          file=PROTOCOL, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        rng = np.random.default_rng(0)
        audio = (0.1 * rng.standard_normal(int(req["seconds"] * 16000))).astype(np.float32)
        times = step_times(models[req["model"]], req["context"], audio, req.get("max_steps"))
        print(json.dumps({"times": times}), file=PROTOCOL, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
