"""``parakeet-cli bundle``: write, list and verify bundles, GGUF files that hold several models
(docs/bundles.md)."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import click
from tabulate import tabulate

from parakeet_py.bundle import bundle_components
from parakeet_py.convert.bundle_schema import KINDS, USER_FIELDS
from parakeet_py.convert.bundle_verify import verify_bundle
from parakeet_py.convert.bundle_write import ComponentSource, write_bundle

_EXISTING = click.Path(exists=True, dir_okay=False)


def component_rows(components: List[Dict]) -> List[Tuple]:
    """One row per component for a table: name, kind, licence, tensors, size, source."""
    return [(c["name"], c["kind"], c["license"], c["tensors"], f"{c['bytes'] / 1e6:.1f} MB", c["source"])
            for c in components]


def echo_components(path: str) -> None:
    click.echo(tabulate(component_rows(bundle_components(path)),
                        headers=("component", "kind", "license", "tensors", "size", "source"), tablefmt="plain"))


def _source(spec: str) -> ComponentSource:
    """NAME=PATH[:KIND] (KIND one of bundle_schema.KINDS; a path may itself hold ':')."""
    name, eq, path = spec.partition("=")
    if not eq or not name or not path:
        raise click.UsageError(f"a component is NAME=PATH[:KIND], not {spec!r}")
    head, colon, kind = path.rpartition(":")
    if colon and kind in KINDS:
        return ComponentSource(name, head, kind)
    return ComponentSource(name, path)


def _assign(sources: Sequence[ComponentSource], option: str, field: str, values: Sequence[str]) -> None:
    """Gives each --OPTION NAME=VALUE to its component."""
    by_name = {s.name: s for s in sources}
    for v in values:
        name, eq, value = v.partition("=")
        if not eq or name not in by_name:
            raise click.UsageError(f"--{option} takes NAME=VALUE with NAME one of the components "
                                   f"({', '.join(by_name)}), not {v!r}")
        by_name[name].info[field] = value


def _per_component(command):
    for field in reversed(USER_FIELDS):
        option = field.replace("_", "-")
        command = click.option(f"--{option}", field, multiple=True, metavar="NAME=TEXT",
                               help=f"The {field.replace('_', ' ')} of component NAME (required for each).")(command)
    return command


@click.command("bundle")
@click.argument("args", nargs=-1, metavar="[OUT.gguf NAME=PATH[:KIND]...]")
@_per_component
@click.option("--long-names", is_flag=True,
              help="Allow prefixed tensor names over 63 bytes (ggml's limit): such a bundle is read by this "
                   "library only. Sortformer's names (62 bytes) need it.")
@click.option("--list", "list_path", type=_EXISTING, metavar="BUNDLE", help="List BUNDLE's components and exit.")
@click.option("--verify", "verify_path", type=_EXISTING, metavar="BUNDLE",
              help="Recompute BUNDLE's content hashes; exit status 1 on a mismatch.")
def bundle(args: Tuple[str, ...], long_names: bool, list_path: Optional[str], verify_path: Optional[str],
           **info: Tuple[str, ...]) -> None:
    """Write a bundle: one GGUF file OUT.gguf holding the model files given as NAME=PATH[:KIND].

    NAME is the component's name ([a-z][a-z0-9_]{0,31}); KIND (asr, vad, diar, ced, voice) is
    told from the file when left out. Each component needs its licence terms: --license,
    --license-url, --source, --attribution and --changes, each as NAME=TEXT. Load a component
    with --component NAME (or component= in Python).

    \b
    Example:
      parakeet-cli bundle both.gguf asr=tdt.gguf vad=silero-f16.gguf \\
        --license asr=CC-BY-4.0 --license vad=MIT ...
      parakeet-cli bundle --list both.gguf
      parakeet-cli bundle --verify both.gguf
    """
    if list_path or verify_path:
        if args or list_path and verify_path:
            raise click.UsageError("--list and --verify take one bundle and nothing else")
        if list_path:
            echo_components(list_path)
        else:
            _verify(verify_path)
        return
    if len(args) < 2:
        raise click.UsageError("give OUT.gguf and at least one NAME=PATH[:KIND]")
    sources = [_source(a) for a in args[1:]]
    for field, values in info.items():
        _assign(sources, field.replace("_", "-"), field, values)
    size = write_bundle(args[0], sources, long_names=long_names)
    click.echo(f"wrote {args[0]}: {', '.join(s.name for s in sources)} ({size / 1e6:.1f} MB)")


def _verify(path: str) -> None:
    checks = verify_bundle(path)
    for c in checks:
        click.echo(f"{c.name}: {'ok' if c.ok else 'MISMATCH (stored ' + c.stored + ', computed ' + c.computed + ')'}")
    if not all(c.ok for c in checks):
        raise click.ClickException(f"{path}: {sum(not c.ok for c in checks)} component(s) do not match their "
                                   "content hash")
