"""Reading text, no I/O: the markup of pages (reST, Markdown, MyST), the units a passage is quoted by
(sentences, list items, code blocks), where a passage was cut, and words and their stems."""
