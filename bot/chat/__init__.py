"""Chat with Lore, whatever the surface: the command grammar, the router, what Lore says and
how it renders. Slack and the shell feed it turns and give it a surface to reply on."""
