"""The stateful LLM suite: tiny decoders whose programs carry a KV cache between calls,
run as a sequence of steps on one loaded method (see `decoders`)."""
