//! Path resolution: relative walks from a handle and absolute resolution
//! from the system, without allocating.
//!
//! A path is split on `/` into steps: `""` and `.` stay, `..` goes to the
//! parent, anything else is a child name, optionally `name#uid` to match only
//! that incarnation. Each step down is one hash lookup in one actor's
//! children, taken hand over hand under the children locks (see
//! [`descend`]); only the result is cloned, so a lookup costs the hash
//! lookups plus one uncontended lock each and allocates nothing. The virtual
//! `/temp` directory under the root holds the temporary actors of `ask` while
//! they wait for their answer; only a temporary actor's exact path reaches
//! it (no `..` on the way), so no code can answer another's ask by walking.
//!
//! A name that is found needs no validation (only valid names are ever
//! inserted); names are validated when a lookup misses, and every step after
//! the walk has left the tree is still validated, so a malformed path is
//! always reported as malformed rather than not found.

use crate::core::actor_ref::ActorHandle;
use crate::error::{PathError, ResolveError};
use crate::name::{TEMP, validate_element};
use crate::path::parse_uid;
use crate::system::actor_system::ActorSystem;

/// Where a walk stands.
impl ActorSystem {
    /// Find the live actor at an absolute path: `/user/a/b` or the full form
    /// `weir://<system>/user/a/b`, each element optionally `name#uid` to
    /// match one incarnation only. `..`, `.` and empty elements work as in
    /// [`ActorHandle::child`]. Temporary `ask` actors resolve under `/temp`
    /// while they wait. Allocates nothing.
    ///
    /// # Errors
    ///
    /// [`ResolveError::Malformed`] for a path that is not absolute or has an
    /// invalid element; [`ResolveError::NotFound`] when no live actor of this
    /// system is there.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props, ResolveError};
    ///
    /// struct Leaf;
    /// impl Actor for Leaf {
    ///     type Msg = ();
    ///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    /// }
    ///
    /// let system = ActorSystem::new("resolve").unwrap();
    /// let leaf = system.spawn(Props::new(|| Leaf), "leaf").unwrap();
    /// assert_eq!(system.resolve("/user/leaf"), Ok(leaf.handle()));
    /// assert_eq!(system.resolve(&leaf.path().to_string()), Ok(leaf.handle()));
    /// assert_eq!(system.resolve("/user/nobody"), Err(ResolveError::NotFound));
    /// assert!(matches!(system.resolve("user/leaf"), Err(ResolveError::Malformed(_))));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn resolve(&self, path: &str) -> Result<ActorHandle, ResolveError> {
        let (ours, local) = absolute(self, path)?;
        // `local` starts with '/' (or is empty): skip it, start at the top.
        let local = local.strip_prefix('/').unwrap_or(local);
        walk(self, ours.then_some(Node::Top), local)?.ok_or(ResolveError::NotFound)
    }
}

impl ActorHandle {
    /// Resolve a path relative to this actor: `"a"`, `"a/b/c"`, `".."` (the
    /// parent), `"../sibling"`, `"a#42"` (only the incarnation with uid 42).
    /// Empty segments and `.` stay where they are, so `"a//b/"` is `"a/b"`.
    /// `None` when nothing live is there or the path is malformed. Allocates
    /// nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::{Actor, ActorSystem, Context, Props};
    ///
    /// struct Node;
    /// impl Actor for Node {
    ///     type Msg = ();
    ///     fn pre_start(&mut self, ctx: &mut Context<Self>) {
    ///         // /user/top spawns child, which spawns child: three levels.
    ///         if ctx.path().elements().count() < 4 {
    ///             ctx.spawn(Props::new(|| Node), "child").unwrap();
    ///         }
    ///     }
    ///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
    /// }
    ///
    /// let system = ActorSystem::new("lookup").unwrap();
    /// let top = system.spawn(Props::new(|| Node), "top").unwrap().handle();
    /// // Children are spawned by pre_start, on the dispatcher: wait for them.
    /// let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    /// let grandchild = loop {
    ///     if let Some(g) = top.child("child/child") {
    ///         break g;
    ///     }
    ///     assert!(std::time::Instant::now() < deadline, "spawned within 5 s");
    ///     std::thread::sleep(std::time::Duration::from_millis(1));
    /// };
    /// assert_eq!(grandchild.path().to_string_without_uid(), "weir://lookup/user/top/child/child");
    /// assert_eq!(grandchild.child("../.."), Some(top.clone()));
    /// assert_eq!(top.child("nobody"), None);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn child(&self, path: &str) -> Option<ActorHandle> {
        walk(
            ActorSystem::of(self.inner.system()),
            Some(Node::At(self)),
            path,
        )
        .ok()
        .flatten()
    }
}

pub(crate) enum Node<'a> {
    /// The start of the walk, borrowed.
    At(&'a ActorHandle),
    Actor(ActorHandle),
    /// The top of the system's namespace, `/`: the root guardian's children
    /// plus the virtual `/temp`. Walking through it to `/temp` never touches
    /// the root guardian.
    Top,
    /// The virtual `/temp` directory.
    TempDir,
}

impl Node<'_> {
    pub(crate) fn actor(&self) -> Option<&ActorHandle> {
        match self {
            Node::At(a) => Some(a),
            Node::Actor(a) => Some(a),
            Node::Top | Node::TempDir => None,
        }
    }

    pub(crate) fn up(&self, system: &ActorSystem) -> Option<Node<'static>> {
        match self {
            Node::At(actor) => Node::parent_of(actor),
            Node::Actor(actor) => Node::parent_of(actor),
            Node::TempDir => system.root().map(Node::Actor),
            Node::Top => None,
        }
    }

    fn parent_of(actor: &ActorHandle) -> Option<Node<'static>> {
        match actor.inner.core() {
            Some(core) => core.parent.clone().map(Node::Actor),
            // Only temporary actors have no cell core.
            None => Some(Node::TempDir),
        }
    }

    pub(crate) fn into_handle(self) -> Option<ActorHandle> {
        match self {
            Node::At(a) => Some(a.clone()),
            Node::Actor(a) => Some(a),
            Node::TempDir => None,
            Node::Top => None,
        }
    }
}

/// Split `name#uid`. A plain byte loop: segments are a few bytes long, where
/// `str::split_once`'s searcher setup cost more than the search (measured:
/// 12% of a 3-deep lookup).
#[inline]
fn split_uid(segment: &str) -> Result<(&str, Option<u64>), PathError> {
    match segment.bytes().position(|b| b == b'#') {
        Some(i) => Ok((&segment[..i], Some(parse_uid(&segment[i + 1..])?))),
        None => Ok((segment, None)),
    }
}

fn validate(name: &str, index: usize) -> Result<(), PathError> {
    validate_element(name).map_err(|error| PathError::InvalidElement { index, error })
}

/// Where a step leaves the walk: done, or to go on from another node (into
/// `/temp`, or up after `..`), with the locks taken so far released.
enum Walk<'p> {
    Done(Option<ActorHandle>),
    Restart(Node<'static>, &'p str, usize),
    Up(Node<'static>, &'p str, usize),
}

/// The first segment of `path` and what follows the `/` after it.
#[inline]
fn split_first(path: &str) -> (&str, Option<&str>) {
    match path.bytes().position(|b| b == b'/') {
        Some(i) => (&path[..i], Some(&path[i + 1..])),
        None => (path, None),
    }
}

/// Validate the steps of `rest` (numbered from `index`), which the walk no
/// longer needs to look up.
fn validate_rest(rest: Option<&str>, index: usize) -> Result<(), PathError> {
    for (i, segment) in rest.into_iter().flat_map(|r| r.split('/')).enumerate() {
        if !matches!(segment, "" | "." | "..") {
            validate(split_uid(segment)?.0, index + i)?;
        }
    }
    Ok(())
}

/// Walk `path` from `start`. `Ok(None)`: well formed, but no live actor there.
/// With `start` `None` it only validates.
#[inline]
pub(crate) fn walk(
    system: &ActorSystem,
    start: Option<Node<'_>>,
    path: &str,
) -> Result<Option<ActorHandle>, PathError> {
    let Some(mut node) = start else {
        validate_rest(Some(path), 0)?;
        return Ok(None);
    };
    let (mut rest, mut index) = (path, 0);
    // A temporary actor is reached only by its exact path: not after a `..`.
    let mut climbed = false;
    loop {
        let step = match &node {
            Node::At(actor) => descend(system, actor, rest, index)?,
            Node::Actor(actor) => descend(system, actor, rest, index)?,
            Node::TempDir => in_temp(system, rest, index, climbed)?,
            Node::Top => at_top(system, rest, index)?,
        };
        match step {
            Walk::Done(found) => return Ok(found),
            Walk::Restart(next, r, i) => (node, rest, index) = (next, r, i),
            Walk::Up(next, r, i) => (node, rest, index, climbed) = (next, r, i, true),
        }
    }
}

/// Walk down from `node`, hand over hand: the lock on a parent's children is
/// held while its child's children are searched, so no handle is cloned on
/// the way down. Locks are only ever taken top-down, here and everywhere
/// else, so this cannot deadlock; `..` and `/temp` return to [`walk`]
/// (releasing every lock) to go on from an owned node.
fn descend<'p>(
    system: &ActorSystem,
    node: &ActorHandle,
    path: &'p str,
    index: usize,
) -> Result<Walk<'p>, PathError> {
    let (mut rest, mut index) = (path, index);
    loop {
        let (segment, after) = split_first(rest);
        match segment {
            "" | "." => {}
            ".." => {
                let Some(up) = Node::At(node).up(system) else {
                    validate_rest(after, index + 1)?;
                    return Ok(Walk::Done(None)); // above the root
                };
                return Ok(match after {
                    Some(after) => Walk::Up(up, after, index + 1),
                    None => Walk::Done(up.into_handle()),
                });
            }
            _ => {
                let (name, uid) = split_uid(segment)?;
                let core = match node.inner.core() {
                    Some(core) if core.parent.is_none() && name == TEMP && uid.is_none() => {
                        return Ok(match after {
                            Some(after) => Walk::Restart(Node::TempDir, after, index + 1),
                            None => Walk::Done(None), // a directory, not an actor
                        });
                    }
                    Some(core) => core,
                    None => {
                        // A temporary actor: it has no children.
                        validate(name, index)?;
                        validate_rest(after, index + 1)?;
                        return Ok(Walk::Done(None));
                    }
                };
                let children = core.children.lock();
                let child = children
                    .by_name
                    .get(name)
                    .map(|entry| &entry.handle)
                    .filter(|h| !h.is_terminated() && uid.is_none_or(|uid| h.path().uid() == uid));
                return match (child, after) {
                    (Some(child), None) => Ok(Walk::Done(Some(child.clone()))),
                    (Some(child), Some(after)) => descend(system, child, after, index + 1),
                    (None, _) => {
                        drop(children);
                        validate(name, index)?;
                        validate_rest(after, index + 1)?;
                        Ok(Walk::Done(None))
                    }
                };
            }
        }
        match after {
            Some(after) => (rest, index) = (after, index + 1),
            None => return Ok(Walk::Done(Some(node.clone()))),
        }
    }
}

/// The first step of an absolute path: `/temp` without the root guardian,
/// `/#<uid>` the root itself, anything else from the root.
fn at_top<'p>(system: &ActorSystem, path: &'p str, index: usize) -> Result<Walk<'p>, PathError> {
    let (segment, after) = split_first(path);
    if let (Some(uid), None) = (segment.strip_prefix('#'), after) {
        // The root's own full form, `weir://<system>/#<uid>`: its elements
        // are empty, so the uid follows the address's slash.
        let uid = parse_uid(uid)?;
        return Ok(Walk::Done(system.root().filter(|r| r.path().uid() == uid)));
    }
    if segment == TEMP {
        return Ok(match after {
            Some(after) => Walk::Restart(Node::TempDir, after, index + 1),
            None => Walk::Done(None), // a directory, not an actor
        });
    }
    match system.root() {
        Some(root) => Ok(Walk::Restart(Node::Actor(root), path, index)),
        None => {
            validate_rest(Some(path), index)?;
            Ok(Walk::Done(None))
        }
    }
}

/// One step inside the virtual `/temp` directory. After a `..` (`climbed`)
/// its temporary actors are out of reach: only the exact path of one (the
/// address its ask handed out) reaches it.
fn in_temp<'p>(
    system: &ActorSystem,
    path: &'p str,
    index: usize,
    climbed: bool,
) -> Result<Walk<'p>, PathError> {
    let (segment, after) = split_first(path);
    let next = match segment {
        "" | "." => Some(Node::TempDir),
        ".." => {
            return Ok(match (system.root(), after) {
                (Some(root), Some(after)) => Walk::Up(Node::Actor(root), after, index + 1),
                (root, None) => Walk::Done(root),
                (None, Some(after)) => {
                    validate_rest(Some(after), index + 1)?;
                    Walk::Done(None)
                }
            });
        }
        _ => {
            let (name, uid) = split_uid(segment)?;
            let found = (!climbed)
                .then(|| system.temp_actor(name))
                .flatten()
                .filter(|h| uid.is_none_or(|uid| h.path().uid() == uid));
            if found.is_none() {
                validate(name, index)?;
            }
            found.map(Node::Actor)
        }
    };
    Ok(match (next, after) {
        (Some(next), Some(after)) => Walk::Restart(next, after, index + 1),
        (next, None) => Walk::Done(next.and_then(Node::into_handle)),
        (None, Some(_)) => {
            validate_rest(after, index + 1)?;
            Walk::Done(None)
        }
    })
}

/// Split an absolute path (`/...` or `weir://<system>/...`) into whether it
/// names this system and the part after the address.
pub(crate) fn absolute<'a>(
    system: &ActorSystem,
    path: &'a str,
) -> Result<(bool, &'a str), PathError> {
    if let Some(rest) = path.strip_prefix("weir://") {
        let (name, local) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
        if name != system.name() {
            crate::name::validate_name(name).map_err(PathError::InvalidSystemName)?;
            return Ok((false, local));
        }
        Ok((true, local))
    } else if path.starts_with('/') {
        Ok((true, path))
    } else {
        Err(PathError::NotAbsolute)
    }
}
