"""Independent re-derivations of NeMo's results, so the fixtures also pin down the rules.

Every check here re-computes a recorded result from first principles (argmax, collapse,
the greedy loops described in docs/fixtures.md, the max_prob formula) and must agree with
what NeMo produced. If NeMo's behaviour ever changes, this fails loudly instead of shipping
fixtures that the documentation no longer describes.
"""
import re

import numpy as np
import torch

from . import configs
from .capture import ClipResult, ctc_collapse


def max_prob_conf(logits: np.ndarray) -> float:
    """NeMo max_prob with alpha 1: (N * p_max - 1) / (N - 1), softmax over the given N logits."""
    x = logits.astype(np.float64)
    p = np.exp(x - x.max())
    p /= p.sum()
    n = x.shape[-1]
    return float((n * p.max() - 1.0) / (n - 1.0))


def detokenize(sp, ids, punctuation) -> str:
    """SentencePiece decode, then NeMo drops one space before each punctuation mark."""
    text = sp.decode([int(i) for i in ids])
    if punctuation:
        pattern = "|".join(re.escape(p) for p in sorted(punctuation))
        text = re.sub(r"(\s)(" + pattern + ")", r"\2", text)
    return text


# A decision whose top two scores are closer than this (in logits) is a near-tie: float32
# rounding in another implementation may decide it the other way, and everything after it then
# legitimately differs. The long-clip references record where the first one is.
TIE_MARGIN = 1e-4


def _margin(x: np.ndarray) -> float:
    top = np.sort(x)[-2:]
    return float(top[1] - top[0])


def check_ctc(res: ClipResult, blank: int, sp, punctuation) -> int:
    """Returns the index of the first token that a near-tie frame may change (-1: none)."""
    h = res.heads["ctc"]
    labels = res.ctc_logprobs.argmax(-1)
    ids, frames = ctc_collapse(labels, blank)
    assert ids == h.ids and frames == h.frames, "CTC ids/frames != argmax-collapse of ctc_logprobs"
    assert h.text == detokenize(sp, ids, punctuation), "CTC text != detokenized ids"
    # token confidence: min (aggregation) of the frame confidences over the token's own run
    conf = []
    for k, start in enumerate(frames):
        end = start
        while end + 1 < len(labels) and labels[end + 1] == labels[start]:
            end += 1
        conf.append(min(max_prob_conf(res.ctc_logprobs[t]) for t in range(start, end + 1)))
    assert np.allclose(conf, h.token_conf, rtol=0, atol=2e-6), "CTC token confidence rule"
    tie = next((t for t in range(len(labels)) if _margin(res.ctc_logprobs[t]) < TIE_MARGIN), None)
    return -1 if tie is None else sum(1 for f in frames if f < tie)


class _Steps:
    """Prediction and joint networks of a NeMo transducer, one step at a time."""

    def __init__(self, model):
        self.model = model
        self.blank = model.decoder.blank_idx

    def pred(self, label: int, state):
        with torch.no_grad():
            g, st = self.model.decoder.predict(torch.tensor([[label]]), state, add_sos=False, batch_size=1)
        return g, st

    def joint(self, f: torch.Tensor, g: torch.Tensor) -> np.ndarray:
        j = self.model.joint
        with torch.no_grad():
            out = j.joint_net(j.project_encoder(f[None, None, :]).unsqueeze(2) + j.project_prednet(g).unsqueeze(1))
        return out[0, 0, 0].numpy()


def greedy_transducer(model, enc: np.ndarray, durations, max_symbols: int):
    """Reference greedy TDT (durations given) / RNN-T (durations None) on valid encoder frames.

    TDT (NeMo GreedyTDTInfer): at frame t, argmax over the V+1 token logits and, separately,
    over the duration logits; a token advances the prediction net, a blank keeps the old
    state; t += duration; keep going at the same frame while the duration is 0, at most
    max_symbols steps; if max_symbols steps were taken, t += 1 on top (whatever the last
    duration was). A blank with duration 0 is not special: it repeats until max_symbols.
    RNN-T: the same without durations; a blank ends the frame, max_symbols tokens end it too.
    """
    s = _Steps(model)
    ids, frames, durs, conf = [], [], [], []
    events = {"max_symbols": 0, "max_symbols_last_skip": 0, "blank_dur0": 0, "first_tie_token": -1}
    g, st_next = s.pred(s.blank, None)
    state = None
    enc_t = torch.from_numpy(enc)
    n_tok = s.blank + 1
    t, T = 0, enc.shape[0]
    while t < T:
        symbols = 0
        while True:
            logits = s.joint(enc_t[t], g)
            tok = int(np.argmax(logits[:n_tok]))
            skip = 1
            margin = _margin(logits[:n_tok])
            if durations is not None:
                skip = durations[int(np.argmax(logits[n_tok:]))]
                margin = min(margin, _margin(logits[n_tok:]))
            if margin < TIE_MARGIN and events["first_tie_token"] < 0:
                events["first_tie_token"] = len(ids)  # the tokens before this step are safe
            if tok == s.blank and durations is not None and skip == 0:
                events["blank_dur0"] += 1
            if tok != s.blank:
                ids.append(tok)
                frames.append(t)
                conf.append(max_prob_conf(logits[:n_tok]))
                if durations is not None:
                    durs.append(skip)
                state = st_next
                g, st_next = s.pred(tok, state)
            symbols += 1
            if durations is None:
                if tok == s.blank:
                    break
                if symbols >= max_symbols:
                    events["max_symbols"] += 1
                    break
                continue
            t += skip
            if skip != 0 or symbols >= max_symbols:
                break
        if durations is None:
            t += 1
        elif symbols == max_symbols:
            t += 1
            events["max_symbols"] += 1
            if skip != 0:
                events["max_symbols_last_skip"] += 1  # the extra +1 lands on top of a real skip
    return ids, frames, durs, conf, events


def check_transducer(model, arch, res: ClipResult, head: str) -> dict:
    h = res.heads[head]
    durations = arch.durations if arch.is_tdt else None
    ids, frames, durs, conf, events = greedy_transducer(model, res.enc, durations, configs.MAX_SYMBOLS)
    assert ids == h.ids and frames == h.frames and durs == h.durations, f"{head}: greedy rules"
    assert np.allclose(conf, h.token_conf, rtol=0, atol=2e-6), f"{head}: token confidence rule"
    # pred0 / joint0
    s = _Steps(model)
    g, _ = s.pred(s.blank, None)
    assert np.allclose(g[0, 0].numpy(), res.pred0, atol=1e-6)
    assert np.allclose(s.joint(torch.from_numpy(res.enc[0]), g), res.joint0, atol=1e-5)
    # how often each decoding branch was hit (reported in the run log and docs/fixtures.md)
    return {"tokens": len(ids), "durations": sorted(set(durs)), **events}


def check_words(res: ClipResult, head: str, frame_sec: float) -> None:
    h = res.heads[head]
    n = len(h.words)
    assert len(h.word_start_frame) == n == len(h.word_end_frame) == len(h.word_start) == len(h.word_end)
    assert np.allclose(h.word_start, np.asarray(h.word_start_frame) * frame_sec)
    assert np.allclose(h.word_end, np.asarray(h.word_end_frame) * frame_sec)
    assert len(h.word_conf) == len(h.conf_words), f"{head}: word confidence count"
    assert len(h.token_conf) == len(h.ids) == len(h.token_start) == len(h.token_end)
