"""Lore's benchmarks (`make bench`): measured through the real entry points."""
