"""The exception types that the CLI turns into a one-line message: exit code 2, or 1 for a failed check."""


class TD2048Error(Exception):
    """Bad input or usage: a malformed network, an invalid option, an unwritable directory.

    The CLI prints it as one line on stderr and exits with :attr:`exit_code`.
    """

    exit_code = 2


class TrainingDiverged(TD2048Error):
    """A run's weights stopped being finite numbers: its step was too large. Nothing of them was saved."""

    exit_code = 1
