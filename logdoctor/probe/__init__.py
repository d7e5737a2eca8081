"""Programs logdoctor runs with another interpreter (by path, not imported)."""
