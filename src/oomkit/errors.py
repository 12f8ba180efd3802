"""The one exception type oomkit raises for bad input; the CLI turns it into a one-line message and exit 2."""


class OomkitError(ValueError):
    """Bad or unsupported input: the message names the problem in one line."""
