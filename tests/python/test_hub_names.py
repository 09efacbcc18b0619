"""The model-name syntax OWNER/REPO[/PATH][@REVISION][:TYPE] (parakeet_py.hub.names): what is a
name, what is a path, and the aliases of each kind. No Hub is involved."""

import pytest

from parakeet_py import InvalidArgument
from parakeet_py.hub import HubName, parse_name, resolve_model
from parakeet_py.hub.names import is_model_name


@pytest.mark.parametrize("text, expected", [
    ("nvidia/parakeet-tdt-0.6b-v3", HubName("nvidia/parakeet-tdt-0.6b-v3")),
    ("nvidia/parakeet-tdt-0.6b-v3:F32", HubName("nvidia/parakeet-tdt-0.6b-v3", out_type="f32")),
    ("mudler/parakeet-cpp-gguf/tdt-0.6b-v3-q8_0.gguf",
     HubName("mudler/parakeet-cpp-gguf", path="tdt-0.6b-v3-q8_0.gguf")),
    ("o/r/sub/dir/m.nemo@v1.0:q4_k", HubName("o/r", path="sub/dir/m.nemo", revision="v1.0", out_type="q4_k")),
    ("o/r@refs/pr/1", HubName("o/r", revision="refs/pr/1")),
    ("parakeet-tdt-0.6b-v3:f16", HubName("nvidia/parakeet-tdt-0.6b-v3", out_type="f16")),
])
def test_names_parse_into_their_parts(text, expected):
    assert parse_name(text, "asr") == expected
    assert str(expected).lower() == str(parse_name(str(expected), "asr")).lower()


@pytest.mark.parametrize("text", ["model.gguf", "./o/r", "/abs/o/r", "~/o/r", "models/m.gguf", "dir/m.nemo",
                                  "C:\\models\\m.gguf", "-o/r", "o/r-", "a b/c"])
def test_paths_are_not_names(text):
    assert parse_name(text, "asr") is None and not is_model_name(text, "asr")
    assert resolve_model(text) == text  # left to the loader, which reports a missing file as before


@pytest.mark.parametrize("text", ["o/r@", "o/r:", "o/r:q8-0"])
def test_a_malformed_name_is_refused_with_the_syntax(text):
    with pytest.raises(InvalidArgument, match=r"OWNER/REPO\[/PATH\]\[@REVISION\]\[:TYPE\]"):
        parse_name(text, "asr")
    assert is_model_name(text, "asr")  # so the CLI passes it on, and the load reports the syntax


def test_aliases_belong_to_their_kind():
    assert parse_name("sortformer", "diarize") == HubName("nvidia/diar_streaming_sortformer_4spk-v2")
    assert parse_name("sortformer", "asr") is None
    assert is_model_name("silero", "vad") and not is_model_name("silero", "asr")
    with pytest.raises(InvalidArgument, match="unknown model kind"):
        parse_name("o/r", "tts")


def test_an_existing_file_always_wins(tmp_path, monkeypatch):
    (tmp_path / "nvidia").mkdir()
    (tmp_path / "nvidia" / "parakeet-tdt-0.6b-v3").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    assert resolve_model("nvidia/parakeet-tdt-0.6b-v3") == "nvidia/parakeet-tdt-0.6b-v3"
