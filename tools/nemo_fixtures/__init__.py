"""Helpers for tools/make_nemo_fixtures.py: NeMo reference fixtures for the parakeet engine tests.

Needs the optional NeMo venv (see docs/fixtures.md); nothing here is imported by the tests.
"""
