//! The store on DynamoDB: one table, one GSI, TTL on `expires_at`.
//!
//! | item     | pk              | sk                           | gsi1pk / gsi1sk                   |
//! |----------|-----------------|------------------------------|-----------------------------------|
//! | message  | `CH#{channel}`  | `M#{ts sort key}`            | `CONV#{channel}#{root or top}` / ts sort key |
//! | channel  | `CHANNELS`      | `C#{channel}`                |                                   |
//! | user     | `USERS`         | `U#{user}`                   |                                   |
//! | memory   | `MEM`           | `workspace#{kind}`, `channel#{channel}#{kind}` |                 |
//! | thread memory | `TMEM#{channel}` | `T#{root sort key}#{kind}` | `TMEM#{channel}` / `updated_at` |
//! | forget   | `FORGET`        | `{channel}#{ts sort key}`    |                                   |
//! | claim    | `CLAIM#{key}`   | `-`                          |                                   |
//! | counter  | `COUNT#{key}`   | `-`                          |                                   |
//! | installation | `INSTALL`   | `{team}`                     |                                   |
//! | install state | `OAUTH#{state}` | `-`                     |                                   |
//! | home     | `HOME`          | `-`                          |                                   |
//!
//! On a stack installed in many workspaces, each team's items are the same
//! with `TEAM#{team}#` before their partition (and [`GSI1`] partition):
//! `TEAM#T1#CH#C1`, `TEAM#T1#CHANNELS`, `TEAM#T1#COUNT#...`. The
//! installations, install states and home are the stack's and have no team. A
//! single-workspace stack's items have no team either, so its data from
//! before teams is read as it was, with nothing to migrate
//! ([`DynamoStore::for_team`]).
//!
//! A deleted message stays as a tombstone (`deleted = true`, no text, out of
//! the GSI) until its `expires_at`; an edit that comes before its message
//! waits as `pending_text` (no `user`, out of the GSI) for the original's
//! insert to take it. Thread memories are in the GSI by their update time,
//! so the recent ones are read without reading the old ones. Every item but
//! a claim-free memory of old has an `expires_at`. TTL deletion is lazy
//! (days on AWS, never on the emulator), so every read drops expired items
//! itself, by the injected clock: an item is live while `expires_at > now`
//! (epoch seconds).
//!
//! - `table`: the [`DynamoStore`] on the table, which the others implement;
//! - [`schema`]: the key and index attribute names and every item's key;
//! - `items`: what each record is written as, and how it is read back;
//! - `ops`: the table's operations (conditional puts and updates, reads of
//!   live items, queries);
//! - `store` and `records`: the [`Store`](myao_core::ports::Store)'s ports on
//!   them (messages, channels and users; memories, facts, profiles, claims).
//!
//! The table itself is made by the deployment (and by the tests' support
//! library for the emulator) from [`schema`]'s names.

mod installs;
mod items;
mod ops;
mod records;
pub mod schema;
mod store;
mod table;
mod teams;

pub use schema::{GSI1, TTL_ATTRIBUTE};
pub use table::DynamoStore;
