//! The running streams of a system: one registry per actor system (an
//! [extension](weir_actor::ActorSystem::extension)), which the
//! coordinated shutdown's `ServiceStop` phase uses to stop every stream
//! before the actors go, and [`Materializer::shutdown`] to stop the
//! streams of one materializer.
//!
//! An island (a pool task, `crate::interpreter::task`), and a graph run as
//! one fused pool task (`crate::fusion::task`), reserves its place before
//! it is spawned and attaches its task's handle once it is; the
//! [`Registration`] it carries removes it when the island (or task) is
//! dropped, that is when it has finished, failed or been aborted. Nothing
//! runs per element.
//!
//! [`Materializer::shutdown`]: crate::Materializer::shutdown

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use weir_actor::shutdown::Phase;
use weir_actor::{ActorSystem, TaskHandle};

use crate::snapshot::{Inspect, PendingSnapshot};
use crate::sync::{Arc, Mutex};

/// The registry of one system's running islands.
#[derive(Default)]
pub(crate) struct Running {
    state: Mutex<RunningIslands>,
}

#[derive(Default)]
struct RunningIslands {
    next_key: u64,
    /// Island key -> (the materializer that ran it, what stops it).
    islands: HashMap<u64, (u64, Stops), foldhash::fast::RandomState>,
    /// Futures waiting for islands to go (woken on every removal).
    waiters: Vec<Waker>,
}

/// How the registry stops one running island.
#[derive(Clone)]
enum Stops {
    /// An island's task, or a graph run as one fused task: aborting it
    /// drops the island (or the consumer), which reports `AbruptTermination`;
    /// and how to ask it for a snapshot.
    Task(TaskHandle, Arc<dyn Inspect>),
    /// A task reserved its place and is being spawned; `true` once a stop
    /// came meanwhile (the task is aborted as soon as it attaches).
    Starting(bool),
}

impl Running {
    /// The registry of `system`; made on first use, when it also adds the
    /// coordinated shutdown's tasks that stop every stream of the system:
    /// one in `ServiceStop`, before the actors go, and one in
    /// `ActorSystemTerminate` for the streams run after it (a last flush
    /// in a later phase runs; what still runs when the system terminates
    /// is stopped, as the actors are).
    pub(crate) fn of(system: &ActorSystem) -> Arc<Self> {
        system
            .extension(|system| {
                let running = Arc::new(Running::default());
                // A phase the shutdown has already reached refuses its task:
                // the later one still stops what runs.
                for (phase, name) in [
                    (Phase::ServiceStop, "stop-streams"),
                    (Phase::ActorSystemTerminate, "stop-late-streams"),
                ] {
                    let stopping = Arc::downgrade(&running);
                    let _ = system
                        .coordinated_shutdown()
                        .add_task(phase, name, move || {
                            let running = stopping.upgrade().unwrap_or_default();
                            running.stop(None)
                        });
                }
                RunningExt(running)
            })
            .0
            .clone()
    }

    /// Reserve a place for a graph about to run as a pool task for
    /// `materializer` (it attaches its handle with
    /// [`Registration::attach`]).
    pub(crate) fn reserve_task(self: &Arc<Self>, materializer: u64) -> Registration {
        let mut state = self.state.lock();
        self.insert(&mut state, materializer, Stops::Starting(false))
    }

    fn insert(
        self: &Arc<Self>,
        state: &mut RunningIslands,
        materializer: u64,
        stops: Stops,
    ) -> Registration {
        let key = state.next_key;
        state.next_key += 1;
        state.islands.insert(key, (materializer, stops));
        Registration {
            running: self.clone(),
            key,
        }
    }

    /// Stop the islands of `materializer` (of every materializer for
    /// `None`): they abort with `AbruptTermination`. The future completes
    /// when they have all gone.
    pub(crate) fn stop(self: Arc<Self>, materializer: Option<u64>) -> Stopped {
        let stops: Vec<Stops> = {
            let mut state = self.state.lock();
            let matching = state
                .islands
                .values_mut()
                .filter(|(m, _)| materializer.is_none_or(|id| *m == id));
            matching
                .map(|(_, stops)| {
                    if let Stops::Starting(stop) = stops {
                        *stop = true;
                    }
                    stops.clone()
                })
                .collect()
        };
        for stops in stops {
            match stops {
                Stops::Task(task, _) => task.abort(),
                Stops::Starting(_) => {} // marked above
            }
        }
        Stopped {
            running: self,
            materializer,
        }
    }

    /// Ask the islands of `materializer` (of every materializer for
    /// `None`) for their snapshots. The registry's lock is let go before
    /// any island is asked.
    pub(crate) fn snapshot(&self, materializer: Option<u64>) -> PendingSnapshot {
        let mut probes: Vec<(u64, Arc<dyn Inspect>)> = {
            let state = self.state.lock();
            state
                .islands
                .iter()
                .filter(|(_, (m, _))| materializer.is_none_or(|id| *m == id))
                .filter_map(|(key, (_, stops))| match stops {
                    Stops::Task(_, probe) => Some((*key, Arc::clone(probe))),
                    Stops::Starting(_) => None,
                })
                .collect()
        };
        // In the order they started (so a time-out lists the silent ones
        // in plan order).
        probes.sort_unstable_by_key(|(key, _)| *key);
        PendingSnapshot::ask(probes.into_iter().map(|(_, probe)| probe).collect())
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

impl Registration {
    /// The reserved task's handle, once spawned, and how to ask it for a
    /// snapshot (dropped with the registration), under one lock; a stop
    /// that came while it was being spawned aborts it now.
    pub(crate) fn attach(&self, task: &TaskHandle, probe: Arc<dyn Inspect>) {
        let stopped = {
            let mut state = self.running.state.lock();
            match state.islands.get_mut(&self.key) {
                Some((_, stops @ Stops::Starting(false))) => {
                    *stops = Stops::Task(task.clone(), probe);
                    false
                }
                _ => true,
            }
        };
        if stopped {
            task.abort();
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // The entry (its probe) is dropped after the lock is let go.
        let (waiters, _entry) = {
            let mut state = self.running.state.lock();
            let entry = state.islands.remove(&self.key);
            (std::mem::take(&mut state.waiters), entry)
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
