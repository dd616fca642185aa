//! Dispatchers: the threads that run actors.
//!
//! Every actor runs on the system's one shared work-stealing [`pool`] unless
//! its props ask for a [`pinned`] thread. Both report the threads they start
//! to a [`Threads`](crate::threads::Threads) registry, so termination can wait until every one of them
//! has ended. How idle pool workers sleep and wake is in [`idle`] (checked by
//! loom), the pool's shared queue in [`global`]. A simulated system
//! (`crate::sim`, feature `testkit`) has one dispatcher for everything:
//! the simulation's run queue, driven by the test's thread.

// Built under loom too: the idle protocol and the global queue are plain
// `sync` code, checked by the models.
pub(crate) mod global;
pub(crate) mod idle;
#[cfg(all(test, loom))]
mod loom_models;

runtime_modules! {
    pub(crate) mod calling_thread;
    pub(crate) mod pinned;
    pub(crate) mod pool;
    #[cfg(feature = "testkit")]
    pub(crate) mod simulated;

    use crate::sync::Arc;
}

runtime_modules! {
    /// Which dispatcher runs an actor.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
    #[non_exhaustive]
    pub enum DispatcherKind {
        /// The system's shared work-stealing pool (the default for every actor).
        #[default]
        Shared,
        /// A thread of its own, for an actor that blocks (file or socket I/O,
        /// a blocking client). The thread ends when the actor stops.
        Pinned,
        /// The thread that sends to the actor runs it, before `tell` returns:
        /// deterministic, for tests. Sends made while it runs are processed
        /// after, on the same thread (no recursion).
        CallingThread,
        /// An extra pool declared on the system builder with
        /// [`pool`](crate::ActorSystemBuilder::pool).
        Named(&'static str),
    }

    /// A unit of work: an actor cell whose run token the submitter holds.
    pub(crate) trait Runnable: Send + Sync + 'static {
        fn run(self: Arc<Self>);
    }

    pub(crate) type Task = Arc<dyn Runnable>;

    /// Where an actor's runs are submitted.
    #[derive(Clone)]
    pub(crate) enum Dispatcher {
        Pool(Arc<pool::Pool>),
        Pinned(Arc<pinned::Pinned>),
        CallingThread,
        /// Everything of a simulated system: one seeded run queue, driven
        /// by the test's thread (see `crate::features::sim`).
        #[cfg(feature = "testkit")]
        Simulated(Arc<simulated::RunQueue>),
    }

    impl Dispatcher {
        #[inline]
        pub(crate) fn submit(&self, task: Task) {
            match self {
                Self::Pool(pool) => pool.submit(task),
                Self::Pinned(pinned) => pinned.submit(task),
                Self::CallingThread => calling_thread::submit(task),
                #[cfg(feature = "testkit")]
                Self::Simulated(queue) => queue.submit(task),
            }
        }

        /// How long one run may take before the actor yields, if bounded.
        pub(crate) fn throughput_deadline(&self) -> Option<std::time::Duration> {
            match self {
                Self::Pool(pool) => pool.throughput_deadline,
                Self::Pinned(_) | Self::CallingThread => None,
                #[cfg(feature = "testkit")]
                Self::Simulated(_) => None,
            }
        }

        /// Submit a task that yielded after using up its throughput: it goes
        /// behind everything already waiting, so other actors get their turn.
        pub(crate) fn submit_yielded(&self, task: Task) {
            match self {
                Self::Pool(pool) => pool.submit_yielded(task),
                Self::Pinned(pinned) => pinned.submit(task),
                Self::CallingThread => calling_thread::submit(task),
                #[cfg(feature = "testkit")]
                Self::Simulated(queue) => queue.submit(task),
            }
        }

        /// The pool behind this dispatcher, if it is one.
        pub(crate) fn as_pool(&self) -> Option<&Arc<pool::Pool>> {
            match self {
                Self::Pool(pool) => Some(pool),
                _ => None,
            }
        }

        /// The actor using this dispatcher has stopped for good.
        pub(crate) fn retire(&self) {
            if let Self::Pinned(pinned) = self {
                pinned.retire();
            }
        }
    }
}
