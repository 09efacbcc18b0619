#!/usr/bin/env python3
"""Build the NeMo reference fixtures for the parakeet engine tests.

Small random-weight NeMo models (NeMo's own classes and configs, fixed seeds) are saved as
tests/data/nemo/<model>/model.nemo, and NeMo's outputs on every test clip are stored as
tests/data/nemo/<model>/ref_<clip>.gguf; on the long clips (assembled from the committed ones)
NeMo's decoded results under full and local attention go to longref_<clip>_<setting>.gguf;
NeMo's chunked streaming of the committed models goes to streamref_<clip>_<L>-<C>-<R>.gguf.
docs/fixtures.md describes every file and key.

Runs with the optional NeMo venv, never in tests/CI:
    .nemo/bin/python tools/make_nemo_fixtures.py            # everything
    .nemo/bin/python tools/make_nemo_fixtures.py --models ctc --clips speech
    .nemo/bin/python tools/make_nemo_fixtures.py --clips long_3min --attention full,local64x32
    .nemo/bin/python tools/make_nemo_fixtures.py --stream         # streaming refs only
Rerunning reproduces the committed files byte for byte (same NeMo/torch/espeak versions).
"""
import argparse
import difflib
import json
import os
import sys
import tempfile
import time
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nemo_fixtures import attention, audio, build, capture, configs, gguf_out, streaming, verify  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = 1234
TOKENIZER_VOCAB = 64
# Per-layer tensors are stored for these clips only (they are the bulk of a file).
FULL_CLIPS = ("speech",)
# The 30 s mel (3001 x n_mels floats) is stored for this model only; the other 80-mel models
# have byte-identical preprocessors, so one copy is enough.
LONG_MEL_MODELS = ("hybrid_tdt_ctc",)
# The encoder output on a long clip (2250 x 64 floats, 0.6 MB per setting) is stored for this
# model only: enough to tell an encoder difference from a decoder one.
LONG_ENC_MODELS = ("hybrid_tdt_ctc",)


def _versions() -> dict:
    import nemo
    import torch
    return {"nemo": nemo.__version__, "torch": torch.__version__}


def _write_model_info(w, name: str, arch, model, res, info: dict, n_samples: int, clip_strings: dict):
    blank = model.tokenizer.vocab_size  # blank is the last output, after the V tokens
    frame_sec = float(model.cfg.preprocessor.window_stride) * model.encoder.subsampling_factor
    w.string("ref.model", name)
    w.string("ref.arch", arch.kind)
    for key, value in clip_strings.items():
        w.string(key, value)
    w.string("ref.nemo_version", info["nemo"])
    w.string("ref.torch_version", info["torch"])
    w.i32("ref.sample_rate", 16000)
    w.i32("ref.n_samples", n_samples)
    w.i32("ref.n_mels", arch.n_mels)
    w.i32("ref.d_model", arch.d_model)
    w.i32("ref.n_layers", arch.n_layers)
    w.i32("ref.vocab_size", blank)
    w.i32("ref.blank_id", blank)
    w.f32("ref.frame_sec", frame_sec)
    w.i32("ref.max_symbols", configs.MAX_SYMBOLS)
    if arch.is_tdt:
        w.i32s("ref.tdt_durations", arch.durations)
    w.i32("ref.mel_len", res.mel_len)
    w.i32("ref.enc_len", res.enc_len)


def _write_decoded(w, res):
    for head, h in res.heads.items():
        p = f"ref.{head}."
        w.i32(p + "n_tokens", len(h.ids))
        w.i32s(p + "ids", h.ids)
        w.i32s(p + "frames", h.frames)
        if head == "tdt":
            w.i32s(p + "durations", h.durations)
        w.string(p + "text", h.text)
        w.f32s(p + "token_conf", h.token_conf)
        w.i32s(p + "token_start", h.token_start)
        w.i32s(p + "token_end", h.token_end)
        w.strings(p + "words", h.words)
        w.i32s(p + "word_start_frame", h.word_start_frame)
        w.i32s(p + "word_end_frame", h.word_end_frame)
        w.f32s(p + "word_start", h.word_start)
        w.f32s(p + "word_end", h.word_end)
        w.strings(p + "conf_words", h.conf_words)
        w.f32s(p + "word_conf", h.word_conf)
    for head, h in res.batch.items():
        p = f"ref.{head}.batch."
        w.i32s(p + "ids", h.ids)
        w.i32s(p + "frames", h.frames)
        if head == "tdt":
            w.i32s(p + "durations", h.durations)
        w.string(p + "text", h.text)
        w.f32s(p + "token_conf", h.token_conf)


def write_reference(path: str, name: str, arch, model, clip: str, wav: str, samples, res, info: dict):
    w = gguf_out.RefWriter(path)
    _write_model_info(w, name, arch, model, res, info, samples.shape[0],
                      {"ref.clip": clip, "ref.clip_file": wav})
    full = clip in FULL_CLIPS
    has_mel = clip != "long_30s" or name in LONG_MEL_MODELS
    w.boolean("ref.has_layers", full)
    w.boolean("ref.has_mel", has_mel)
    if has_mel:
        w.tensor("mel", res.mel)
    if full:
        w.tensor("pre_encode", res.pre_encode)
        for i, layer in enumerate(res.layers):
            w.tensor(f"layer.{i}", layer)
    w.tensor("enc", res.enc)
    if res.ctc_logprobs is not None:
        w.tensor("ctc_logprobs", res.ctc_logprobs)
    if res.pred0 is not None:
        w.tensor("pred0", res.pred0)
        w.tensor("joint0", res.joint0)
    if audio.CLIPS[clip][1] != 16000 or audio.CLIPS[clip][2] != 1:
        w.tensor("audio", samples)  # NeMo's downmixed + resampled input
    _write_decoded(w, res)
    w.close()


def write_long_reference(path: str, name: str, arch, model, clip: str, setting: str, samples, res, info: dict,
                         stats: dict):
    """Decoded results on a long clip under one attention setting; tokens and words, and the
    encoder output for LONG_ENC_MODELS only (the other tensors would be megabytes)."""
    w = gguf_out.RefWriter(path)
    _write_model_info(w, name, arch, model, res, info, samples.shape[0], {"ref.clip": clip})
    segments, _ = audio.LONG_CLIPS[clip]
    w.strings("ref.clip_recipe", [f for f, _, _ in segments])
    w.i32s("ref.clip_first", [first for _, first, _ in segments])
    w.f32s("ref.clip_gain", [gain for _, _, gain in segments])
    w.string("ref.clip_checksum", audio.clip_checksum(samples))
    context = attention.SETTINGS[setting]
    w.string("ref.attention", "full" if context is None else "local")
    w.i32s("ref.att_context", [-1, -1] if context is None else context)
    has_enc = name in LONG_ENC_MODELS
    w.boolean("ref.has_enc", has_enc)
    if has_enc:
        w.tensor("enc", res.enc)
    _write_decoded(w, res)
    for head in res.heads:
        # verify.TIE_MARGIN: from this token on, another float32 implementation may differ
        w.i32(f"ref.{head}.first_tie_token", stats[head]["first_tie_token"])
    w.close()


def write_stream_reference(path: str, name: str, arch, model, clip: str, wav: str, samples, res, info: dict):
    """NeMo's chunked streaming result of every head on one clip under one setting (metadata only)."""
    w = gguf_out.RefWriter(path)
    n = samples.shape[0]
    lengths = SimpleNamespace(mel_len=n // 160, enc_len=sum(c.decode_frames for c in res.chunks))
    _write_model_info(w, name, arch, model, lengths, info, n, {"ref.clip": clip, "ref.clip_file": wav})
    w.string("ref.stream.setting", res.setting)
    w.f32s("ref.stream.secs", streaming.SETTINGS[res.setting])
    w.i32s("ref.stream.frames", res.contexts_frames)
    w.i32s("ref.stream.samples", res.contexts_samples)
    w.i32("ref.stream.frame_samples", res.frame_samples)
    w.boolean("ref.stream.scalar_context_lags", res.scalar_context_lags)
    for key in ("window_start", "window_end", "left_frames", "decode_frames", "enc_len"):
        w.i32s("ref.chunk." + key, [getattr(c, key) for c in res.chunks])
    _write_decoded(w, SimpleNamespace(heads=res.heads, batch={}))
    for head in res.heads:
        w.i32s(f"ref.{head}.chunk_tokens", res.chunk_tokens[head])
        w.i32(f"ref.{head}.offline_changed", res.offline_changed[head])
        if head in res.script_text:
            w.string(f"ref.{head}.script_text", res.script_text[head])
    w.close()


def _offline_results(path: str) -> dict:
    """{head: (ids, frames)} of NeMo's offline greedy_batch (transducers) / greedy (CTC) result
    in a committed ref_<clip>.gguf."""
    import gguf
    fields = gguf.GGUFReader(path).fields
    out = {}
    for head in ("tdt", "rnnt", "ctc"):
        p = f"ref.{head}." + ("" if head == "ctc" else "batch.")
        if p + "ids" in fields:
            out[head] = ([int(x) for x in fields[p + "ids"].contents()], [int(x) for x in fields[p + "frames"].contents()])
    return out


def make_stream_references(name: str, arch, out_dir: str, audio_dir: str, clips, settings, info: dict):
    """NeMo's chunked streaming (tools/nemo_fixtures/streaming.py) of the committed model.nemo on
    each clip and setting."""
    model = build.restore_model(os.path.join(out_dir, "model.nemo"))
    for clip in clips:
        wav = audio.CLIPS[clip][0]
        samples = capture.load_audio(os.path.join(audio_dir, wav))
        offline = _offline_results(os.path.join(out_dir, f"ref_{clip}.gguf"))
        for setting in settings:
            t0 = time.time()
            res = streaming.stream(model, arch, samples, setting, offline)
            path = os.path.join(out_dir, f"streamref_{clip}_{setting}.gguf")
            write_stream_reference(path, name, arch, model, clip, wav, samples, res, info)
            stats = {"chunks": len(res.chunks), "bytes": os.path.getsize(path), "seconds": round(time.time() - t0, 1)}
            for head, h in res.heads.items():
                stats[head] = {"tokens": len(h.ids), "offline_changed": res.offline_changed[head],
                               "text": h.text[:40]}
            print(f"{name}/{clip}/{setting}: {json.dumps(stats)}", flush=True)


def verify_capture(model, arch, res) -> dict:
    """verify.py's first-principles checks on one capture; returns the coverage statistics."""
    sp = model.tokenizer.tokenizer
    punct = getattr(model.tokenizer, "supported_punctuation", set())
    frame_sec = float(model.cfg.preprocessor.window_stride) * model.encoder.subsampling_factor
    stats = {"mel_len": res.mel_len, "enc_len": res.enc_len}
    for head in res.heads:
        verify.check_words(res, head, frame_sec)
        if head == "ctc":
            tie = verify.check_ctc(res, model.decoding.blank_id if arch.kind == "ctc"
                                   else model.ctc_decoding.blank_id, sp, punct)
            stats[head] = {"tokens": len(res.heads[head].ids), "first_tie_token": tie}
        else:
            stats[head] = verify.check_transducer(model, arch, res, head)
            assert res.heads[head].text == verify.detokenize(sp, res.heads[head].ids, punct)
            if head in res.batch:
                b = res.batch[head]
                stats[head]["batch_tokens"] = len(b.ids)
                stats[head]["batch_equal"] = b.ids == res.heads[head].ids
        stats.setdefault("text", {})[head] = res.heads[head].text[:60]
    return stats


def compare_decoded(a, b) -> dict:
    """How two captures' greedy results differ, per head: token counts, the first token index
    where (id, frame) differ (-1: none) and how many tokens of the longer result are outside
    the longest matching blocks (difflib), i.e. roughly how many tokens changed."""
    out = {}
    for head, ha in a.heads.items():
        hb = b.heads[head]
        x, y = list(zip(ha.ids, ha.frames)), list(zip(hb.ids, hb.frames))
        first = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), -1 if len(x) == len(y) else min(len(x), len(y)))
        matched = sum(m.size for m in difflib.SequenceMatcher(None, x, y, autojunk=False).get_matching_blocks())
        out[head] = {"tokens": [len(x), len(y)], "first_diff": first, "changed": max(len(x), len(y)) - matched}
    return out


def make_model(name: str, arch, tok_dir: str, out_dir: str, seed: int, calib_audio):
    path = os.path.join(out_dir, "model.nemo")
    model = build.build_model(arch, tok_dir, seed, calib_audio=calib_audio)
    build.save_model(model, path, seed)
    restored = build.restore_model(path)
    a, b = model.state_dict(), restored.state_dict()
    assert list(a) == list(b) and all(a[k].equal(b[k]) for k in a), "restore_from changed the weights"
    return restored


def make_long_references(name: str, arch, out_dir: str, audio_dir: str, clip: str, settings, info: dict):
    """NeMo on a long clip under each attention setting, each on a fresh restore of model.nemo
    (change_attention_model replaces modules in place). Prints how local differs from full."""
    samples = audio.assemble_long_clip(audio_dir, clip)
    by_setting = {}
    for setting in settings:
        t0 = time.time()
        model = attention.apply(build.restore_model(os.path.join(out_dir, "model.nemo")), setting)
        res = capture.capture(model, arch, samples, long_clip=True)
        stats = verify_capture(model, arch, res)
        if setting != "full" and "full" in by_setting:
            full = by_setting["full"]
            stats["vs_full"] = compare_decoded(full, res)
            stats["vs_full"]["enc_max_abs_diff"] = float(abs(full.enc - res.enc).max())
        by_setting[setting] = res
        path = os.path.join(out_dir, f"longref_{clip[len('long_'):]}_{setting}.gguf")
        write_long_reference(path, name, arch, model, clip, setting, samples, res, info, stats)
        stats["bytes"] = os.path.getsize(path)
        stats["seconds"] = round(time.time() - t0, 1)
        print(f"{name}/{clip}/{setting}: {json.dumps(stats)}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(configs.TINY), help="comma list of " + ",".join(configs.TINY))
    all_clips = list(audio.CLIPS) + list(audio.LONG_CLIPS)
    ap.add_argument("--clips", default=",".join(all_clips), help="comma list of " + ",".join(all_clips))
    ap.add_argument("--attention", default=",".join(attention.SETTINGS),
                    help="long clips only: comma list of " + ",".join(attention.SETTINGS))
    ap.add_argument("--stream", action="store_true",
                    help="only the streaming references, from the committed model.nemo files (--clips default: "
                         + ",".join(streaming.CLIPS) + ")")
    ap.add_argument("--stream-settings", default=",".join(streaming.SETTINGS),
                    help="with --stream: comma list of " + ",".join(streaming.SETTINGS))
    ap.add_argument("--data", default=os.path.join(REPO, "tests", "data"))
    ap.add_argument("--remake-audio", action="store_true",
                    help="resynthesise the clips (espeak-ng/sox output may differ between versions)")
    args = ap.parse_args()

    audio_dir = os.path.join(args.data, "audio")
    if args.stream:
        info = _versions()
        clips = streaming.CLIPS if args.clips == ap.get_default("clips") else args.clips.split(",")
        for name in args.models.split(","):
            make_stream_references(name, configs.TINY[name], os.path.join(args.data, "nemo", name), audio_dir,
                                   clips, args.stream_settings.split(","), info)
        print(json.dumps(info))
        return 0
    if args.remake_audio or not all(os.path.exists(os.path.join(audio_dir, f)) for f, _, _ in audio.CLIPS.values()):
        audio.make_clips(audio_dir)
    info = _versions()
    clips = args.clips.split(",")
    # the output layers are calibrated on the speech clip (build.calibrate_heads)
    calib_audio = capture.load_audio(os.path.join(audio_dir, audio.CLIPS["speech"][0]))
    with tempfile.TemporaryDirectory() as tmp:
        tok_dir = build.train_tokenizer(os.path.join(tmp, "tokenizer"), TOKENIZER_VOCAB, SEED, 5000)
        for name in args.models.split(","):
            arch = configs.TINY[name]
            out_dir = os.path.join(args.data, "nemo", name)
            model = make_model(name, arch, tok_dir, out_dir, SEED + 100 * list(configs.TINY).index(name), calib_audio)
            for clip in clips:
                if clip in audio.LONG_CLIPS:
                    make_long_references(name, arch, out_dir, audio_dir, clip, args.attention.split(","), info)
                    continue
                t0 = time.time()
                wav = audio.CLIPS[clip][0]
                samples = capture.load_audio(os.path.join(audio_dir, wav))
                res = capture.capture(model, arch, samples)
                stats = verify_capture(model, arch, res)
                path = os.path.join(out_dir, f"ref_{clip}.gguf")
                write_reference(path, name, arch, model, clip, wav, samples, res, info)
                stats["bytes"] = os.path.getsize(path)
                stats["seconds"] = round(time.time() - t0, 1)
                print(f"{name}/{clip}: {json.dumps(stats)}", flush=True)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
