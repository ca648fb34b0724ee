"""Everything that pulls documents in: safe fetching, robots.txt, sitemaps, crawling, indexing
jobs and connectors (Confluence)."""
