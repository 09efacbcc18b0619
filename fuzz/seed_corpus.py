"""Writing a fuzz target's seed inputs into fuzz/corpus/<target>/ (used by make_*_seeds.py)."""
import os


def write_seeds(target, seeds):
    """seeds: {file name: bytes}; written to fuzz/corpus/<target>/, one file each."""
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", target)
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")
