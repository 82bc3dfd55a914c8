//! What the local benchmarks share.

use myao_domain::{Channel, ChannelId, User, UserId, Visibility};

/// A small deterministic generator (no dependency needed for this): the
/// same seed, the same workspace.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Public channels `C0000`, `C0001`, ... named `names`, in order.
pub fn public_channels<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Channel> {
    names
        .into_iter()
        .enumerate()
        .map(|(i, n)| Channel {
            id: ChannelId::parse(&format!("C{i:04}")).expect("id"),
            name: n.to_owned(),
            visibility: Visibility::PUBLIC,
        })
        .collect()
}

/// People `U0000`, `U0001`, ... named `names`, in order.
pub fn people(names: impl IntoIterator<Item = String>) -> Vec<User> {
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| User {
            id: UserId::parse(&format!("U{i:04}")).expect("id"),
            name,
            is_bot: false,
        })
        .collect()
}
