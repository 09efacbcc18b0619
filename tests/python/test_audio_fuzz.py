"""Damaged files through the server's decoder (the upload allowlist and a length limit): every
kind of av_helpers, truncated at random points and with random bits flipped, in a child process
with a deadline, so a crash or a hang fails the test instead of killing or stalling the run.

Each damaged file must give InvalidAudio, or decode to its full length: a shortfall that passes
as a shorter recording is the failure to catch. (A flipped bit in Opus or MP3 audio data decodes
to noise at the full length: those codecs carry no checksum.) MPEG program streams state no
length, so for them only "no crash, no hang, no other exception" is checked.
"""

import json
import os
import subprocess
import sys

import pytest

from data_helpers import ROOT

MUTATIONS = 24
# A hang guard only: the child decodes 6 kinds x 24 files of 10 s, seconds of work.
DEADLINE_SEC = 600

CHILD = r"""
import json, random, sys
sys.path[:0] = [sys.argv[1]]
from av_helpers import KINDS, encode
from parakeet_py import InvalidAudio
from parakeet_py.audio import prepare_audio
from parakeet_py.audio.formats import UPLOAD_CONTAINERS

def limit(frames, rate, channels):
    if frames > 120 * rate:
        raise InvalidAudio("over the limit")

rng = random.Random(24)
for name in KINDS:
    data = encode(name, 48000, 2 if 2 in KINDS[name].channels else 1)
    full = len(prepare_audio(data, formats=UPLOAD_CONTAINERS))
    for i in range(int(sys.argv[2])):
        damaged = bytearray(data)
        if i % 3 == 0:
            damaged = damaged[:rng.randrange(len(damaged))]
        else:
            for _ in range(rng.choice((1, 10, 100))):
                at = rng.randrange(len(damaged))
                damaged[at] ^= 1 << rng.randrange(8)
        try:
            out = len(prepare_audio(bytes(damaged), formats=UPLOAD_CONTAINERS, limit=limit))
        except InvalidAudio:
            out = None
        print(json.dumps({"kind": name, "i": i, "decoded": out, "full": full}), flush=True)
"""


def test_damaged_files_are_errors_or_whole_never_crashes_or_hangs():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "tests" / "python"), str(MUTATIONS)],
                           capture_output=True, text=True, timeout=DEADLINE_SEC, env=env)
    assert child.returncode == 0, child.stderr[-4000:]
    results = [json.loads(line) for line in child.stdout.splitlines()]
    assert len(results) == 6 * MUTATIONS
    short = [r for r in results if r["kind"] != "mpeg" and r["decoded"] is not None
             and r["decoded"] < r["full"] - 16000 * 0.3]
    assert not short, short
    assert any(r["decoded"] is None for r in results)
