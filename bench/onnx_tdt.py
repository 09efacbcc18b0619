"""The pipeline that bench_e2e.py's onnxruntime and OpenVINO engines run on NeMo's ONNX export
(<model>/onnx/encoder-model.onnx and decoder_joint-model.onnx): a numpy log-mel, one encoder
call, then a Python greedy TDT loop calling decoder_joint once per step. The runtimes differ
only in how a graph is called, so a subclass gives _encode and _joint and inherits the rest;
both runtimes then do the same work around their graphs.
"""
import os
import time

import numpy as np

DURATIONS = (0, 1, 2, 3, 4)  # the bench models' TDT durations (make_bench_models.py)
MAX_SYMBOLS = 10  # NeMo's greedy max_symbols_per_step for these models


class NumpyMel:
    """NeMo's FilterbankFeatures (inference settings) in numpy: pre-emphasis 0.97, STFT
    (n_fft 512, hop 160, centred with zero padding, the model's 400-sample window centred in
    512), power, the model's mel filterbank, log(x + 2^-24), per-feature normalisation over
    the valid frames (std with N-1, + 1e-5), frames past the valid length zeroed."""

    def __init__(self, frontend_npz):
        z = np.load(frontend_npz)
        self.fb = z["fb"].astype(np.float32)  # [n_mels, 257]
        win = z["window"].astype(np.float32)
        self.window = np.zeros(512, np.float32)
        left = (512 - len(win)) // 2
        self.window[left:left + len(win)] = win

    def __call__(self, audio):
        """[1, n_mels, frames] float32 and the number of valid frames."""
        x = np.concatenate([audio[:1], audio[1:] - 0.97 * audio[:-1]]).astype(np.float32)
        n_frames = 1 + len(x) // 160
        valid = len(x) // 160
        x = np.pad(x, 256)
        idx = np.arange(512)[None, :] + 160 * np.arange(n_frames)[:, None]
        spec = np.fft.rfft(x[idx] * self.window, axis=1)
        power = (spec.real ** 2 + spec.imag ** 2).astype(np.float32)
        mel = np.log(power @ self.fb.T + 2.0 ** -24).T  # [n_mels, frames]
        v = mel[:, :valid]
        mean = v.mean(axis=1, keepdims=True)
        std = np.sqrt(((v - mean) ** 2).sum(axis=1, keepdims=True) / (valid - 1)) + 1e-5
        mel = (mel - mean) / std
        mel[:, valid:] = 0.0
        return mel[None].astype(np.float32), valid

    def encoder_inputs(self, audio):
        """The encoder graph's feeds for `audio`: audio_signal and length."""
        mel, valid = self(audio)
        return {"audio_signal": mel, "length": np.array([valid], np.int64)}


class OnnxTdtEngine:
    """A bench_e2e engine over the two graphs. Subclasses set self.mel (NumpyMel) and call
    _set_joint_shape, and give:
      _encode(feeds) -> (encoder output [1, d_model, T], encoded lengths [1])
      _joint(feeds)  -> (logits [..., vocabulary + 1 + durations], state 1, state 2)"""

    def _set_joint_shape(self, joint_width, state_shape):
        # Joint width = vocabulary + blank + durations; the blank id is the vocabulary size.
        self.vocab = joint_width - 1 - len(DURATIONS)
        self.state_shape = state_shape  # the prediction net's LSTM state, batch 1

    def _greedy_tdt(self, enc, enc_len):
        """GreedyTDTInfer._greedy_decode's rules over decoder_joint (one call per step: the
        prediction net on (last label, state) and the joint on one encoder frame)."""
        blank = self.vocab
        nd = len(DURATIONS)
        label = np.array([[blank]], np.int32)
        one = np.array([1], np.int32)
        h = np.zeros(self.state_shape, np.float32)
        c = np.zeros(self.state_shape, np.float32)
        ids, t = [], 0
        while t < enc_len:
            frame = np.ascontiguousarray(enc[:, :, t:t + 1])
            symbols, need_loop = 0, True
            while need_loop and symbols < MAX_SYMBOLS:
                logits, h2, c2 = self._joint({
                    "encoder_outputs": frame, "targets": label, "target_length": one,
                    "input_states_1": h, "input_states_2": c})
                logits = logits.reshape(-1)
                k = int(np.argmax(logits[:-nd]))
                skip = DURATIONS[int(np.argmax(logits[-nd:]))]
                if k != blank:
                    ids.append(k)
                    label = np.array([[k]], np.int32)
                    h, c = h2, c2
                symbols += 1
                t += skip
                need_loop = skip == 0
            if symbols == MAX_SYMBOLS:
                t += 1
        return ids

    def _pipeline(self, audio):
        t0 = time.perf_counter()
        feeds = self.mel.encoder_inputs(audio)
        t1 = time.perf_counter()
        enc, enc_len = self._encode(feeds)
        t2 = time.perf_counter()
        ids = self._greedy_tdt(enc, int(enc_len[0]))
        t3 = time.perf_counter()
        return ids, t3 - t0, {"mel": t1 - t0, "encoder": t2 - t1, "decode": t3 - t2}

    def run(self, audio):
        _, total, stages = self._pipeline(audio)
        return {"seconds": total, "stages": stages}

    def result(self, audio):
        return {"text": None, "ids": self._pipeline(audio)[0]}


def onnx_path(model_dir, part, suffix=""):
    """<model>/onnx/<part>-model<suffix>.onnx (part: encoder | decoder_joint; suffix "" or .int8)."""
    return os.path.join(model_dir, "onnx", f"{part}-model{suffix}.onnx")
