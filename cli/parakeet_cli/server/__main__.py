"""``python -m parakeet_cli.server``: the same program as ``parakeet-server``."""

from . import main

if __name__ == "__main__":
    main(prog_name="parakeet-server")
