"""``Context(..., isa=, attention=, bf16=, q8_all=, q8_subsampling=)`` reach the library as the
options of ``parakeet_capi_load_with``: only the keys given, each giving exactly what its
environment variable gives, overriding that variable, and never written to ``os.environ``."""

import json
import os

import pytest

from parakeet_py import Context, InvalidArgument, ParakeetError
from parakeet_py.context import ISA_LEVELS, load_options

from data_helpers import MODEL, SPEECH

Q8_MODEL = MODEL.with_name("model-q8_0.gguf")
ENV_VARS = ("PARAKEET_CPU", "PARAKEET_ATT_CONTEXT", "PARAKEET_Q8_ALL", "PARAKEET_Q8_SUBSAMPLING", "PARAKEET_BF16")

pytestmark = pytest.mark.skipif(not (MODEL.exists() and Q8_MODEL.exists()), reason="fixture models missing")


@pytest.fixture(autouse=True)
def no_option_variables(monkeypatch):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def outcome(model, **options):
    """What a load gives: the model's description and a transcript (JSON, every token's time and
    confidence), for comparing two ways of asking for the same thing."""
    with Context(model, **options) as ctx:
        info = dict(ctx.info)
        return {"info": info, "transcript": ctx.transcribe(SPEECH).to_dict()}


def cpu_levels():
    """The levels this CPU runs: scalar up to its own, along its architecture's chain."""
    with Context(MODEL) as ctx:
        top = ctx.info["isa"]
    chain = ("scalar", "neon", "dotprod", "i8mm") if top in ("neon", "dotprod", "i8mm") else ("scalar", "avx2", "avx512")
    return chain[:chain.index(top) + 1]


def test_only_the_given_keys_are_sent():
    assert load_options() == {}
    assert load_options(isa="AVX2", attention=(8, 4), bf16=False, q8_all=True) == {
        "isa": "avx2", "attention": [8, 4], "bf16": False, "q8_all": True}
    assert load_options(attention="full", q8_subsampling=True) == {"attention": "full", "q8_subsampling": True}
    with Context(MODEL) as ctx:
        assert ctx.load_options == {}
    with Context(MODEL, attention="full", isa=cpu_levels()[0]) as ctx:
        assert ctx.load_options == {"attention": "full", "isa": "scalar"}


@pytest.mark.parametrize("kwargs,match", [
    ({"isa": "sse2"}, "isa must be one of"), ({"isa": 2}, "isa must be one of"),
    ({"bf16": "yes"}, "bf16 must be True or False"), ({"q8_all": 1}, "q8_all must be True or False"),
    ({"q8_subsampling": None, "attention": (0, 1)}, "attention"),
])
def test_bad_values_are_refused_before_loading(kwargs, match):
    with pytest.raises(InvalidArgument, match=match):
        Context(MODEL.with_name("does not exist.gguf"), **kwargs)  # refused before the (missing) file is read


@pytest.mark.parametrize("level", ISA_LEVELS)
def test_isa_is_what_PARAKEET_CPU_gives(level, monkeypatch):
    if level not in cpu_levels():
        with pytest.raises(ParakeetError):  # a level above the CPU's is refused
            Context(MODEL, isa=level)
        return
    by_option = outcome(MODEL, isa=level)
    assert by_option["info"]["isa"] == level
    monkeypatch.setenv("PARAKEET_CPU", level)
    assert outcome(MODEL) == by_option


@pytest.mark.parametrize("attention,variable", [("full", "0"), ((16, 16), "16")])
def test_attention_is_what_PARAKEET_ATT_CONTEXT_gives(attention, variable, monkeypatch):
    by_option = outcome(MODEL, attention=attention)
    expected = {"mode": "full"} if attention == "full" else {"mode": "local", "left": 16, "right": 16}
    assert by_option["info"]["attention"] == expected
    assert by_option["transcript"]["attention"] == ("full" if attention == "full" else [16, 16])
    monkeypatch.setenv("PARAKEET_ATT_CONTEXT", variable)
    assert outcome(MODEL) == by_option


@pytest.mark.parametrize("key,variable,value", [("q8_all", "PARAKEET_Q8_ALL", False),
                                                ("q8_subsampling", "PARAKEET_Q8_SUBSAMPLING", True)])
def test_q8_switches_are_what_their_variables_give(key, variable, value, monkeypatch):
    default = outcome(Q8_MODEL)
    by_option = outcome(Q8_MODEL, **{key: value})
    assert by_option != default  # the switch changes something (packed bytes, the numbers)
    assert outcome(Q8_MODEL, **{key: not value}) == default
    monkeypatch.setenv(variable, "1" if value else "0")
    assert outcome(Q8_MODEL) == by_option


def test_bf16_is_what_PARAKEET_BF16_gives(monkeypatch):
    try:
        by_option = outcome(MODEL, bf16=True)
    except ParakeetError as e:  # a CPU without AVX512_BF16: refused the same way both ways
        monkeypatch.setenv("PARAKEET_BF16", "1")
        with pytest.raises(type(e)):
            Context(MODEL)
        return
    assert by_option["info"]["bf16_encoder"] is True
    monkeypatch.setenv("PARAKEET_BF16", "1")
    assert outcome(MODEL) == by_option


def test_an_option_overrides_its_variable(monkeypatch):
    monkeypatch.setenv("PARAKEET_ATT_CONTEXT", "16")
    monkeypatch.setenv("PARAKEET_Q8_ALL", "0")
    with Context(Q8_MODEL, attention="auto", q8_all=True) as ctx:
        assert ctx.info["attention"] == {"mode": "auto"}
        packed = ctx.info["packed_bytes"]
    monkeypatch.delenv("PARAKEET_ATT_CONTEXT")
    monkeypatch.delenv("PARAKEET_Q8_ALL")
    with Context(Q8_MODEL) as ctx:
        assert ctx.info["packed_bytes"] == packed


def test_the_binding_never_writes_the_environment():
    before = dict(os.environ)
    levels = cpu_levels()
    with Context(Q8_MODEL, isa=levels[-1], attention=(8, 8), q8_all=False, q8_subsampling=True):
        pass
    assert dict(os.environ) == before


def test_the_options_document_is_json_the_library_takes():
    # What Context sends is exactly json.dumps(load_options(...)); the library's own parser
    # refuses anything else (tests/python/test_errors.py), so a loaded context proves the form.
    options = load_options(attention=(8, 4), q8_all=True, q8_subsampling=False, bf16=False)
    with Context(Q8_MODEL, attention=(8, 4), q8_all=True, q8_subsampling=False, bf16=False) as ctx:
        assert json.dumps(ctx.load_options) == json.dumps(options)
        assert ctx.info["attention"] == {"mode": "local", "left": 8, "right": 4}
