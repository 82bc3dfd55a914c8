//! The twins' one way to take a mutex, kept apart from the module root so
//! each twin can share it without leaning on the file that declares them.

use std::sync::{Mutex, MutexGuard};

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not make the twin unusable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}
