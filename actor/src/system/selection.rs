//! Actor selection: send to every actor whose path matches a pattern with
//! `*` and `?` wildcards.

use std::fmt;

use crate::core::actor_ref::ActorHandle;
use crate::core::dead_letters::DeadLetterReason;
use crate::error::{PathError, ResolveError};
use crate::name::TEMP;
use crate::name::is_name_char;
use crate::path::ActorPath;
use crate::system::actor_system::ActorSystem;
use crate::system::resolve::{Node, absolute};

/// The actors whose paths match a pattern, looked up each time it is used.
///
/// A pattern is an absolute path (`/user/workers/*` or
/// `weir://<system>/user/...`) whose elements may use `*` (any run of
/// characters within one element) and `?` (one character), and `..`. The
/// temporary actors of pending asks (under `/temp`) match only a pattern
/// that is exactly one's own path, with no wildcard and no `..`.
/// Matching is linear in the pattern times the name length per element: no
/// pattern can make it backtrack catastrophically.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props};
///
/// struct Worker;
/// impl Actor for Worker {
///     type Msg = u32;
///     fn receive(&mut self, _: &mut Context<Self>, _: u32) {}
/// }
///
/// let system = ActorSystem::new("sel").unwrap();
/// for name in ["w1", "w2", "other"] {
///     system.spawn(Props::new(|| Worker), name).unwrap();
/// }
/// let workers = system.select("/user/w?").unwrap();
/// assert_eq!(workers.resolve().len(), 2);
/// assert_eq!(workers.tell(7u32), 2);
/// system.terminate().wait().unwrap();
/// ```
#[derive(Clone)]
pub struct ActorSelection {
    system: ActorSystem,
    /// The part after the address; `None` when the address names another
    /// system (the selection then matches nothing).
    local: Option<Box<str>>,
    pattern: Box<str>,
}

impl ActorSelection {
    pub(crate) fn new(system: &ActorSystem, pattern: &str) -> Result<Self, ResolveError> {
        let (ours, local) = absolute(system, pattern)?;
        for (index, segment) in local.split('/').enumerate() {
            validate_pattern_element(segment, index)?;
        }
        Ok(Self {
            system: system.internal(),
            local: ours.then(|| local.into()),
            pattern: pattern.into(),
        })
    }

    /// The pattern this selection was made from.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The live actors that match now.
    pub fn resolve(&self) -> Vec<ActorHandle> {
        let (Some(local), Some(root)) = (&self.local, self.system.root()) else {
            return Vec::new();
        };
        let mut frontier = vec![Node::Actor(root)];
        // Temporary actors are reached only by their exact path: no `..`
        // and no wildcard on the way (see `children_matching`).
        let mut exact = true;
        for segment in local.split('/') {
            frontier = match segment {
                "" | "." => frontier,
                ".." => {
                    exact = false;
                    frontier.iter().filter_map(|n| n.up(&self.system)).collect()
                }
                pattern => {
                    exact &= !pattern.contains(['*', '?']);
                    frontier
                        .iter()
                        .flat_map(|n| self.children_matching(n, pattern, exact))
                        .collect()
                }
            };
        }
        let mut found: Vec<ActorHandle> =
            frontier.into_iter().filter_map(Node::into_handle).collect();
        found.sort_by(|a, b| a.path().elements().cmp(b.path().elements()));
        found.dedup();
        found
    }

    /// The children of `node` matching `pattern`. Inside `/temp` only an
    /// `exact` pattern (so far) matches, and only the temporary actor of that
    /// very name: a pending ask's reply address is not for anyone else to
    /// find by walking or by wildcard.
    fn children_matching(&self, node: &Node<'_>, pattern: &str, exact: bool) -> Vec<Node<'static>> {
        match node.actor() {
            Some(actor) => {
                let Some(core) = actor.inner.core() else {
                    return Vec::new();
                };
                let mut out: Vec<Node> = core
                    .children()
                    .into_iter()
                    .filter(|c| glob_match(pattern, c.path().name()))
                    .map(Node::Actor)
                    .collect();
                if core.parent.is_none() && glob_match(pattern, TEMP) {
                    out.push(Node::TempDir);
                }
                out
            }
            None if exact => self
                .system
                .temp_actor(pattern)
                .map(Node::Actor)
                .into_iter()
                .collect(),
            None => Vec::new(),
        }
    }

    /// Send a clone of `msg` to every matching actor that takes `M`; returns
    /// how many were sent. A match that takes another type gets nothing and a
    /// dead letter says why; a selection that matches nothing sends `msg` to
    /// dead letters.
    pub fn tell<M: Clone + Send + 'static>(&self, msg: M) -> usize {
        let matches = self.resolve();
        let events = self.system.event_stream();
        if matches.is_empty() {
            let recipient =
                ActorPath::pattern(self.system.name(), self.local.as_deref().unwrap_or(""));
            events.publish_dead_letter(&recipient, msg, DeadLetterReason::NoMatch);
            return 0;
        }
        let mut sent = 0;
        for actor in matches {
            match actor.downcast::<M>() {
                Some(typed) => {
                    typed.tell(msg.clone());
                    sent += 1;
                }
                None => events.publish_dead_letter(
                    actor.path(),
                    msg.clone(),
                    DeadLetterReason::WrongMessageType {
                        actor_type: actor.actor_type_name(),
                    },
                ),
            }
        }
        sent
    }
}

impl ActorSystem {
    /// A selection of every actor matching `pattern`, which may use `*` and
    /// `?` in its elements (see [`ActorSelection`]).
    ///
    /// # Errors
    ///
    /// [`ResolveError::Malformed`] for a pattern that is not absolute or has
    /// an invalid element.
    pub fn select(&self, pattern: &str) -> Result<ActorSelection, ResolveError> {
        ActorSelection::new(self, pattern)
    }
}

impl fmt::Debug for ActorSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorSelection")
            .field("pattern", &self.pattern)
            .finish()
    }
}

fn validate_pattern_element(segment: &str, index: usize) -> Result<(), PathError> {
    if matches!(segment, "" | "." | "..") {
        return Ok(());
    }
    match segment
        .chars()
        .enumerate()
        .find(|&(_, ch)| !(is_name_char(ch) || ch == '*' || ch == '?'))
    {
        Some((position, ch)) => Err(PathError::InvalidElement {
            index,
            error: crate::name::NameError::InvalidChar { ch, position },
        }),
        None => Ok(()),
    }
}

/// Whether `name` matches `pattern` (`*`: any run, `?`: one character).
///
/// Greedy with one remembered star: when a later character fails, only the
/// most recent `*` absorbs one more character. That is O(pattern × name)
/// in the worst case and never exponential, unlike a backtracking regex.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn glob_basics() {
        assert!(glob_match("*", ""));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("w?", "w1"));
        assert!(!glob_match("w?", "w12"));
        assert!(glob_match("w*2", "w12"));
        assert!(glob_match("*a*b*c", "xxaxxbxxc"));
        assert!(!glob_match("*a*b*c", "xxaxxbxx"));
        assert!(glob_match("a**", "a"));
        assert!(!glob_match("", "a"));
        assert!(glob_match("", ""));
    }

    #[test]
    fn no_catastrophic_backtracking() {
        // The classic regex killer: (a*)*b against a long run of a's.
        let name = "a".repeat(10_000);
        let pattern = format!("{}b", "*a".repeat(50));
        assert!(!glob_match(&pattern, &name));
    }
}
