"""Build random-weight NeMo models with NeMo's own classes: tokenizer, model, perturbation, save."""
import io
import os
import random
import tarfile
import tempfile
import uuid

import sentencepiece as spm
import torch
from omegaconf import OmegaConf, open_dict

from . import configs, textgen


def train_tokenizer(out_dir: str, vocab_size: int, seed: int, n_sentences: int, rich: bool = False) -> str:
    """SentencePiece BPE on generated cased text with . , ? punctuation, plus NeMo's vocab.txt.

    rich=True mixes invented words into the text, which a vocabulary of ~1024 pieces needs.
    """
    os.makedirs(out_dir, exist_ok=True)
    text_path = os.path.join(out_dir, "text.txt")
    lines = textgen.rich_corpus(seed, n_sentences) if rich else textgen.corpus(seed, n_sentences, cased=True)
    with open(text_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    prefix = os.path.join(out_dir, "tokenizer")
    spm.SentencePieceTrainer.train(
        input=text_path, model_prefix=prefix, vocab_size=vocab_size, model_type="bpe",
        character_coverage=1.0, unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1,
        # identity: no NFKC table in the model file, which keeps tokenizer.model a few KB.
        normalization_rule_name="identity", num_threads=1, minloglevel=2,
    )
    os.remove(text_path)
    _strip_training_paths(prefix + ".model")
    # NeMo's vocab.txt convention: a word-initial piece loses its '▁', any other gets '##'.
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    with open(os.path.join(out_dir, "vocab.txt"), "w") as f:
        for i in range(sp.get_piece_size()):
            piece = sp.id_to_piece(i)
            if sp.is_unknown(i) or sp.is_control(i):
                continue
            f.write((piece[1:] if piece.startswith("\u2581") else "##" + piece) + "\n")
    return out_dir


def _strip_training_paths(model_path: str) -> None:
    """SentencePiece stores the (temp) training file and output prefix inside the model; drop them
    so that the .nemo files are reproducible byte for byte."""
    from sentencepiece import sentencepiece_model_pb2
    proto = sentencepiece_model_pb2.ModelProto()
    with open(model_path, "rb") as f:
        proto.ParseFromString(f.read())
    del proto.trainer_spec.input[:]
    proto.trainer_spec.model_prefix = "tokenizer"
    with open(model_path, "wb") as f:
        f.write(proto.SerializeToString())


def _model_class(target: str):
    from nemo.collections.asr import models
    return getattr(models, target.rsplit(".", 1)[1])


def perturb_constant_tensors(model: torch.nn.Module, seed: int) -> list:
    """Give every tensor that NeMo initialises to a constant seeded random values.

    Without this, eval-mode BatchNorm is nearly the identity, LayerNorm is (1, 0) and the
    relative-position biases u/v are zero, so an engine that drops or swaps them still passes.
    The LSTM biases are perturbed too (NeMo fills the forget-gate slices with constants).
    """
    gen = torch.Generator().manual_seed(seed)
    touched = []
    with torch.no_grad():
        for name, t in model.state_dict(keep_vars=True).items():
            if name.startswith("preprocessor.") or not t.dtype.is_floating_point:
                continue
            leaf = name.rsplit(".", 1)[-1]
            is_norm = ".norm" in name or "batch_norm" in name
            if is_norm and leaf == "weight":
                new = torch.empty(t.shape).uniform_(0.5, 1.5, generator=gen)
            elif is_norm and leaf in ("bias", "running_mean"):
                new = torch.randn(t.shape, generator=gen) * 0.1
            elif leaf == "running_var":
                new = torch.empty(t.shape).uniform_(0.5, 1.5, generator=gen)
            elif leaf in ("pos_bias_u", "pos_bias_v"):
                new = torch.randn(t.shape, generator=gen) * 0.1
            elif "dec_rnn.lstm.bias" in name:
                new = t + torch.randn(t.shape, generator=gen) * 0.1
            else:
                continue
            t.copy_(new)
            touched.append(name)
    return touched


def he_scale_subsampling(model) -> None:
    """Scale the subsampling weights from PyTorch's default init to He (ReLU) gain.

    The default (kaiming_uniform with a=sqrt(5)) keeps 1/3 of the variance per layer; after
    the five convolutions and the linear of dw_striding, the biases dominate and the random
    encoder's output hardly changes over time, which makes every decoder sticky. He gain is
    sqrt(2/fan_in) against sqrt(1/(3 fan_in)): a factor sqrt(6).
    """
    with torch.no_grad():
        for name, p in model.encoder.pre_encode.named_parameters():
            if name.endswith("weight"):
                p.mul_(6.0 ** 0.5)


UNK_PENALTY = 100.0  # logits


def calibrate_heads(model, arch: "configs.Arch", enc: torch.Tensor, logit_scale: float = 16.0) -> None:
    """Shape the random output layers so greedy decoding exercises every branch.

    enc: [T, d_model] encoder output on a calibration clip. Each output layer's weights are
    scaled up (peaked, varied distributions) and its bias is set so that every class has mean
    logit 0 over the clip; then blank (and, for TDT, duration 0) get the offsets in `arch`,
    which are in units of the standard deviation of those centred logits. arch.pred_scale
    scales the joint's prediction-net projection, so that the label history, not just the
    frame, moves the decision (TDT durations then change within a frame).
    The transducer joint is calibrated with the prediction net's first output (blank/SOS).
    """
    vocab = model.tokenizer.vocab_size
    # <unk> decodes to " ⁇ " and then splits words in ways no real model output does; trained
    # models practically never emit it, so the fixture models never do either.
    unk = model.tokenizer.tokenizer.unk_id()
    with torch.no_grad():
        if arch.has_transducer:
            joint = model.joint
            g0, _ = model.decoder.predict(torch.tensor([[vocab]]), None, add_sos=False, batch_size=1)
            joint.pred.weight.mul_(arch.pred_scale)
            hidden = joint.joint_net[:-1](joint.enc(enc) + joint.pred(g0[0]))
            out = joint.joint_net[-1]
            out.weight.mul_(logit_scale)
            logits = hidden @ out.weight.T
            bias, unit = -logits.mean(0), (logits - logits.mean(0)).std()
            bias[vocab] += arch.blank_offset * unit
            bias[unk] -= UNK_PENALTY
            if arch.is_tdt:
                bias[vocab + 1 + arch.durations.index(0)] += arch.dur0_offset * unit
            out.bias.copy_(bias)
        if arch.has_ctc:
            conv = (model.decoder if arch.kind == "ctc" else model.ctc_decoder).decoder_layers[0]
            conv.weight.mul_(logit_scale)
            logits = enc @ conv.weight[:, :, 0].T
            bias, unit = -logits.mean(0), (logits - logits.mean(0)).std()
            bias[vocab] += arch.ctc_blank_offset * unit
            bias[unk] -= UNK_PENALTY
            conv.bias.copy_(bias)


def build_model(arch: "configs.Arch", tokenizer_dir: str, seed: int, calib_audio=None, perturb: bool = True):
    """NeMo model from `arch` with seeded random weights.

    With calib_audio (float32 16 kHz samples) the subsampling is He-scaled and the output
    layers calibrated (see calibrate_heads); without it the weights are NeMo's plain init.
    """
    torch.manual_seed(seed)
    cfg = OmegaConf.create(configs.model_config(arch, tokenizer_dir))
    model = _model_class(arch.target)(cfg=cfg)
    if perturb:
        perturb_constant_tensors(model, seed + 1)
    model.eval()
    if calib_audio is not None:
        he_scale_subsampling(model)
        with torch.no_grad():
            sig = torch.from_numpy(calib_audio)[None, :]
            mel, mel_len = model.preprocessor(input_signal=sig, length=torch.tensor([sig.shape[1]]))
            enc, enc_len = model.encoder(audio_signal=mel, length=mel_len)
        calibrate_heads(model, arch, enc[0, :, : int(enc_len[0])].T)
    return model


def save_model(model, path: str, seed: int) -> None:
    """model.save_to(), made byte-reproducible so that rerunning the script leaves git clean.

    NeMo names packed artifacts `<uuid4>_tokenizer.model` and tars them with file mtimes; we
    draw the uuids from a seeded generator and rewrite the tar with sorted members, mtime 0
    and no owner names, and the config's tokenizer.dir (a temp path) becomes "tokenizer".
    The result is still a plain tar that NeMo restores.
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # the tokenizer files travel inside the .nemo (model_path etc. become nemo: artifacts);
    # the training directory is a temp path that would make every save differ
    with open_dict(model.cfg):
        model.cfg.tokenizer.dir = "tokenizer"
    rng = random.Random(seed)
    real_uuid4 = uuid.uuid4
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "raw.nemo")
            model.save_to(raw)
            _normalized_tar(raw, path)
    finally:
        uuid.uuid4 = real_uuid4


def _normalized_tar(src: str, dst: str) -> None:
    with tarfile.open(src, "r:") as tin:
        members = sorted((m for m in tin.getmembers() if m.isfile()), key=lambda m: m.name)
        with tarfile.open(dst, "w:", format=tarfile.GNU_FORMAT) as tout:
            for m in members:
                data = tin.extractfile(m).read()
                info = tarfile.TarInfo(m.name)
                info.size = len(data)
                info.mode = 0o644
                info.mtime = 0
                tout.addfile(info, io.BytesIO(data))


def restore_model(path: str):
    from nemo.collections.asr.models import ASRModel
    model = ASRModel.restore_from(path, map_location="cpu")
    model.eval()
    return model
