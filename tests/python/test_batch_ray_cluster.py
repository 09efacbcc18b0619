"""`parakeet-cli batch --ray --ray-address` on a simulated multi-node Ray cluster (a head and
three 1-CPU nodes, all on 127.0.0.1): the job finishes with every id once, equal to
Context.transcribe. Starting four nodes takes minutes on a busy 2-core machine, so this is the
`long` tier (tools/test.sh --long, run by .ci/run)."""

import importlib
import os
import subprocess
import sys

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
# CI installs Ray (the test extra) and must run these tests: there a missing Ray is an error, not a skip.
ray = importlib.import_module("ray") if os.environ.get("CI") else pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from batch_helpers import MODEL, ROOT, check_rows, write_corpus  # noqa: E402
from parakeet_py.batch import read_rows  # noqa: E402

pytestmark = [pytest.mark.long, pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")]


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 100 * 2**20})
    try:
        for _ in range(3):
            c.add_node(num_cpus=1, object_store_memory=100 * 2**20)
        c.wait_for_nodes()
        yield c
    finally:
        c.shutdown()


def test_cli_batch_on_a_four_node_cluster(cluster, tmp_path):
    manifest = write_corpus(tmp_path, copies=2)
    out = tmp_path / "out.parquet"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'cli'}"}
    # Three 1-CPU actors (at most one fits a node) leave the head's CPU to the read and write tasks.
    done = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "batch", "--ray", "--ray-address", cluster.address,
                           "-m", str(MODEL), str(manifest), "-o", str(out), "--actors", "3", "--cpus-per-actor", "1",
                           "--batch-size", "2"], env=env, capture_output=True, text=True,
                          timeout=900)  # a hang guard only
    assert done.returncode == 0, done.stderr[-3000:]
    rows = read_rows(str(out))
    check_rows(rows, manifest, timestamps=False)
    assert f"{len(rows)} files (2 errors)" in done.stderr
