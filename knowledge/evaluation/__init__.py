"""Measuring Lore: BEIR retrieval sets and question sets over a folder of documents."""
