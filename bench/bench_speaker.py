#!/usr/bin/env python3
"""Speaker-embedding cost per second of audio, libparakeet against the same network in PyTorch
(and, for ResNet34, onnxruntime), interleaved (A B A B), all on --threads threads.

--arch ecapa: SpeechBrain's ECAPA_TDNN in PyTorch (torchaudio's Kaldi fbank + mean removal + the
network), the published layout (channels [1024] * 4 + [3072], attention 128, 192-d) with seeded
random weights, on the same noise clip. Run with the speaker fixtures' reference venv
(docs/fixtures.md, "Speaker encoder"):

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_speaker.py \\
        --arch ecapa --seconds 10 --rounds 3 --threads 2

--arch resnet34: WeSpeaker's ResNet34 (tools/fixtures/wespeaker_resnet_torch.py: 32 base channels,
blocks [3, 4, 6, 3], 256-d, voxceleb_resnet34_LM's layout) with seeded random weights, in PyTorch
and in onnxruntime from its ONNX export; --arch eres2net the same for 3D-Speaker's ERes2Net
(tools/fixtures/eres2net_torch.py: 32 base channels, 512-d, the base model's layout), converted
from that ONNX export. Both are given the features of the clip's length and
time only the network: libparakeet's time includes its fbank, so the ratios are a lower bound.
The cosine is checked on the speaker fixtures' speech clip (its torchaudio fbank is committed):

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .venv/bin/python bench/bench_speaker.py \\
        --arch resnet34 --seconds 10 --rounds 3 --threads 2

The model is converted once (through our converter) into --work. Prints the times, the ratios and
the cosine of the embeddings. --clock cpu times the process's CPU time (all its threads: ours,
PyTorch's and onnxruntime's) instead of the wall clock: steadier on a loaded machine.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def ecapa(work: Path, pcm: np.ndarray):
    """The converted ECAPA file and {name: embed()} of the PyTorch side."""
    import torch
    import torchaudio.compliance.kaldi as kaldi
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa

    torch.manual_seed(0)
    net = ECAPA_TDNN(80, channels=[1024] * 4 + [3072], attention_channels=128, lin_neurons=192).eval()
    (work / "hyperparams.yaml").write_text("embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN\n"
                                           "  input_size: 80\n  channels: [1024, 1024, 1024, 1024, 3072]\n")
    torch.save(net.state_dict(), work / "embedding_model.ckpt")
    convert_speechbrain_ecapa(work / "embedding_model.ckpt", work / "ecapa.gguf", name="bench")

    def torch_embed() -> np.ndarray:
        feats = kaldi.fbank(torch.from_numpy(pcm)[None], num_mel_bins=80, dither=0.0)
        with torch.no_grad():
            e = net((feats - feats.mean(0, keepdim=True))[None]).reshape(-1)
        return (e / e.norm()).numpy()

    return work / "ecapa.gguf", {"PyTorch": torch_embed}, None


def two_d(arch: str, work: Path, pcm: np.ndarray, threads: int):
    """The converted 2-D encoder (resnet34 from its checkpoint, eres2net from its ONNX export),
    {name: embed()} of PyTorch and onnxruntime on features of the clip's length, and (fixture
    pcm, PyTorch's embedding of its committed fbank)."""
    import gguf
    import onnxruntime as ort
    import torch

    sys.path.insert(0, str(ROOT / "tools" / "fixtures"))
    from eres2net_torch import ERes2Net
    from wespeaker_resnet_torch import ResNet, randomised

    from parakeet_py.convert.eres2net_onnx import convert_eres2net_onnx
    from parakeet_py.convert.wespeaker_resnet import convert_wespeaker_resnet

    net = randomised(ResNet() if arch == "resnet34" else ERes2Net(), seed=0)
    frames = 1 + (len(pcm) - 400) // 160
    feats = torch.from_numpy(np.random.default_rng(1).standard_normal((1, frames, 80)).astype(np.float32))
    torch.onnx.export(net, (feats,), str(work / f"{arch}.onnx"), input_names=["feats"], output_names=["embs"],
                      dynamic_axes={"feats": {1: "T"}}, dynamo=False)
    if arch == "resnet34":
        torch.save(net.state_dict(), work / "avg_model.pt")
        convert_wespeaker_resnet(work / "avg_model.pt", work / f"{arch}.gguf", name="bench")
    else:
        convert_eres2net_onnx(work / f"{arch}.onnx", work / f"{arch}.gguf", name="bench")
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    session = ort.InferenceSession(str(work / f"{arch}.onnx"), so, providers=["CPUExecutionProvider"])

    def torch_embed() -> np.ndarray:
        with torch.no_grad():
            return net(feats).reshape(-1).numpy()

    def ort_embed() -> np.ndarray:
        return session.run(None, {"feats": feats.numpy()})[0].reshape(-1)

    ref = {t.name: np.array(t.data) for t in gguf.GGUFReader(str(ROOT / "tests/data/speaker/ref_speech.gguf")).tensors}
    with torch.no_grad():
        want = net(torch.from_numpy(ref["fbank"].astype(np.float32).reshape(1, -1, 80))).reshape(-1).numpy()
    return work / f"{arch}.gguf", {"PyTorch": torch_embed, "onnxruntime": ort_embed}, \
        (ref["pcm"].astype(np.float32), want / np.linalg.norm(want))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=("ecapa", "resnet34", "eres2net"), default="ecapa")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--work", default=str(ROOT / ".cache" / "bench" / "speaker"))
    args = ap.parse_args()
    os.environ["PARAKEET_THREADS"] = str(args.threads)  # read when the library loads the model

    import torch

    from parakeet_py import SpeakerEncoder

    torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    pcm = (0.1 * np.random.default_rng(0).standard_normal(int(16000 * args.seconds))).astype(np.float32)
    if args.arch == "ecapa":
        model, theirs, check = ecapa(work, pcm)
    else:
        model, theirs, check = two_d(args.arch, work, pcm, args.threads)

    with SpeakerEncoder(model) as enc:
        ours = enc.embed(pcm, sample_rate=16000)  # warm-up
        outputs = {name: f() for name, f in theirs.items()}
        times = dict.fromkeys(["libparakeet", *theirs], 0.0)
        clock = time.process_time if args.clock == "cpu" else time.perf_counter
        for _ in range(args.rounds):
            t = clock()
            ours = enc.embed(pcm, sample_rate=16000)
            times["libparakeet"] += clock() - t
            for name, f in theirs.items():
                t = clock()
                outputs[name] = f()
                times[name] += clock() - t
        if check is not None:
            check_ours = enc.embed(check[0], sample_rate=16000)
    ms = {name: 1000 * t / args.rounds / args.seconds for name, t in times.items()}
    line = f"{args.arch}, {args.seconds:g} s of audio, {args.threads} threads, {args.clock} clock: libparakeet " \
           f"{ms['libparakeet']:.1f} ms per audio second"
    for name in theirs:
        line += f"; {name} {ms[name]:.1f} ms ({ms[name] / ms['libparakeet']:.2f}x)"
    print(line)
    if check is None:
        print(f"cosine with PyTorch {float(ours @ outputs['PyTorch']):.6f}")
    else:
        print(f"cosine with PyTorch on the fixture clip {float(check_ours @ check[1]):.6f}")


if __name__ == "__main__":
    main()
