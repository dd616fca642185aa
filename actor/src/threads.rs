//! The registry of every thread an actor system starts.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::sync::{Arc, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering};

/// Counts live threads and keeps their join handles. When the count drops to
/// zero after the system was told to shut down, `on_all_exited` runs once.
pub(crate) struct Threads {
    system_id: usize,
    live: AtomicUsize,
    started: Mutex<Vec<Started>>,
    /// Signalled (under `started`'s lock) each time a counted thread exits,
    /// for [`Threads::wait_exited`].
    exited: Condvar,
    on_all_exited: Box<dyn Fn() + Send + Sync>,
    /// Runs each thread's work (see `ActorSystemBuilder::thread_context`).
    context: Option<ThreadContext>,
}

/// A wrapper every thread of a system runs its work inside: it is given
/// the work and calls it (see `ActorSystemBuilder::thread_context`).
pub(crate) type ThreadContext = Arc<dyn Fn(&mut dyn FnMut()) + Send + Sync>;

/// One started thread.
struct Started {
    handle: JoinHandle<()>,
    /// Set when its body has returned.
    exited: Arc<AtomicBool>,
    /// Whether it holds termination (see [`Threads::spawn_uncounted`]).
    counted: bool,
}

thread_local! {
    /// The id of the system whose thread this is (0: none).
    static SYSTEM_OF_THREAD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Threads {
    /// Every thread runs its work inside `context`, if given.
    pub(crate) fn new(
        system_id: usize,
        on_all_exited: Box<dyn Fn() + Send + Sync>,
        context: Option<ThreadContext>,
    ) -> Self {
        Self {
            system_id,
            // One count is held by the system itself until shutdown begins,
            // so threads that exit early (pinned actors) never reach zero.
            live: AtomicUsize::new(1),
            started: Mutex::new(Vec::new()),
            exited: Condvar::new(),
            on_all_exited,
            context,
        }
    }

    /// Start a named thread that counts as live until `body` returns.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        name: String,
        body: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        self.start(name, true, body)
    }

    /// Start a named thread of the system that does not hold termination
    /// up: the timer thread, which bounds termination (its time-out for the
    /// actors to stop) and is shut down when the counted threads have
    /// exited. Joined like the others.
    pub(crate) fn spawn_uncounted(
        self: &Arc<Self>,
        name: String,
        body: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        self.start(name, false, body)
    }

    fn start(
        self: &Arc<Self>,
        name: String,
        counted: bool,
        body: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        if counted {
            self.live.fetch_add(1, Ordering::AcqRel);
        }
        let me = self.clone();
        let exited = Arc::new(AtomicBool::new(false));
        let done = exited.clone();
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            SYSTEM_OF_THREAD.with(|s| s.set(me.system_id));
            match &me.context {
                Some(context) => run_inside(context, body),
                None => body(),
            }
            done.store(true, Ordering::Release);
            if counted {
                me.exit();
            }
        });
        match spawned {
            Ok(handle) => {
                let mut started = self.started.lock();
                started.retain(|s| !s.handle.is_finished());
                started.push(Started {
                    handle,
                    exited,
                    counted,
                });
                Ok(())
            }
            Err(e) => {
                if counted {
                    self.live.fetch_sub(1, Ordering::AcqRel);
                }
                Err(e)
            }
        }
    }

    /// Shutdown has begun: drop the system's own count.
    pub(crate) fn release_system_count(&self) {
        self.exit();
    }

    fn exit(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            (self.on_all_exited)();
        }
        // Under the lock: a waiter checks `live` under it, then sleeps.
        drop(self.started.lock());
        self.exited.notify_all();
    }

    /// Block until every counted thread has exited, or `timeout` has
    /// passed; whether they all exited.
    pub(crate) fn wait_exited(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut started = self.started.lock();
        while self.live.load(Ordering::Acquire) > 0 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            started = self
                .started
                .wait_timeout(&self.exited, started, deadline - now);
        }
        true
    }

    /// Give up on the counted threads still running (blocked in user code):
    /// they are no longer joined; returns their names.
    pub(crate) fn abandon_running(&self) -> Vec<String> {
        let mut started = self.started.lock();
        let (running, others): (Vec<Started>, Vec<Started>) = std::mem::take(&mut *started)
            .into_iter()
            .partition(|s| s.counted && !s.exited.load(Ordering::Acquire));
        *started = others;
        running
            .into_iter()
            .map(|s| s.handle.thread().name().unwrap_or("unnamed").to_owned())
            .collect()
    }

    /// Join every thread that has been started (except the calling one and
    /// the abandoned ones).
    pub(crate) fn join_all(&self) {
        let started = std::mem::take(&mut *self.started.lock());
        let me = std::thread::current().id();
        for s in started {
            if s.handle.thread().id() != me {
                let _ = s.handle.join();
            }
        }
    }

    /// Let the calling thread act as one of this system's own until
    /// [`leave`](Self::leave) (a simulation's thread, while it runs a
    /// step); returns what to restore.
    #[cfg(feature = "testkit")]
    pub(crate) fn enter(&self) -> usize {
        SYSTEM_OF_THREAD.with(|s| s.replace(self.system_id))
    }

    /// Undo an [`enter`](Self::enter).
    #[cfg(feature = "testkit")]
    pub(crate) fn leave(previous: usize) {
        SYSTEM_OF_THREAD.with(|s| s.set(previous));
    }

    /// Whether the calling thread belongs to this system.
    pub(crate) fn is_own_thread(&self) -> bool {
        SYSTEM_OF_THREAD.with(|s| s.get()) == self.system_id
    }
}

/// Run `body` inside `context`, exactly once: if the context returns (or
/// panics) without calling it, the body runs afterwards anyway, so a
/// wrong wrapper cannot leave the system without its threads; a second
/// call does nothing.
fn run_inside(context: &ThreadContext, body: impl FnOnce()) {
    let mut body = Some(body);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        context(&mut || {
            if let Some(body) = body.take() {
                body();
            }
        });
    }));
    match body.take() {
        // The context never called the work (returned or panicked first):
        // run it here; its panic, if any, is the context's, not the work's.
        Some(body) => body(),
        // A panic from the work itself goes on as it would without a context.
        None => {
            if let Err(panic) = outcome {
                std::panic::resume_unwind(panic);
            }
        }
    }
}
