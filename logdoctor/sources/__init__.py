"""Where bytes come from: standard input (pass-through), files and folders."""
