"""Corpus-scale batch transcription: a manifest in, a table of transcripts out.

* On one machine: :func:`run_batch` (``parakeet-cli batch``), one model with K backends, a
  bounded prefetch of decoded audio, rows written as they finish, resume after a crash.
* On a Ray cluster: :func:`transcribe_dataset` maps a Ray ``Dataset`` of ``id``/``path`` rows
  to transcript rows (``parakeet_py.batch.ray_job``; needs ``pip install "parakeet[ray]"``).
  Ray is imported only when that is called.

See docs/batch.md.
"""

from typing import Any

from .local_job import BatchOptions, BatchStats, run_batch
from .manifest import Entry, ManifestError, read_inputs
from .output import OutputError, read_rows


def transcribe_dataset(ds: Any, model: str, **kwargs: Any) -> Any:
    """The rows of Ray Dataset ``ds`` (``path``, optional ``id``, other columns passed through)
    transcribed with ``model``: a lazy Ray ``Dataset``. See :func:`.ray_job.transcribe_dataset`."""
    from .ray_job import transcribe_dataset as on_ray

    return on_ray(ds, model, **kwargs)


__all__ = ["BatchOptions", "BatchStats", "Entry", "ManifestError", "OutputError", "read_inputs", "read_rows",
           "run_batch", "transcribe_dataset"]
