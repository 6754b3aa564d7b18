"""The one exception type that the CLI turns into a one-line message and exit code 2."""


class TD2048Error(Exception):
    """Bad input or usage: a malformed network, an invalid option, an unwritable directory."""
