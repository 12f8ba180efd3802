"""One module per `oomkit` command, each with run(argv) -> exit code."""
