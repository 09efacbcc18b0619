"""Languages on the prompt-conditioned fixture model (tests/data/nemo/ca_prompt, NeMo 3.0.0's
EncDecHybridRNNTCTCBPEModelWithPrompt; docs/fixtures.md): Context.transcribe(language=) and
Context.stream(language=) give NeMo's text for the locale (its cawref_*_<locale> references),
``info`` lists the locales, an unknown locale is an InvalidArgument naming the known ones, a model
without prompts ignores the language; the CLI's --language and the server's ``language`` field
pass it through; parakeet.cpp's layouts of the prompt keys load, inconsistent ones are refused."""

import os
import subprocess
import sys

import httpx
import pytest

from data_helpers import CACHE_AWARE_MODELS, ROOT, SPEECH, cawref_texts
from parakeet_py import Context, InvalidArgument, load_audio
from server_helpers import ServerProcess
from stream_helpers import run_stream

PROMPT, HYBRID = CACHE_AWARE_MODELS["ca_prompt"], CACHE_AWARE_MODELS["ca_hybrid"]
LOCALES = ["auto", "en-US", "de-DE", "ja-JP"]

pytestmark = pytest.mark.skipif(not PROMPT.exists(), reason="prompt fixture model missing")


def reference(head, lang):
    """(offline text, streamed text) NeMo gave for the speech clip in locale `lang`."""
    return cawref_texts(PROMPT.with_name(f"cawref_speech_{head}_4-1_{lang}.gguf"))


@pytest.fixture(scope="module")
def speech():
    return load_audio(SPEECH)


def test_info_lists_the_locales():
    with Context(PROMPT) as ctx:
        assert ctx.info["languages"] == {"default": "auto", "locales": LOCALES}
    with Context(HYBRID) as ctx:
        assert "languages" not in ctx.info


@pytest.mark.parametrize("lang", LOCALES)
def test_transcribe_and_stream_give_nemos_text_for_the_locale(lang, speech):
    with Context(PROMPT) as ctx:
        for head, decoder in (("rnnt", None), ("ctc", "ctc")):
            offline, streamed = reference(head, lang)
            assert ctx.transcribe(speech, sample_rate=16000, decoder=decoder, language=lang).text == offline
            assert ctx.transcribe(speech, sample_rate=16000, decoder=decoder, language=lang,
                                  timestamps=False).text == offline
            assert ctx.transcribe(speech, sample_rate=16000, decoder=decoder, language=lang,
                                  progress=lambda f: True).text == offline
            stream = ctx.stream(decoder=decoder, language=lang)
            assert run_stream(stream, speech, [1600])[0] == streamed, (head, lang)


def test_no_language_is_the_default_locale(speech):
    with Context(PROMPT) as ctx:
        assert ctx.transcribe(speech, sample_rate=16000).text == reference("rnnt", "auto")[0]
        assert run_stream(ctx.stream(), speech, [16000])[0] == reference("rnnt", "auto")[1]


def test_an_unknown_locale_names_the_known_ones(speech):
    with Context(PROMPT) as ctx:
        for call in (lambda: ctx.transcribe(speech[:16000], sample_rate=16000, language="fr-FR"),
                     lambda: ctx.transcribe_nbest(speech[:16000], sample_rate=16000, beam=2, language="fr-FR"),
                     lambda: ctx.stream(language="fr-FR")):
            with pytest.raises(InvalidArgument, match="unknown language 'fr-FR'; this model knows: auto, en-US, "
                                                      "de-DE, ja-JP"):
                call()
        with pytest.raises(InvalidArgument, match="language must be a string"):
            ctx.stream(language=3)


def test_a_model_without_prompts_ignores_the_language(speech):
    with Context(HYBRID) as ctx:
        plain = ctx.transcribe(speech, sample_rate=16000).text
        assert ctx.transcribe(speech, sample_rate=16000, language="xx-YY").text == plain


def test_cli_language():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"), os.environ.get("PYTHONPATH", "")]))
    for extra, want in (([], reference("rnnt", "de-DE")[0]), (["--stream"], reference("rnnt", "de-DE")[1])):
        p = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(PROMPT), "--language",
                            "de-DE", *extra, str(SPEECH)], capture_output=True, env=env, cwd=ROOT, timeout=120)
        assert p.returncode == 0, p.stderr.decode()
        assert p.stdout.decode() == want + "\n"
    p = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(PROMPT), "--language",
                        "fr-FR", str(SPEECH)], capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 1 and "this model knows: auto, en-US, de-DE, ja-JP" in p.stderr.decode()


def test_server_language_field(tmp_path):
    with ServerProcess(["--threads", "1"], tmp_path, model=PROMPT) as srv, httpx.Client(timeout=60) as http:
        url = srv.url + "/v1/audio/transcriptions"

        def post(**data):
            return http.post(url, files={"file": ("s.wav", SPEECH.read_bytes(), "audio/wav")}, data=data)

        card = http.get(srv.url + "/v1/models").json()["data"][0]
        assert card["languages"] == {"default": "auto", "locales": LOCALES}
        r = post(language="ja-JP", response_format="json")
        assert r.status_code == 200 and r.json()["text"] == reference("rnnt", "ja-JP")[0]
        r = post(language="fr-FR")
        assert r.status_code == 400 and "auto, en-US, de-DE, ja-JP" in r.json()["error"]["message"]
        r = post(language="ja-JP", stream="true")
        assert r.status_code == 200
        done = [line for line in r.text.splitlines() if '"transcript.text.done"' in line]
        assert len(done) == 1 and reference("rnnt", "ja-JP")[1] in done[0]


def test_parakeet_cpp_layouts_of_the_prompt_keys_load(tmp_path, speech):
    """parakeet.cpp's prompt keys (parakeet_cpp_v06.md: the same names) as its converter may type
    them: the ids a UINT32 array, num_prompts an INT32; the default locale as given."""
    from gguf import GGUFValueType

    from gguf_rewrite import rewrite_gguf

    path = rewrite_gguf(PROMPT, tmp_path / "pcpp.gguf", {}, drop=("parakeet.prompt.num_prompts",
                                                                   "parakeet.prompt.default_lang"),
                        array_types={"parakeet.prompt.dictionary.values": GGUFValueType.UINT32},
                        added={"parakeet.prompt.num_prompts": (8, GGUFValueType.INT32),
                               "parakeet.prompt.default_lang": ("de-DE", GGUFValueType.STRING)})
    with Context(path) as ctx:
        assert ctx.info["languages"] == {"default": "de-DE", "locales": LOCALES}
        assert ctx.transcribe(speech, sample_rate=16000).text == reference("rnnt", "de-DE")[0]
        assert ctx.transcribe(speech, sample_rate=16000, language="ja-JP").text == reference("rnnt", "ja-JP")[0]


@pytest.mark.parametrize("drop,added,message", [
    (("parakeet.prompt.default_lang",), {"parakeet.prompt.default_lang": "xx"}, "'xx' is not in the prompt table"),
    (("parakeet.prompt.num_prompts",), {"parakeet.prompt.num_prompts": 4}, "holds 5, outside \\[0, num_prompts\\)"),
    (("parakeet.prompt.dictionary.keys",), {}, "a prompt model needs parakeet.prompt.dictionary.keys"),
])
def test_inconsistent_prompt_keys_are_refused(tmp_path, drop, added, message):
    from gguf import GGUFValueType

    from parakeet_py import ParakeetError
    from gguf_rewrite import rewrite_gguf

    types = {str: GGUFValueType.STRING, int: GGUFValueType.UINT32}
    path = rewrite_gguf(PROMPT, tmp_path / "bad.gguf", {}, drop=drop,
                        added={k: (v, types[type(v)]) for k, v in added.items()})
    with pytest.raises(ParakeetError, match=message):
        Context(path)


def test_without_a_default_a_language_is_needed(tmp_path, speech):
    from gguf_rewrite import rewrite_gguf

    path = rewrite_gguf(PROMPT, tmp_path / "nodefault.gguf", {}, drop=("parakeet.prompt.default_lang",))
    with Context(path) as ctx:
        with pytest.raises(InvalidArgument, match="needs a language \\(it has no default\\); known: auto, en-US"):
            ctx.transcribe(speech[:16000], sample_rate=16000)
        assert ctx.transcribe(speech, sample_rate=16000, language="auto").text == reference("rnnt", "auto")[0]
