//! [`Completion`]: the future a sink materializes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use weir_actor::Promise;

use crate::error::{ErrorKind, StreamError};

/// The outcome of a stream as a sink reports it: a future, with a blocking
/// [`wait`](Completion::wait) for code that is not async.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("completion").unwrap();
/// let materializer = Materializer::new(&system);
/// let done: Completion<Vec<u8>> = Source::from_iter(vec![1u8, 2]).run_with(Sink::collect(), &materializer);
/// assert_eq!(done.wait(), Ok(vec![1, 2]));
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a completion reports how the stream ended"]
pub struct Completion<T> {
    promise: Arc<Promise<Result<T, StreamError>>>,
}

impl<T> Completion<T> {
    /// Block until the stream has finished; its result.
    ///
    /// Do not call it on an actor thread that the stream itself needs.
    pub fn wait(self) -> Result<T, StreamError> {
        self.promise.wait_take()
    }

    /// Block for at most `timeout`; `Err(self)` if the stream had not
    /// finished by then. A `timeout` too long for the clock
    /// (`Duration::MAX`) waits as long as it takes.
    ///
    /// # Errors
    ///
    /// Gives the completion back when it timed out.
    pub fn wait_timeout(self, timeout: Duration) -> Result<Result<T, StreamError>, Self> {
        if self.promise.wait_completed_for(timeout) {
            Ok(self.promise.wait_take())
        } else {
            Err(self)
        }
    }

    /// Whether the stream has finished.
    pub fn is_completed(&self) -> bool {
        self.promise.is_completed()
    }
}

impl<T: Send + 'static> Future for Completion<T> {
    type Output = Result<T, StreamError>;

    /// Cancel safety: dropping the future does not affect the stream.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.promise.poll_take(cx)
    }
}

impl<T> std::fmt::Debug for Completion<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completion")
            .field("completed", &self.is_completed())
            .finish()
    }
}

/// The writing end of a [`Completion`], for custom sinks: make the pair in
/// `create_logic`, keep the `Completer` in the logic, hand the
/// `Completion` out as the materialized value. Dropped without a result
/// (the stage was torn down), it reports `ErrorKind::AbruptTermination`.
///
/// # Examples
///
/// ```
/// use weir_streams::{Completer, StreamError};
///
/// let (mut completer, completion) = Completer::<u32>::new();
/// completer.complete(Ok(3));
/// completer.complete(Err(StreamError::msg("too late"))); // the first call wins
/// assert_eq!(completion.wait(), Ok(3));
/// ```
pub struct Completer<T> {
    promise: Option<Arc<Promise<Result<T, StreamError>>>>,
}

impl<T> Completer<T> {
    /// A completer and the completion it completes.
    pub fn new() -> (Self, Completion<T>) {
        let promise = Arc::new(Promise::new());
        (
            Self {
                promise: Some(Arc::clone(&promise)),
            },
            Completion { promise },
        )
    }

    /// Report the outcome (the first call wins).
    pub fn complete(&mut self, outcome: Result<T, StreamError>) {
        if let Some(promise) = self.promise.take() {
            let _ = promise.complete(outcome);
        }
    }
}

impl<T> Drop for Completer<T> {
    fn drop(&mut self) {
        // Make the error only when it will be reported: a completer that
        // already completed (the common case) drops without allocating.
        if self.promise.is_some() {
            self.complete(Err(StreamError::from_kind(ErrorKind::AbruptTermination)));
        }
    }
}

impl<T> std::fmt::Debug for Completer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completer")
            .field("completed", &self.promise.is_none())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_timeout_with_a_duration_too_long_for_the_clock_waits_instead_of_panicking() {
        let (mut completer, completion) = Completer::<u32>::new();
        let writer = std::thread::spawn(move || completer.complete(Ok(9)));
        assert_eq!(completion.wait_timeout(Duration::MAX).ok(), Some(Ok(9)));
        writer.join().unwrap();
    }
}
