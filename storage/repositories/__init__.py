"""Repositories: the only code that reads and writes the tables, handing out frozen records."""
