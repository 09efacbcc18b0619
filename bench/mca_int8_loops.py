"""Static cost of the AArch64 int8 product loops: instructions and llvm-mca cycles per 1024
int8 multiply-adds (docs/performance.md, "ARM (AArch64): no speed figures"). A pipeline model,
not a speed: nothing here runs on an ARM core.

For each kernel below, the compiled object of the cross build (tools/test_aarch64.sh's
build-aarch64) is disassembled, the innermost loop of the named function that holds the most
of its product instructions is cut out (from a backward branch's target to the branch), and
llvm-mca runs it as a steady-state loop on each model. The MACs per iteration are what the
loop body computes, counted from its product instructions (macs_of). llvm-mca 19 has
Neoverse N2 and V1 models (both with I8MM); llvm-mca 14's neoverse-n1 is its Cortex-A57 model.

    python3 bench/mca_int8_loops.py [--build build-aarch64] [--mca llvm-mca-19]
        [--cpu neoverse-n2 --cpu neoverse-v1] [--extra NAME:OBJECT:FUNCTION:MNEMONICS]

--extra adds a kernel from another object (e.g. one compiled from an older commit).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

KERNELS = "libparakeet/CMakeFiles/parakeet_core.dir/src/kernels"

# name, object, function (substring of the demangled name), product mnemonics (a regex)[,
# the share of the products that are useful, 1 unless given]
LOOPS = [
    ("q8_0 tile, portable C++ (scalar; GCC vectorises it)", "matmul_kernels_scalar.cpp.o", "tile_q8",
     "smull2?|smlal2?"),
    ("q8_0 tile, SMLAL by element (neon)", "matmul_kernels_neon.cpp.o", "tile_q8", "smlal2?"),
    ("q8_0 tile, SDOT (dotprod)", "matmul_kernels_dotprod.cpp.o", "Sdot, 4>(", "sdot"),
    ("q8_0 tile, SMMLA (i8mm)", "matmul_kernels_i8mm.cpp.o", "tile_rows<4>", "smmla"),
    ("q8_0 matvec, SDOT (dotprod)", "matmul_kernels_dotprod.cpp.o", "matvec<", "sdot"),
    # The one row fills both rows of SMMLA's 2 x 8 operand: half of its products are repeats.
    ("q8_0 matvec, SMMLA (i8mm)", "matmul_kernels_i8mm.cpp.o", "matvec_q8_smmla", "smmla", 0.5),
    ("K-quant tile, portable C++ (scalar)", "matmul_kquant.cpp.o", "tile_kq", "madd|mul"),
    ("K-quant tile, SDOT (dotprod)", "matmul_kquant_dotprod.cpp.o", "Sdot::half<false, 4>", "sdot"),
    ("K-quant tile, SMMLA (i8mm)", "matmul_kquant_i8mm.cpp.o", "Smmla::half<false, 4>", "smmla"),
]

LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")
BRANCH = re.compile(r"^(b\.\w+|cbn?z|tbn?z)$")


def function_lines(obj: Path, func: str) -> list[tuple[int, str, str]]:
    """(address, mnemonic, operands) of the first function whose demangled name holds func."""
    out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "-C", "--no-show-raw-insn", str(obj)],
                         check=True, capture_output=True, text=True).stdout
    lines, inside = [], False
    for text in out.splitlines():
        if re.match(r"^[0-9a-f]+ <", text):
            if inside:
                break
            inside = func in text
            continue
        m = LINE.match(text) if inside else None
        if m:
            lines.append((int(m.group(1), 16), m.group(2), m.group(3).split("//")[0].split("<")[0].strip()))
    if not lines:
        sys.exit(f"{obj}: no function matching {func!r}")
    return lines


def hottest_loop(lines, mnemonic: str) -> list[tuple[int, str, str]]:
    """Of the innermost loops (a backward branch's target .. the branch, holding no other such
    loop), the body with the most instructions matching the regular expression `mnemonic`."""
    loops = []
    for i, (addr, mn, ops) in enumerate(lines):
        if BRANCH.match(mn) and int(ops.split(",")[-1].strip(), 16) < addr:
            loops.append((int(ops.split(",")[-1].strip(), 16), addr))
    inner = [(t, e) for t, e in loops if not any(t <= t2 and e2 <= e and (t2, e2) != (t, e) for t2, e2 in loops)]
    best, best_count = None, -1
    for t, e in inner:
        body = [ln for ln in lines if t <= ln[0] <= e]
        count = sum(1 for ln in body if re.fullmatch(mnemonic, ln[1]))
        if count > best_count:
            best, best_count = body, count
    if not best_count > 0:
        sys.exit(f"no loop with {mnemonic!r} in the function")
    return best


def macs_of(body) -> int:
    """The int8 (or widened int16) multiply-adds the loop body does, from its product
    instructions: SMMLA 32, SDOT / USDOT 16 (4 lanes x 4), a widening SMULL / SMLAL one per
    destination lane, MADD / MUL 1."""
    total = 0
    for _, mn, ops in body:
        if mn == "smmla":
            total += 32
        elif mn in ("sdot", "usdot"):
            total += 16
        elif re.fullmatch(r"smull2?|smlal2?", mn):
            total += {"4s": 4, "8h": 8, "2d": 2}[ops.split(",")[0].split(".")[1]]
        elif mn in ("madd", "mul"):
            total += 1
    return total


def mca(body, cpu: str, tool: str) -> float:
    """llvm-mca's cycles per iteration of the loop body on `cpu`'s model (branches inside the
    body go to their labels, those out of it to the end; llvm-mca runs the body in order)."""
    start, addresses = body[0][0], {ln[0] for ln in body}
    asm = []
    for i, (addr, mn, ops) in enumerate(body):
        asm.append(f"L{addr:x}:")
        if re.fullmatch(r"b|bl|b\.\w+|cbn?z|tbn?z", mn):
            fields = ops.split(",")
            target = int(fields[-1].strip(), 16)
            label = f"L{start:x}" if i == len(body) - 1 else (f"L{target:x}" if target in addresses else "Lexit")
            ops = ", ".join([f.strip() for f in fields[:-1]] + [label])
        asm.append(f"\t{mn} {ops}")
    asm.append("Lexit:")
    iterations = 200
    res = subprocess.run([tool, "-mtriple=aarch64", f"-mcpu={cpu}", "-mattr=+dotprod,+i8mm",
                          f"-iterations={iterations}"], input="\n".join(asm) + "\n",
                         capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{tool} -mcpu={cpu}: {res.stderr.strip()[:2000]}")
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", res.stdout).group(1))
    return cycles / iterations


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build-aarch64")
    ap.add_argument("--mca", default="llvm-mca-19")
    ap.add_argument("--cpu", action="append")
    ap.add_argument("--extra", action="append", default=[])
    args = ap.parse_args()
    cpus = args.cpu or ["neoverse-n2", "neoverse-v1"]
    loops = [(k[0], Path(args.build) / KERNELS / k[1], k[2], k[3], k[4] if len(k) > 4 else 1.0) for k in LOOPS]
    for e in args.extra:
        name, obj, func, mn = e.rsplit(":", 3)
        loops.append((name, Path(obj), func, mn, 1.0))
    print("| kernel (level) | useful MACs / iteration | instructions / 1024 MAC | "
          + " | ".join(f"llvm-mca {c} cycles / 1024 MAC" for c in cpus) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in cpus) + " |")
    for name, obj, func, mn, useful in loops:
        body = hottest_loop(function_lines(obj, func), mn)
        macs = round(macs_of(body) * useful)
        scale = 1024 / macs
        cells = [str(macs), f"{len(body) * scale:.0f}"] + [f"{mca(body, c, args.mca) * scale:.0f}" for c in cpus]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
