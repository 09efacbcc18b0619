"""Who spoke when (libparakeet's ``src/model/diar`` and ``src/model/sas``).

``diarize``: the ``Diarizer`` (Sortformer) and the word-to-speaker rules; ``diarize_stream``: its
live ``DiarizerStream``; ``speaker_stream``: live speaker-attributed transcription
(``SpeakerStream``). Their result types, ``Segment`` and ``Utterance``, are in
:mod:`parakeet_py.transcript`; the public names are exported from :mod:`parakeet_py`.
"""
