"""Who spoke when, and who it was (libparakeet's ``src/model/diar``, ``src/model/sas`` and
``src/model/speaker``).

``diarize``: the ``Diarizer`` (Sortformer) and the word-to-speaker rules; ``diarize_stream``: its
live ``DiarizerStream``; ``speaker_stream``: live speaker-attributed transcription
(``SpeakerStream``); ``encoder``: speaker embeddings (``SpeakerEncoder``); ``registry``: named
voices (``VoiceRegistry``). Their result types, ``Segment`` and ``Utterance``, are in
:mod:`parakeet_py.transcript`; the public names are exported from :mod:`parakeet_py`.
"""
