//! The context an actor's methods receive: its own ref, its children, watch,
//! stop and the system.

use std::collections::HashMap;
use std::fmt;

use crate::actor::{Actor, Props};
use crate::actor_ref::{ActorHandle, ActorRef, SystemMsg};
use crate::cell::{Cell, spawn_child};
use crate::error::SpawnError;
use crate::path::ActorPath;
use crate::sync::Arc;
use crate::system::ActorSystem;

/// What an actor can do besides handling its message: spawn and find
/// children, stop actors, watch them, and reach its own ref and the system.
///
/// # Examples
///
/// ```
/// use weir_actor::{Actor, ActorSystem, Context, Props, Terminated};
///
/// struct Worker;
/// impl Actor for Worker {
///     type Msg = ();
///     fn receive(&mut self, ctx: &mut Context<Self>, _: ()) {
///         ctx.stop_self();
///     }
/// }
///
/// struct Boss;
/// impl Actor for Boss {
///     type Msg = ();
///     fn pre_start(&mut self, ctx: &mut Context<Self>) {
///         let worker = ctx.spawn(Props::new(|| Worker), "worker").unwrap();
///         ctx.watch(&worker);
///         worker.tell(());
///     }
///     fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
///     fn on_terminated(&mut self, ctx: &mut Context<Self>, t: Terminated) {
///         assert_eq!(t.actor().path().name(), "worker");
///         assert!(ctx.child("worker").is_none());
///         ctx.system().terminate();
///     }
/// }
///
/// let system = ActorSystem::new("ctx").unwrap();
/// system.spawn(Props::new(|| Boss), "boss").unwrap();
/// system.when_terminated().wait().unwrap();
/// ```
pub struct Context<A: Actor> {
    cell: Arc<Cell<A>>,
    /// Actors this one watches, by incarnation.
    pub(crate) watching: HashMap<usize, ActorHandle>,
}

impl<A: Actor> Context<A> {
    pub(crate) fn new(cell: Arc<Cell<A>>) -> Self {
        Self {
            cell,
            watching: HashMap::new(),
        }
    }

    /// This actor's own typed reference.
    pub fn myself(&self) -> ActorRef<A::Msg> {
        ActorRef::new(self.cell.clone())
    }

    /// This actor's untyped handle.
    pub fn handle(&self) -> ActorHandle {
        ActorHandle {
            inner: self.cell.clone(),
        }
    }

    /// This actor's path.
    pub fn path(&self) -> &ActorPath {
        &self.cell.core.path
    }

    /// The system this actor belongs to.
    pub fn system(&self) -> &ActorSystem {
        &self.cell.core.system
    }

    /// The parent (`None` only for the root guardian).
    pub fn parent(&self) -> Option<&ActorHandle> {
        self.cell.core.parent.as_ref()
    }

    /// Spawn a child called `name`.
    ///
    /// # Errors
    ///
    /// [`SpawnError::InvalidName`] for a name that breaks the rules of
    /// [`validate_name`](crate::validate_name), [`SpawnError::DuplicateName`]
    /// when a live child already has it, [`SpawnError::ParentStopped`] while
    /// this actor is stopping.
    pub fn spawn<C: Actor>(&mut self, props: Props<C>, name: &str) -> Result<ActorRef<C::Msg>, SpawnError> {
        spawn_child(&self.handle(), props, Some(name))
    }

    /// Spawn a child with a generated name (`$a`, `$b`, ...).
    ///
    /// # Errors
    ///
    /// [`SpawnError::ParentStopped`] while this actor is stopping.
    pub fn spawn_anonymous<C: Actor>(&mut self, props: Props<C>) -> Result<ActorRef<C::Msg>, SpawnError> {
        spawn_child(&self.handle(), props, None)
    }

    /// The live child called `name`.
    pub fn child(&self, name: &str) -> Option<ActorHandle> {
        self.cell.core.child(name)
    }

    /// The child called `name` even if it has already stopped (for the
    /// root, which must watch its guardians whatever their state).
    pub(crate) fn child_entry(&self, name: &str) -> Option<ActorHandle> {
        self.cell.core.child_entry(name)
    }

    /// All live children.
    pub fn children(&self) -> Vec<ActorHandle> {
        self.cell.core.children()
    }

    /// Stop an actor (usually a child, or this actor). Asynchronous: the
    /// actor finishes its current message, stops its children, then stops.
    pub fn stop(&mut self, target: impl Into<ActorHandle>) {
        let target = target.into();
        if let Some(entry) = self.cell.core.children.lock().by_name.get_mut(target.path().name())
            && entry.handle == target
        {
            entry.stopping = true;
        }
        target.send_system(SystemMsg::Terminate);
    }

    /// Stop this actor once the current message is handled.
    pub fn stop_self(&mut self) {
        self.handle().send_system(SystemMsg::Terminate);
    }

    /// Stop every child.
    pub fn stop_all_children(&mut self) {
        for child in self.children() {
            self.stop(child);
        }
    }

    /// Watch `target`: when it stops, [`Actor::on_terminated`] runs once
    /// (also when it had already stopped). Watching twice still gives one
    /// notice.
    pub fn watch(&mut self, target: impl Into<ActorHandle>) {
        let target = target.into();
        if target == self.handle() || self.watching.contains_key(&target.key()) {
            return;
        }
        self.watching.insert(target.key(), target.clone());
        target.send_system(SystemMsg::Watch {
            watchee: target.clone(),
            watcher: self.handle(),
        });
    }

    /// Stop watching `target`; a notice already on its way is discarded.
    pub fn unwatch(&mut self, target: impl Into<ActorHandle>) {
        let target = target.into();
        if self.watching.remove(&target.key()).is_some() {
            target.send_system(SystemMsg::Unwatch(self.handle()));
        }
    }
}

impl<A: Actor> fmt::Debug for Context<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context").field("path", self.path()).finish_non_exhaustive()
    }
}
