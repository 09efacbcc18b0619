"""Loading a model does not hold the file's pages and the repacked weights at once.

The loader copies every matrix out of the mapped GGUF into its packed layout. If the file's
pages stayed resident until the end of the load, the peak RSS of a load would be about the
file plus the packed weights (twice the model for f32); the loader drops each matrix's pages
as soon as it is packed, so the peak is about the packed weights alone.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from parakeet_py.synthetic_model import SyntheticArch, write_synthetic_model

# The 110M model's layers, four of them: big enough that the matrices dominate what else a
# load allocates, small enough to write in a second or two (~100 MB in f32, ~35 MB in q8_0).
ARCH = SyntheticArch(name="load-memory", n_layers=4, vocab=256, pred_hidden=128, joint_hidden=128)
# What a load adds besides the packed matrices: the library's own pages (it is opened by the
# first Context), the decoder's F32 copies, biases and norms, allocator slack.
SLACK_BYTES = 16 << 20

_CHILD = textwrap.dedent("""
    import sys
    from parakeet_py import Context

    def status(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))

    before = status("VmRSS:")
    ctx = Context(sys.argv[1])
    print(status("VmHWM:") - before, ctx.info["packed_bytes"])
""")


@pytest.mark.parametrize("out_type", ["f32", "q8_0"])
def test_peak_rss_of_a_load_is_about_the_packed_weights(tmp_path, out_type):
    path = tmp_path / f"model-{out_type}.gguf"
    size = write_synthetic_model(path, ARCH, out_type)
    # A fresh interpreter: its peak so far is the import's, below what the load adds.
    r = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    grown, packed = (int(v) for v in r.stdout.split())
    # Without the per-matrix release the growth is the file plus the packed copy (~2x the file
    # for f32); with it, the packed weights and the slack.
    assert grown < packed + 0.25 * size + SLACK_BYTES, (grown, packed, size)
