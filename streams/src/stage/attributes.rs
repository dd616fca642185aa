//! Attributes: a stage's name and its tuning.

use std::borrow::Cow;
use std::time::Duration;

use weir_actor::{DispatcherKind, LogLevel};

use super::SupervisionStrategy;
use crate::error::ArgumentError;

/// The default size of the input buffer between islands.
pub const DEFAULT_INPUT_BUFFER: usize = 16;

/// How long a substream source (a `prefix_and_tail` tail) may wait to be
/// run before [`SubscriptionTimeoutMode`] applies, unless set with
/// [`Attributes::with_subscription_timeout`] (Pekko's
/// `pekko.stream.materializer.subscription-timeout.timeout`).
pub const DEFAULT_SUBSCRIPTION_TIMEOUT: Duration = Duration::from_secs(5);

/// What a stage does when a substream source it handed out (a
/// `prefix_and_tail` tail) was not run within its subscription timeout
/// (Pekko's `subscription-timeout.mode`, `cancel` or `warn`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_streams::{Attributes, SubscriptionTimeoutMode};
///
/// let (after, mode) = Attributes::new().subscription_timeout();
/// assert_eq!((after, mode), (Duration::from_secs(5), SubscriptionTimeoutMode::Cancel));
/// let patient = Attributes::new()
///     .with_subscription_timeout(Duration::from_secs(60), SubscriptionTimeoutMode::Warn);
/// assert_eq!(patient.subscription_timeout().1, SubscriptionTimeoutMode::Warn);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionTimeoutMode {
    /// The source can no longer be run (a late run fails with
    /// [`ErrorKind::SubscriptionTimeout`](crate::ErrorKind::SubscriptionTimeout)),
    /// and the stage stops, cancelling its upstream. The default.
    #[default]
    Cancel,
    /// Only warn (a `tracing` warning, with the `tracing` feature): the
    /// source stays runnable and the stage waits for it.
    Warn,
}

/// How many slots to reserve up front for a buffer that may hold up to
/// `limit` elements: `limit`, but at most 1024; beyond that the buffer
/// grows as elements arrive. A size a user gives (an input buffer, a
/// group, a window) is a limit, not a promise that elements will come, so
/// a huge one must not ask the allocator for everything at once. Every
/// bounded buffer in Weir follows this rule; custom stages should too.
///
/// # Examples
///
/// ```
/// use weir_streams::stage::upfront_capacity;
///
/// assert_eq!(upfront_capacity(16), 16);
/// let huge: Vec<u64> = Vec::with_capacity(upfront_capacity(usize::MAX));
/// assert!(huge.capacity() <= 1024);
/// ```
pub fn upfront_capacity(limit: usize) -> usize {
    crate::overflow::upfront_capacity(limit)
}

/// A stage's name and tuning. Set on a blueprint with `.named(..)`,
/// `.with_attributes(..)`; a stage reads them in `create_logic`.
///
/// # Examples
///
/// ```
/// use weir_streams::Attributes;
///
/// let attrs = Attributes::named("parser").with_input_buffer(64)?;
/// assert_eq!(attrs.name(), Some("parser"));
/// assert_eq!(attrs.input_buffer(), 64);
/// # Ok::<(), weir_streams::ArgumentError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    name: Option<Name>,
    input_buffer: Option<usize>,
    drop_log_level: Option<LogLevel>,
    dispatcher: Option<DispatcherKind>,
    supervision: Option<SupervisionStrategy>,
    log_levels: Option<LogLevels>,
    /// Boxed: rarely set, and every planned stage carries its attributes.
    subscription_timeout: Option<Box<(Duration, SubscriptionTimeoutMode)>>,
}

/// The levels `log(name)` emits its events at (Akka's
/// `Attributes.logLevels`); `None` silences that kind of event. Set with
/// [`Attributes::with_log_levels`].
///
/// # Examples
///
/// ```
/// use weir_actor::LogLevel;
/// use weir_streams::LogLevels;
///
/// let quiet_elements = LogLevels { element: None, ..LogLevels::default() };
/// assert_eq!(quiet_elements.failure, Some(LogLevel::Error));
/// assert_eq!(LogLevels::off().finish, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLevels {
    /// Each element (default debug).
    pub element: Option<LogLevel>,
    /// Completion or cancellation (default debug).
    pub finish: Option<LogLevel>,
    /// Failure (default error).
    pub failure: Option<LogLevel>,
}

impl LogLevels {
    /// No events at all.
    pub const fn off() -> Self {
        Self {
            element: None,
            finish: None,
            failure: None,
        }
    }
}

impl Default for LogLevels {
    /// Elements and completion at debug, failure at error (as Akka).
    fn default() -> Self {
        Self {
            element: Some(LogLevel::Debug),
            finish: Some(LogLevel::Debug),
            failure: Some(LogLevel::Error),
        }
    }
}

impl Attributes {
    /// No attributes: the defaults apply.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attributes with a name.
    pub fn named(name: impl Into<Cow<'static, str>>) -> Self {
        Self::new().with_name(name)
    }

    /// Set the name.
    pub fn with_name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.name = Some(Name::from(name.into()));
        self
    }

    /// Set the input buffer size used where this stage receives from
    /// another island: how many elements may be on their way to it.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] for 0: a buffer of no elements could never
    /// move one (as `ActorSystem::builder().throughput(0)` fails to build).
    /// The buffer's memory is allocated as elements arrive, so a large
    /// size costs nothing up front.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::{ArgumentError, Attributes};
    ///
    /// let wide = Attributes::new().with_input_buffer(256)?;
    /// assert_eq!(wide.input_buffer(), 256);
    /// assert_eq!(
    ///     Attributes::new().with_input_buffer(0),
    ///     Err(ArgumentError::Zero { argument: "input_buffer" })
    /// );
    /// # Ok::<(), ArgumentError>(())
    /// ```
    pub fn with_input_buffer(mut self, size: usize) -> Result<Self, ArgumentError> {
        if size == 0 {
            return Err(ArgumentError::Zero {
                argument: "input_buffer",
            });
        }
        self.input_buffer = Some(size);
        Ok(self)
    }

    /// The level at which a stage that drops elements (`Source::actor_ref`
    /// under its overflow strategy) asks each drop, published as a dead
    /// letter, to be logged.
    ///
    /// ```
    /// use weir_actor::{DispatcherKind, LogLevel};
    /// use weir_streams::Attributes;
    ///
    /// assert_eq!(Attributes::new().drop_log_level(), LogLevel::Debug);
    /// let loud = Attributes::new().with_drop_log_level(LogLevel::Warning);
    /// assert_eq!(loud.drop_log_level(), LogLevel::Warning);
    /// ```
    pub fn with_drop_log_level(mut self, level: LogLevel) -> Self {
        self.drop_log_level = Some(level);
        self
    }

    /// The level for drops ([`LogLevel::Debug`] unless set, as Akka logs
    /// an element dropped for want of demand).
    pub fn drop_log_level(&self) -> LogLevel {
        self.drop_log_level.unwrap_or(LogLevel::Debug)
    }

    /// Run the island holding this stage on `dispatcher` instead of the
    /// system's shared pool. When several stages of one island set a
    /// dispatcher, the first (most upstream) one wins; an
    /// `async_boundary` keeps the rest of the graph on the shared pool.
    ///
    /// ```
    /// use weir_actor::DispatcherKind;
    /// use weir_streams::Attributes;
    ///
    /// assert_eq!(Attributes::new().dispatcher(), None);
    /// let io = Attributes::new().with_dispatcher(DispatcherKind::Named("io"));
    /// assert_eq!(io.dispatcher(), Some(DispatcherKind::Named("io")));
    /// ```
    pub fn with_dispatcher(mut self, dispatcher: DispatcherKind) -> Self {
        self.dispatcher = Some(dispatcher);
        self
    }

    /// Attributes for a stage that blocks (file or socket I/O, a blocking
    /// client): its island runs on a thread of its own
    /// ([`DispatcherKind::Pinned`]), never on the shared pool, so it cannot
    /// hold up other streams or actors. Every IO stage of
    /// [`io`](crate::io) carries it; override it with
    /// [`with_dispatcher`](Self::with_dispatcher) (a named pool declared
    /// on the system builder, for many files at once).
    ///
    /// ```
    /// use weir_actor::DispatcherKind;
    /// use weir_streams::Attributes;
    ///
    /// assert_eq!(Attributes::blocking().dispatcher(), Some(DispatcherKind::Pinned));
    /// ```
    pub fn blocking() -> Self {
        Self::new().with_dispatcher(DispatcherKind::Pinned)
    }

    /// What a failure in user code inside this operator does (Akka's
    /// `ActorAttributes.supervisionStrategy`); see [`SupervisionStrategy`]
    /// and each operator's "Supervision" note. Set on a `Source` or `Flow`
    /// with `.with_attributes(..)`, it applies to the last operator.
    ///
    /// ```
    /// use weir_streams::{Attributes, SupervisionStrategy};
    ///
    /// assert!(Attributes::new().supervision_strategy().is_none());
    /// let resume = Attributes::new().with_supervision_strategy(SupervisionStrategy::resuming());
    /// assert!(resume.supervision_strategy().is_some());
    /// ```
    pub fn with_supervision_strategy(mut self, strategy: SupervisionStrategy) -> Self {
        self.supervision = Some(strategy);
        self
    }

    /// The supervision strategy, if one was set (none: failures stop the stream).
    pub fn supervision_strategy(&self) -> Option<&SupervisionStrategy> {
        self.supervision.as_ref()
    }

    /// The levels `log(name)` emits at (Akka's `Attributes.logLevels`).
    ///
    /// ```
    /// use weir_actor::LogLevel;
    /// use weir_streams::{Attributes, LogLevels};
    ///
    /// assert_eq!(Attributes::new().log_levels(), LogLevels::default());
    /// let loud = LogLevels { element: Some(LogLevel::Info), ..LogLevels::default() };
    /// assert_eq!(Attributes::new().with_log_levels(loud).log_levels(), loud);
    /// ```
    pub fn with_log_levels(mut self, levels: LogLevels) -> Self {
        self.log_levels = Some(levels);
        self
    }

    /// The levels for `log(name)` ([`LogLevels::default`] unless set).
    pub fn log_levels(&self) -> LogLevels {
        self.log_levels.unwrap_or_default()
    }

    /// How long a substream source this stage hands out (a
    /// `prefix_and_tail` tail) may wait to be run, and what happens then
    /// (see [`SubscriptionTimeoutMode`]).
    pub fn with_subscription_timeout(
        mut self,
        timeout: Duration,
        mode: SubscriptionTimeoutMode,
    ) -> Self {
        self.subscription_timeout = Some(Box::new((timeout, mode)));
        self
    }

    /// The subscription timeout and its mode
    /// ([`DEFAULT_SUBSCRIPTION_TIMEOUT`], [`SubscriptionTimeoutMode::Cancel`]
    /// unless set).
    pub fn subscription_timeout(&self) -> (Duration, SubscriptionTimeoutMode) {
        self.subscription_timeout.as_deref().copied().unwrap_or((
            DEFAULT_SUBSCRIPTION_TIMEOUT,
            SubscriptionTimeoutMode::Cancel,
        ))
    }

    /// The dispatcher set for this stage's island, if one was set (the
    /// shared pool otherwise).
    pub fn dispatcher(&self) -> Option<DispatcherKind> {
        self.dispatcher
    }

    /// The name, if one was set.
    pub fn name(&self) -> Option<&str> {
        self.name.as_ref().map(Name::as_str)
    }

    /// The name as kept: a clone that never copies the text.
    pub(crate) fn shared_name(&self) -> Option<Name> {
        self.name.clone()
    }

    /// The input buffer size ([`DEFAULT_INPUT_BUFFER`] unless set).
    pub fn input_buffer(&self) -> usize {
        self.input_buffer.unwrap_or(DEFAULT_INPUT_BUFFER)
    }

    /// The input buffer size if one was set, else `default` (for stages
    /// whose own default differs from [`DEFAULT_INPUT_BUFFER`]).
    pub fn input_buffer_or(&self, default: usize) -> usize {
        self.input_buffer.unwrap_or(default)
    }

    /// These attributes, with `other`'s set values taking precedence.
    pub fn and(mut self, other: &Attributes) -> Self {
        if other.name.is_some() {
            self.name = other.name.clone();
        }
        if other.input_buffer.is_some() {
            self.input_buffer = other.input_buffer;
        }
        if other.drop_log_level.is_some() {
            self.drop_log_level = other.drop_log_level;
        }
        if other.dispatcher.is_some() {
            self.dispatcher = other.dispatcher;
        }
        if other.supervision.is_some() {
            self.supervision = other.supervision.clone();
        }
        if other.log_levels.is_some() {
            self.log_levels = other.log_levels;
        }
        if other.subscription_timeout.is_some() {
            self.subscription_timeout = other.subscription_timeout.clone();
        }
        self
    }
}

/// A stage name as attributes keep it: a `'static` string, or one made at
/// run time (a fused chain's `single.map.head`), shared, so cloning the
/// attributes for every run never copies the text.
#[derive(Clone)]
pub(crate) enum Name {
    Static(&'static str),
    Shared(std::sync::Arc<str>),
}

impl Name {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Static(name) => name,
            Self::Shared(name) => name,
        }
    }
}

// Equal and shown by the text, however it is kept.
impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<Cow<'static, str>> for Name {
    fn from(name: Cow<'static, str>) -> Self {
        match name {
            Cow::Borrowed(name) => Self::Static(name),
            Cow::Owned(name) => Self::Shared(name.into()),
        }
    }
}
