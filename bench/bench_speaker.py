#!/usr/bin/env python3
"""Speaker-embedding cost per second of audio: libparakeet against the same network in PyTorch
and in onnxruntime (an ONNX export of the PyTorch module), in interleaved rounds (median), all on
--threads threads. The networks, in their published layouts with seeded random weights:

  ecapa     SpeechBrain's ECAPA_TDNN (channels [1024] * 4 + [3072], attention 128, 192-d)
  campplus  ModelScope's CAMPPlus (3D-Speaker's CAM++, 192-d, as campplus_cn_common)
  resnet34  WeSpeaker's ResNet34 (tools/fixtures/wespeaker_resnet_torch.py: 32 base channels,
            blocks [3, 4, 6, 3], 256-d, voxceleb_resnet34_LM's layout)
  eres2net  3D-Speaker's ERes2Net (tools/fixtures/eres2net_torch.py: 32 base channels, 512-d, the
            base model's layout), converted from its ONNX export

libparakeet embeds a noise clip of --seconds (its time includes its fbank); PyTorch and
onnxruntime run only the network, on features of the clip's length, so the ratios are a lower
bound. The embeddings are compared on the speaker fixtures' speech clip, whose torchaudio fbank
is committed (tests/data/speaker/ref_speech.gguf). ecapa and campplus need the speaker fixtures'
reference venv (docs/fixtures.md, "Speaker encoder"); resnet34 and eres2net run in the project's
.venv:

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_speaker.py \\
        --arch campplus --seconds 10 --rounds 7 --threads 1 --clock cpu

The model is converted once (through our converter) into --work. Prints the times, the ratios and
the cosines of the embeddings to ours.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools" / "fixtures"))


# Each network: (torch, work) -> (the module, convert(onnx_path, gguf_path) through our converter).
def ecapa(torch, work: Path):
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa

    torch.manual_seed(0)
    net = ECAPA_TDNN(80, channels=[1024] * 4 + [3072], attention_channels=128, lin_neurons=192).eval()
    (work / "hyperparams.yaml").write_text("embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN\n"
                                           "  input_size: 80\n  channels: [1024, 1024, 1024, 1024, 3072]\n")
    torch.save(net.state_dict(), work / "embedding_model.ckpt")
    return net, lambda onnx, gguf: convert_speechbrain_ecapa(work / "embedding_model.ckpt", gguf, name="bench")


def campplus(torch, work: Path):
    from modelscope.models.audio.sv.DTDNN import CAMPPlus

    from parakeet_py.convert.campplus_checkpoint import convert_campplus

    torch.manual_seed(0)
    net = CAMPPlus(feat_dim=80, embedding_size=192).eval()
    torch.save(net.state_dict(), work / "campplus.bin")
    return net, lambda onnx, gguf: convert_campplus(work / "campplus.bin", gguf, name="bench")


def resnet34(torch, work: Path):
    from wespeaker_resnet_torch import ResNet, randomised

    from parakeet_py.convert.wespeaker_resnet import convert_wespeaker_resnet

    net = randomised(ResNet(), seed=0)
    torch.save(net.state_dict(), work / "avg_model.pt")
    return net, lambda onnx, gguf: convert_wespeaker_resnet(work / "avg_model.pt", gguf, name="bench")


def eres2net(torch, work: Path):
    from eres2net_torch import ERes2Net
    from wespeaker_resnet_torch import randomised

    from parakeet_py.convert.eres2net_onnx import convert_eres2net_onnx

    return randomised(ERes2Net(), seed=0), lambda onnx, gguf: convert_eres2net_onnx(onnx, gguf, name="bench")


NETWORKS = {"ecapa": ecapa, "campplus": campplus, "resnet34": resnet34, "eres2net": eres2net}


def onnx_runner(torch, net, path: Path, threads: int):
    """Exports `net` (any number of frames) to `path`; runs it in onnxruntime on `threads` threads."""
    import onnxruntime as ort

    torch.onnx.export(net, (torch.zeros(1, 200, 80),), str(path), input_names=["feats"], output_names=["embedding"],
                      dynamic_axes={"feats": {1: "frames"}}, dynamo=False, opset_version=17)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return lambda feats: session.run(None, {"feats": feats[None]})[0]


def normalised(e) -> np.ndarray:
    e = np.asarray(e, dtype=np.float64).reshape(-1)
    return e / np.linalg.norm(e)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=tuple(NETWORKS), default="ecapa")
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

    import gguf
    import torch

    from parakeet_py import SpeakerEncoder

    torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    net, convert = NETWORKS[args.arch](torch, work)
    onnx, model = work / f"{args.arch}.onnx", work / f"{args.arch}.gguf"
    run_onnx = onnx_runner(torch, net, onnx, args.threads)
    convert(onnx, model)

    pcm = (0.1 * np.random.default_rng(0).standard_normal(int(16000 * args.seconds))).astype(np.float32)
    frames = 1 + (len(pcm) - 400) // 160
    feats = np.random.default_rng(1).standard_normal((frames, 80)).astype(np.float32)

    def torch_net(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net(torch.from_numpy(x)[None]).numpy()

    ref = {t.name: np.array(t.data) for t in gguf.GGUFReader(str(ROOT / "tests/data/speaker/ref_speech.gguf")).tensors}
    clip, clip_feats = ref["pcm"].astype(np.float32), ref["fbank"].astype(np.float32).reshape(-1, 80)
    theirs = {"PyTorch": torch_net, "onnxruntime": run_onnx}
    with SpeakerEncoder(model) as enc:
        runs = {"libparakeet": lambda: enc.embed(pcm, sample_rate=16000),
                **{name: (lambda f=f: f(feats)) for name, f in theirs.items()}}
        # Interleaved rounds (drifting load hits every engine alike), with a pause before each
        # call: the thread pools of PyTorch and onnxruntime spin for a while after a call, which
        # would slow whatever ran next. The median round counts.
        times = {name: [] for name in runs}
        for run in runs.values():  # warm-up
            run()
        for _ in range(args.rounds):
            for name, run in runs.items():
                time.sleep(0.3)
                t = clock()
                run()
                times[name].append(clock() - t)
        ours = normalised(enc.embed(clip, sample_rate=16000))
    cosine = {name: float(normalised(f(clip_feats)) @ ours) for name, f in theirs.items()}
    per_second = {name: 1000 * float(np.median(t)) / args.seconds for name, t in times.items()}
    mine = per_second.pop("libparakeet")
    print(f"{args.arch}, {args.seconds:g} s of audio, {args.threads} threads, {args.clock} time: libparakeet "
          f"{mine:.1f} ms per audio second"
          + "".join(f"; {name} {ms:.1f} ms ({ms / mine:.2f}x, cosine on the fixture clip {cosine[name]:.6f})"
                    for name, ms in per_second.items()))


if __name__ == "__main__":
    main()
