//! Every error weir-actor returns.

use std::fmt;
use std::time::Duration;

/// Why an actor name was refused. See [`validate_name`](crate::validate_name)
/// for the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name starts with `$`, which is reserved for generated names.
    ReservedPrefix,
    /// The name is `.` or `..`, which mean "here" and "parent" in paths.
    Reserved,
    /// `ch` at character `position` (from 0) is not allowed in names.
    InvalidChar {
        /// The offending character.
        ch: char,
        /// Its position, counted in characters from 0.
        position: usize,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("actor name is empty"),
            Self::ReservedPrefix => {
                f.write_str("actor name starts with '$', which is reserved for generated names")
            }
            Self::Reserved => f.write_str("actor name '.' and '..' are reserved for paths"),
            Self::InvalidChar { ch, position } => write!(
                f,
                "actor name has invalid character {ch:?} at position {position}; allowed are ASCII letters, digits and {}",
                crate::name::NAME_PUNCTUATION
            ),
        }
    }
}

impl std::error::Error for NameError {}

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
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidName { name, reason } => write!(f, "invalid actor name {name:?}: {reason}"),
            Self::DuplicateName(name) => write!(f, "actor name {name:?} is not unique among its live siblings"),
            Self::ParentStopped => f.write_str("the parent actor is stopping or stopped"),
            Self::DispatcherUnavailable(e) => write!(f, "could not start a pinned dispatcher thread: {e}"),
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
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(d) => write!(f, "ask timed out after {d:?}"),
            Self::TargetStopped => f.write_str("ask target is stopped"),
        }
    }
}

impl std::error::Error for AskError {}

/// Why an [`ActorSystem`](crate::ActorSystem) could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// The system name breaks the naming rules.
    InvalidName(NameError),
    /// A setting that must be at least 1 was 0; names the setting.
    Zero(&'static str),
    /// The operating system refused to start a thread.
    ThreadSpawn(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidName(e) => write!(f, "invalid actor system name: {e}"),
            Self::Zero(setting) => write!(f, "{setting} must be at least 1"),
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
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OnDispatcherThread => f.write_str(
                "cannot block on termination from inside the actor system's own dispatcher thread",
            ),
        }
    }
}

impl std::error::Error for WaitError {}
