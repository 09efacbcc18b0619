#!/usr/bin/env python3
"""Speaker-embedding cost per second of audio: libparakeet (f32 and q8_0) against SpeechBrain's ECAPA_TDNN in
PyTorch and in onnxruntime, the published layout (channels [1024] * 4 + [3072], attention 128,
192-d) with seeded random weights, on the same noise clip, interleaved, medians, every engine on
--threads threads. PyTorch runs torchaudio's Kaldi fbank + mean removal + the network;
onnxruntime runs the network exported by torch.onnx after the same torchaudio front end (timed
with it). Run with the speaker fixtures' reference venv (docs/fixtures.md, "Speaker encoder")
with onnxruntime and onnx added:

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_speaker.py \\
        --seconds 10 --rounds 7 --threads 2

The model is converted once (through our converter) into --work. Prints the medians, the ratios
and the cosine of each of our embeddings with each reference's.
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from engine_race import onnx_session, race, report  # noqa: E402


def write_ecapa(work: Path, out_types=("f32", "q8_0")):
    """SpeechBrain's ECAPA_TDNN at the published size with seeded random weights, and its GGUF
    files (written by our converter into `work`): (network, {out_type: GGUF path})."""
    import torch
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa

    torch.manual_seed(0)
    net = ECAPA_TDNN(80, channels=[1024] * 4 + [3072], attention_channels=128, lin_neurons=192).eval()
    work.mkdir(parents=True, exist_ok=True)
    (work / "hyperparams.yaml").write_text("embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN\n"
                                           "  input_size: 80\n  channels: [1024, 1024, 1024, 1024, 3072]\n")
    torch.save(net.state_dict(), work / "embedding_model.ckpt")
    paths = {t: work / f"ecapa-{t}.gguf" for t in out_types}
    for out_type, path in paths.items():
        convert_speechbrain_ecapa(work / "embedding_model.ckpt", path, out_type, name="bench")
    return net, paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / ".cache" / "bench" / "speaker"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ["PARAKEET_THREADS"] = str(args.threads)  # read when the library loads the model

    import torch
    import torchaudio.compliance.kaldi as kaldi

    from parakeet_py import SpeakerEncoder

    torch.set_num_threads(args.threads)
    net, paths = write_ecapa(Path(args.work))
    pcm = (0.1 * np.random.default_rng(0).standard_normal(int(16000 * args.seconds))).astype(np.float32)

    def features() -> torch.Tensor:
        feats = kaldi.fbank(torch.from_numpy(pcm)[None], num_mel_bins=80, dither=0.0)
        return (feats - feats.mean(0, keepdim=True))[None]

    def unit(e) -> np.ndarray:
        e = np.asarray(e).reshape(-1)
        return e / np.linalg.norm(e)

    ort_net = onnx_session(net, (features(),), ["feats"], args.threads)

    def torch_embed() -> np.ndarray:
        with torch.no_grad():
            return unit(net(features()).numpy())

    def ort_embed() -> np.ndarray:
        with torch.no_grad():
            return unit(ort_net(features().numpy()))

    encoders = {t: SpeakerEncoder(path) for t, path in paths.items()}
    extra = {"threads": args.threads}
    for out_type, enc in encoders.items():
        ours = enc.embed(pcm, sample_rate=16000)
        extra[f"cosine_{out_type}_pytorch"] = round(float(ours @ torch_embed()), 6)
        extra[f"cosine_{out_type}_onnxruntime"] = round(float(ours @ ort_embed()), 6)
    engines = {f"ours_{t}": (lambda enc=enc: enc.embed(pcm, sample_rate=16000)) for t, enc in encoders.items()}
    times, others = race(dict(engines, pytorch=torch_embed, onnxruntime=ort_embed), args.rounds)
    for enc in encoders.values():
        enc.close()
    report(times, others, args.seconds, list(engines), ["pytorch", "onnxruntime"], extra, args.json)

if __name__ == "__main__":
    main()
