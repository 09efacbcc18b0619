"""The Python package finds and loads libparakeet, and the binding matches the C header."""

import re

from parakeet_py import _native

from data_helpers import HEADER


def test_library_loads_and_reports_the_expected_abi_version():
    ffi, lib = _native.load()
    assert lib.parakeet_capi_abi_version() == _native.EXPECTED_ABI_VERSION


def test_every_bound_function_is_declared_in_the_public_header():
    header = HEADER.read_text()
    bound = re.findall(r"\b(parakeet_capi_\w+)\s*\(", _native.CDEF)
    assert bound, "the binding declares no function"
    for name in bound:
        assert re.search(rf"\b{name}\s*\(", header), f"{name} is bound but not in {HEADER.name}"


def test_header_abi_version_matches_the_binding():
    header = HEADER.read_text()
    m = re.search(r"#define\s+PARAKEET_CAPI_ABI_VERSION\s+(\d+)", header)
    assert m and int(m.group(1)) == _native.EXPECTED_ABI_VERSION
