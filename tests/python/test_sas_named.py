"""Named speaker-attributed transcripts: Context.transcribe(audio, diarizer=d, speakers=registry,
speaker_encoder=enc). A voice enrolled from one diarized slot names exactly that slot's words and
utterances; an empty registry names nobody; the transcript is otherwise the unnamed one; bad
combinations are refused."""

import pytest

from parakeet_py import Context, Diarizer, InvalidArgument, SpeakerEncoder, VoiceRegistry
from voice_helpers import ASR, CLIP, DIARIZER, ENCODER, enrolled_registry


@pytest.fixture(scope="module")
def models():
    with Context(ASR) as asr, Diarizer(DIARIZER) as diarizer, SpeakerEncoder(ENCODER) as encoder:
        yield asr, diarizer, encoder


def test_the_enrolled_slot_is_named_and_no_other(models):
    asr, diarizer, encoder = models
    registry, slot = enrolled_registry(diarizer, encoder)
    named = asr.transcribe(CLIP, diarizer=diarizer, speakers=registry, speaker_encoder=encoder)
    plain = asr.transcribe(CLIP, diarizer=diarizer)
    assert [(w.text, w.speaker) for w in named.words] == [(w.text, w.speaker) for w in plain.words]
    assert [(u.speaker, u.text) for u in named.utterances] == [(u.speaker, u.text) for u in plain.utterances]
    assert {u.speaker for u in named.utterances} - {slot, -1}, "the clip needs another speaker to stay unnamed"
    for item in named.words + named.utterances:
        if item.speaker == slot:
            assert item.name == "Ada" and item.name_score >= 0.99, item
        else:
            assert (item.name, item.name_score) == ("", 0.0), item
    assert any(u.speaker == slot for u in named.utterances)
    assert named.utterances[0].to_dict()["name"] == named.utterances[0].name
    assert all(w.name is None and "name" not in w.to_dict() for w in plain.words)


def test_an_empty_registry_names_nobody(models):
    asr, diarizer, encoder = models
    t = asr.transcribe(CLIP, diarizer=diarizer, speakers=VoiceRegistry(), speaker_encoder=encoder)
    assert t.words and {(w.name, w.name_score) for w in t.words + t.utterances} == {("", 0.0)}


@pytest.mark.parametrize("kwargs, message", [
    ({"speakers": "registry"}, "go together"),
    ({"speaker_encoder": "encoder"}, "go together"),
    ({"speakers": "registry", "speaker_encoder": "encoder", "diarizer": None}, "with diarizer="),
    ({"speakers": "registry", "speaker_encoder": "encoder"}, "must be a VoiceRegistry"),
    ({"speakers": VoiceRegistry(), "speaker_encoder": "encoder", "progress": lambda f: None}, "no progress"),
])
def test_bad_combinations_are_refused(models, kwargs, message):
    asr, diarizer, _ = models
    with pytest.raises(InvalidArgument, match=message):
        asr.transcribe(CLIP, **{"diarizer": diarizer, **kwargs})
