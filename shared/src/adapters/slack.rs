//! Slack Web API.
