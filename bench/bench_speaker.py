#!/usr/bin/env python3
"""Speaker-embedding cost per second of audio: libparakeet against the same network in PyTorch
and in onnxruntime (an ONNX export of the PyTorch module), interleaved rounds, medians and ratios
(bench/engine_race.py), every engine on --threads threads. The networks, in their published
layouts with seeded random weights:

  ecapa     SpeechBrain's ECAPA_TDNN (channels [1024] * 4 + [3072], attention 128, 192-d); ours
            f32 and q8_0
  campplus  ModelScope's CAMPPlus (3D-Speaker's CAM++, 192-d, as campplus_cn_common); ours f32
            and q8_0
  resnet34  WeSpeaker's ResNet34 (tools/fixtures/wespeaker_resnet_torch.py: 32 base channels,
            blocks [3, 4, 6, 3], 256-d, voxceleb_resnet34_LM's layout); ours f32 and q8_0
  eres2net  3D-Speaker's ERes2Net (tools/fixtures/eres2net_torch.py: 32 base channels, 512-d, the
            base model's layout), converted from its ONNX export; ours f32 and q8_0

onnxruntime runs the export as it is (f32) and quantised by its quantize_dynamic (int8 weights,
activations quantised per call: how published int8 ONNX models are made), the peer of our q8_0.

libparakeet embeds a noise clip of --seconds (its time includes its fbank); PyTorch and
onnxruntime run only the network, on features of the clip's length, so the ratios are a lower
bound. The embeddings are compared on the speaker fixtures' speech clip, whose torchaudio fbank
is committed (tests/data/speaker/ref_speech.gguf). ecapa and campplus need the speaker fixtures'
reference venv (docs/fixtures.md, "Speaker encoder") with onnxruntime and onnx added; resnet34
and eres2net run in the project's .venv:

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_speaker.py \\
        --arch ecapa --seconds 10 --rounds 7 --threads 2

The models are converted once (through our converter) into --work. Prints the medians (wall and
CPU time), the ratios, the cosines of the references' embeddings to ours, and the network's work
per call (network_gflop: its convolutions and products, as PyTorch counts them).
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools" / "fixtures"))
sys.path.insert(0, str(ROOT / "bench"))
from engine_race import onnx_session, race, report  # noqa: E402


# Each network: (torch, work) -> (the module, our types, convert(onnx_path, gguf_path, out_type)
# through our converter).
def ecapa(torch, work: Path):
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa

    torch.manual_seed(0)
    net = ECAPA_TDNN(80, channels=[1024] * 4 + [3072], attention_channels=128, lin_neurons=192).eval()
    (work / "hyperparams.yaml").write_text("embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN\n"
                                           "  input_size: 80\n  channels: [1024, 1024, 1024, 1024, 3072]\n")
    torch.save(net.state_dict(), work / "embedding_model.ckpt")
    return net, ("f32", "q8_0"), lambda onnx, gguf, t: convert_speechbrain_ecapa(work / "embedding_model.ckpt", gguf,
                                                                                t, name="bench")


def campplus(torch, work: Path):
    from modelscope.models.audio.sv.DTDNN import CAMPPlus

    from parakeet_py.convert.campplus_checkpoint import convert_campplus

    torch.manual_seed(0)
    net = CAMPPlus(feat_dim=80, embedding_size=192).eval()
    torch.save(net.state_dict(), work / "campplus.bin")
    return net, ("f32", "q8_0"), lambda onnx, gguf, t: convert_campplus(work / "campplus.bin", gguf, t,
                                                                        name="bench")


def resnet34(torch, work: Path):
    from wespeaker_resnet_torch import ResNet, randomised

    from parakeet_py.convert.wespeaker_resnet import convert_wespeaker_resnet

    net = randomised(ResNet(), seed=0)
    torch.save(net.state_dict(), work / "avg_model.pt")
    return net, ("f32", "q8_0"), lambda onnx, gguf, t: convert_wespeaker_resnet(work / "avg_model.pt", gguf, t,
                                                                               name="bench")


def eres2net(torch, work: Path):
    from eres2net_torch import ERes2Net
    from wespeaker_resnet_torch import randomised

    from parakeet_py.convert.eres2net_onnx import convert_eres2net_onnx

    return (randomised(ERes2Net(), seed=0), ("f32", "q8_0"),
            lambda onnx, gguf, t: convert_eres2net_onnx(onnx, gguf, t, name="bench"))


NETWORKS = {"ecapa": ecapa, "campplus": campplus, "resnet34": resnet34, "eres2net": eres2net}


def network_gflop(torch, net, x) -> float:
    """The network's work on input `x` in GFLOP, 2 per multiply-add of its convolutions and matrix
    products (PyTorch's FlopCounterMode): divided by a CPU time, the rate to set against the core's
    peak (bench/native/bench_peak)."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        net(x)
    return counter.get_total_flops() / 1e9


def normalised(e) -> np.ndarray:
    e = np.asarray(e, dtype=np.float64).reshape(-1)
    return e / np.linalg.norm(e)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=tuple(NETWORKS), default="ecapa")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / ".cache" / "bench" / "speaker"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ["PARAKEET_THREADS"] = str(args.threads)  # read when the library loads the model

    import gguf
    import torch

    from parakeet_py import SpeakerEncoder

    torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    net, types, convert = NETWORKS[args.arch](torch, work)
    pcm = (0.1 * np.random.default_rng(0).standard_normal(int(16000 * args.seconds))).astype(np.float32)
    frames = 1 + (len(pcm) - 400) // 160
    feats = np.random.default_rng(1).standard_normal((frames, 80)).astype(np.float32)
    frames_axis = {"feats": {1: "frames"}}  # the cosines run on the fixture clip, of another length
    example = (torch.from_numpy(feats)[None],)
    run_onnx = {precision: onnx_session(net, example, ["feats"], args.threads, frames_axis, int8=precision == "int8")
                for precision in ("f32", "int8")}
    onnx = work / f"{args.arch}.onnx"
    if args.arch == "eres2net":  # its converter reads the export
        torch.onnx.export(net, example, str(onnx), input_names=["feats"], dynamo=False,
                          dynamic_axes=frames_axis, opset_version=17)
    paths = {t: work / f"{args.arch}-{t}.gguf" for t in types}
    for t, path in paths.items():
        convert(onnx, path, t)

    def torch_net(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net(torch.from_numpy(x)[None]).numpy()

    ref = {t.name: np.array(t.data) for t in gguf.GGUFReader(str(ROOT / "tests/data/speaker/ref_speech.gguf")).tensors}
    clip, clip_feats = ref["pcm"].astype(np.float32), ref["fbank"].astype(np.float32).reshape(-1, 80)
    theirs = {"pytorch": torch_net, **{f"onnxruntime_{precision}": (lambda x, run=run: run(x[None]))
                                       for precision, run in run_onnx.items()}}
    encoders = {t: SpeakerEncoder(path) for t, path in paths.items()}
    try:
        extra = {"arch": args.arch, "threads": args.threads,
                 "network_gflop": round(network_gflop(torch, net, example[0]), 3)}
        for t, enc in encoders.items():
            ours = normalised(enc.embed(clip, sample_rate=16000))
            for name, f in theirs.items():
                extra[f"cosine_{t}_{name}"] = round(float(normalised(f(clip_feats)) @ ours), 6)
        engines = {f"ours_{t}": (lambda enc=enc: enc.embed(pcm, sample_rate=16000)) for t, enc in encoders.items()}
        times, others = race(dict(engines, **{name: (lambda f=f: f(feats)) for name, f in theirs.items()}),
                             args.rounds)
    finally:
        for enc in encoders.values():
            enc.close()
    report(times, others, args.seconds, list(engines), list(theirs), extra, args.json)


if __name__ == "__main__":
    main()
