"""The Python package finds and loads libparakeet, and the binding's one cffi declaration
(``_native.CDEF``, which the benchmarks use too) matches the C header: every function's return
and parameter types, the callback and struct types, and every constant the binding mirrors."""

import re
from typing import Dict, List, Tuple

import pytest

from parakeet_py import _native, errors

from data_helpers import HEADER

# Words that are part of a C type, never a parameter's name.
_TYPE_WORDS = {"const", "void", "char", "int", "float", "double", "long", "short", "unsigned", "signed", "struct"}


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", re.sub(r"//[^\n]*", " ", text), flags=re.S)


def _type_of(parameter: str) -> str:
    """``"const float* samples"`` → ``"const float*"``: the type, spaced one way, name dropped."""
    tokens = re.sub(r"\*", " * ", parameter).split()
    if len(tokens) > 1 and tokens[-1] != "*" and tokens[-1] not in _TYPE_WORDS \
            and not tokens[-1].startswith("parakeet_"):
        tokens = tokens[:-1]  # the parameter's name
    return re.sub(r" \*", "*", " ".join(tokens))


def _signatures(text: str, prefix: str = "") -> Dict[str, Tuple[str, List[str]]]:
    """name → (return type, [parameter types]) for every ``parakeet_capi_*`` prototype."""
    out: Dict[str, Tuple[str, List[str]]] = {}
    pattern = re.escape(prefix) + r"\s*([A-Za-z_][\w\s\*]*?)\b(parakeet_capi_\w+)\s*\(([^;{]*?)\)\s*;"
    for m in re.finditer(pattern, _strip_comments(text)):
        params = [p.strip() for p in " ".join(m.group(3).split()).split(",")]
        types = [] if params == ["void"] else [_type_of(p) for p in params]
        out[m.group(2)] = (_type_of(m.group(1)), types)
    return out


def _header_signatures() -> Dict[str, Tuple[str, List[str]]]:
    return _signatures(HEADER.read_text(), prefix="PARAKEET_API")


def _typedefs(text: str) -> Dict[str, str]:
    """typedef name → its definition, whitespace and field names' spacing normalised."""
    out = {}
    text = _strip_comments(text)
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        fields = [_type_of(f) + " " + f.split()[-1] for f in m.group(2).split(";") if f.strip()]
        out[m.group(3)] = "struct {" + "; ".join(fields) + "}"
    for m in re.finditer(r"typedef\s+([\w\s\*]+?)\(\s*\*\s*(\w+)\s*\)\s*\(([^)]*)\)\s*;", text):
        params = [_type_of(p) for p in " ".join(m.group(3).split()).split(",")]
        out[m.group(2)] = f"{_type_of(m.group(1))} (*)({', '.join(params)})"
    return out


def _header_defines() -> Dict[str, int]:
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"#define\s+(PARAKEET_\w+)\s+(-?\d+)\b", HEADER.read_text())}


def test_library_loads_and_reports_the_expected_abi_version():
    ffi, lib = _native.load()
    assert lib.parakeet_capi_abi_version() == _native.EXPECTED_ABI_VERSION


def test_the_signature_parser_reads_types_and_drops_names():
    # The checks below are only as good as this parser: a prototype split over lines, pointer
    # spacing, unnamed parameters, and a parameter of a parakeet_* type.
    sigs = _signatures("char* parakeet_capi_f(parakeet_ctx *ctx, const float * samples,\n int n, void*);\n"
                       "long long parakeet_capi_g(void);")
    assert sigs == {"parakeet_capi_f": ("char*", ["parakeet_ctx*", "const float*", "int", "void*"]),
                    "parakeet_capi_g": ("long long", [])}
    assert _signatures("int parakeet_capi_h(int a, float b);") != _signatures("int parakeet_capi_h(float a, int b);")


def test_every_bound_function_has_the_headers_signature():
    header = _header_signatures()
    bound = _signatures(_native.CDEF)
    assert len(header) > 40 and len(bound) > 30, "the parser found too few prototypes"
    for name, signature in bound.items():
        assert name in header, f"{name} is bound but not in {HEADER.name}"
        assert signature == header[name], f"{name}: bound as {signature}, declared {header[name]}"


def test_the_binding_declares_what_it_calls():
    # Every parakeet_capi_* function the package, the CLI and the benchmarks call is in CDEF
    # (cffi in ABI mode would only fail when the call is reached).
    from data_helpers import ROOT

    bound = set(_signatures(_native.CDEF))
    called = set()
    for folder in ("parakeet_py", "cli", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            called |= set(re.findall(r"lib\.(parakeet_capi_\w+)", path.read_text()))
    assert called and called <= bound, f"called but not declared: {sorted(called - bound)}"


def test_bound_callback_and_struct_types_match_the_header():
    header = _typedefs(HEADER.read_text())
    bound = _typedefs(_native.CDEF)
    assert {"parakeet_progress_fn", "parakeet_stream_event"} <= set(bound)
    for name, definition in bound.items():
        assert definition == header.get(name), f"{name}: bound as {definition}, declared {header.get(name)}"


@pytest.mark.parametrize("python_name,define", [
    ("EXPECTED_ABI_VERSION", "PARAKEET_CAPI_ABI_VERSION"),
    ("DECODER_DEFAULT", "PARAKEET_DECODER_DEFAULT"),
    ("DECODER_CTC", "PARAKEET_DECODER_CTC"),
    ("DECODER_TRANSDUCER", "PARAKEET_DECODER_TRANSDUCER"),
] + [(f"MODEL_KIND_{k}", f"PARAKEET_MODEL_KIND_{k}") for k in ("NONE", "ASR", "DIARIZATION", "SOUND", "SPEAKER", "VAD")])
def test_native_constants_match_the_header(python_name, define):
    assert getattr(_native, python_name) == _header_defines()[define]


def test_every_error_code_of_the_header_has_its_exception():
    codes = {name[len("PARAKEET_ERROR_"):]: value for name, value in _header_defines().items()
             if name.startswith("PARAKEET_ERROR_")}
    assert len(codes) == 8
    for name, value in codes.items():
        assert getattr(errors, f"ERROR_{name}") == value
    for code in set(codes.values()) - {errors.ERROR_NONE}:
        exc = errors.error_for_code(code, "why")
        assert exc.code == code and str(exc) == "why"
        assert type(exc) is not errors.ParakeetError, f"code {code} has no subclass of its own"
    assert len({type(errors.error_for_code(c, "")) for c in codes.values() if c}) == 7
