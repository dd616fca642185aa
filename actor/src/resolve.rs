//! Path resolution: relative walks from a handle and absolute resolution
//! from the system, without allocating.
//!
//! A path is split on `/` into steps: `""` and `.` stay, `..` goes to the
//! parent, anything else is a child name, optionally `name#uid` to match only
//! that incarnation. Each step is a hash lookup in one actor's children under
//! that actor's lock; the walk holds one handle at a time (a reference-count
//! increment, no allocation). The virtual `/temp` directory under the root
//! holds the temporary actors of `ask` while they wait for their answer.

use crate::actor_ref::ActorHandle;
use crate::error::PathError;
use crate::name::validate_element;
use crate::path::parse_uid;
use crate::system::ActorSystem;

/// One step of a path.
enum Step<'a> {
    Stay,
    Up,
    Down { name: &'a str, uid: Option<u64> },
}

fn parse_step(segment: &str, index: usize) -> Result<Step<'_>, PathError> {
    match segment {
        "" | "." => Ok(Step::Stay),
        ".." => Ok(Step::Up),
        _ => {
            let (name, uid) = match segment.split_once('#') {
                Some((name, uid)) => (name, Some(parse_uid(uid)?)),
                None => (segment, None),
            };
            validate_element(name).map_err(|error| PathError::InvalidElement { index, error })?;
            Ok(Step::Down { name, uid })
        }
    }
}

/// Where a walk stands: an actor, or the virtual `/temp` directory.
pub(crate) enum Node {
    Actor(ActorHandle),
    TempDir,
}

/// The name of the virtual directory of temporary actors under the root.
pub(crate) const TEMP: &str = "temp";

impl Node {
    pub(crate) fn up(self, system: &ActorSystem) -> Option<Node> {
        match self {
            Node::Actor(actor) => match actor.inner.core() {
                Some(core) => core.parent.clone().map(Node::Actor),
                // Only temporary actors have no cell core.
                None => Some(Node::TempDir),
            },
            Node::TempDir => system.root().map(Node::Actor),
        }
    }

    fn down(self, system: &ActorSystem, name: &str) -> Option<Node> {
        match self {
            Node::Actor(actor) => {
                let core = actor.inner.core()?;
                if core.parent.is_none() && name == TEMP {
                    return Some(Node::TempDir);
                }
                core.child(name).map(Node::Actor)
            }
            Node::TempDir => system.temp_actor(name).map(Node::Actor),
        }
    }
}

/// Walk `path` from `start`. `Ok(None)`: well formed, but no live actor there.
/// Every step is validated even after the walk has left the tree, so a
/// malformed path is always reported as malformed.
/// With `start` `None` it only validates.
pub(crate) fn walk(system: &ActorSystem, start: Option<Node>, path: &str) -> Result<Option<ActorHandle>, PathError> {
    let mut node = start;
    for (index, segment) in path.split('/').enumerate() {
        let step = parse_step(segment, index)?;
        node = match (node, step) {
            (None, _) => None,
            (node, Step::Stay) => node,
            (Some(n), Step::Up) => n.up(system),
            (Some(n), Step::Down { name, uid }) => n.down(system, name).filter(|n| match (n, uid) {
                (Node::Actor(a), Some(uid)) => a.path().uid() == uid,
                _ => true,
            }),
        };
    }
    Ok(match node {
        Some(Node::Actor(actor)) => Some(actor),
        _ => None,
    })
}

/// Split an absolute path (`/...` or `weir://<system>/...`) into whether it
/// names this system and the part after the address.
pub(crate) fn absolute<'a>(system: &ActorSystem, path: &'a str) -> Result<(bool, &'a str), PathError> {
    if let Some(rest) = path.strip_prefix("weir://") {
        let (name, local) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
        crate::name::validate_name(name).map_err(PathError::InvalidSystemName)?;
        Ok((name == system.name(), local))
    } else if path.starts_with('/') {
        Ok((true, path))
    } else {
        Err(PathError::NotAbsolute)
    }
}
