"""parakeet_py.SpeakerEncoder and VoiceRegistry on the committed speaker fixture
(tests/data/speaker, docs/fixtures.md): the embedding against SpeechBrain's, enrolment,
identification, fingerprints and the registry file."""

import re
from pathlib import Path

import gguf
import numpy as np
import pytest

from parakeet_py import SpeakerEncoder, VoiceRegistry
from parakeet_py.errors import InvalidArgument, InvalidAudio

DATA = Path(__file__).resolve().parents[1] / "data" / "speaker"


def reference(clip):
    tensors = {t.name: np.array(t.data) for t in gguf.GGUFReader(str(DATA / f"ref_{clip}.gguf")).tensors}
    return tensors["pcm"].astype(np.float32), tensors["embedding"]


@pytest.fixture(scope="module")
def encoder():
    with SpeakerEncoder(DATA / "ecapa_tiny.gguf") as enc:
        yield enc


def test_embedding_matches_speechbrain(encoder):
    pcm, want = reference("speech")
    got = encoder.embed(pcm, sample_rate=16000)
    assert got.dtype == np.float32 and got.shape == (encoder.dim,) == (192,)
    assert float(got @ want) >= 0.9999
    assert np.abs(got - want).max() <= 1e-4
    assert encoder.family == "voicedetect:ecapa_tdnn:spkrec_tiny:192"
    assert encoder.identity.startswith("sha256:") and len(encoder.identity) == 71


def test_unusable_audio_and_other_models_are_refused(encoder):
    with pytest.raises(InvalidAudio, match="too little audio"):
        encoder.embed(np.zeros(400, np.float32), sample_rate=16000)
    with pytest.raises(InvalidArgument, match="is not a speaker model"):
        SpeakerEncoder(DATA.parent / "nemo" / "ctc" / "model.gguf")


def test_enrol_identify_save_and_load(encoder, tmp_path):
    speech, _ = reference("speech")
    conversation, _ = reference("conversation")
    reg = VoiceRegistry()
    reg.enroll("Ada", speech, encoder, sample_rate=16000)
    assert len(reg) == 1
    assert reg.fingerprint == (encoder.family, encoder.identity)
    assert reg.identify(speech, encoder, sample_rate=16000) == ("Ada", 1.0)
    assert encoder.last_warning == ""
    path = tmp_path / "voices.pksr"
    reg.save(path)
    back = VoiceRegistry.load(path)
    assert len(back) == 1 and back.fingerprint == reg.fingerprint
    # The fixture network puts the two clips at cosine 0.95, within the 0.05 margin.
    back.enroll("Bob", conversation, encoder, sample_rate=16000)
    name, score = back.identify(speech, encoder, sample_rate=16000)
    assert name == "" and score == 1.0
    with pytest.raises(InvalidArgument, match="speaker name is empty"):
        back.enroll("", speech, encoder, sample_rate=16000)


def test_embeddings_from_elsewhere_and_fingerprints(encoder):
    speech, _ = reference("speech")
    v = encoder.embed(speech, sample_rate=16000)
    reg = VoiceRegistry()
    reg.add("Ada", v)
    assert reg.identify(speech, encoder, sample_rate=16000)[0] == "Ada"
    assert encoder.last_warning == "no encoder fingerprint"
    reg.strict = True
    with pytest.raises(InvalidArgument, match="no encoder fingerprint"):
        reg.identify(speech, encoder, sample_rate=16000)
    other = VoiceRegistry()
    other.add("Ada", v, family="voicedetect:campplus:x:192", weights="sha256:1")
    with pytest.raises(InvalidArgument, match="encoder family"):
        other.identify(speech, encoder, sample_rate=16000)
    with pytest.raises(InvalidArgument, match="registry expects 192"):
        other.add("Bob", v[:64])


def test_cli_enroll_identify_list(tmp_path):
    import soundfile as sf
    from parakeet_cli.main import cli
    from test_cli import runner

    speech, _ = reference("speech")
    wav = tmp_path / "ada.wav"
    sf.write(wav, speech, 16000, subtype="FLOAT")
    reg, model = tmp_path / "voices.pksr", DATA / "ecapa_tiny.gguf"

    def invoke(*args):
        return runner().invoke(cli, ["speakers", *map(str, args)], catch_exceptions=False)

    r = invoke("enroll", reg, "Ada", wav, wav, "-m", model)
    assert r.exit_code == 0, r.output
    assert "1 name(s)" in r.output
    assert invoke("list", reg).output == "Ada\t2\n"
    r = invoke("identify", reg, wav, "-m", model, "--json")
    assert r.exit_code == 0, r.output
    assert '"name": "Ada"' in r.output and '"score": 1.0' in r.output
    assert invoke("identify", reg, wav, "-m", model).output.strip() == f"{wav}: Ada (1.0000)"


def test_diarize_named_adds_a_name_entry_per_slot(encoder):
    from parakeet_py import Diarizer

    pcm, _ = reference("conversation")
    reg = VoiceRegistry()
    reg.enroll("Ada", pcm, encoder, sample_rate=16000)
    with Diarizer(DATA.parent / "nemo" / "sortformer_offline" / "model.gguf") as d:
        plain = d.document(pcm, sample_rate=16000)
        named = d.diarize_named(pcm, encoder, reg, sample_rate=16000)
        unregistered = d.diarize_named(pcm, encoder, sample_rate=16000)
        profiled = d.diarize_named(pcm, encoder, reg, sample_rate=16000, profiles=True)
    assert named["segments"] == plain["segments"] and named["speakers"] == plain["speakers"]
    slots = sorted({str(s["speaker"]) for s in plain["segments"]})
    # This random diarizer's slots overlap too much for 2 s of clean voice: no slot is named.
    assert named["names"] == {slot: {"name": "", "score": 0.0} for slot in slots} == unregistered["names"]
    profile = profiled["speaker_profiles"]
    assert profile["version"] == 1 and profile["encoder"] == {"identity": encoder.identity, "dimension": 192}
    assert [p["speaker"] for p in profile["speakers"]] == [int(slot) for slot in slots]
    assert all(p["unavailable_reason"] == "insufficient_clean_speech" and "embedding" not in p
               and p["clean_duration"] < 2.0 for p in profile["speakers"])


@pytest.mark.parametrize("changes, drop, message", [
    ({"voicedetect.fbank.win_length": 3_000_000_000}, (), "voicedetect.fbank sizes out of range"),
    ({"voicedetect.fbank.n_mels": 64}, (), "the network takes 80 mel bins, the front end gives 64"),
    ({"voicedetect.fbank.window": "hann"}, (), "fbank window 'hann' is not supported"),
    ({"voicedetect.arch": "xvector_tdnn"}, (),
     "architecture 'xvector_tdnn' is not supported (only ecapa_tdnn, wespeaker_resnet34, eres2net, campplus)"),
    ({"voicedetect.embedding_dim": 256}, (), "fc.conv.weight gives 192-value embeddings"),
    ({}, ("voicedetect.embedding_dim",), "has no speaker embedding (an analysis model?)"),
])
def test_files_the_encoder_cannot_run_are_refused_at_load(tmp_path, changes, drop, message):
    from gguf_rewrite import rewrite_gguf
    from parakeet_py.errors import ParakeetError

    bad = rewrite_gguf(DATA / "ecapa_tiny.gguf", tmp_path / "bad.gguf", changes, drop=drop)
    with pytest.raises(ParakeetError, match=re.escape(message)):
        SpeakerEncoder(bad)
