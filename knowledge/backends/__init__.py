"""The models Lore runs on: the embedder, the chat model, and the tokenisers that count for them."""
