//! The running streams of a system: one registry per actor system (an
//! [extension](weir_actor::ActorSystem::extension)), which the
//! coordinated shutdown's `ServiceStop` phase uses to stop every stream
//! before the actors go, and [`Materializer::shutdown`] to stop the
//! streams of one materializer.
//!
//! An island registers its actor (a weak handle) when it is spawned; the
//! [`Registration`] it carries removes it when the island is dropped, that
//! is when it has finished, failed or been aborted. Nothing runs per
//! element.
//!
//! [`Materializer::shutdown`]: crate::Materializer::shutdown

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use weir_actor::shutdown::Phase;
use weir_actor::{ActorHandle, ActorSystem, WeakActorHandle};

use crate::sync::{Arc, Mutex};

/// The registry of one system's running islands.
#[derive(Default)]
pub(crate) struct Running {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_key: u64,
    /// Island key -> (the materializer that ran it, its actor).
    islands: HashMap<u64, (u64, WeakActorHandle)>,
    /// Futures waiting for islands to go (woken on every removal).
    waiters: Vec<Waker>,
}

impl Running {
    /// The registry of `system`; made on first use, when it also adds the
    /// `ServiceStop` task that stops every stream of the system.
    pub(crate) fn of(system: &ActorSystem) -> Arc<Self> {
        system
            .extension(|system| {
                let running = Arc::new(Running::default());
                let stopping = Arc::downgrade(&running);
                // Refused once the shutdown started: then streams stop with
                // their actors, as before.
                let _ = system.coordinated_shutdown().add_task(
                    Phase::ServiceStop,
                    "stop-streams",
                    move || {
                        let running = stopping.upgrade().unwrap_or_default();
                        running.stop(None)
                    },
                );
                RunningExt(running)
            })
            .0
            .clone()
    }

    /// Register the island run by `actor` for `materializer`.
    pub(crate) fn register(
        self: &Arc<Self>,
        materializer: u64,
        actor: &ActorHandle,
    ) -> Registration {
        let mut state = self.state.lock();
        let key = state.next_key;
        state.next_key += 1;
        state.islands.insert(key, (materializer, actor.downgrade()));
        Registration {
            running: self.clone(),
            key,
        }
    }

    /// Stop the islands of `materializer` (of every materializer for
    /// `None`): they abort with `AbruptTermination`. The future completes
    /// when they have all gone.
    pub(crate) fn stop(self: Arc<Self>, materializer: Option<u64>) -> Stopped {
        let actors: Vec<WeakActorHandle> = {
            let state = self.state.lock();
            let matching = state
                .islands
                .values()
                .filter(|(m, _)| materializer.is_none_or(|id| *m == id));
            matching.map(|(_, actor)| actor.clone()).collect()
        };
        for actor in actors.iter().filter_map(WeakActorHandle::upgrade) {
            actor.stop();
        }
        Stopped {
            running: self,
            materializer,
        }
    }

    /// How many islands of `materializer` (all for `None`) are registered.
    pub(crate) fn count(&self, materializer: Option<u64>) -> usize {
        let state = self.state.lock();
        state
            .islands
            .values()
            .filter(|(m, _)| materializer.is_none_or(|id| *m == id))
            .count()
    }
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("islands", &self.count(None))
            .finish()
    }
}

/// The extension's type: `Running` is also used on its own, by handle.
struct RunningExt(Arc<Running>);

/// Held by a registered island; removes it from the registry when dropped.
pub(crate) struct Registration {
    running: Arc<Running>,
    key: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let waiters = {
            let mut state = self.running.state.lock();
            state.islands.remove(&self.key);
            std::mem::take(&mut state.waiters)
        };
        for waiter in waiters {
            waiter.wake();
        }
    }
}

/// Completes when the stopped islands have gone.
pub(crate) struct Stopped {
    running: Arc<Running>,
    materializer: Option<u64>,
}

impl Future for Stopped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.running.state.lock();
        let id = self.materializer;
        if state
            .islands
            .values()
            .any(|(m, _)| id.is_none_or(|id| *m == id))
        {
            state.waiters.push(cx.waker().clone());
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}
