"""NeMo's transducer beam search (strategy `beam`) on the committed fixture models:
tests/data/nemo/<model>/beamref_<clip>.gguf, metadata only (docs/fixtures.md, "Beam search").

For every transducer head (tdt, hybrid_tdt_ctc: TDT; rnnt, hybrid_rnnt_ctc: RNN-T), beam size
in BEAM_SIZES and score_norm on and off, NeMo 3.0.0's own decoding object
(BeamTDTInfer / BeamRNNTInfer, search_type "default", return_best_hypothesis False) runs on
NeMo's encoder output for the clip; the file holds every hypothesis NeMo returns (its N-best
list, best first under score_norm) with labels, timestamps, scores and text, and for
score_norm off the order NeMo sorts the same hypotheses in.

The encoder output is NeMo's `enc` of the committed ref_<clip>.gguf (checked bit for bit), so
a test can feed that tensor to the engine's decoder.

    .nemo/bin/python tools/nemo_fixtures/beam.py [--models tdt,rnnt] [--clips speech]
"""
import argparse
import copy
import json
import os
import sys
import time

import numpy as np
import torch
from omegaconf import OmegaConf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nemo_fixtures import audio, build, capture, configs, gguf_out  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ("tdt", "hybrid_tdt_ctc", "rnnt", "hybrid_rnnt_ctc")
CLIPS = ("short_1s", "stereo_44k", "speech")
BEAM_SIZES = (1, 2, 4)


def beam_decoding(model, arch, beam_size: int, score_norm: bool):
    """NeMo's decoding object for strategy `beam` (what change_decoding_strategy builds)."""
    cfg = OmegaConf.to_container(copy.deepcopy(model.cfg.decoding), resolve=True)
    cfg["strategy"] = "beam"
    cfg.pop("confidence_cfg", None)
    cfg["beam"] = {"beam_size": beam_size, "score_norm": score_norm, "return_best_hypothesis": False}
    if arch.is_tdt:
        cfg["model_type"] = "tdt"
        cfg["durations"] = list(arch.durations)
    cfg = OmegaConf.create(cfg)
    if arch.has_ctc:
        model.change_decoding_strategy(cfg, decoder_type="rnnt", verbose=False)
    else:
        model.change_decoding_strategy(cfg, verbose=False)
    return model.decoding


def run_beam(model, arch, res, beam_size: int, score_norm: bool) -> list:
    """NeMo's N-best list: [{ids, timestamps, score, text}], in NeMo's order."""
    decoding = beam_decoding(model, arch, beam_size, score_norm)
    with torch.no_grad():
        (nbest,) = decoding.decoding(encoder_output=res.enc_tensor, encoded_lengths=res.enc_len_tensor)
    hyps = nbest[0].n_best_hypotheses
    out = []
    for h in hyps:
        ids = [int(x) for x in (h.y_sequence.tolist() if torch.is_tensor(h.y_sequence) else h.y_sequence)]
        ts = [int(x) for x in h.timestamp]
        assert len(ts) == len(ids), "timestamps and labels differ in length"
        out.append({"ids": ids, "timestamps": ts, "score": float(h.score)})
    texts = decoding.decode_hypothesis(copy.deepcopy(hyps))
    for o, h in zip(out, texts):
        o["text"] = h.text
    return out


def _key(h):
    return (tuple(h["ids"]), tuple(h["timestamps"]), h["score"])


def check_enc(ref_path: str, res) -> None:
    import gguf
    committed = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(ref_path).tensors}["enc"]
    assert np.array_equal(committed.reshape(res.enc.shape), res.enc), f"{ref_path}: enc differs from this run"


def write_beam_reference(path: str, name: str, arch, clip: str, res, blank_id: int, results: dict, info: dict):
    w = gguf_out.RefWriter(path)
    w.string("ref.model", name)
    w.string("ref.arch", arch.kind)
    w.string("ref.clip", clip)
    w.string("ref.clip_file", audio.CLIPS[clip][0])
    w.string("ref.enc_source", f"ref_{clip}.gguf")
    w.string("ref.nemo_version", info["nemo"])
    w.string("ref.torch_version", info["torch"])
    w.string("ref.head", "tdt" if arch.is_tdt else "rnnt")
    w.i32("ref.enc_len", res.enc_len)
    w.i32("ref.blank_id", blank_id)
    if arch.is_tdt:
        w.i32s("ref.tdt_durations", arch.durations)
    w.i32s("ref.beam_sizes", sorted(results))
    for b, (norm, raw_order) in sorted(results.items()):
        p = f"ref.beam{b}."
        w.i32("ref.beam%d.n_hyps" % b, len(norm))
        w.i32s(p + "raw_order", raw_order)
        for i, h in enumerate(norm):
            q = f"{p}hyp{i}."
            w.i32s(q + "ids", h["ids"])
            w.i32s(q + "timestamps", h["timestamps"])
            w.w.add_float64(q + "score", h["score"])
            w.string(q + "text", h["text"])
    w.close()


def make_beam_references(name: str, data_dir: str, clips, info: dict):
    arch = configs.TINY[name]
    out_dir = os.path.join(data_dir, "nemo", name)
    model = build.restore_model(os.path.join(out_dir, "model.nemo"))
    for clip in clips:
        t0 = time.time()
        samples = capture.load_audio(os.path.join(data_dir, "audio", audio.CLIPS[clip][0]))
        res = capture.run_manual(model, arch, samples)
        check_enc(os.path.join(out_dir, f"ref_{clip}.gguf"), res)
        results, stats = {}, {}
        for b in BEAM_SIZES:
            norm = run_beam(model, arch, res, b, score_norm=True)
            raw = run_beam(model, arch, res, b, score_norm=False)
            # the search does not depend on score_norm, only the final sort does
            index = {_key(h): i for i, h in enumerate(norm)}
            assert sorted(index) == sorted(_key(h) for h in raw), f"{name}/{clip}/beam {b}: score_norm changed the search"
            results[b] = (norm, [index[_key(h)] for h in raw])
            stats[b] = {"hyps": len(norm), "best_tokens": len(norm[0]["ids"]), "best": norm[0]["text"][:30]}
        path = os.path.join(out_dir, f"beamref_{clip}.gguf")
        write_beam_reference(path, name, arch, clip, res, int(model.decoder.blank_idx), results, info)
        print(f"{name}/{clip}: {json.dumps(stats)} {os.path.getsize(path)} bytes, {time.time() - t0:.1f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--clips", default=",".join(CLIPS))
    ap.add_argument("--data", default=os.path.join(REPO, "tests", "data"))
    args = ap.parse_args()
    import nemo
    info = {"nemo": nemo.__version__, "torch": torch.__version__}
    for name in args.models.split(","):
        make_beam_references(name, args.data, args.clips.split(","), info)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
