"""`lore shell`: talk to Lore in the terminal, through the same router as Slack."""
