"""Putting documents into an index: ingesting, chunking, tables, metadata, and finding documents by name."""
