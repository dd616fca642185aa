//! Actor paths: where an actor lives in the hierarchy.

use std::fmt;
use std::str::FromStr;

use crate::error::PathError;
use crate::name::{validate_element, validate_name};
use crate::sync::Arc;

/// The address of an actor: the system, the chain of names from the root and
/// the uid of this incarnation.
///
/// It displays as `weir://<system>/<name>/<name>...#<uid>`, for example
/// `weir://demo/user/parent/child#17`; the root is `weir://<system>/#<uid>`.
/// [`ActorPath::parse`] reads the same form back (the `#<uid>` part is
/// optional there and defaults to 0). Top-level actors live under `/user`,
/// Weir's own under `/system`, the temporary actors of `ask` under `/temp`.
///
/// Two paths are equal when the system and the names are equal; the uid is
/// ignored, so the path of a stopped-and-replaced actor equals the old one
/// (compare refs or [`uid`](Self::uid)s to tell incarnations apart).
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// struct Quiet;
/// impl Actor for Quiet {
///     type Msg = ();
///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
/// }
///
/// let system = ActorSystem::new("demo").unwrap();
/// let quiet = system.spawn(Props::new(|| Quiet), "quiet").unwrap();
/// assert_eq!(quiet.path().to_string_without_uid(), "weir://demo/user/quiet");
/// assert_eq!(quiet.path().name(), "quiet");
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone)]
pub struct ActorPath {
    inner: Arc<PathInner>,
}

struct PathInner {
    system: Arc<str>,
    /// Names from the root's first child down to this actor (the root has
    /// none). Shared: a child's path clones its parent's names (no copy)
    /// and its own name is the one its parent's children table holds.
    elements: Vec<Arc<str>>,
    uid: u64,
}

impl ActorPath {
    pub(crate) fn root(system: Arc<str>, uid: u64) -> Self {
        Self {
            inner: Arc::new(PathInner {
                system,
                elements: Vec::new(),
                uid,
            }),
        }
    }

    /// Parse the full form `weir://<system>/<name>/...[#<uid>]`.
    ///
    /// # Errors
    ///
    /// A [`PathError`] saying which part is malformed.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::ActorPath;
    ///
    /// let path = ActorPath::parse("weir://demo/user/a/$b#42").unwrap();
    /// assert_eq!(path.elements().collect::<Vec<_>>(), ["user", "a", "$b"]);
    /// assert_eq!(path.uid(), 42);
    /// assert_eq!(path.to_string(), "weir://demo/user/a/$b#42");
    /// assert!(ActorPath::parse("weir://demo/user/a b").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self, PathError> {
        let rest = s.strip_prefix("weir://").ok_or(PathError::MissingScheme)?;
        let (body, uid) = match rest.rsplit_once('#') {
            Some((body, uid)) => (body, parse_uid(uid)?),
            None => (rest, 0),
        };
        let (system, elements) = body.split_once('/').unwrap_or((body, ""));
        validate_name(system).map_err(PathError::InvalidSystemName)?;
        let elements = if elements.is_empty() {
            Vec::new()
        } else {
            elements
                .split('/')
                .enumerate()
                .map(|(index, e)| {
                    validate_element(e)
                        .map(|()| Arc::<str>::from(e))
                        .map_err(|error| PathError::InvalidElement { index, error })
                })
                .collect::<Result<_, _>>()?
        };
        Ok(Self {
            inner: Arc::new(PathInner {
                system: system.into(),
                elements,
                uid,
            }),
        })
    }

    /// The path a selection pattern was aimed at, for its dead letters. The
    /// elements are not validated: they may hold `*` and `?`.
    pub(crate) fn pattern(system: &str, local: &str) -> Self {
        Self {
            inner: Arc::new(PathInner {
                system: system.into(),
                elements: local
                    .split('/')
                    .filter(|e| !e.is_empty())
                    .map(Arc::from)
                    .collect(),
                uid: 0,
            }),
        }
    }

    pub(crate) fn child(&self, name: impl Into<Arc<str>>, uid: u64) -> Self {
        let mut elements = Vec::with_capacity(self.inner.elements.len() + 1);
        elements.extend(self.inner.elements.iter().cloned());
        elements.push(name.into());
        Self {
            inner: Arc::new(PathInner {
                system: self.inner.system.clone(),
                elements,
                uid,
            }),
        }
    }

    /// The actor's own name (`""` for the root).
    pub fn name(&self) -> &str {
        self.inner.elements.last().map_or("", |n| n)
    }

    /// Whether this is a user actor (under `/user`, not the guardian).
    #[cfg(feature = "testkit")]
    pub(crate) fn is_user(&self) -> bool {
        self.inner.elements.len() > 1 && &*self.inner.elements[0] == "user"
    }

    /// The names from the root down to this actor.
    pub fn elements(&self) -> impl ExactSizeIterator<Item = &str> {
        self.inner.elements.iter().map(|n| &**n)
    }

    /// The name of the actor system this path belongs to.
    pub fn system_name(&self) -> &str {
        &self.inner.system
    }

    /// The uid of the incarnation this path was taken from.
    pub fn uid(&self) -> u64 {
        self.inner.uid
    }

    /// Whether this is one of Weir's actors rather than a user actor: the
    /// root, the guardians, anything under `/system` and the temporary actors
    /// under `/temp`. User actors live under `/user`.
    pub fn is_system(&self) -> bool {
        !(self.inner.elements.len() >= 2 && &*self.inner.elements[0] == "user")
    }

    /// The full form without the `#uid` suffix.
    pub fn to_string_without_uid(&self) -> String {
        let mut s = format!("weir://{}", self.inner.system);
        if self.inner.elements.is_empty() {
            s.push('/');
        }
        for e in &self.inner.elements {
            s.push('/');
            s.push_str(e);
        }
        s
    }
}

/// A uid: decimal digits only.
pub(crate) fn parse_uid(s: &str) -> Result<u64, PathError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PathError::InvalidUid);
    }
    s.parse().map_err(|_| PathError::InvalidUid)
}

impl FromStr for ActorPath {
    type Err = PathError;

    fn from_str(s: &str) -> Result<Self, PathError> {
        Self::parse(s)
    }
}

impl PartialEq for ActorPath {
    fn eq(&self, other: &Self) -> bool {
        self.inner.system == other.inner.system && self.inner.elements == other.inner.elements
    }
}

impl Eq for ActorPath {}

impl std::hash::Hash for ActorPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.system.hash(state);
        self.inner.elements.hash(state);
    }
}

impl fmt::Display for ActorPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.to_string_without_uid(), self.inner.uid)
    }
}

impl fmt::Debug for ActorPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActorPath({self})")
    }
}
