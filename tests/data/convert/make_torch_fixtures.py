"""Writes the real-PyTorch checkpoints the converter tests read (run with a torch venv):

    /work/main/.nemo/bin/python tests/data/convert/make_torch_fixtures.py

* ``views.ckpt``: what ``torch.save`` writes for a state_dict holding every storage type the
  reader supports, plus non-contiguous views, offsets, a shared storage, a Parameter,
  0-d and empty tensors;
* ``wrapped.ckpt``: the same tensors under ``{'state_dict': ..., 'epoch': 3}``;
* ``legacy.ckpt``: the pre-1.6 (non-zip) format, which the reader must refuse clearly;
* ``views_expected.npz``: the values (bfloat16 widened to float32) and dtype names.
"""

import collections
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def state_dict():
    g = torch.Generator().manual_seed(1234)
    sd = collections.OrderedDict()
    base = torch.randn(6, 40, generator=g)
    sd["f32"] = base
    sd["f32_transposed"] = base.t()  # stride (1, 40): a non-contiguous view
    sd["f32_offset_slice"] = base[2:5, 3:35:2]  # storage offset and a step
    sd["f16"] = torch.randn(3, 5, generator=g).half()
    sd["bf16"] = torch.randn(7, generator=g).bfloat16()
    sd["f64"] = torch.randn(2, 2, generator=g).double()
    sd["i64"] = torch.arange(-3, 5, dtype=torch.int64)
    sd["i32"] = torch.arange(10, dtype=torch.int32).reshape(2, 5)
    sd["i16"] = torch.tensor([-7, 7], dtype=torch.int16)
    sd["i8"] = torch.tensor([-128, 127], dtype=torch.int8)
    sd["u8"] = torch.tensor([0, 255], dtype=torch.uint8)
    sd["bool"] = torch.tensor([True, False, True])
    sd["scalar_i64"] = torch.tensor(7, dtype=torch.int64)  # like num_batches_tracked
    sd["empty"] = torch.zeros(0, 4)
    sd["param"] = torch.nn.Parameter(torch.randn(4, 1, 3, generator=g))
    sd["conv4d"] = torch.randn(2, 1, 3, 3, generator=g)
    return sd


def main():
    sd = state_dict()
    torch.save(sd, HERE / "views.ckpt")
    torch.save({"state_dict": sd, "epoch": 3}, HERE / "wrapped.ckpt")
    torch.save(collections.OrderedDict(w=torch.ones(2)), HERE / "legacy.ckpt", _use_new_zipfile_serialization=False)
    expected = {}
    for name, t in sd.items():
        t = t.detach()
        expected[name] = (t.float() if t.dtype == torch.bfloat16 else t).numpy()
        expected[f"{name}.dtype"] = np.array(str(t.dtype).replace("torch.", ""))
    np.savez(HERE / "views_expected.npz", **expected)
    print("torch", torch.__version__, "->", sorted(p.name for p in HERE.glob("*.ckpt")))


if __name__ == "__main__":
    main()
