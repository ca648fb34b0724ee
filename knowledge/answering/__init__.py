"""Writing the answer: its values and prompt, the extractive and the generated writers, and the checks
a model's answer must pass (citations, verification)."""
