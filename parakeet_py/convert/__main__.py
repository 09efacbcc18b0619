"""``python -m parakeet_py.convert IN OUT --type f32|f16|q8_0``

IN is a ``.nemo`` file (converted) or a parakeet GGUF file (its allowlisted F32/F16 matmul
weights requantised to f16 or q8_0). Prints a one-line summary, or the report as JSON with
``--json``; on failure prints the reason and exits with status 1.
"""

import argparse
import json
import sys

from . import OUT_TYPES, ConversionError, convert_nemo, requantize_gguf


def _is_gguf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m parakeet_py.convert",
        description="Convert a NeMo .nemo model to a parakeet GGUF file (no PyTorch needed), or requantise "
                    "the matmul weights of a parakeet GGUF file to f16 or q8_0.",
    )
    ap.add_argument("input", help=".nemo file (or a parakeet GGUF file to requantise)")
    ap.add_argument("output", help="GGUF file to write")
    ap.add_argument("--type", dest="out_type", choices=OUT_TYPES, default="f32",
                    help="storage type of the matmul weights; everything else stays f32 (default: f32)")
    ap.add_argument("--name", default=None, help="general.name (default: the input file's stem)")
    ap.add_argument("--json", action="store_true", help="print the conversion report as JSON")
    args = ap.parse_args(argv)
    try:
        if _is_gguf(args.input):
            report = requantize_gguf(args.input, args.output, args.out_type)
        else:
            report = convert_nemo(args.input, args.output, args.out_type, name=args.name)
    except ConversionError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        types = ", ".join(f"{n} {t}" for t, n in sorted(report.type_counts.items()))
        print(f"wrote {report.output}: arch={report.arch} tensors={report.n_tensors} ({types}) "
              f"{report.bytes_written / 1e6:.1f} MB in {report.seconds:.1f} s")
        for w in report.warnings:
            print(f"warning: {w}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
