"""Throw-away servers the tests start on loopback: PostgreSQL and Chroma."""
