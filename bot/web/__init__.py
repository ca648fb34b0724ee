"""The admin console: a web surface over the use cases of `bot.app.actions`, server-rendered
(Jinja2 templates, charts drawn as SVG, no script), served by `lore run` and `lore serve`."""

from bot.web.app import install_console

__all__ = ["install_console"]
