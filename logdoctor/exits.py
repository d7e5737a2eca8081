"""logdoctor's exit statuses, shared by the commands."""

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_SIGPIPE = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away
