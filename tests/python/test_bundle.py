"""Bundles (docs/bundles.md) from Python: the writer's keys, tensors and hashes, each component
loaded through Context / Vad / Diarizer / SoundTagger / SpeakerEncoder giving the source file's
results, --verify catching a flipped byte, and the errors of the writer and of component choice."""

import hashlib
import shutil

import gguf
import numpy as np
import pytest
import soundfile

from bundle_helpers import ASR, DIAR, content_hash, licence_info
from data_helpers import DATA
from gguf_rewrite import rewrite_gguf
from parakeet_py import BadModel, Context, Diarizer, InvalidArgument, Vad, bundle_components, load_audio
from parakeet_py.convert import ConversionError
from parakeet_py.convert.bundle_verify import verify_bundle
from parakeet_py.convert.bundle_write import ComponentSource, write_bundle
from parakeet_py.convert.meta_value import field_value


def source(name, path, kind=None):
    return ComponentSource(name, path, kind, licence_info(name))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "asr_diar.gguf"
    write_bundle(out, [source("asr", ASR), source("d", DIAR)], long_names=True)
    return out


def test_every_key_and_tensor_is_stored_under_its_component(bundle):
    r = gguf.GGUFReader(bundle)
    keys = {k: field_value(f) for k, f in r.fields.items() if not k.startswith("GGUF.")}
    assert keys["general.architecture"] == "parakeet-bundle"
    assert keys["parakeet.bundle.version"] == 1
    assert keys["parakeet.bundle.components"] == ["asr", "d"]
    tensors = {t.name: t for t in r.tensors}
    for name, path in (("asr", ASR), ("d", DIAR)):
        src = gguf.GGUFReader(path)
        for key, f in src.fields.items():
            if not key.startswith("GGUF.") and key != "general.alignment":
                assert keys[f"{name}.{key}"] == field_value(f), key
        for t in src.tensors:
            copy = tensors[f"{name}.{t.name}"]
            assert (copy.tensor_type, list(copy.shape)) == (t.tensor_type, list(t.shape))
            assert np.asarray(copy.data).tobytes() == np.asarray(t.data).tobytes()
        assert keys[f"parakeet.bundle.{name}.source_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert keys[f"parakeet.bundle.{name}.content_sha256"] == content_hash(path)
        assert keys[f"parakeet.bundle.{name}.license"] == f"license of {name}"
    assert keys["parakeet.bundle.d.kind"] == "diar" and keys["parakeet.bundle.asr.kind"] == "asr"


def test_components_load_with_the_results_of_their_source_files(bundle, speech_wav):
    audio = load_audio(speech_wav, target_rate=16000)
    with Context(bundle, component="asr") as c, Context(ASR) as plain:
        assert c.transcribe(audio, sample_rate=16000, timestamps=True) == \
            plain.transcribe(audio, sample_rate=16000, timestamps=True)
    with Context(bundle) as default:  # the only asr component
        assert default.info["path"] == f"{bundle}:asr"
    with Diarizer(bundle) as d, Diarizer(DIAR) as plain:  # the only diar component
        assert d.document(audio, sample_rate=16000, probabilities=True) == \
            plain.document(audio, sample_rate=16000, probabilities=True)


def test_components_json_matches_the_files(bundle):
    listed = bundle_components(bundle)
    assert [(c["name"], c["kind"], c["tensors"]) for c in listed] == \
        [("asr", "asr", len(gguf.GGUFReader(ASR).tensors)), ("d", "diar", len(gguf.GGUFReader(DIAR).tensors))]
    assert listed[0]["content_sha256"] == content_hash(ASR)
    assert listed[1]["attribution"] == "attribution of d"


def test_verify_catches_a_flipped_byte_in_one_component(bundle, tmp_path):
    assert all(c.ok for c in verify_bundle(bundle))
    damaged = tmp_path / "damaged.gguf"
    shutil.copy(bundle, damaged)
    t = next(t for t in gguf.GGUFReader(damaged).tensors if t.name.startswith("d."))
    with open(damaged, "r+b") as f:
        f.seek(int(t.data_offset) + 3)
        byte = f.read(1)
        f.seek(int(t.data_offset) + 3)
        f.write(bytes([byte[0] ^ 0x10]))
    checks = {c.name: c.ok for c in verify_bundle(damaged)}
    assert checks == {"asr": True, "d": False}


def test_hashes_are_optional_to_the_library_but_verify_needs_them(bundle, tmp_path):
    unhashed = rewrite_gguf(bundle, tmp_path / "unhashed.gguf", {}, drop=["parakeet.bundle.d.content_sha256"])
    with Diarizer(unhashed) as d:
        assert d.model_path == str(unhashed)
    assert bundle_components(unhashed)[1]["content_sha256"] == ""
    with pytest.raises(ConversionError, match="component 'd' has no content_sha256"):
        verify_bundle(unhashed)
    with pytest.raises(ConversionError, match="is not a bundle"):
        verify_bundle(ASR)


def test_a_missing_licence_key_is_refused_at_load(bundle, tmp_path):
    broken = rewrite_gguf(bundle, tmp_path / "broken.gguf", {}, drop=["parakeet.bundle.asr.license"])
    with pytest.raises(BadModel, match="component 'asr' has no key parakeet.bundle.asr.license"):
        Context(broken, component="asr")


def test_vad_component_gives_the_source_files_probabilities(tmp_path):
    pytest.importorskip("onnx")
    from parakeet_py.convert.silero_onnx import convert_silero_onnx
    from parakeet_py.vad import package_onnx

    try:
        onnx = package_onnx()
    except InvalidArgument as e:
        pytest.skip(str(e))
    silero = tmp_path / "silero.gguf"
    convert_silero_onnx(onnx, silero, "f16")
    out = tmp_path / "asr_vad.gguf"
    write_bundle(out, [source("asr", ASR), source("vad", silero)])
    audio = np.sin(np.arange(16000, dtype=np.float32) * 0.05) * np.linspace(0, 1, 16000, dtype=np.float32)
    with Vad(out) as v, Vad(silero) as plain:  # the only vad component
        assert np.array_equal(v.probabilities(audio, 16000), plain.probabilities(audio, 16000))
    with pytest.raises(InvalidArgument, match="is not a Silero VAD model"):
        Vad(out, component="asr")


def test_choosing_among_several_components_of_a_kind_needs_a_name(tmp_path):
    out = tmp_path / "two.gguf"
    write_bundle(out, [source("a", ASR), source("b", ASR)])
    with pytest.raises(InvalidArgument,
                       match=r"several asr components, pick one by name .*components: a \(asr\), b \(asr\)"):
        Context(out)
    with Context(out, component="b") as c:
        assert c.info["path"] == f"{out}:b"
    with pytest.raises(InvalidArgument, match="bundle with no diar component"):
        Diarizer(out)
    with pytest.raises(InvalidArgument, match="component must be a str, not a int"):
        Context(out, component=1)


@pytest.mark.parametrize("sources, message", [
    ([("Asr", ASR)], "bad component name 'Asr'"),
    ([("bundle", ASR)], "component name 'bundle' is reserved"),
    ([("a", ASR), ("a", ASR)], "component 'a' is given twice"),
    ([("d", DIAR)], r"tensor name 'd\.transformer_encoder\..*' is longer than 63 bytes"),
])
def test_writer_refuses_bad_components(tmp_path, sources, message):
    with pytest.raises(ConversionError, match=message):
        write_bundle(tmp_path / "x.gguf", [source(n, p) for n, p in sources])
    assert not (tmp_path / "x.gguf").exists()


def test_writer_needs_each_components_licence_terms(tmp_path):
    bare = ComponentSource("asr", ASR, None, {"license": "MIT"})
    with pytest.raises(ConversionError, match="component 'asr' needs a non-empty license_url, source, attribution, "
                                              "changes"):
        write_bundle(tmp_path / "x.gguf", [bare])


def test_writer_refuses_a_kind_the_file_does_not_hold(tmp_path):
    with pytest.raises(ConversionError, match=r"holds a diar model \(general.architecture 'parakeet'\), not asr"):
        write_bundle(tmp_path / "x.gguf", [source("d", DIAR, "asr")])


def test_writer_refuses_a_bundle_as_a_source(bundle, tmp_path):
    with pytest.raises(ConversionError, match="is itself a bundle"):
        write_bundle(tmp_path / "x.gguf", [source("b", bundle)])


def test_ced_component_gives_the_source_files_scores(tmp_path):
    from parakeet_py import SoundTagger

    ced = DATA / "ced" / "ced-test.gguf"
    out = tmp_path / "asr_ced.gguf"
    write_bundle(out, [source("asr", ASR), source("snd", ced)])
    audio = soundfile.read(DATA / "ced" / "clip_short.wav", dtype="float32")[0]
    with SoundTagger(out) as bundled, SoundTagger(ced) as plain:  # the only ced component
        assert np.array_equal(bundled.scores(audio, 16000), plain.scores(audio, 16000))
    with pytest.raises(InvalidArgument, match="is not a CED sound model"):
        SoundTagger(out, component="asr")


def test_voice_component_embeds_as_the_source_file_with_its_identity(tmp_path):
    from parakeet_py import SpeakerEncoder

    ecapa = DATA / "speaker" / "ecapa_tiny.gguf"
    # ECAPA's tensor names take 61 of ggml's 63 bytes: only a one-letter component name fits.
    with pytest.raises(ConversionError, match="longer than 63 bytes"):
        write_bundle(tmp_path / "long.gguf", [source("voice", ecapa)])
    out = tmp_path / "asr_voice.gguf"
    write_bundle(out, [source("asr", ASR), source("v", ecapa)])
    clip = gguf.GGUFReader(str(DATA / "speaker" / "ref_speech.gguf"))
    pcm = np.array(next(t.data for t in clip.tensors if t.name == "pcm"), dtype=np.float32)
    identity = "sha256:" + hashlib.sha256(ecapa.read_bytes()).hexdigest()
    with SpeakerEncoder(out) as bundled, SpeakerEncoder(ecapa) as plain:  # the only voice component
        assert np.array_equal(bundled.embed(pcm, sample_rate=16000), plain.embed(pcm, sample_rate=16000))
        assert bundled.family == plain.family
        assert bundled.identity == plain.identity == identity
    with SpeakerEncoder(out, component="v") as named:
        assert named.identity == identity
    with pytest.raises(InvalidArgument, match="is not a speaker model"):
        SpeakerEncoder(out, component="asr")
