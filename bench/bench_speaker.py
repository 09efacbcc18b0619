#!/usr/bin/env python3
"""Speaker-embedding cost per second of audio: libparakeet against the same network in PyTorch
and in onnxruntime (an ONNX export of the PyTorch module), each fed torchaudio's Kaldi fbank
minus its mean, on the same noise clip, in interleaved rounds, all on --threads threads. The networks,
in their published layouts with seeded random weights:

  ecapa     SpeechBrain's ECAPA_TDNN (channels [1024] * 4 + [3072], attention 128, 192-d)
  campplus  ModelScope's CAMPPlus (3D-Speaker's CAM++, 192-d, as campplus_cn_common)

Run with the speaker fixtures' reference venv (docs/fixtures.md, "Speaker encoder"):

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_speaker.py \\
        --arch campplus --seconds 10 --rounds 3 --threads 2

The model is converted once (through our converter) into --work. Prints the times, the ratios and
the cosines of the embeddings to ours.
"""

import argparse
import io
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def ecapa(torch, work: Path):
    """The network and our converted file."""
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa

    net = ECAPA_TDNN(80, channels=[1024] * 4 + [3072], attention_channels=128, lin_neurons=192).eval()
    (work / "hyperparams.yaml").write_text("embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN\n"
                                           "  input_size: 80\n  channels: [1024, 1024, 1024, 1024, 3072]\n")
    torch.save(net.state_dict(), work / "embedding_model.ckpt")
    convert_speechbrain_ecapa(work / "embedding_model.ckpt", work / "ecapa.gguf", name="bench")
    return net, work / "ecapa.gguf"


def campplus(torch, work: Path):
    from modelscope.models.audio.sv.DTDNN import CAMPPlus

    from parakeet_py.convert.campplus_checkpoint import convert_campplus

    net = CAMPPlus(feat_dim=80, embedding_size=192).eval()
    torch.save(net.state_dict(), work / "campplus.bin")
    convert_campplus(work / "campplus.bin", work / "campplus.gguf", name="bench")
    return net, work / "campplus.gguf"


def onnx_runner(torch, net, feats, threads: int):
    """Runs the ONNX export of `net` (any number of frames) in onnxruntime on `threads` threads."""
    import onnxruntime as ort

    buf = io.BytesIO()
    torch.onnx.export(net, (feats[None],), buf, input_names=["feats"], output_names=["embedding"],
                      dynamic_axes={"feats": {1: "frames"}}, dynamo=False, opset_version=17)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(buf.getvalue(), options, providers=["CPUExecutionProvider"])
    return lambda x: session.run(None, {"feats": x[None].numpy()})[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=("ecapa", "campplus"), default="ecapa")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / ".cache" / "bench" / "speaker"))
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: process CPU time, which a busy machine disturbs less (with --threads 1 only: "
                         "idle pool threads that spin would be counted)")
    args = ap.parse_args()
    if args.clock == "cpu" and args.threads != 1:
        ap.error("--clock cpu needs --threads 1")
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    os.environ["PARAKEET_THREADS"] = str(args.threads)  # read when the library loads the model

    import torch
    import torchaudio.compliance.kaldi as kaldi

    from parakeet_py import SpeakerEncoder

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    net, model = {"ecapa": ecapa, "campplus": campplus}[args.arch](torch, work)
    pcm = (0.1 * np.random.default_rng(0).standard_normal(int(16000 * args.seconds))).astype(np.float32)

    def features():
        feats = kaldi.fbank(torch.from_numpy(pcm)[None], num_mel_bins=80, dither=0.0)
        return feats - feats.mean(0, keepdim=True)

    def normalised(e) -> np.ndarray:
        e = np.asarray(e, dtype=np.float64).reshape(-1)
        return e / np.linalg.norm(e)

    def torch_embed() -> np.ndarray:
        with torch.no_grad():
            return normalised(net(features()[None]).numpy())

    run_onnx = onnx_runner(torch, net, features(), args.threads)
    with SpeakerEncoder(model) as enc:
        runs = {"libparakeet": lambda: enc.embed(pcm, sample_rate=16000), "PyTorch": torch_embed,
                "onnxruntime": lambda: normalised(run_onnx(features()))}
        # Interleaved rounds (drifting load hits every engine alike), with a pause before each
        # call: the thread pools of PyTorch and onnxruntime spin for a while after a call, which
        # would slow whatever ran next. The median round counts.
        times = {name: [] for name in runs}
        out = {name: run() for name, run in runs.items()}  # warm-up
        for _ in range(args.rounds):
            for name, run in runs.items():
                time.sleep(0.3)
                t = clock()
                out[name] = run()
                times[name].append(clock() - t)
    per_second = {name: 1000 * float(np.median(t)) / args.seconds for name, t in times.items()}
    ours = per_second["libparakeet"]
    print(f"{args.arch}, {args.seconds:g} s of audio, {args.threads} threads, {args.clock} time: libparakeet {ours:.1f} ms per audio second"
          + "".join(f"; {name} {ms:.1f} ms ({ms / ours:.2f}x, cosine {float(out[name] @ out['libparakeet']):.6f})"
                    for name, ms in per_second.items() if name != "libparakeet"))


if __name__ == "__main__":
    main()
