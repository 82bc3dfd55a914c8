//! Slack's wire protocol, as myao reads it: the Events API's envelopes and
//! events turned into the domain's messages ([`event`]), the feedback
//! buttons and a click on them ([`interaction`]), and the signature Slack
//! puts on each request ([`signature`]). Pure like the domain (no I/O,
//! no async), but Slack's formats, not myao's rules: kept out of the domain
//! crate so that the domain knows no outside service.

pub mod event;
pub mod interaction;
pub mod signature;
