//! Stage supervision (Akka's `ActorAttributes.supervisionStrategy`): what
//! a failure in user code inside an operator does to the stream.
//!
//! A [`SupervisionStrategy`] is an attribute
//! ([`Attributes::with_supervision_strategy`](super::Attributes::with_supervision_strategy)).
//! Without one, an operator runs its user code as it always did: a panic
//! unwinds to the island's guard and fails the stream (no `catch_unwind`
//! per element). With one, the operator calls the user code through
//! [`SupervisionStrategy::catching`], which asks the decider what to do
//! with the failure: [`Directive::Stop`] fails the stream as before,
//! [`Directive::Resume`] drops the element and goes on, [`Directive::Restart`]
//! drops the element and resets the operator's state (a `scan` or `fold`
//! starts again from its seed, closures are cloned afresh). A decider that
//! panics fails the stream with its own panic; it never takes the island
//! down.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use crate::error::StreamError;

/// What a supervised operator does with a failure in user code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directive {
    /// Fail the stream (the default, as without a strategy).
    Stop,
    /// Drop the element that failed and go on with the next.
    Resume,
    /// Drop the element that failed, reset the operator's state, go on.
    Restart,
}

type Decider = dyn Fn(&StreamError) -> Directive + Send + Sync;

/// A decider from a failure to a [`Directive`], set on an operator with
/// [`Attributes::with_supervision_strategy`](super::Attributes::with_supervision_strategy).
/// A panic in user code reaches the decider as a [`StreamError`] of kind
/// [`ErrorKind::Panicked`](crate::ErrorKind::Panicked); a future of
/// `map_async` that returns `Err(error)` reaches it as that error.
///
/// Each operator's documentation says how it honours the strategy
/// ("Supervision: ..."); operators that say nothing fail the stream.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::{Attributes, Directive, SupervisionStrategy};
///
/// let system = weir_actor::ActorSystem::new("supervision").unwrap();
/// let mat = Materializer::new(&system);
/// let resume = Attributes::new().with_supervision_strategy(SupervisionStrategy::resuming());
/// // 100 / 0 panics: that element is dropped, the stream goes on.
/// let out = Source::from_iter(vec![1u32, 0, 4])
///     .map(|x| 100 / x)
///     .with_attributes(resume)
///     .run_with(Sink::collect(), &mat);
/// assert_eq!(out.wait(), Ok(vec![100, 25]));
///
/// // A decider looks at the failure.
/// let only_panics = SupervisionStrategy::from_fn(|error: &StreamError| match error.kind() {
///     weir_streams::ErrorKind::Panicked(_) => Directive::Resume,
///     _ => Directive::Stop,
/// });
/// assert_eq!(only_panics.decide(&StreamError::msg("no")), Directive::Stop);
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone)]
pub struct SupervisionStrategy {
    decider: Arc<Decider>,
}

impl SupervisionStrategy {
    /// Every failure stops the stream (Akka's `stoppingDecider`; the
    /// behaviour without a strategy).
    pub fn stopping() -> Self {
        Self::from_fn(|_| Directive::Stop)
    }

    /// Every failure drops its element; the stream goes on (Akka's
    /// `resumingDecider`).
    pub fn resuming() -> Self {
        Self::from_fn(|_| Directive::Resume)
    }

    /// Every failure drops its element and resets the operator (Akka's
    /// `restartingDecider`).
    pub fn restarting() -> Self {
        Self::from_fn(|_| Directive::Restart)
    }

    /// A strategy that asks `decider` for each failure.
    pub fn from_fn(decider: impl Fn(&StreamError) -> Directive + Send + Sync + 'static) -> Self {
        Self {
            decider: Arc::new(decider),
        }
    }

    /// The directive for `error`.
    ///
    /// # Panics
    ///
    /// When the decider panics (inside a stage, that panic fails the stream).
    pub fn decide(&self, error: &StreamError) -> Directive {
        (self.decider)(error)
    }

    /// Run `user_code`; when it panics, ask the decider. `Ok` with its
    /// value, or `Err(Resume | Restart)` when the element is to be
    /// dropped (and, for `Restart`, the caller's state reset). On `Stop`
    /// the panic goes on unwinding, as if there were no strategy, so the
    /// stream fails with it. For custom stages that honour the attribute.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::{Directive, SupervisionStrategy};
    ///
    /// let resume = SupervisionStrategy::resuming();
    /// assert_eq!(resume.catching(|| 2 + 2), Ok(4));
    /// let failed: Result<u32, _> = resume.catching(|| panic!("bad element"));
    /// assert_eq!(failed, Err(Directive::Resume));
    /// ```
    pub fn catching<R>(&self, user_code: impl FnOnce() -> R) -> Result<R, Directive> {
        // The simulation's stage fault (weir-actor's testkit): as if the
        // user code had panicked. Compiled out of every other build.
        #[cfg(all(feature = "testkit", not(loom)))]
        let user_code = || {
            assert!(
                !weir_actor::sim::take_stage_panic(),
                "a panic injected by the simulation"
            );
            user_code()
        };
        match catch_unwind(AssertUnwindSafe(user_code)) {
            Ok(value) => Ok(value),
            Err(payload) => match self.decide(&StreamError::panicked(&*payload)) {
                Directive::Stop => resume_unwind(payload),
                directive => Err(directive),
            },
        }
    }
}

/// Run `user_code` under `strategy` if there is one (see
/// [`SupervisionStrategy::catching`]); without one, just run it.
pub(crate) fn supervised<R>(
    strategy: Option<&SupervisionStrategy>,
    user_code: impl FnOnce() -> R,
) -> Result<R, Directive> {
    match strategy {
        None => Ok(user_code()),
        Some(strategy) => strategy.catching(user_code),
    }
}

impl fmt::Debug for SupervisionStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SupervisionStrategy")
            .finish_non_exhaustive()
    }
}

/// Two strategies are equal when they are the same decider (clones of one).
impl PartialEq for SupervisionStrategy {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.decider, &other.decider)
    }
}

impl Eq for SupervisionStrategy {}
