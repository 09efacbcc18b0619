"""NeMo's buffered chunked streaming of an offline model, run in-process, as the reference for
libparakeet's ChunkedStream (docs/fixtures.md, "Chunked streaming").

Transducer heads follow NeMo's examples/asr/asr_chunked_inference/rnnt/
speech_to_text_streaming_infer_rnnt.py (NVIDIA-NeMo/Speech @ 036282916d79) with NeMo 3.0.0's own
building blocks: ContextSize / StreamingBatchedAudioBuffer for the windows, the model's forward()
on each [left | chunk | right] window, and the label-looping decoding_computer with its state
carried from chunk to chunk; the chunks' BatchedHyps are merged with BatchedHyps.merge_. Only the
3.0.0 API drift is adapted (the computer returns (hyps, state); batched_hyps_to_hypotheses takes
no second positional argument).

CTC heads have no such script in NeMo; the reference runs NeMo's encoder and CTC head on the
same windows, keeps the same frames and decodes their concatenation with NeMo's greedy CTC
decoding (argmax, repeats collapsed across chunk borders, blank dropped).

One deliberate deviation, only when the right context is 0: the script cuts the left context off
the encoder output with the buffer's scalar ContextSize, which lags one chunk behind when R = 0
(ContextSize.add_frames_get_removed_ moves the new audio to the chunk only if it exceeds a
chunk, `right > chunk`; NeMo then logs "Expected context ..." warnings), so the script decodes the
previous chunk's frames again and never the last one. The per-utterance ContextSizeBatch that the
script uses for the window's length and the decoded frame count is right, and the reference cuts
with it. For R > 0 the two are asserted equal, so nothing changes there.
"""
import copy
import difflib
from dataclasses import dataclass, field

import numpy as np
import torch
from omegaconf import OmegaConf, open_dict

from . import capture

# (left, chunk, right) seconds: the script's two recommendations, a short latency and one
# without right context.
SETTINGS = {
    "10-2-2": (10.0, 2.0, 2.0),
    "10-10-5": (10.0, 10.0, 5.0),
    "4-1-1": (4.0, 1.0, 1.0),
    "2-1-0": (2.0, 1.0, 0.0),
}
# 30 s (a multiple of 1280 samples), 9.64 s (not: the last-chunk quirk), 1 s (under one chunk
# plus its right context for every setting but 2-1-0).
CLIPS = ("long_30s", "speech", "short_1s")


@dataclass
class Chunk:
    """One window as NeMo's buffer and the script see it (samples from the stream start)."""
    window_start: int
    window_end: int
    left: int           # samples of left context in the window (ContextSizeBatch.left)
    chunk: int
    right: int
    left_frames: int    # encoder frames cut off the front (left // 1280)
    decode_frames: int  # encoder frames decoded
    enc_len: int        # the window's encoder length
    last: bool


@dataclass
class StreamResult:
    setting: str
    contexts_frames: tuple       # (left, chunk, right) in encoder frames
    contexts_samples: tuple      # (left, chunk, right) in samples
    frame_samples: int
    chunks: list = field(default_factory=list)  # [Chunk]
    heads: dict = field(default_factory=dict)   # head -> capture.HeadResult
    chunk_tokens: dict = field(default_factory=dict)  # head -> tokens decoded per chunk
    script_text: dict = field(default_factory=dict)   # head -> tokenizer.ids_to_text (the script's text)
    offline_changed: dict = field(default_factory=dict)  # head -> tokens outside the blocks matching offline
    scalar_context_lags: bool = False  # R = 0: the script's scalar ContextSize lags (see module doc)


def contexts(model, left_sec: float, chunk_sec: float, right_sec: float):
    """The script's context sizes (lines 306-326): seconds truncated to whole encoder frames."""
    from nemo.collections.asr.parts.utils.streaming_utils import ContextSize
    pre = model.cfg.preprocessor
    sub = model.encoder.subsampling_factor
    features_per_sec = 1.0 / pre["window_stride"]
    feat2samples = (int(pre["sample_rate"] * pre["window_stride"]) // sub) * sub
    frame_samples = feat2samples * sub
    frames = ContextSize(
        left=int(left_sec * features_per_sec / sub),
        chunk=int(chunk_sec * features_per_sec / sub),
        right=int(right_sec * features_per_sec / sub),
    )
    samples = ContextSize(left=frames.left * frame_samples, chunk=frames.chunk * frame_samples,
                          right=frames.right * frame_samples)
    return frames, samples, frame_samples


def _windows(audio: np.ndarray, samples_ctx, frame_samples: int):
    """The script's chunk loop (lines 404-502) over one utterance, batch 1: yields the buffer's
    samples and the Chunk it describes, in order."""
    from nemo.collections.asr.parts.utils.streaming_utils import StreamingBatchedAudioBuffer
    sig = torch.from_numpy(audio)[None, :]
    n = sig.shape[1]
    buffer = StreamingBatchedAudioBuffer(batch_size=1, context_samples=samples_ctx, dtype=sig.dtype, device="cpu")
    rest = torch.tensor([n], dtype=torch.long)
    left_sample = 0
    right_sample = min(samples_ctx.chunk + samples_ctx.right, n)
    while left_sample < n:
        chunk_length = min(right_sample, n) - left_sample
        is_last_batch = chunk_length >= rest
        is_last = right_sample >= n
        lengths = torch.where(is_last_batch, rest, torch.full_like(rest, chunk_length))
        buffer.add_audio_batch_(sig[:, left_sample:right_sample], audio_lengths=lengths,
                                is_last_chunk=is_last, is_last_chunk_batch=is_last_batch)
        ctx_b = buffer.context_size_batch
        left, chunk, right = int(ctx_b.left[0]), int(ctx_b.chunk[0]), int(ctx_b.right[0])
        s = buffer.context_size
        lags = (s.left, s.chunk, s.right) != (left, chunk, right)
        assert buffer.samples.shape[1] == left + chunk + right == int(ctx_b.total()[0])
        yield buffer.samples, Chunk(window_start=right_sample - buffer.samples.shape[1], window_end=right_sample,
                                    left=left, chunk=chunk, right=right, left_frames=left // frame_samples,
                                    decode_frames=-1, enc_len=-1, last=bool(is_last_batch[0])), lags
        rest -= lengths
        left_sample = right_sample
        right_sample = min(right_sample + samples_ctx.chunk, n)


def _script_decoding_cfg(model, arch, with_conf: bool):
    """The script's decoding config (lines 237-271): RNNTDecodingConfig() defaults (greedy_batch,
    label looping, max_symbols 10), durations from the loss via change_decoding_strategy;
    with_conf adds the fixtures' confidence config (it changes no decision; asserted)."""
    from nemo.collections.asr.parts.submodules.rnnt_decoding import RNNTDecodingConfig
    cfg = OmegaConf.structured(RNNTDecodingConfig())
    with open_dict(cfg):
        assert cfg.strategy == "greedy_batch" and cfg.greedy.loop_labels is True
        cfg.tdt_include_token_duration = True  # the script's cfg.timestamps = True
        cfg.greedy.preserve_alignments = False
        cfg.fused_batch_size = -1
        cfg.beam.return_best_hypothesis = True
        cfg.compute_timestamps = True
        if with_conf:
            cfg.confidence_cfg = OmegaConf.merge(cfg.confidence_cfg, capture.CONFIDENCE_CFG)
    return cfg


def _set_transducer_decoding(model, arch, with_conf: bool):
    cfg = _script_decoding_cfg(model, arch, with_conf)
    if arch.has_ctc:
        model.change_decoding_strategy(cfg, decoder_type="rnnt", verbose=False)
    else:
        model.change_decoding_strategy(cfg, verbose=False)
    return model.decoding


def _prepare(model):
    """The script's model setup (lines 231-293) for CPU float32."""
    model.freeze()
    model.preprocessor.featurizer.dither = 0.0
    model.preprocessor.featurizer.pad_to = 0
    model.eval()


def _encode(model, arch, window: torch.Tensor):
    """forward() on one window: NeMo's front end (this window's own normalisation) and encoder.
    Returns [1, T, D] encoder output, its length, and the CTC log-probs [1, T, V+1] if any."""
    length = torch.tensor([window.shape[1]], dtype=torch.long)
    if arch.kind == "ctc":
        logp, enc_len, _ = model(input_signal=window, input_signal_length=length)
        return None, enc_len, logp
    enc, enc_len = model(input_signal=window, input_signal_length=length)
    logp = model.ctc_decoder(encoder_output=enc) if arch.has_ctc else None
    return enc.transpose(1, 2), enc_len, logp


def _transducer_pass(model, arch, encoded, with_conf: bool):
    """The script's decoding loop over precomputed windows; returns the merged Hypothesis and the
    tokens decoded per chunk."""
    from nemo.collections.asr.parts.utils.rnnt_utils import batched_hyps_to_hypotheses
    decoding = _set_transducer_decoding(model, arch, with_conf)
    computer = decoding.decoding.decoding_computer
    merged, state, per_chunk = None, None, []
    for enc, c in encoded:
        x = enc[:, c.left_frames:]
        out_len = torch.tensor([c.decode_frames], dtype=torch.long)
        hyps, state = computer(x=x, out_len=out_len, prev_batched_state=state)  # 3.0.0: (hyps, state)
        per_chunk.append(int(hyps.current_lengths[0]))
        merged = hyps if merged is None else merged.merge_(hyps)
    (hyp,) = batched_hyps_to_hypotheses(merged, batch_size=1)
    return decoding, hyp, per_chunk


def _finish_hypothesis(model, decoding, hyp, word_conf: bool):
    """What rnnt_decoder_predictions_tensor does after its decoding call (text, NeMo's char/word
    offsets, confidences) and process_timestamp_outputs (seconds), as transcribe() gives them."""
    from nemo.collections.asr.parts.utils.timestamp_utils import process_timestamp_outputs
    decoding.preserve_word_confidence = word_conf
    (hyp,) = decoding.decode_hypothesis([hyp])
    hyp = decoding.compute_rnnt_timestamps(hyp, "all")
    (hyp,) = decoding.compute_confidence([hyp])
    (hyp,) = process_timestamp_outputs([hyp], model.encoder.subsampling_factor,
                                       model.cfg["preprocessor"]["window_stride"])
    return hyp


def _transducer_head(model, arch, head: str, encoded, res: StreamResult):
    decoding, plain, per_chunk = _transducer_pass(model, arch, encoded, with_conf=False)
    ids = plain.y_sequence.tolist()
    res.script_text[head] = model.tokenizer.ids_to_text(ids)  # script line 521
    decoding, hyp, _ = _transducer_pass(model, arch, encoded, with_conf=True)
    assert hyp.y_sequence.tolist() == ids and hyp.timestamp.tolist() == plain.timestamp.tolist(), \
        "the confidence config changed a decision"
    if arch.is_tdt:
        assert hyp.token_duration.tolist() == plain.token_duration.tolist()
    try:
        hyp = _finish_hypothesis(model, decoding, copy.deepcopy(hyp), word_conf=True)
        word_conf = True
    except RuntimeError as e:
        if not capture._is_word_confidence_failure(e):
            raise
        hyp = _finish_hypothesis(model, decoding, hyp, word_conf=False)
        word_conf = False
    hr = capture._head_from_hyp(hyp, head, decoding.blank_id)
    if not word_conf:
        hr.conf_words, hr.word_conf = [], []
    res.heads[head] = hr
    res.chunk_tokens[head] = per_chunk


def _ctc_head(model, arch, encoded, res: StreamResult):
    """NeMo's greedy CTC decoding on the kept frames of every window, concatenated."""
    from nemo.collections.asr.parts.utils.timestamp_utils import process_timestamp_outputs
    kept = [logp[:, c.left_frames:c.left_frames + c.decode_frames] for logp, c in encoded]
    logp = torch.cat(kept, dim=1)
    decoding = capture.select_head(model, arch, "ctc")
    hyps = decoding.ctc_decoder_predictions_tensor(logp, decoder_lengths=torch.tensor([logp.shape[1]]),
                                                   return_hypotheses=True)
    (hyp,) = process_timestamp_outputs(hyps if isinstance(hyps, list) else hyps[0],
                                       model.encoder.subsampling_factor, model.cfg["preprocessor"]["window_stride"])
    hr = capture._head_from_hyp(hyp, "ctc", decoding.blank_id)
    hr.conf_words = decoding.decode_tokens_to_str(hr.ids).split()  # as capture does for CTC
    # first principles: argmax per frame, collapse over the whole sequence, drop blank
    ids, frames = capture.ctc_collapse(logp[0].argmax(-1).tolist(), decoding.blank_id)
    assert (ids, frames) == (hr.ids, hr.frames), "CTC stream result != argmax-collapse of the kept frames"
    res.heads["ctc"] = hr
    # a token belongs to the chunk holding the first frame of its run
    bounds = np.cumsum([c.decode_frames for _, c in encoded])
    res.chunk_tokens["ctc"] = np.bincount(np.searchsorted(bounds, frames, side="right"),
                                          minlength=len(bounds)).tolist()


def _changed(a: list, b: list) -> int:
    """Tokens of the longer sequence outside the longest matching blocks of (id, frame)."""
    matched = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return max(len(a), len(b)) - matched


def stream(model, arch, audio: np.ndarray, setting: str, offline=None) -> StreamResult:
    """Every head of `model` streamed over `audio` under `setting`. `offline` ({head: (ids,
    frames)}, NeMo's offline greedy_batch / CTC greedy result on the same clip) adds how many
    tokens each head changes; a stream of one chunk must be exactly that result."""
    _prepare(model)
    state_before = {k: v.clone() for k, v in model.state_dict().items()}
    frames_ctx, samples_ctx, frame_samples = contexts(model, *SETTINGS[setting])
    res = StreamResult(setting, (frames_ctx.left, frames_ctx.chunk, frames_ctx.right),
                       (samples_ctx.left, samples_ctx.chunk, samples_ctx.right), frame_samples)
    encoded = []  # (encoder output [1, T, D] or None, CTC log-probs or None, Chunk)
    with torch.no_grad(), torch.inference_mode():
        for window, c, lags in _windows(audio, samples_ctx, frame_samples):
            assert not lags or samples_ctx.right == 0, "scalar and per-utterance contexts differ with R > 0"
            res.scalar_context_lags |= lags
            enc, enc_len, logp = _encode(model, arch, window)
            c.enc_len = int(enc_len[0])
            # script lines 459-463: the chunk's frames, or all after the left context on the last chunk
            c.decode_frames = c.enc_len - c.left_frames if c.last else c.chunk // frame_samples
            res.chunks.append(c)
            encoded.append((enc, logp, c))
        if arch.has_transducer:
            head = "tdt" if arch.is_tdt else "rnnt"
            _transducer_head(model, arch, head, [(e, c) for e, _, c in encoded], res)
        if arch.has_ctc:
            _ctc_head(model, arch, [(lp, c) for _, lp, c in encoded], res)
    for k, v in model.state_dict().items():
        assert torch.equal(v, state_before[k]), f"state changed during streaming: {k}"
    if offline is not None:
        for head, h in res.heads.items():
            ids, frames = offline[head]
            res.offline_changed[head] = _changed(list(zip(h.ids, h.frames)), list(zip(ids, frames)))
            # one window = the whole clip: the stream is the offline pass
            assert len(res.chunks) > 1 or res.offline_changed[head] == 0, f"{head}: one chunk != offline"
    return res
