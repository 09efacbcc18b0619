#!/usr/bin/env python3
"""Speaker-embedding cost per second of audio: libparakeet against SpeechBrain's ECAPA_TDNN in
PyTorch (torchaudio's Kaldi fbank + mean removal + the network), the published layout
(channels [1024] * 4 + [3072], attention 128, 192-d) with seeded random weights, on the same
noise clip, interleaved (A B A B), both on --threads threads. Run with the speaker fixtures'
reference venv (docs/fixtures.md, "Speaker encoder"):

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_speaker.py \\
        --seconds 10 --rounds 3 --threads 2

The model is converted once (through our converter) into --work. Prints the times, the ratio and
the cosine of the two embeddings.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / ".cache" / "bench" / "speaker"))
    args = ap.parse_args()
    os.environ["PARAKEET_THREADS"] = str(args.threads)  # read when the library loads the model

    import torch
    import torchaudio.compliance.kaldi as kaldi
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    from parakeet_py import SpeakerEncoder
    from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    net = ECAPA_TDNN(80, channels=[1024] * 4 + [3072], attention_channels=128, lin_neurons=192).eval()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    (work / "hyperparams.yaml").write_text("embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN\n"
                                           "  input_size: 80\n  channels: [1024, 1024, 1024, 1024, 3072]\n")
    torch.save(net.state_dict(), work / "embedding_model.ckpt")
    convert_speechbrain_ecapa(work / "embedding_model.ckpt", work / "ecapa.gguf", name="bench")
    pcm = (0.1 * np.random.default_rng(0).standard_normal(int(16000 * args.seconds))).astype(np.float32)

    def torch_embed() -> np.ndarray:
        feats = kaldi.fbank(torch.from_numpy(pcm)[None], num_mel_bins=80, dither=0.0)
        with torch.no_grad():
            e = net((feats - feats.mean(0, keepdim=True))[None]).reshape(-1)
        return (e / e.norm()).numpy()

    with SpeakerEncoder(work / "ecapa.gguf") as enc:
        ours, theirs = enc.embed(pcm, sample_rate=16000), torch_embed()  # warm-up
        t_ours = t_theirs = 0.0
        for _ in range(args.rounds):
            t = time.perf_counter()
            ours = enc.embed(pcm, sample_rate=16000)
            t_ours += time.perf_counter() - t
            t = time.perf_counter()
            theirs = torch_embed()
            t_theirs += time.perf_counter() - t
    t_ours /= args.rounds
    t_theirs /= args.rounds
    print(f"{args.seconds:g} s of audio, {args.threads} threads: libparakeet {t_ours:.3f} s "
          f"({1000 * t_ours / args.seconds:.1f} ms per audio second), PyTorch {t_theirs:.3f} s "
          f"({1000 * t_theirs / args.seconds:.1f} ms): {t_theirs / t_ours:.2f}x; cosine {float(ours @ theirs):.6f}")


if __name__ == "__main__":
    main()
