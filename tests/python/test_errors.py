"""Every error code of the C ABI reaches Python as its own ParakeetError subclass, through the
one check in ``_native``; failures found in Python raise the same subclasses; the old names
(``ParakeetError``, ``Cancelled``) keep catching what they caught."""

import json
import threading

import numpy as np
import pytest

import parakeet_py
from parakeet_py import (BadModel, Cancelled, Context, InternalError, InvalidArgument, InvalidAudio, OutOfMemory,
                         ParakeetError, Unsupported, _native, errors)
from parakeet_py.batch import ManifestError, OutputError

from data_helpers import CTC_ONLY_MODEL, DATA, MODEL, MODELS, SPEECH

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.fixture(scope="module")
def hybrid():
    with Context(MODEL) as c:
        yield c


@pytest.fixture(scope="module")
def ctc_only():
    with Context(CTC_ONLY_MODEL) as c:
        yield c


def codes_after(call):
    """The exception ``call`` raises, and the thread's and the context's code right after it."""
    with pytest.raises(ParakeetError) as info:
        call()
    _, lib = _native.load()
    return info.value, int(lib.parakeet_capi_thread_last_error_code())


# ---- through the C ABI: the code the library set, and the class the binding raised ----------------
def test_invalid_argument_from_the_library(hybrid):
    err, code = codes_after(lambda: hybrid.stream(chunk=0.01))  # shorter than one encoder frame
    assert type(err) is InvalidArgument and err.code == code == errors.ERROR_INVALID_ARGUMENT
    assert "encoder frame" in str(err)


def test_invalid_audio_from_the_library(hybrid):
    # check_finite is left to the library for audio that needs no resampling: the library finds it.
    bad = np.zeros(16000, np.float32)
    bad[123] = np.nan
    err, code = codes_after(lambda: hybrid.transcribe(bad, sample_rate=16000))
    assert type(err) is InvalidAudio and err.code == code == errors.ERROR_INVALID_AUDIO
    assert "sample 123" in str(err)


def test_bad_model_from_the_library(tmp_path):
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"this is not a GGUF file at all")
    for path in (not_gguf, DATA / "no such model.gguf"):
        err, code = codes_after(lambda: Context(path))
        assert type(err) is BadModel and err.code == code == errors.ERROR_BAD_MODEL
        assert str(path) in str(err)


def test_unsupported_from_the_library(hybrid, ctc_only):
    err, code = codes_after(lambda: ctc_only.transcribe(SPEECH, beam=2))  # beam search needs a transducer
    assert type(err) is Unsupported and err.code == code == errors.ERROR_UNSUPPORTED
    err, _ = codes_after(lambda: ctc_only.transcribe(SPEECH, decoder="tdt"))
    assert type(err) is Unsupported
    with Context(MODELS["tdt"]) as tdt:
        err, code = codes_after(lambda: tdt.transcribe(SPEECH, decoder="ctc"))  # no CTC head
        assert type(err) is Unsupported and code == errors.ERROR_UNSUPPORTED


def test_cancelled_from_the_library(hybrid):
    err, code = codes_after(lambda: hybrid.transcribe(SPEECH, progress=lambda fraction: False))
    assert type(err) is Cancelled and err.code == code == errors.ERROR_CANCELLED


def test_a_success_clears_the_code(hybrid):
    codes_after(lambda: hybrid.transcribe(SPEECH, progress=lambda fraction: False))
    hybrid.transcribe(SPEECH)
    _, lib = _native.load()
    assert lib.parakeet_capi_thread_last_error_code() == errors.ERROR_NONE


def test_the_contexts_code_follows_its_last_call(ctc_only):
    _, lib = _native.load()
    with ctc_only._using() as ptr:
        codes_after(lambda: ctc_only.transcribe(SPEECH, beam=2))
        assert lib.parakeet_capi_last_error_code(ptr) == errors.ERROR_UNSUPPORTED
        ctc_only.transcribe(SPEECH)
        assert lib.parakeet_capi_last_error_code(ptr) == errors.ERROR_NONE
    assert lib.parakeet_capi_last_error_code(_native.load()[0].NULL) == errors.ERROR_INVALID_ARGUMENT


def test_the_code_is_the_calling_threads_own(hybrid, ctc_only):
    # Two threads fail at once with different codes; each reads its own.
    seen = {}
    barrier = threading.Barrier(2)

    def fail(name, call):
        barrier.wait()
        for _ in range(5):
            try:
                call()
            except ParakeetError as e:
                seen.setdefault(name, set()).add(type(e))

    bad = np.full(16000, np.inf, np.float32)
    threads = [threading.Thread(target=fail, args=("audio", lambda: hybrid.transcribe(bad, sample_rate=16000))),
               threading.Thread(target=fail, args=("beam", lambda: ctc_only.transcribe(SPEECH, beam=2)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert seen == {"audio": {InvalidAudio}, "beam": {Unsupported}}


def test_every_code_the_library_can_send_has_its_class():
    # OUT_OF_MEMORY and INTERNAL cannot be provoked from here on purpose: their mapping.
    assert type(errors.error_for_code(errors.ERROR_OUT_OF_MEMORY, "no memory")) is OutOfMemory
    assert type(errors.error_for_code(errors.ERROR_INTERNAL, "a bug")) is InternalError
    assert type(errors.error_for_code(errors.ERROR_NONE, "no code")) is InternalError  # a failure must have one
    future = errors.error_for_code(42, "a newer library's code")
    assert type(future) is ParakeetError and future.code == 42


def test_load_options_the_library_refuses_are_invalid_arguments():
    ffi, lib = _native.load()
    for options in ('{"nope": 1}', '{"threads": 0}', '{"bf16": "yes"}', '[1]'):
        assert lib.parakeet_capi_load_with(str(MODEL).encode(), options.encode()) == ffi.NULL
        assert lib.parakeet_capi_thread_last_error_code() == errors.ERROR_INVALID_ARGUMENT, options
        assert ffi.string(lib.parakeet_capi_load_error()).decode()


def test_model_kind_is_asr():
    _, lib = _native.load()
    with Context(MODEL) as ctx:
        assert ctx.model_kind == _native.MODEL_KIND_ASR
    assert lib.parakeet_capi_model_kind(_native.load()[0].NULL) == _native.MODEL_KIND_NONE


# ---- found in Python: the same classes -------------------------------------------------------------
def test_python_side_failures_raise_the_matching_class(hybrid, tmp_path):
    with pytest.raises(InvalidAudio, match="cannot decode audio"):
        hybrid.transcribe(b"not audio at all, just bytes")
    with pytest.raises(InvalidAudio, match="no such file"):
        hybrid.transcribe(tmp_path / "missing.wav")
    with pytest.raises(InvalidAudio, match="1-D"):
        parakeet_py.load_audio(np.zeros((2, 2, 2), np.float32), sample_rate=16000)
    with pytest.raises(InvalidArgument, match="sample_rate is required"):
        parakeet_py.load_audio(np.zeros(10, np.float32))
    with pytest.raises(InvalidArgument, match="unknown decoder"):
        hybrid.transcribe(SPEECH, decoder="greedy")
    with pytest.raises(InvalidArgument, match="attention"):
        Context(MODEL, attention=(0, 3))
    with pytest.raises(InvalidArgument, match="concurrency"):
        Context(MODEL, concurrency=0)
    closed = Context(MODEL)
    closed.close()
    with pytest.raises(InvalidArgument, match="closed"):
        closed.transcribe(SPEECH)


def test_the_classes_keep_the_old_names_working():
    for cls in (InvalidArgument, InvalidAudio, BadModel, Unsupported, Cancelled, OutOfMemory, InternalError,
                ManifestError, OutputError):
        assert issubclass(cls, ParakeetError)
        assert cls.__name__ in parakeet_py.__all__ or cls in (ManifestError, OutputError)
    assert issubclass(ManifestError, ValueError)  # as the bench manifest's error was
    assert ParakeetError("m").message == "m" and ParakeetError("m", code=3).code == 3


def test_an_error_in_a_transcript_document_is_internal(monkeypatch):
    from parakeet_py.transcript import Transcript
    with pytest.raises(InternalError, match="cannot read"):
        Transcript.from_json(json.dumps({"text": 1}))
