"""Reading a message: mentions, greetings, "please" and punctuation set aside, links found,
and the phrasings that name each command (a matcher per command, used by the declarations in
`bot.chat.commands`).

One module per kind of command; this package exports them all, so the declarations say
`g.attach_space` whatever the topic:

    reading.py     a message tidied (`read`, `Said`, `question`), and the shared pieces
    memory.py      documents, sites, indexes, a conversation's settings, feedback, help
    channels.py    a Slack channel's threads and history, mentions, help channels, experts
    connectors.py  Confluence, GitHub, Google Drive and Notion
    access.py      document-level access: explained, people mapped, attachments restricted
"""

from bot.chat.grammar.access import *
from bot.chat.grammar.channels import *
from bot.chat.grammar.connectors import *
from bot.chat.grammar.memory import *
from bot.chat.grammar.reading import *
