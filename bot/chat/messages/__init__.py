"""Every sentence Lore says in chat, in one place, so wording is easy to review and test.

Sentences are Slack mrkdwn. Every name, reference, link or reason in them that a user, a
document or a site supplied is escaped here (`e`), so none can mention, link or format;
the shell and the CLI show them through `bot.chat.render.plain`, which undoes it. The
reasons that `too_big`, `login_page` and `download_failed` build are plain text: they
travel in errors and are escaped once, by `failed_file`, when shown.

The sentences live in one module per topic; this package exports them all, so a surface says
`messages.added(…)` whatever the topic:

    conversation.py  help, suggested prompts, the shell's slips, errors
    answers.py       an answer while it is looked for, at a glance, shared, and its notices
    documents.py     pages, files and threads added to an index, and why one was not
    indexes.py       a conversation's indexes and settings
    jobs.py          crawls, refreshed sources, a channel's history read
    connectors.py    connecting Confluence, GitHub, Google Drive and Notion
    access.py        document-level access from connected sources
    feedback.py      👍/👎 and its review
    helping.py       help channels, experts, verified answers
    home.py          App Home
    _words.py        counts, lists and durations the sentences share
"""

from bot.chat.messages._words import plural as plural
from bot.chat.messages.access import *
from bot.chat.messages.answers import *
from bot.chat.messages.connectors import *
from bot.chat.messages.conversation import *
from bot.chat.messages.documents import *
from bot.chat.messages.feedback import *
from bot.chat.messages.helping import *
from bot.chat.messages.home import *
from bot.chat.messages.indexes import *
from bot.chat.messages.jobs import *
