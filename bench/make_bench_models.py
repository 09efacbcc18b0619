#!/usr/bin/env python3
"""Build the random-weight benchmark models and clips (never committed; .cache/ is gitignored).

Runs with the NeMo venv:
    .nemo/bin/python bench/make_bench_models.py                 # clips, 110m and 600m, GGUF, ONNX
    .nemo/bin/python bench/make_bench_models.py --models 110m   # one model
Existing outputs are kept; --force rebuilds them.

What it makes under .cache/bench/ (see bench/README.md):
  clips/clip_{7s,10s,23s,30s}.wav    espeak-ng speech (sox to 16 kHz int16), zero-padded/trimmed
  tokenizer/                          SentencePiece BPE, vocab 1024, trained on generated text
  <model>/model.nemo                  NeMo EncDecHybridRNNTCTCBPEModel (TDT, durations 0..4)
  <model>/model-<type>.gguf          this repository's converter, --types (default: every
                                      type it writes); f32 from the .nemo, the others
                                      requantized from that f32 file
  <model>/frontend.npz                NeMo's mel filterbank and window (for the numpy mel in ORT runs)
  <model>/summary.json                parameters, joint bias, tokens/s and durations on the clips
  <model>/onnx/{encoder,decoder_joint}-model.onnx       NeMo's model.export() (external data for 600m)
  <model>/onnx/{encoder,decoder_joint}-model.int8.onnx  onnxruntime quantize_dynamic of those
  <model>/onnx/{vocab.txt,config.json}                  what onnx-asr reads (nemo-conformer-tdt)

The models are NeMo's own classes and NeMo's default initialisation. Random weights emit a
token at almost every step, which would make the decoder dominate; as with a trained model
the encoder should dominate, so the bias of the joint's output layer (joint.joint_net.2.bias)
is changed: the duration logits are centred (so the predicted durations vary), the duration-0
logit is lowered (no chains of tokens on one frame) and the blank
logit is raised until greedy TDT emits about --tokens-per-second tokens on the 10 s clip.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import wave

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, ".cache", "bench")
SEED = 20261130
SR = 16000
VOCAB = 1024
DURATIONS = [0, 1, 2, 3, 4]

# name -> sizes (parakeet-tdt_ctc-110m and parakeet-tdt-0.6b shaped).
MODELS = {
    "110m": dict(n_mels=80, d_model=512, n_layers=17, n_heads=8, ff_expansion=4, sub_channels=256,
                 pred_hidden=640, joint_hidden=640),
    "600m": dict(n_mels=128, d_model=1024, n_layers=24, n_heads=8, ff_expansion=4, sub_channels=256,
                 pred_hidden=640, joint_hidden=640),
}

# ---------------------------------------------------------------------------------------- clips

ESPEAK = ["espeak-ng", "-v", "en-us", "-s", "160"]
TEXT_10S = ("The quick brown fox jumps over the lazy dog. Speech recognition turns spoken words "
            "into written text. This clip tests a transducer model.")
SENTENCES = [
    "Every morning the river carries small boats past the quiet city.",
    "A good engine reads the signal, finds the words and writes them down.",
    "Some questions have long answers, and some answers raise new questions.",
    "The music in the garden was loud, but the night was calm and bright.",
    "After the meeting, everyone walked home together under the light rain.",
    "Numbers like seven hundred and twelve are read aloud as words.",
    "She opened the window and listened to the birds in the old trees.",
    "Two trains left the station at noon and arrived before dinner.",
]
# name -> (seconds, text or list of sentences)
CLIPS = {
    "clip_7s": (7, SENTENCES[6:8]),
    "clip_10s": (10, [TEXT_10S]),
    "clip_23s": (23, SENTENCES[0:5]),
    "clip_30s": (30, SENTENCES[0:7]),
}


def write_wav(path, samples):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(np.asarray(samples, dtype="<i2").tobytes())


def read_wav_int16(path):
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1 and w.getframerate() == SR, path
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")


def espeak(text, tmp):
    """espeak-ng (22.05 kHz) -> sox without dither (repeatable) -> int16 at 16 kHz."""
    raw, out = os.path.join(tmp, "e.wav"), os.path.join(tmp, "s.wav")
    subprocess.run(ESPEAK + ["-w", raw, text], check=True)
    subprocess.run(["sox", "-R", "-D", raw, "-r", str(SR), "-c", "1", "-b", "16", out], check=True)
    return read_wav_int16(out)


def make_clips(out_dir, force):
    os.makedirs(out_dir, exist_ok=True)
    gap = np.zeros(int(0.3 * SR), dtype=np.int16)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (seconds, texts) in CLIPS.items():
            path = os.path.join(out_dir, name + ".wav")
            if os.path.exists(path) and not force:
                continue
            parts = []
            for t in texts:
                parts += [espeak(t, tmp), gap]
            speech = np.concatenate(parts[:-1])
            # numpy pad/trim (sox's pad+trim refuses to pad short input): exactly `seconds`.
            clip = np.zeros(seconds * SR, dtype=np.int16)
            n = min(len(speech), len(clip))
            clip[:n] = speech[:n]
            write_wav(path, clip)
            print(f"{name}: {len(speech) / SR:.2f} s of speech in {seconds} s", flush=True)


# ------------------------------------------------------------------------------------ tokenizer

_WORDS = (
    "time person year way day thing man world life hand part child eye woman place work week case point "
    "number group problem fact voice speech model sound word signal engine river city house table window "
    "garden music paper story water light night morning question answer train station dinner bird tree "
    "market teacher student doctor mountain ocean island village letter picture kitchen winter summer "
    "makes takes sees knows gets gives finds tells asks works seems feels tries leaves calls turns moves "
    "plays runs brings writes reads hears speaks learns keeps holds shows opened listened arrived walked "
    "good new first last long great little own other old right big high different small large next early "
    "young important few public bad same able quick brown lazy quiet loud bright calm heavy gentle "
    "quickly slowly often never always really almost together again soon the a this that every some one "
    "no in on at with from over under near after before into and but because while"
).split()
_ONSETS = "b c d f g h j k l m n p r s t v w z br cl dr fl gr pl st tr sh ch th".split()
_VOWELS = "a e i o u ai ea ou ie oo".split()
_CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "ng"]


def _pseudo_word(rng):
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                   for _ in range(rng.randint(1, 3)))


def _sentence(rng):
    words = [rng.choice(_WORDS) if rng.random() < 0.75 else _pseudo_word(rng)
             for _ in range(rng.randint(4, 12))]
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "?", ","])


def train_tokenizer(out_dir, force):
    """SentencePiece BPE (vocab 1024) plus NeMo's vocab.txt ('▁x' -> 'x', 'y' -> '##y')."""
    import sentencepiece as spm
    model_file = os.path.join(out_dir, "tokenizer.model")
    if os.path.exists(model_file) and not force:
        return out_dir
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(SEED)
    text_path = os.path.join(out_dir, "text.txt")
    with open(text_path, "w") as f:
        f.write("\n".join(_sentence(rng) for _ in range(20000)) + "\n")
    spm.SentencePieceTrainer.train(
        input=text_path, model_prefix=os.path.join(out_dir, "tokenizer"), vocab_size=VOCAB,
        model_type="bpe", character_coverage=1.0, unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1,
        normalization_rule_name="identity", num_threads=2, minloglevel=2)
    os.remove(text_path)
    sp = spm.SentencePieceProcessor(model_file=model_file)
    with open(os.path.join(out_dir, "vocab.txt"), "w") as f:
        for i in range(sp.get_piece_size()):
            if sp.is_unknown(i) or sp.is_control(i):
                continue
            piece = sp.id_to_piece(i)
            f.write((piece[1:] if piece.startswith("\u2581") else "##" + piece) + "\n")
    return out_dir


# ---------------------------------------------------------------------------------------- model

def _ds_stub():
    # transcribe() needs these sections; defer_setup keeps NeMo from loading any manifest.
    return {"manifest_filepath": None, "sample_rate": SR, "batch_size": 1, "shuffle": False,
            "defer_setup": True}


def model_config(s, tokenizer_dir):
    """Modelled on NeMo's fastconformer_hybrid_tdt_ctc_bpe.yaml."""
    return {
        "sample_rate": SR, "log_prediction": False, "skip_nan_grad": False,
        "tokenizer": {"dir": tokenizer_dir, "type": "bpe"},
        "train_ds": _ds_stub(), "validation_ds": _ds_stub(), "test_ds": _ds_stub(),
        "model_defaults": {"enc_hidden": s["d_model"], "pred_hidden": s["pred_hidden"],
                           "joint_hidden": s["joint_hidden"]},
        "preprocessor": {
            "_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
            "sample_rate": SR, "normalize": "per_feature", "window_size": 0.025, "window_stride": 0.01,
            "window": "hann", "features": s["n_mels"], "n_fft": 512, "log": True, "frame_splicing": 1,
            "dither": 1e-5, "pad_to": 0, "pad_value": 0.0},
        "spec_augment": None,
        "encoder": {
            "_target_": "nemo.collections.asr.modules.ConformerEncoder",
            "feat_in": s["n_mels"], "feat_out": -1, "n_layers": s["n_layers"], "d_model": s["d_model"],
            "subsampling": "dw_striding", "subsampling_factor": 8,
            "subsampling_conv_channels": s["sub_channels"], "causal_downsampling": False,
            "ff_expansion_factor": s["ff_expansion"], "self_attention_model": "rel_pos",
            "n_heads": s["n_heads"], "att_context_size": [-1, -1], "att_context_style": "regular",
            "xscaling": True, "untie_biases": True, "pos_emb_max_len": 5000, "conv_kernel_size": 9,
            "conv_norm_type": "batch_norm", "conv_context_size": None, "dropout": 0.1,
            "dropout_pre_encoder": 0.1, "dropout_emb": 0.0, "dropout_att": 0.1},
        "decoder": {
            "_target_": "nemo.collections.asr.modules.RNNTDecoder", "normalization_mode": None,
            "random_state_sampling": False, "blank_as_pad": True,
            "prednet": {"pred_hidden": s["pred_hidden"], "pred_rnn_layers": 1, "t_max": None,
                        "dropout": 0.2}},
        "joint": {
            "_target_": "nemo.collections.asr.modules.RNNTJoint", "log_softmax": None,
            "preserve_memory": False, "fuse_loss_wer": False, "fused_batch_size": 4,
            "jointnet": {"joint_hidden": s["joint_hidden"], "activation": "relu", "dropout": 0.2},
            "num_extra_outputs": len(DURATIONS)},
        "decoding": {"strategy": "greedy", "model_type": "tdt", "durations": DURATIONS,
                     "greedy": {"max_symbols": 10}, "tdt_include_token_duration": True},
        "loss": {"loss_name": "tdt", "tdt_kwargs": {"fastemit_lambda": 0.0, "clamp": -1.0,
                                                    "durations": DURATIONS, "sigma": 0.02, "omega": 0.1}},
        "aux_ctc": {"ctc_loss_weight": 0.3, "use_cer": False, "ctc_reduction": "mean_volume",
                    "decoder": {"_target_": "nemo.collections.asr.modules.ConvASRDecoder",
                                "feat_in": s["d_model"], "num_classes": -1, "vocabulary": []},
                    "decoding": {"strategy": "greedy"}},
    }


def encode_clip(model, wav_path):
    import torch
    x = torch.from_numpy(read_wav_int16(wav_path).astype(np.float32) / 32768.0)[None]
    n = torch.tensor([x.shape[1]])
    with torch.no_grad():
        mel, mel_len = model.preprocessor(input_signal=x, length=n)
        enc, enc_len = model.encoder(audio_signal=mel, length=mel_len)
    return enc, enc_len


def greedy(model, enc, enc_len):
    import torch
    with torch.no_grad():
        hyp = model.decoding.rnnt_decoder_predictions_tensor(
            encoder_output=enc, encoded_lengths=enc_len, return_hypotheses=True)[0]
    return hyp


def suppress_zero_duration(model):
    """Random weights chain tokens with duration 0 up to max_symbols (10 per frame), far from
    what a trained model does on speech; lowering the duration-0 logit makes every step
    advance at least one frame. The other durations keep their random preferences."""
    import torch
    with torch.no_grad():
        model.joint.joint_net[2].bias[VOCAB + 1 + DURATIONS.index(0)] -= 30.0


def mix_durations(model, enc):
    """Random weights favour one duration everywhere (every step would skip 4 frames). Centre
    the duration logits 1..4 over the clip's frames (at the start-of-sequence state) so that
    the argmax varies from frame to frame, as it does with speech."""
    import torch
    with torch.no_grad():
        g, _ = model.decoder.predict(None, None, add_sos=False, batch_size=1)
        logits = model.joint.joint(enc.transpose(1, 2), g)[0, :, 0, VOCAB + 1:]  # [T, durations]
        mean = logits.mean(dim=0)
        for i, d in enumerate(DURATIONS):
            if d > 0:
                model.joint.joint_net[2].bias[VOCAB + 1 + i] -= mean[i]


def calibrate_blank_bias(model, enc, enc_len, seconds, tokens_per_second):
    """Bisection on the blank logit's bias until greedy TDT emits ~tokens_per_second."""
    import torch
    bias = model.joint.joint_net[2].bias
    blank = VOCAB
    base = float(bias[blank].detach())
    target = tokens_per_second * seconds
    lo, hi = 0.0, 64.0
    best = None
    for _ in range(24):
        mid = (lo + hi) / 2
        with torch.no_grad():
            bias[blank] = base + mid
        n = len(greedy(model, enc, enc_len).y_sequence)
        print(f"  blank bias +{mid:.3f}: {n} tokens (target {target:.0f})", flush=True)
        if best is None or abs(n - target) < abs(best[1] - target):
            best = (mid, n)
        if abs(n - target) <= max(1, 0.1 * target):
            break
        lo, hi = (mid, hi) if n > target else (lo, mid)
    with torch.no_grad():
        bias[blank] = base + best[0]
    return best[0]


def decode_stats(model, enc, enc_len, seconds):
    hyp = greedy(model, enc, enc_len)
    durs = [int(d) for d in getattr(hyp, "token_duration", []) or []]
    return {"tokens": len(hyp.y_sequence), "tokens_per_s": round(len(hyp.y_sequence) / seconds, 2),
            "enc_frames": int(enc_len[0]), "token_durations": {str(d): durs.count(d) for d in sorted(set(durs))},
            "text": hyp.text if isinstance(hyp.text, str) else ""}


def build_model(name, tokenizer_dir, out_dir, clips_dir, tokens_per_second):
    import torch
    from omegaconf import OmegaConf
    from nemo.collections.asr.models import EncDecHybridRNNTCTCBPEModel
    s = MODELS[name]
    torch.manual_seed(SEED + list(MODELS).index(name))
    t0 = time.time()
    model = EncDecHybridRNNTCTCBPEModel(cfg=OmegaConf.create(model_config(s, tokenizer_dir)))
    model.eval()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {n_params:,} parameters, built in {time.time() - t0:.0f} s", flush=True)
    enc, enc_len = encode_clip(model, os.path.join(clips_dir, "clip_10s.wav"))
    mix_durations(model, enc)
    suppress_zero_duration(model)
    offset = calibrate_blank_bias(model, enc, enc_len, 10.0, tokens_per_second)
    summary = {"name": name, "sizes": s, "parameters": n_params, "seed": SEED,
               "blank_bias_offset": offset, "duration0_bias_offset": -30.0,
               "durations_centred": True, "clips": {}}
    for clip in CLIPS:
        e, el = encode_clip(model, os.path.join(clips_dir, clip + ".wav"))
        summary["clips"][clip] = decode_stats(model, e, el, CLIPS[clip][0])
    print(f"{name}: blank bias +{offset:.3f}: {json.dumps(summary['clips'])}", flush=True)
    os.makedirs(out_dir, exist_ok=True)
    model.save_to(os.path.join(out_dir, "model.nemo"))
    fb = model.preprocessor.featurizer.fb.detach().numpy()[0]
    window = model.preprocessor.featurizer.window.detach().numpy()
    np.savez(os.path.join(out_dir, "frontend.npz"), fb=fb, window=window)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return model


def convert(nemo_path, out_dir, python, types, force):
    """f32 from the .nemo; every other type from that f32 GGUF (the same tensors as converting
    the .nemo to the type directly, without reading the checkpoint again per type)."""
    env = dict(os.environ, PYTHONPATH=REPO)
    f32 = os.path.join(out_dir, "model-f32.gguf")
    for t in ["f32"] + [t for t in types if t != "f32"]:
        out = os.path.join(out_dir, f"model-{t}.gguf")
        if os.path.exists(out) and not force:
            continue
        source = nemo_path if t == "f32" else f32
        subprocess.run([python, "-m", "parakeet_py.convert", source, out, "--type", t],
                       check=True, env=env, cwd=REPO)


def export_onnx(model, onnx_dir):
    """NeMo's own export: encoder-model.onnx and decoder_joint-model.onnx. Past 2 GB (the
    600m encoder in f32) torch writes the weights as external data files beside the graph."""
    os.makedirs(onnx_dir, exist_ok=True)
    t0 = time.time()
    model.export(os.path.join(onnx_dir, "model.onnx"))
    print(f"ONNX export in {time.time() - t0:.0f} s", flush=True)


def onnx_asr_files(onnx_dir, tokenizer_dir, n_mels):
    """The two small files onnx-asr's nemo-conformer-tdt loader reads next to the graphs:
    vocab.txt ("<piece> <id>" per line, the blank as "<blk>" after the vocabulary) and
    config.json (model type, mel count, subsampling, max symbols per frame)."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(tokenizer_dir, "tokenizer.model"))
    with open(os.path.join(onnx_dir, "vocab.txt"), "w") as f:
        for i in range(sp.get_piece_size()):
            f.write(f"{sp.id_to_piece(i)} {i}\n")
        f.write(f"<blk> {sp.get_piece_size()}\n")
    config = {"model_type": "nemo-conformer-tdt", "features_size": n_mels, "subsampling_factor": 8,
              "max_tokens_per_step": 10}
    with open(os.path.join(onnx_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def quantize_onnx_int8(onnx_dir, force):
    """<part>-model.int8.onnx from <part>-model.onnx with onnxruntime's quantize_dynamic, as
    the published int8 Parakeet ONNX sets are made: int8 weights, activations quantized at
    run time. Unsigned weights, because ORT's CPU ConvInteger (the conv module's pointwise
    convolutions) takes only uint8."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    for part in ("encoder", "decoder_joint"):
        src = os.path.join(onnx_dir, f"{part}-model.onnx")
        dst = os.path.join(onnx_dir, f"{part}-model.int8.onnx")
        if os.path.exists(dst) and not force:
            continue
        t0 = time.time()
        quantize_dynamic(src, dst, weight_type=QuantType.QUInt8)
        print(f"{os.path.basename(dst)}: {os.path.getsize(dst) / 1e6:.0f} MB in {time.time() - t0:.0f} s",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="110m,600m")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--tokens-per-second", type=float, default=3.0)
    ap.add_argument("--convert-python", default="python3", help="python that runs parakeet_py.convert")
    ap.add_argument("--types", default="f32,f16,q8_0,q6_k,q5_k,q4_k,q5_0,q4_0",
                    help="GGUF weight types to write (comma-separated; any of parakeet-cli quantize's)")
    ap.add_argument("--no-onnx", action="store_true")
    ap.add_argument("--force", action="store_true", help="rebuild outputs that exist")
    args = ap.parse_args()

    clips_dir = os.path.join(args.out, "clips")
    make_clips(clips_dir, args.force)
    tok_dir = train_tokenizer(os.path.join(args.out, "tokenizer"), args.force)
    for name in args.models.split(","):
        out_dir = os.path.join(args.out, name)
        nemo_path = os.path.join(out_dir, "model.nemo")
        onnx_dir = os.path.join(out_dir, "onnx")
        want_onnx = not args.no_onnx and (
            args.force or not os.path.exists(os.path.join(onnx_dir, "encoder-model.onnx")))
        model = None
        if args.force or not os.path.exists(nemo_path):
            model = build_model(name, tok_dir, out_dir, clips_dir, args.tokens_per_second)
        if want_onnx:
            if model is None:
                from nemo.collections.asr.models import ASRModel
                model = ASRModel.restore_from(nemo_path, map_location="cpu")
                model.eval()
            export_onnx(model, onnx_dir)
        del model
        if not args.no_onnx:
            onnx_asr_files(onnx_dir, tok_dir, MODELS[name]["n_mels"])
            quantize_onnx_int8(onnx_dir, args.force)
        convert(nemo_path, out_dir, args.convert_python, args.types.split(","), args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
