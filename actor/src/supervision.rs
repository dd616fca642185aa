//! Supervision: what a parent does when a child fails.

use std::any::Any;
use std::fmt;
use std::time::{Duration, Instant};

use crate::path::ActorPath;
use crate::sync::Arc;

/// What to do with a failed child.
///
/// While its parent decides, the failed child and all its descendants hold
/// their messages (they still stop when told to); the directive ends that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directive {
    /// Keep the instance and its state; drop the failing message and go on,
    /// with its descendants.
    Resume,
    /// Replace the instance with a fresh one from its props. The mailbox is
    /// kept; the failing message is dropped. Children its `pre_restart`
    /// keeps are restarted too, with the same failure.
    Restart,
    /// Stop the child.
    Stop,
    /// Fail the parent with the same failure, for its own parent to decide.
    Escalate,
}

/// Where in an actor's life a failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailurePhase {
    /// In the props factory or `pre_start`, when the actor first started.
    Start,
    /// In `receive` or `on_terminated`, or in a message adapter's function
    /// (see [`Context::message_adapter`](crate::Context::message_adapter)).
    Receive,
    /// In the props factory or `post_restart`, during a restart.
    Restart,
    /// A child's failure that its parent escalated.
    Escalated,
}

/// The error value an actor failed with through
/// [`Context::fail`](crate::Context::fail).
pub(crate) type FailureError = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// A caught failure: the panic message (or the error's text), where it
/// happened and which actor it came from, and the typed error if the actor
/// failed with [`Context::fail`](crate::Context::fail).
///
/// Two failures are equal when message, phase and origin are, and they
/// carry the same error value or none.
#[derive(Debug, Clone)]
pub struct Failure {
    message: String,
    phase: FailurePhase,
    origin: ActorPath,
    error: Option<FailureError>,
}

impl PartialEq for Failure {
    fn eq(&self, other: &Self) -> bool {
        let same_error = match (&self.error, &other.error) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.message == other.message
            && self.phase == other.phase
            && self.origin == other.origin
            && same_error
    }
}

impl Eq for Failure {}

impl Failure {
    pub(crate) fn from_panic(
        payload: &(dyn Any + Send),
        phase: FailurePhase,
        origin: ActorPath,
    ) -> Self {
        Self {
            message: panic_message(payload),
            phase,
            origin,
            error: None,
        }
    }

    pub(crate) fn from_error(error: FailureError, phase: FailurePhase, origin: ActorPath) -> Self {
        Self {
            message: error.to_string(),
            phase,
            origin,
            error: Some(error),
        }
    }

    /// The error the actor failed with through
    /// [`Context::fail`](crate::Context::fail), if it is an `E`; `None` for
    /// a panic or another error type. A decider can match on it:
    ///
    /// ```
    /// use weir_actor::{Directive, SupervisorStrategy};
    ///
    /// #[derive(Debug)]
    /// enum DbError {
    ///     Timeout,
    ///     Corrupt,
    /// }
    /// impl std::fmt::Display for DbError {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         write!(f, "{self:?}")
    ///     }
    /// }
    /// impl std::error::Error for DbError {}
    ///
    /// let strategy = SupervisorStrategy::default().with_decider(|failure| match failure.error::<DbError>() {
    ///     Some(DbError::Timeout) => Directive::Resume,
    ///     Some(DbError::Corrupt) => Directive::Stop,
    ///     None => Directive::Restart, // a panic, or another error
    /// });
    /// # let _ = strategy;
    /// ```
    pub fn error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.error.as_deref()?.downcast_ref::<E>()
    }

    pub(crate) fn escalated(&self) -> Self {
        Self {
            phase: FailurePhase::Escalated,
            ..self.clone()
        }
    }

    /// The panic message, or the text of the error the actor failed with.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where in the actor's life it failed.
    pub fn phase(&self) -> FailurePhase {
        self.phase
    }

    /// The actor that panicked (for an escalated failure, the original one).
    pub fn origin(&self) -> &ActorPath {
        &self.origin
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "actor {} failed ({:?}): {}",
            self.origin, self.phase, self.message
        )
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// Whether a decision applies to the failed child only or to all siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Only the failed child.
    OneForOne,
    /// The failed child and all its siblings (for children that only make
    /// sense together).
    AllForOne,
}

/// How a parent handles its children's failures: a decider that maps a
/// [`Failure`] to a [`Directive`], a [`Scope`], and a restart budget.
///
/// The default is one-for-one, restart on every failure, at most 10 restarts
/// of one child within 60 seconds; past the budget the child is stopped.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_actor::{Directive, FailurePhase, SupervisorStrategy};
///
/// let strategy = SupervisorStrategy::all_for_one()
///     .with_max_restarts(3, Duration::from_secs(10))
///     .with_decider(|failure| match failure.phase() {
///         FailurePhase::Start => Directive::Stop,
///         _ => Directive::Restart,
///     });
/// # let _ = strategy;
/// ```
#[derive(Clone)]
pub struct SupervisorStrategy {
    pub(crate) scope: Scope,
    max_restarts: u32,
    within: Duration,
    decider: Arc<dyn Fn(&Failure) -> Directive + Send + Sync>,
}

impl SupervisorStrategy {
    /// One-for-one with the default decider (restart) and budget.
    pub fn one_for_one() -> Self {
        Self {
            scope: Scope::OneForOne,
            max_restarts: 10,
            within: Duration::from_secs(60),
            decider: Arc::new(|_| Directive::Restart),
        }
    }

    /// All-for-one with the default decider (restart) and budget.
    pub fn all_for_one() -> Self {
        Self {
            scope: Scope::AllForOne,
            ..Self::one_for_one()
        }
    }

    /// Allow at most `max_restarts` restarts of one child within `within`;
    /// one more failure that asks for a restart stops the child instead.
    pub fn with_max_restarts(mut self, max_restarts: u32, within: Duration) -> Self {
        self.max_restarts = max_restarts;
        self.within = within;
        self
    }

    /// Decide per failure.
    pub fn with_decider(
        mut self,
        decider: impl Fn(&Failure) -> Directive + Send + Sync + 'static,
    ) -> Self {
        self.decider = Arc::new(decider);
        self
    }

    pub(crate) fn decide(&self, failure: &Failure) -> Directive {
        (self.decider)(failure)
    }

    /// Count a restart against the budget; `false` means the budget is spent.
    pub(crate) fn allow_restart(&self, stats: &mut RestartStats, now: Instant) -> bool {
        if now.duration_since(stats.window_start) > self.within {
            stats.window_start = now;
            stats.count = 0;
        }
        stats.count += 1;
        stats.count <= self.max_restarts
    }
}

impl Default for SupervisorStrategy {
    fn default() -> Self {
        Self::one_for_one()
    }
}

impl fmt::Debug for SupervisorStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SupervisorStrategy")
            .field("scope", &self.scope)
            .field("max_restarts", &self.max_restarts)
            .field("within", &self.within)
            .finish_non_exhaustive()
    }
}

/// Restarts of one child within the current window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RestartStats {
    count: u32,
    window_start: Instant,
}

impl RestartStats {
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            count: 0,
            window_start: now,
        }
    }
}
