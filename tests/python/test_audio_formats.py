"""Compressed formats through both decoders: the fixture speech encoded by PyAV as M4A and MP4
(AAC), WebM (Opus), Ogg (Vorbis), MP3 and MPEG-PS (MP2), at 16, 44.1 and 48 kHz, mono and
stereo (as far as FFmpeg's encoders go: av_helpers.KINDS). Each decodes to its length within one
codec frame, to the samples PyAV itself decodes from it and to their transcript (libsndfile's
decoders: to its own samples' transcript); the decoder is chosen
by content; truncated and empty files are errors; allowlists and length limits hold."""

import io

import numpy as np
import pytest
import soundfile
import soxr

from av_helpers import CASES, KINDS, encode, pyav_reference, speech
from data_helpers import MODEL
from parakeet_py import Context, InvalidAudio, load_audio
from parakeet_py.audio import prepare_audio
from parakeet_py.audio.formats import CONTAINERS, UPLOAD_CONTAINERS, sniff
from parakeet_py.audio.samples import BLOCK_FRAMES

# The kinds whose files state their length (MPEG program streams do not: a truncated one is a
# shorter valid stream; docs/python.md, "Audio formats").
STATED_LENGTH = ("m4a", "mp4", "webm", "ogg", "mp3")
# Decoded by FFmpeg in the package, as in the reference: the samples are the same bits.
DECODED_BY_FFMPEG = ("m4a", "mp4", "webm", "mpeg")


@pytest.fixture(scope="module")
def files():
    return {case: encode(*case) for case in CASES}


@pytest.fixture(scope="module")
def ctx():
    if not MODEL.exists():
        pytest.skip(f"{MODEL} has not been generated")
    with Context(MODEL) as c:
        yield c


def case_id(case):
    return "-".join(map(str, case))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_decodes_to_its_length_and_to_pyav_s_samples(files, case, tmp_path):
    name, rate, channels = case
    data = files[case]
    # The wrong file name: the content decides.
    path = tmp_path / "recording.wav"
    path.write_bytes(data)
    y = load_audio(path)
    assert y.dtype == np.float32 and y.ndim == 1
    source_frames = len(speech(rate, channels))
    reference, file_rate, file_frames = pyav_reference(data)
    frame_seconds = KINDS[name].frame / rate
    assert abs(file_frames / file_rate - source_frames / rate) <= frame_seconds
    assert abs(len(y) / 16000 - source_frames / rate) <= frame_seconds + 1 / 16000
    assert len(y) == len(reference)
    if name in DECODED_BY_FFMPEG:
        np.testing.assert_array_equal(y, reference)
    else:  # libsndfile's Vorbis and MP3 decoders against FFmpeg's
        np.testing.assert_allclose(y, reference, atol=2e-5)
    np.testing.assert_array_equal(load_audio(io.BytesIO(data)), y)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_transcript_equals_that_of_the_decoded_pcm(ctx, files, case):
    data = files[case]
    if case[0] in DECODED_BY_FFMPEG:
        reference, _, _ = pyav_reference(data)
    else:
        # libsndfile's samples are PyAV's to 2e-5 (above), but a random-weight model turns such
        # differences into other tokens: the reference is libsndfile's own PCM, mixed and
        # resampled as the package does it.
        pcm, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
        reference = soxr.resample(pcm.mean(axis=1, dtype=np.float32), rate, 16000, quality="HQ")
    assert ctx.transcribe(data).text == ctx.transcribe(reference, sample_rate=16000).text


def test_sniffing_names_every_container():
    assert sniff(b"RIFF\0\0\0\0WAVEfmt ").name == "wav"
    assert sniff(b"fLaC\0\0\0\x22").name == "flac"
    assert sniff(b"ID3\x04\0").name == "mp3" and sniff(b"\xff\xfb\x90\x64").name == "mp3"
    assert sniff(b"\xff\xf1\x50\x80") is None  # ADTS AAC shares MPEG audio's sync, not its layer
    assert sniff(b"\0\0\0\x20ftypM4A ").name == "mp4"
    assert sniff(b"\x1a\x45\xdf\xa3\x9f").name == "webm"
    assert sniff(b"\0\0\x01\xba\x44").name == "mpeg"
    assert sniff(b"#!AMR-WB\n").name == "amr"
    assert sniff(b"FORM\0\0\0\0AIFF") is None and sniff(b"") is None
    assert set(UPLOAD_CONTAINERS) < set(CONTAINERS)


@pytest.mark.parametrize("name", STATED_LENGTH)
@pytest.mark.parametrize("cut", [0.0, 0.5, 0.9])
def test_truncated_and_empty_files_are_errors(files, name, cut):
    data = files[(name, 48000, 2)]
    with pytest.raises(InvalidAudio, match="empty|truncated|corrupt|not a valid"):
        load_audio(data[:int(len(data) * cut)])


def test_a_file_neither_decoder_reads_names_the_supported_formats():
    with pytest.raises(InvalidAudio, match="supported: WAV.*M4A, MP4, MOV.*WebM"):
        load_audio(b"\x00" * 64)


def test_the_upload_allowlist_refuses_other_containers_and_codecs():
    # AIFF: libsndfile reads it, the allowlist does not name it.
    buf = io.BytesIO()
    soundfile.write(buf, np.zeros(1600, np.int16), 16000, format="AIFF")
    assert load_audio(buf.getvalue()).size == 1600
    with pytest.raises(InvalidAudio, match="not a supported format"):
        prepare_audio(buf.getvalue(), formats=UPLOAD_CONTAINERS)
    # WAV holding GSM 6.10: a container on the list, a codec that is not.
    gsm = io.BytesIO()
    soundfile.write(gsm, np.zeros(3200, np.int16), 8000, format="WAV", subtype="GSM610")
    with pytest.raises(InvalidAudio, match="GSM610 is not accepted"):
        prepare_audio(gsm.getvalue(), formats=UPLOAD_CONTAINERS)


def test_the_length_limit_sees_the_header_then_every_block(files):
    seen = []
    prepare_audio(files[("m4a", 48000, 1)], limit=lambda *args: seen.append(args))
    assert seen[0][1:] == (48000, 1) and abs(seen[0][0] / 48000 - 9.64) < 0.01
    assert [s[0] for s in seen[1:]] == sorted(s[0] for s in seen[1:]) and len(seen) >= 3


class TooLong(Exception):
    pass


def test_the_length_limit_stops_a_file_that_states_no_length_while_it_decodes():
    # A WebM as browsers record it (no duration element) of 30 s: the limit of 10 s is found
    # after the first block past it, not after the whole file.
    import av

    buf = io.BytesIO()
    with av.open(buf, "w", format="webm", options={"live": "1"}) as out:
        stream = out.add_stream("libopus", rate=48000, layout="mono")
        for begin in range(0, 30 * 48000, 960):
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 960), np.float32), format="fltp", layout="mono")
            frame.sample_rate, frame.pts = 48000, begin
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    seen = []

    def limit(frames, rate, channels):
        seen.append(frames)
        if frames > 10 * rate:
            raise TooLong

    with pytest.raises(TooLong):
        prepare_audio(buf.getvalue(), limit=limit)
    assert 10 * 48000 < seen[-1] <= 10 * 48000 + BLOCK_FRAMES


def test_a_header_that_overstates_the_length_is_an_error_not_an_allocation(tmp_path):
    # A FLAC whose STREAMINFO claims 2^35 samples (about 25 days at 16 kHz), holding 1 s.
    buf = io.BytesIO()
    soundfile.write(buf, np.zeros(16000, np.int16), 16000, format="FLAC")
    data = bytearray(buf.getvalue())
    # STREAMINFO's last 36 bits before the MD5 are the sample count: bytes 21..25 of the file.
    data[21] = (data[21] & 0xF0) | 0x08
    with pytest.raises(InvalidAudio, match="cannot decode audio|truncated or corrupt"):
        load_audio(bytes(data))
