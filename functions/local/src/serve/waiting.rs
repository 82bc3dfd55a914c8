//! The connections with no request under way (a head on its way, or idle
//! between requests), by how long they have waited: when every place is
//! taken, a new connection closes the one that has waited longest, so a
//! client that dribbles its head (or sends none) cannot keep a prompt one
//! out. One that has sent its head is never pushed out: it is answered.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

/// The connections waiting for a request, oldest first.
#[derive(Default)]
pub(super) struct Waiting(Mutex<Queue>);

#[derive(Default)]
struct Queue {
    /// The next key: keys grow, so the smallest is the longest waiting.
    next: u64,
    by_age: BTreeMap<u64, Arc<Notify>>,
}

/// One connection's place in [`Waiting`]; it leaves when dropped.
pub(super) struct Place {
    waiting: Arc<Waiting>,
    key: Mutex<Option<u64>>,
    /// Told when the connection is to be closed to make room.
    pub(super) pushed_out: Arc<Notify>,
}

impl Waiting {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection just accepted, waiting for its first request from now.
    pub(super) fn enter(self: &Arc<Self>) -> Place {
        let place = Place {
            waiting: self.clone(),
            key: Mutex::new(None),
            pushed_out: Arc::new(Notify::new()),
        };
        place.idle();
        place
    }

    /// Closes the connection that has waited longest for a request: false
    /// when every connection has one under way.
    pub(super) fn push_out_oldest(&self) -> bool {
        let oldest = self.queue().by_age.pop_first();
        oldest.is_some_and(|(_, pushed_out)| {
            pushed_out.notify_one();
            true
        })
    }

    /// How many connections wait for a request.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.queue().by_age.len()
    }
}

impl Place {
    fn key(&self) -> MutexGuard<'_, Option<u64>> {
        self.key.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its request's head has arrived: it is out of the queue until it is
    /// answered.
    pub(super) fn busy(&self) {
        let key = self.key().take();
        if let Some(key) = key {
            self.waiting.queue().by_age.remove(&key);
        }
    }

    /// Answered: it waits for its next request, as the newest.
    pub(super) fn idle(&self) {
        self.busy();
        let key = {
            let mut queue = self.waiting.queue();
            let key = queue.next;
            queue.next += 1;
            queue.by_age.insert(key, self.pushed_out.clone());
            key
        };
        *self.key() = Some(key);
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.busy();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_longest_waiting_is_pushed_out_and_a_busy_one_never() {
        let waiting = Arc::new(Waiting::default());
        let (a, b, c) = (waiting.enter(), waiting.enter(), waiting.enter());
        // `a` has a request under way; `b` waited longest of the others,
        // and `a` once answered waits as the newest.
        a.busy();
        assert!(waiting.push_out_oldest());
        b.pushed_out.notified().await;
        a.idle();
        assert!(waiting.push_out_oldest());
        c.pushed_out.notified().await;
        assert!(waiting.push_out_oldest());
        a.pushed_out.notified().await;
        assert!(!waiting.push_out_oldest(), "none waits");
        // A connection that ends leaves.
        let d = waiting.enter();
        assert_eq!(waiting.len(), 1);
        drop(d);
        assert_eq!(waiting.len(), 0);
        assert!(!waiting.push_out_oldest());
    }
}
