//! The `tracing` feature: one span per message.

use std::cell::RefCell;

use tracing::span::EnteredSpan;

use super::{Instrumentation, LifecycleEvent, MessageInfo, Processed};
use crate::core::dead_letters::{DeadLetter, LogLevel};

thread_local! {
    /// The spans of the messages this thread is processing, innermost last
    /// (processing nests: an `ask` reply inside another actor's message).
    static ENTERED: RefCell<Vec<EnteredSpan>> = const { RefCell::new(Vec::new()) };
}

/// Turns each message into a `tracing` span named `weir.message` with the
/// fields `path`, `actor_type`, `message_type` and `kind`, entered while the
/// message is processed; a panic is recorded as an `error` event inside it.
/// Lifecycle events and dead letters become `debug` events on the `weir`
/// target.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use weir_actor::ActorSystem;
/// use weir_actor::instrument::TracingInstrumentation;
///
/// let system = ActorSystem::builder()
///     .name("traced")
///     .instrumentation(Arc::new(TracingInstrumentation::default()))
///     .build()
///     .unwrap();
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingInstrumentation;

impl Instrumentation for TracingInstrumentation {
    fn before_message(&self, info: &MessageInfo<'_>) {
        let span = tracing::info_span!(
            target: "weir",
            "weir.message",
            path = %info.path(),
            actor_type = info.actor_type(),
            message_type = info.message_type(),
            kind = ?info.kind(),
        );
        let entered = span.entered();
        ENTERED.with(|spans| spans.borrow_mut().push(entered));
    }

    fn after_message(&self, _: &MessageInfo<'_>, processed: &Processed) {
        // Still inside the message's span: the event belongs to it.
        if let super::Outcome::Panicked(message) = &processed.outcome {
            tracing::error!(target: "weir", panic = %message, "message handler panicked");
        }
        let entered = ENTERED.with(|spans| spans.borrow_mut().pop());
        drop(entered);
    }

    fn on_lifecycle(&self, event: &LifecycleEvent<'_>) {
        tracing::debug!(target: "weir", ?event, "actor lifecycle");
    }

    /// At the level its publisher asked for.
    fn on_dead_letter(&self, letter: &DeadLetter) {
        macro_rules! log {
            ($level:expr) => {
                tracing::event!(target: "weir", $level, recipient = %letter.recipient(), message_type = letter.message_type(), reason = ?letter.reason(), "dead letter")
            };
        }
        match letter.level() {
            LogLevel::Debug => log!(tracing::Level::DEBUG),
            LogLevel::Info => log!(tracing::Level::INFO),
            LogLevel::Warning => log!(tracing::Level::WARN),
            LogLevel::Error => log!(tracing::Level::ERROR),
        }
    }
}
