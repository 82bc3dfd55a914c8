//! Prompt templates.
