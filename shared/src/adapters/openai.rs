//! OpenAI-compatible chat completions.
