"""Run a NeMo model on one clip and collect everything the engine tests compare against.

Two paths run and must agree:
  * a manual pipeline (preprocessor -> encoder with forward hooks -> heads -> NeMo decoding
    objects), which gives the intermediate tensors;
  * `model.transcribe(..., timestamps=True)`, which gives the user-facing result (text, token
    and word offsets, confidences, word times in seconds).
All in eval mode, batch 1, greedy decoding with max_symbols 10.
"""
import copy
from dataclasses import dataclass, field

import numpy as np
import torch
from omegaconf import OmegaConf

from . import configs

CONFIDENCE_CFG = {
    "preserve_frame_confidence": True,
    "preserve_token_confidence": True,
    "preserve_word_confidence": True,
    "exclude_blank": True,
    "aggregation": "min",
    # alpha 1.0 makes max_prob the plain rescaled (N*p_max - 1)/(N - 1); NeMo's default alpha
    # (0.33) would give (N^a * p_max^a - 1)/(N^a - 1) instead. See docs/fixtures.md.
    "method_cfg": {"name": "max_prob", "alpha": 1.0},
}


def load_audio(path: str) -> np.ndarray:
    """NeMo's own loader: float32 = int16 / 32768, channels averaged, librosa soxr_hq to 16 kHz."""
    from nemo.collections.asr.parts.preprocessing.segment import AudioSegment
    seg = AudioSegment.from_file(path, target_sr=16000, channel_selector="average")
    return np.ascontiguousarray(seg.samples, dtype=np.float32)


@dataclass
class HeadResult:
    """One head's greedy result; frames are encoder frames (0.08 s each)."""
    ids: list
    frames: list            # encoder frame at which each token was emitted
    durations: list         # TDT only: predicted duration (in frames) of each token
    text: str
    token_conf: list
    token_start: list       # NeMo's per-token offsets (after its punctuation refinement)
    token_end: list
    words: list
    word_start_frame: list
    word_end_frame: list
    word_start: list        # seconds, as transcribe(timestamps=True) reports them
    word_end: list
    word_conf: list
    conf_words: list        # the words NeMo aggregated word confidence over


@dataclass
class ClipResult:
    mel: np.ndarray                 # [n_frames, n_mels] including frames past mel_len
    mel_len: int
    enc_len: int
    pre_encode: np.ndarray          # [enc_len, d_model] subsampling output, before xscale
    layers: list                    # n_layers x [enc_len, d_model]
    enc: np.ndarray                 # [enc_len, d_model]
    ctc_logprobs: np.ndarray = None  # [enc_len, V+1]
    pred0: np.ndarray = None        # [pred_hidden] prediction net on blank/SOS, zero state
    joint0: np.ndarray = None       # [V+1(+D)] raw joint logits for (enc frame 0, pred0)
    heads: dict = field(default_factory=dict)  # "tdt" | "rnnt" | "ctc" -> HeadResult (strategy greedy)
    batch: dict = field(default_factory=dict)  # "tdt" | "rnnt" -> HeadResult (strategy greedy_batch)
    # the torch tensors the decoders run on (not written to the reference files)
    enc_tensor: torch.Tensor = None      # [1, d_model, T] (all frames, as NeMo's encoder returns it)
    enc_len_tensor: torch.Tensor = None  # [1]
    ctc_logp_tensor: torch.Tensor = None  # [1, T, V+1]


def _transducer_decoding_cfg(model, arch, strategy: str, with_conf: bool, alignments: bool,
                             word_conf: bool = True) -> dict:
    cfg = OmegaConf.to_container(copy.deepcopy(model.cfg.decoding), resolve=True)
    cfg["strategy"] = strategy
    cfg.setdefault("greedy", {})["max_symbols"] = configs.MAX_SYMBOLS
    cfg["preserve_alignments"] = alignments
    cfg["compute_timestamps"] = True
    cfg.pop("confidence_cfg", None)
    if with_conf:
        cfg["confidence_cfg"] = copy.deepcopy(CONFIDENCE_CFG)
        cfg["confidence_cfg"]["preserve_word_confidence"] = word_conf
    if arch.is_tdt:
        cfg["model_type"] = "tdt"
        cfg["durations"] = list(arch.durations)
        cfg["tdt_include_token_duration"] = True
    return cfg


def _ctc_decoding_cfg(model, arch) -> dict:
    src = model.cfg.aux_ctc.decoding if arch.kind != "ctc" else model.cfg.decoding
    cfg = OmegaConf.to_container(copy.deepcopy(src), resolve=True)
    cfg["strategy"] = "greedy"
    cfg["compute_timestamps"] = True
    cfg["confidence_cfg"] = copy.deepcopy(CONFIDENCE_CFG)
    return cfg


def select_head(model, arch, head: str, strategy: str = "greedy", with_conf: bool = True,
                alignments: bool = False, word_conf: bool = True):
    """Point the model (and transcribe()) at one head; returns the NeMo decoding object."""
    if head == "ctc":
        cfg = OmegaConf.create(_ctc_decoding_cfg(model, arch))
        if arch.kind == "ctc":
            model.change_decoding_strategy(cfg, verbose=False)
            return model.decoding
        model.change_decoding_strategy(cfg, decoder_type="ctc", verbose=False)
        return model.ctc_decoding
    cfg = OmegaConf.create(_transducer_decoding_cfg(model, arch, strategy, with_conf, alignments, word_conf))
    if arch.has_ctc:
        model.change_decoding_strategy(cfg, decoder_type="rnnt", verbose=False)
    else:
        model.change_decoding_strategy(cfg, verbose=False)
    return model.decoding


def _ctc_module(model, arch):
    return model.decoder if arch.kind == "ctc" else model.ctc_decoder


def _np(t: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().numpy().astype(np.float32))


def run_manual(model, arch, audio: np.ndarray) -> ClipResult:
    enc_mod = model.encoder
    captured = {}

    def keep(name):
        def hook(_module, _inputs, output):
            captured[name] = (output[0] if isinstance(output, tuple) else output).detach().clone()
            # returning None keeps the module's output untouched
        return hook

    handles = [enc_mod.pre_encode.register_forward_hook(keep("pre_encode"))]
    for i, layer in enumerate(enc_mod.layers):
        handles.append(layer.register_forward_hook(keep(f"layer.{i}")))
    try:
        with torch.no_grad():
            sig = torch.from_numpy(audio)[None, :]
            sig_len = torch.tensor([audio.shape[0]], dtype=torch.int64)
            mel, mel_len = model.preprocessor(input_signal=sig, length=sig_len)
            enc, enc_len = enc_mod(audio_signal=mel, length=mel_len)
    finally:
        for h in handles:
            h.remove()
    n = int(enc_len[0])
    res = ClipResult(
        mel=_np(mel[0].transpose(0, 1)),
        mel_len=int(mel_len[0]),
        enc_len=n,
        pre_encode=_np(captured["pre_encode"][0, :n]),
        layers=[_np(captured[f"layer.{i}"][0, :n]) for i in range(len(enc_mod.layers))],
        enc=_np(enc[0].transpose(0, 1)[:n]),
    )
    assert np.array_equal(res.layers[-1], res.enc), "last layer output must be the encoder output"
    with torch.no_grad():
        if arch.has_ctc:
            logp = _ctc_module(model, arch)(encoder_output=enc)
            res.ctc_logprobs = _np(logp[0, :n])
        if arch.has_transducer and n > 0:
            blank = model.decoder.blank_idx
            g, _ = model.decoder.predict(torch.tensor([[blank]]), None, add_sos=False, batch_size=1)
            f = enc.transpose(1, 2)[:, :1, :]
            joint = model.joint
            raw = joint.joint_net(joint.project_encoder(f).unsqueeze(2) + joint.project_prednet(g).unsqueeze(1))
            # NeMo's own joint applies log_softmax over all outputs on CPU: the raw logits must match it.
            ref = joint.joint(f, g)
            assert torch.allclose(raw.log_softmax(-1), ref, atol=1e-5)
            res.pred0 = _np(g[0, 0])
            res.joint0 = _np(raw[0, 0, 0])
    res.enc_tensor, res.enc_len_tensor = enc, enc_len
    if arch.has_ctc:
        res.ctc_logp_tensor = logp
    return res


def ctc_collapse(labels, blank: int):
    """Greedy CTC: (ids, first frame of each token's run) from per-frame argmax labels."""
    ids, frames = [], []
    prev = None
    for t, p in enumerate(labels):
        p = int(p)
        if p != blank and p != prev:
            ids.append(p)
            frames.append(t)
        prev = p
    return ids, frames


def _head_from_hyp(hyp, head: str, blank: int) -> HeadResult:
    ts = hyp.timestamp
    seq = hyp.y_sequence
    seq = seq.tolist() if torch.is_tensor(seq) else list(seq)
    if head == "ctc":
        # greedy CTC keeps the per-frame labels (transcribe() swaps in the log-probs instead)
        labels = np.asarray(seq)
        if labels.ndim == 2:
            labels = labels.argmax(-1)
        ids, step = ctc_collapse(labels, blank)
    else:
        ids = [int(i) for i in seq]
        step = ts["timestep"]
        step = step.tolist() if torch.is_tensor(step) else list(step)
    chars = ts.get("char", [])
    words = ts.get("word", [])
    durations = []
    if head == "tdt":
        d = hyp.token_duration
        durations = [int(x) for x in (d.tolist() if torch.is_tensor(d) else d)]
    conf = hyp.token_confidence or []
    wconf = hyp.word_confidence or []
    return HeadResult(
        ids=ids,
        frames=[int(x) for x in step],
        durations=durations,
        text=hyp.text,
        token_conf=[float(c) for c in conf],
        token_start=[int(c["start_offset"]) for c in chars],
        token_end=[int(c["end_offset"]) for c in chars],
        words=[w["word"] for w in words],
        word_start_frame=[int(w["start_offset"]) for w in words],
        word_end_frame=[int(w["end_offset"]) for w in words],
        word_start=[float(w.get("start", "nan")) for w in words],
        word_end=[float(w.get("end", "nan")) for w in words],
        word_conf=[float(c) for c in wconf],
        conf_words=list(hyp.words) if hyp.text else [],
    )


def _manual_decode(model, arch, head: str, decoding, res: ClipResult):
    with torch.no_grad():
        if head == "ctc":
            hyps = decoding.ctc_decoder_predictions_tensor(
                res.ctc_logp_tensor, decoder_lengths=res.enc_len_tensor, return_hypotheses=True)
        else:
            hyps = decoding.rnnt_decoder_predictions_tensor(
                encoder_output=res.enc_tensor, encoded_lengths=res.enc_len_tensor, return_hypotheses=True)
    if isinstance(hyps, tuple):
        hyps = hyps[0]
    return hyps[0]


def _transcribe_config():
    """batch 1, hypotheses with timestamps, and no padding of short clips.

    NeMo 3.0.0's transcribe() pads in-memory audio shorter than 1 s with zeros on both sides up
    to 1 s (TranscriptionTensorDataset, pad_min_duration 1.0, pad_direction "both"). The
    references are for the model on the clip as given, so that padding is switched off.
    """
    from nemo.collections.asr.parts.mixins.transcription import TranscribeConfig
    cfg = TranscribeConfig(batch_size=1, return_hypotheses=True, timestamps=True, verbose=False)
    cfg.pad_min_duration = 0.0  # read with getattr() by NeMo, not a declared field
    return cfg


def _is_word_confidence_failure(e: RuntimeError) -> bool:
    """NeMo 3.0.0's word confidence (_aggregate_token_confidence_subwords_sentencepiece) starts a
    word at each token whose piece differs from its text ('▁' pieces) but checks the count
    against text.split(), where the space before punctuation has been removed; when a '▁' is
    followed by punctuation the counts differ and NeMo raises. NeMo then has no word confidence
    for that result, so none is recorded (conf_words and word_conf stay empty). Seen on the
    long clip only (docs/fixtures.md)."""
    return "word-level confidence aggregation" in str(e)


def _decode_pass(model, arch, head: str, res: ClipResult, audio, strategy: str, with_conf: bool,
                 cross_check: bool = True) -> HeadResult:
    """Decode with the manual pipeline and (cross_check) with transcribe(); both must agree."""
    decoding = select_head(model, arch, head, strategy, with_conf)
    blank = decoding.blank_id
    word_conf = True
    try:
        hyp = _manual_decode(model, arch, head, decoding, res)
    except RuntimeError as e:
        if not _is_word_confidence_failure(e):
            raise
        # NeMo cannot group this output's token confidences into words (see
        # _is_word_confidence_failure): decode again without word confidence
        word_conf = False
        decoding = select_head(model, arch, head, strategy, with_conf, word_conf=False)
        hyp = _manual_decode(model, arch, head, decoding, res)
    if not cross_check:
        # word seconds the way transcribe(timestamps=True) adds them
        from nemo.collections.asr.parts.utils.timestamp_utils import process_timestamp_outputs
        (hyp,) = process_timestamp_outputs([hyp], model.encoder.subsampling_factor,
                                           model.cfg["preprocessor"]["window_stride"])
        hr = _head_from_hyp(hyp, head, blank)
        if head == "ctc":
            hr.conf_words = decoding.decode_tokens_to_str(hr.ids).split()  # as below
        if not word_conf:
            hr.conf_words, hr.word_conf = [], []
        return hr
    manual = _head_from_hyp(hyp, head, blank)
    out = model.transcribe([audio], override_config=_transcribe_config())
    model.eval()  # transcribe() leaves the sub-modules in training mode
    if isinstance(out, tuple):
        out = out[0]
    hr = _head_from_hyp(out[0], head, blank)
    if head == "ctc":
        # NeMo's CTC word confidence splits the text *before* it drops the space in front of
        # punctuation (CTCBPEDecoding._aggregate_token_confidence), unlike the transducers.
        hr.conf_words = manual.conf_words = decoding.decode_tokens_to_str(hr.ids).split()
    for key in ("ids", "frames", "durations", "text", "token_conf", "token_start", "token_end", "words",
                "word_start_frame", "word_end_frame", "word_conf"):
        assert getattr(hr, key) == getattr(manual, key), f"{head}/{strategy}: {key} differs from transcribe()"
    return hr


def _same_decode(a: HeadResult, b: HeadResult) -> bool:
    keys = ("ids", "frames", "durations", "text", "token_start", "token_end", "words", "word_start_frame",
            "word_end_frame", "word_start", "word_end")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def _tdt_greedy_confidence(model, arch, res: ClipResult, hr: HeadResult) -> None:
    """Token and word confidence for per-sample greedy TDT, computed by NeMo's own code.

    NeMo 3.0.0 cannot finish this itself: GreedyTDTInfer records per-step confidences, but the
    aggregation that follows (alignment based, in RNNTDecoding.compute_confidence) indexes the
    empty per-frame lists that duration skips leave and raises IndexError. So we run the
    GreedyTDTInfer object directly, take the confidence of every non-blank step (NeMo's
    max_prob on log_softmax over the V+1 token logits), and let NeMo group them into words.
    """
    decoding = select_head(model, arch, "tdt", "greedy", with_conf=True, alignments=True)
    with torch.no_grad():
        (hyps,) = decoding.decoding(encoder_output=res.enc_tensor, encoded_lengths=res.enc_len_tensor)
    hyp = hyps[0]
    blank = decoding.blank_id
    conf, ids = [], []
    for frame_conf, frame_align in zip(hyp.frame_confidence, hyp.alignments):
        for c, (_logp, label) in zip(frame_conf, frame_align):
            if int(label) != blank:
                conf.append(float(c))
                ids.append(int(label))
    assert ids == hr.ids, "confidence pass decoded differently"
    hr.token_conf = conf
    try:
        hr.word_conf = [float(c) for c in decoding._aggregate_token_confidence_subwords_sentencepiece(
            hr.conf_words, conf, hr.ids)]
    except RuntimeError as e:
        if not _is_word_confidence_failure(e):
            raise
        hr.conf_words, hr.word_conf = [], []


def capture(model, arch, audio: np.ndarray, long_clip: bool = False) -> ClipResult:
    """long_clip: greedy only (no greedy_batch) and no transcribe() cross-check, which would
    triple NeMo's per-step decoding loops on minutes of audio; the manual pipeline uses the same
    NeMo decoding objects, and the cross-check already holds on every clip reference."""
    model.eval()
    state_before = {k: v.clone() for k, v in model.state_dict().items()}
    res = run_manual(model, arch, audio)
    cross_check = not long_clip
    if arch.has_transducer:
        head = "tdt" if arch.is_tdt else "rnnt"
        greedy = _decode_pass(model, arch, head, res, audio, "greedy", with_conf=not arch.is_tdt,
                              cross_check=cross_check)
        if arch.is_tdt:
            _tdt_greedy_confidence(model, arch, res, greedy)
        # greedy_batch (label looping) is what NeMo's published configs use; it is recorded too
        # because its TDT rules differ from greedy's at max_symbols and blank-with-duration-0.
        if not long_clip:
            res.batch[head] = _decode_pass(model, arch, head, res, audio, "greedy_batch", with_conf=True)
        res.heads[head] = greedy
    if arch.has_ctc:
        res.heads["ctc"] = _decode_pass(model, arch, "ctc", res, audio, "greedy", with_conf=True,
                                        cross_check=cross_check)
    for k, v in model.state_dict().items():
        assert torch.equal(v, state_before[k]), f"state changed during capture: {k}"
    return res
