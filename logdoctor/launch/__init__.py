"""What a log reveals about how the server was launched."""
