"""Whether what was found answers: the second-stage ranking, abstention, a model's rerank; the `Judge`
that puts them together. It writes no answer."""
