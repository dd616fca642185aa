//! Every error weir-actor returns.

use std::fmt;
use std::time::Duration;

use crate::name::NameError;

/// Why a spawn failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpawnError {
    /// The name breaks the naming rules.
    InvalidName {
        /// The name that was asked for.
        name: String,
        /// What is wrong with it.
        reason: NameError,
    },
    /// A live sibling already has this name. A name becomes free again once the
    /// parent has processed the old child's termination.
    DuplicateName(String),
    /// The parent is stopping or stopped, so it takes no new children.
    ParentStopped,
    /// A pinned dispatcher's thread could not be started.
    DispatcherUnavailable(String),
    /// The props name a pool the system builder did not declare.
    UnknownDispatcher(String),
    /// A setting of the props (or a pool router's size) that must be at
    /// least 1 was 0; names the setting (`"throughput"`, `"pool size"`).
    Zero(&'static str),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidName { name, reason } => {
                write!(f, "invalid actor name {name:?}: {reason}")
            }
            Self::DuplicateName(name) => write!(
                f,
                "actor name {name:?} is not unique among its live siblings"
            ),
            Self::ParentStopped => f.write_str("the parent actor is stopping or stopped"),
            Self::DispatcherUnavailable(e) => {
                write!(f, "could not start a pinned dispatcher thread: {e}")
            }
            Self::UnknownDispatcher(name) => write!(
                f,
                "no pool named {name:?} was declared on the system builder"
            ),
            Self::Zero(setting) => write!(f, "{setting} must be at least 1"),
        }
    }
}

impl std::error::Error for SpawnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidName { reason, .. } => Some(reason),
            _ => None,
        }
    }
}

/// Why an [`ask`](crate::ask) gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskError {
    /// No reply arrived within the time-out.
    Timeout(Duration),
    /// The target was stopped before the question reached it.
    TargetStopped,
    /// The actor system terminated while the ask waited: no reply can come.
    Terminated,
    /// [`AskHandle::wait`](crate::AskHandle::wait) was called where blocking
    /// could keep the reply from ever being processed: on the scheduler's
    /// thread (which fires the time-out), or on a pool worker when every
    /// other worker of its pool is already blocked in such a wait (a pool of
    /// one thread always is). The ask goes on; its answer is dropped. Await
    /// the handle from async code, have the answer sent to the actor as a
    /// message, or block from a pinned actor or a thread outside the system.
    WouldDeadlock,
    /// The time-out was zero: no reply could ever be in time, so the
    /// question was not sent.
    ZeroTimeout,
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(d) => write!(f, "ask timed out after {d:?}"),
            Self::TargetStopped => f.write_str("ask target is stopped"),
            Self::Terminated => f.write_str("the actor system terminated before the ask was answered"),
            Self::WouldDeadlock => f.write_str(
                "ask waited for on a thread the reply may need (the scheduler's, or its pool's last free worker)",
            ),
            Self::ZeroTimeout => f.write_str("an ask needs a time-out above zero"),
        }
    }
}

impl std::error::Error for AskError {}

/// Why [`try_tell`](crate::ActorRef::try_tell) did not queue a message.
/// The message is given back.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TellError<M> {
    /// The recipient's bounded mailbox is full (see
    /// [`Props::with_bounded_mailbox`](crate::Props::with_bounded_mailbox)).
    MailboxFull(M),
}

impl<M> TellError<M> {
    /// The message that was not sent.
    pub fn into_inner(self) -> M {
        match self {
            Self::MailboxFull(msg) => msg,
        }
    }
}

impl<M> fmt::Debug for TellError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MailboxFull(_) => f.write_str("MailboxFull(..)"),
        }
    }
}

impl<M> fmt::Display for TellError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MailboxFull(_) => f.write_str("the recipient's mailbox is full"),
        }
    }
}

impl<M> std::error::Error for TellError<M> {}

/// Why [`Context::stash`](crate::Context::stash) did not stash a message.
/// The message is given back.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StashError<M> {
    /// The stash holds its capacity (see
    /// [`Props::with_stash_capacity`](crate::Props::with_stash_capacity)).
    Full(M),
}

impl<M> StashError<M> {
    /// The message that was not stashed.
    pub fn into_inner(self) -> M {
        match self {
            Self::Full(msg) => msg,
        }
    }
}

impl<M> fmt::Debug for StashError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full(_) => f.write_str("Full(..)"),
        }
    }
}

impl<M> fmt::Display for StashError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full(_) => f.write_str("the stash is full"),
        }
    }
}

impl<M> std::error::Error for StashError<M> {}

/// Why an [`ActorSystem`](crate::ActorSystem) could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// The system name breaks the naming rules.
    InvalidName(NameError),
    /// A setting that must be at least 1 was 0; names the setting.
    Zero(&'static str),
    /// Two pools were declared with the same name.
    DuplicatePool(&'static str),
    /// The operating system refused to start a thread.
    ThreadSpawn(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidName(e) => write!(f, "invalid actor system name: {e}"),
            Self::Zero(setting) => write!(f, "{setting} must be at least 1"),
            Self::DuplicatePool(name) => write!(f, "pool {name:?} is declared twice"),
            Self::ThreadSpawn(e) => write!(f, "could not start a dispatcher thread: {e}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Why a blocking wait for termination was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitError {
    /// The wait was called on one of the system's own dispatcher threads: it
    /// would wait for itself to stop. Await the future from async code, or
    /// wait from a thread outside the system.
    OnDispatcherThread,
    /// The system did not finish terminating within the time given.
    TimedOut,
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OnDispatcherThread => f.write_str(
                "cannot block on termination from inside the actor system's own dispatcher thread",
            ),
            Self::TimedOut => {
                f.write_str("the actor system did not terminate within the time given")
            }
        }
    }
}

impl std::error::Error for WaitError {}

/// Why a path string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathError {
    /// A full path must start with `weir://`.
    MissingScheme,
    /// A path to resolve must be absolute: `/...` or `weir://...`.
    NotAbsolute,
    /// The system name is not a valid name.
    InvalidSystemName(NameError),
    /// Element `index` (0 = the first after the system name) is not a valid
    /// name (or, in a selection, a valid pattern).
    InvalidElement {
        /// Which element, counted from 0.
        index: usize,
        /// What is wrong with it.
        error: NameError,
    },
    /// The text after `#` is not a decimal uid.
    InvalidUid,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingScheme => f.write_str("actor path must start with 'weir://'"),
            Self::NotAbsolute => f.write_str("actor path must start with '/' or 'weir://'"),
            Self::InvalidSystemName(e) => write!(f, "invalid system name in path: {e}"),
            Self::InvalidElement { index, error } => {
                write!(f, "invalid path element {index}: {error}")
            }
            Self::InvalidUid => f.write_str("the uid after '#' must be a decimal number"),
        }
    }
}

impl std::error::Error for PathError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidSystemName(e) | Self::InvalidElement { error: e, .. } => Some(e),
            _ => None,
        }
    }
}

/// Why [`ActorSystem::resolve`](crate::ActorSystem::resolve) found no actor.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveError {
    /// The path is well formed but names no live actor of this system.
    NotFound,
    /// The path is not well formed.
    Malformed(PathError),
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound => f.write_str("no live actor at this path"),
            Self::Malformed(e) => write!(f, "malformed actor path: {e}"),
        }
    }
}

impl std::error::Error for ResolveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Malformed(e) => Some(e),
            Self::NotFound => None,
        }
    }
}

impl From<PathError> for ResolveError {
    fn from(e: PathError) -> Self {
        Self::Malformed(e)
    }
}

/// A message sent through an [`ActorHandle`](crate::ActorHandle) to an actor
/// that takes another type. Gives the message back.
pub struct WrongMessageType<M> {
    /// The message, unsent.
    pub message: M,
    /// The type of the actor that refused it.
    pub actor_type: &'static str,
}

impl<M> fmt::Debug for WrongMessageType<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrongMessageType")
            .field("message_type", &std::any::type_name::<M>())
            .field("actor_type", &self.actor_type)
            .finish_non_exhaustive()
    }
}

impl<M> fmt::Display for WrongMessageType<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "actor {} does not take messages of type {}",
            self.actor_type,
            std::any::type_name::<M>()
        )
    }
}

impl<M> std::error::Error for WrongMessageType<M> {}

/// Why a [`Routing`](crate::features::routing::Routing) could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RoutingError {
    /// A consistent-hashing ring needs at least one virtual node per routee.
    ZeroVirtualNodes,
    /// More virtual nodes per routee than a ring takes.
    TooManyVirtualNodes {
        /// The number asked for.
        requested: usize,
        /// The most allowed ([`MAX_VIRTUAL_NODES`](crate::features::routing::MAX_VIRTUAL_NODES)).
        max: usize,
    },
}

impl fmt::Display for RoutingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroVirtualNodes => {
                f.write_str("a consistent-hashing ring needs at least one virtual node per routee")
            }
            Self::TooManyVirtualNodes { requested, max } => write!(
                f,
                "{requested} virtual nodes per routee asked for; a consistent-hashing ring takes at most {max}"
            ),
        }
    }
}

impl std::error::Error for RoutingError {}

/// Why something could not be scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleError {
    /// A periodic timer needs an interval above zero.
    ZeroInterval,
    /// A receive timeout needs a duration above zero (cancel it instead).
    ZeroTimeout,
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroInterval => f.write_str("a periodic timer needs an interval above zero"),
            Self::ZeroTimeout => {
                f.write_str("a receive timeout needs a duration above zero; use cancel_receive_timeout to turn it off")
            }
        }
    }
}

impl std::error::Error for ScheduleError {}

/// The system terminated before a timer future fired
/// ([`ActorSystem::sleep`](crate::ActorSystem::sleep),
/// [`ActorSystem::after`](crate::ActorSystem::after)): its scheduler is gone
/// and the timer never will. Holds the value `after` would have given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedulerStopped<T = ()>(pub T);

impl<T> fmt::Display for SchedulerStopped<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the actor system terminated before the timer fired")
    }
}

impl<T: fmt::Debug> std::error::Error for SchedulerStopped<T> {}

#[cfg(feature = "testkit")]
/// Why a simulation (`crate::sim`, feature `testkit`) could not be built or did not reach what it was run
/// for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// The system could not be built.
    Build(BuildError),
    /// This thread already drives a simulation: one at a time per thread.
    AlreadyRunning,
    /// Nothing was runnable and no timer was pending before the condition
    /// held.
    Quiet {
        /// The simulation's seed.
        seed: u64,
        /// The steps taken so far.
        steps: u64,
    },
    /// The step limit passed before the condition held (or before the
    /// simulation fell quiet).
    StepLimit {
        /// The simulation's seed.
        seed: u64,
        /// The steps taken so far.
        steps: u64,
    },
}

#[cfg(feature = "testkit")]
impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Build(e) => write!(f, "the simulated system could not be built: {e}"),
            Self::AlreadyRunning => f.write_str("this thread already drives a simulation"),
            Self::Quiet { seed, steps } => write!(
                f,
                "the simulation (seed {seed}) fell quiet after {steps} steps before the condition held"
            ),
            Self::StepLimit { seed, steps } => write!(
                f,
                "the simulation (seed {seed}) passed its step limit ({steps} steps)"
            ),
        }
    }
}

#[cfg(feature = "testkit")]
impl std::error::Error for SimError {}
