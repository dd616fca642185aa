//! The probes' one blocking wait: for real, or driving a simulation.

use std::cell::RefCell;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::Duration;

/// The next value on `rx` within `timeout`. On a thread that drives a
/// `weir_actor::sim::Simulation` the wait drives it (the timeout counted
/// on its clock), as `TestProbe` and `Promise::wait` do; elsewhere it
/// blocks for real.
pub(super) fn recv_within<T>(rx: &Receiver<T>, timeout: Duration) -> Result<T, RecvTimeoutError> {
    let got = RefCell::new(None);
    let ready = || {
        let mut got = got.borrow_mut();
        if got.is_none() {
            *got = match rx.try_recv() {
                Ok(value) => Some(Ok(value)),
                Err(TryRecvError::Disconnected) => Some(Err(RecvTimeoutError::Disconnected)),
                Err(TryRecvError::Empty) => None,
            };
        }
        got.is_some()
    };
    match weir_actor::sim::wait_until(ready, timeout) {
        None => rx.recv_timeout(timeout),
        Some(_) => got.into_inner().unwrap_or(Err(RecvTimeoutError::Timeout)),
    }
}
