"""``parakeet-cli wyoming``: Home Assistant's Wyoming speech-to-text service (docs/wyoming.md).

``command`` is the command line; ``service`` runs the listening socket; ``handler`` speaks the
protocol to one client; ``utterance`` turns one utterance's audio into live and final text;
``pcm`` converts a client's audio; ``events`` reads events without giving up on a bad one;
``program`` builds the ``info`` answer and resolves languages; ``discovery`` announces the
service over mDNS (``--zeroconf``).

The ``wyoming`` package itself is imported only when the service starts, so other commands do
not need it.
"""
