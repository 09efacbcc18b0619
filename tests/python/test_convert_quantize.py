"""Q8_0 bytes match ggml's reference encoder; the f16/q8_0 allowlist is exactly the published one."""

import struct
from decimal import ROUND_HALF_UP, Decimal

import gguf
import numpy as np
import pytest

from parakeet_py.convert import quantize
from parakeet_py.convert.quantize import decode_q8_0, encode_f16, encode_q8_0, storage_type
from parakeet_py.convert.errors import ConversionError


def ggml_q8_0_reference(row: np.ndarray) -> bytes:
    """A line-by-line transcription of ggml's quantize_row_q8_0_ref, in float32 scalars.

    roundf (half away from zero) is done with Decimal ROUND_HALF_UP and the half-precision
    store with struct's 'e' format, so neither shares code with the implementation.
    """
    out = bytearray()
    for b in range(0, row.size, 32):
        block = row[b:b + 32].astype(np.float32)
        amax = np.float32(0.0)
        for v in block:
            amax = max(amax, np.float32(abs(v)))
        d = np.float32(amax / np.float32(127))
        inv = np.float32(np.float32(1.0) / d) if d != 0 else np.float32(0.0)
        out += struct.pack("<e", float(d))
        for v in block:
            x0 = np.float32(v * inv)
            q = int(Decimal(float(x0)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
            out += struct.pack("b", q)
    return bytes(out)


@pytest.mark.parametrize("shape", [(1, 32), (3, 64), (5, 96), (7, 320)])
@pytest.mark.parametrize("scale", [1.0, 1e-3, 300.0])
def test_q8_0_bytes_equal_the_ggml_reference(shape, scale):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    x[0, :32] = 0.0  # an all-zero block: d = 0, id = 0
    got = encode_q8_0(x)
    assert got.dtype == np.uint8 and got.shape == (shape[0], shape[1] // 32 * 34)
    want = b"".join(ggml_q8_0_reference(r) for r in x)
    assert got.tobytes() == want


def test_q8_0_rounds_halves_away_from_zero_not_to_even():
    block = np.zeros(32, np.float32)
    block[0] = 127.0  # amax 127 → d = 1, id = 1: the products are the inputs
    block[1:7] = [2.5, -2.5, 0.5, -0.5, 1.5, 126.5]
    raw = encode_q8_0(block[None, :])
    q = raw[0, 2:].view(np.int8)
    assert q[:7].tolist() == [127, 3, -3, 1, -1, 2, 127]
    assert raw[0, :2].view("<f2")[0] == 1.0


def test_q8_0_just_below_a_half_rounds_down():
    block = np.zeros(32, np.float32)
    block[0] = 127.0
    block[1] = np.nextafter(np.float32(0.5), np.float32(0))  # 0.49999997: adding 0.5 in float32 would give 1
    assert encode_q8_0(block[None, :])[0, 3].view(np.int8) == 0


def test_q8_0_matches_the_gguf_package_encoder():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((9, 256)).astype(np.float32)
    assert encode_q8_0(x).tobytes() == gguf.quantize(x, gguf.GGMLQuantizationType.Q8_0).tobytes()


def test_q8_0_decodes_within_half_a_step():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 128)).astype(np.float32)
    back = decode_q8_0(encode_q8_0(x), x.shape)
    amax = np.abs(x.reshape(-1, 32)).max(axis=1, keepdims=True)
    err = np.abs(back - x).reshape(-1, 32)
    assert (err <= amax / 127 * 0.5 + amax * 2.0**-10).all()
    assert np.array_equal(back, gguf.dequantize(encode_q8_0(x), gguf.GGMLQuantizationType.Q8_0))


def test_q8_0_needs_whole_blocks():
    with pytest.raises(ValueError, match="divisible by 32"):
        encode_q8_0(np.zeros((2, 48), np.float32))


def test_f16_rounds_to_nearest_even_and_refuses_overflow():
    x = np.array([1.0, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 65504.0], np.float32)
    assert encode_f16(x).tolist() == [1.0, 1.0, 1.0 + 2.0**-9, 65504.0]  # ties to even
    with pytest.raises(ConversionError, match="float16 range"):
        encode_f16(np.array([70000.0], np.float32), "w")


ALLOWED = [
    "encoder.layers.0.feed_forward1.linear1.weight",
    "encoder.layers.12.feed_forward2.linear2.weight",
    "encoder.layers.3.self_attn.linear_q.weight",
    "encoder.layers.3.self_attn.linear_k.weight",
    "encoder.layers.3.self_attn.linear_v.weight",
    "encoder.layers.3.self_attn.linear_out.weight",
    "encoder.layers.3.self_attn.linear_pos.weight",
    "encoder.pre_encode.out.weight",
    "joint.enc.weight",
    "joint.pred.weight",
]
NOT_ALLOWED = [
    "encoder.layers.3.self_attn.linear_q.bias",
    "encoder.layers.0.feed_forward1.linear1.bias",
    "encoder.layers.0.conv.pointwise_conv1.weight",
    "encoder.layers.0.conv.depthwise_conv.weight",
    "encoder.layers.0.self_attn.pos_bias_u",
    "encoder.layers.0.norm_out.weight",
    "encoder.pre_encode.conv.3.weight",
    "decoder.prediction.embed.weight",
    "decoder.prediction.dec_rnn.lstm.weight_ih_l0",
    "joint.joint_net.2.weight",
    "ctc_decoder.decoder_layers.0.weight",
    "decoder.decoder_layers.0.weight",
    "preprocessor.featurizer.fb",
    "xencoder.pre_encode.out.weight",
    "joint.enc.weight.extra",
]


@pytest.mark.parametrize("out_type", ["f16", "q8_0"])
def test_allowlisted_matmul_weights_take_the_requested_type(out_type):
    for name in ALLOWED:
        assert storage_type(name, (64, 256), out_type) == out_type, name
        assert storage_type(name, (64, 256), "f32") == "f32"


@pytest.mark.parametrize("out_type", ["f16", "q8_0"])
def test_everything_else_stays_f32(out_type):
    for name in NOT_ALLOWED:
        assert storage_type(name, (64, 256), out_type) == "f32", name


@pytest.mark.parametrize("out_type", ["f16", "q8_0"])
@pytest.mark.parametrize("shape,expected", [
    ((32, 32), True), ((31, 64), False), ((64, 31), False), ((40, 48), False),  # 48 is not whole blocks
    ((640, 640), True), ((64,), False), ((64, 64, 1), False), ((1, 64), False),
])
def test_shape_rules_both_dims_at_least_32_and_whole_blocks(out_type, shape, expected):
    assert (storage_type("joint.enc.weight", shape, out_type) == out_type) is expected


def test_unknown_out_type_is_an_error():
    with pytest.raises(ConversionError, match="unknown output type"):
        storage_type("joint.enc.weight", (64, 64), "q3_k")


def test_encoded_sizes():
    assert quantize.encoded_nbytes((3, 64), "f32") == 768
    assert quantize.encoded_nbytes((3, 64), "f16") == 384
    assert quantize.encoded_nbytes((3, 64), "q8_0") == 3 * 2 * 34
