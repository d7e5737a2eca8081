"""The pattern library: schema, loading and matching."""
