"""bench_e2e.py's OpenVINO engines: NeMo's ONNX export compiled by OpenVINO's CPU plugin,
run through the same numpy mel and Python greedy TDT loop as the onnxruntime engines
(onnx_tdt.py).

  ov       the plugin's default configuration, INFERENCE_NUM_THREADS = T. Its default
           inference precision is bf16 on a CPU with bf16 instructions (AMX; on the Zen 5 here,
           AVX512_BF16 without AMX, it resolved to bf16 too).
  ov-f32   the same with INFERENCE_PRECISION_HINT forced to f32.
  ov-int8  the encoder quantised by NNCF (make_ov_int8.py's cached IR), decoder_joint as in
           `ov`; default configuration otherwise.

Each engine reads back what the compiled encoder resolved to (precision, threads, streams,
hint) so that a run records what it ran.
"""
import json
import os

from onnx_tdt import NumpyMel, OnnxTdtEngine, onnx_path

# The compiled model's properties a run records.
READ_BACK = ("INFERENCE_PRECISION_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS", "PERFORMANCE_HINT",
             "EXECUTION_MODE_HINT")
VARIANTS = ("ov", "ov-f32", "ov-int8")  # bench_e2e.py's names for these engines


def int8_encoder_path(model_dir):
    """Where make_ov_int8.py caches the NNCF-quantised encoder (OpenVINO IR, .xml + .bin)."""
    return os.path.join(model_dir, "openvino", "encoder-model.int8.xml")


def int8_recipe_path(model_dir):
    """make_ov_int8.py's record of how that IR was made."""
    return os.path.join(model_dir, "openvino", "encoder-model.int8.json")


def _text(value):
    """A property's value as text: an element type by its short name (bf16, f32)."""
    return value.get_type_name() if hasattr(value, "get_type_name") else str(value)


def _static(dim):
    return dim.get_length() if dim.is_static else 1


class OvEngine(OnnxTdtEngine):
    def __init__(self, model_dir, threads, variant):
        import openvino as ov
        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": threads}
        if variant == "ov-f32":
            config["INFERENCE_PRECISION_HINT"] = "f32"
        encoder = int8_encoder_path(model_dir) if variant == "ov-int8" else onnx_path(model_dir, "encoder")
        enc = core.compile_model(encoder, "CPU", config)
        dec = core.compile_model(onnx_path(model_dir, "decoder_joint"), "CPU", config)
        self.enc, self.dec = enc.create_infer_request(), dec.create_infer_request()
        self.mel = NumpyMel(os.path.join(model_dir, "frontend.npz"))
        self._set_joint_shape(_static(dec.output(0).get_partial_shape()[-1]),
                              [_static(d) for d in dec.input("input_states_1").get_partial_shape()])
        resolved = {k: _text(enc.get_property(k)) for k in READ_BACK}
        precision = resolved["INFERENCE_PRECISION_HINT"]
        self.isa = f"openvino {'int8+' if variant == 'ov-int8' else ''}{precision}"
        self.config = {"openvino": ov.get_version(), "asked": config, "encoder": encoder, "resolved": resolved}
        summary = f"OpenVINO {ov.get_version().split('-')[0]}, asked {config}, resolved {resolved}"
        if variant == "ov-int8":
            with open(int8_recipe_path(model_dir)) as f:
                recipe = self.config["int8_recipe"] = json.load(f)
            summary += (f"; encoder: NNCF {recipe['nncf']} {recipe['method']}, model_type {recipe['model_type']}, "
                        f"{recipe['subset_size']} calibration windows")
        self.config["summary"] = summary

    def _encode(self, feeds):
        out = self.enc.infer(feeds)
        return out[0], out[1]

    def _joint(self, feeds):
        out = self.dec.infer(feeds)  # NeMo's outputs: logits, prednet_lengths, state 1, state 2
        return out[0], out[2], out[3]
