//! Actor paths: where an actor lives in the hierarchy.

use std::fmt;

use crate::sync::Arc;

/// The address of an actor: the system, the chain of names from the root and
/// the uid of this incarnation.
///
/// It displays as `weir://<system>/<name>/<name>...#<uid>`, for example
/// `weir://demo/user/parent/child#17`. Two paths are equal when the system and
/// the names are equal; the uid is ignored, so the path of a restarted-and-
/// replaced actor equals the old one (compare refs to tell incarnations apart).
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
    /// Names from the root's first child down to this actor (the root has none).
    elements: Vec<Box<str>>,
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

    pub(crate) fn child(&self, name: &str, uid: u64) -> Self {
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

    /// Whether this actor lives under the `/system` guardian (or is a guardian).
    pub fn is_system(&self) -> bool {
        self.inner.elements.first().is_none_or(|n| &**n != "user")
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
