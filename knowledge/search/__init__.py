"""Finding passages for a question: hybrid retrieval, filters, the conversation and its budget, and
follow-up questions made standalone."""
