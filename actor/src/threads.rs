//! The registry of every thread an actor system starts.

use std::thread::JoinHandle;

use crate::sync::{Arc, AtomicUsize, Mutex, Ordering};

/// Counts live threads and keeps their join handles. When the count drops to
/// zero after the system was told to shut down, `on_all_exited` runs once.
pub(crate) struct Threads {
    system_id: usize,
    live: AtomicUsize,
    handles: Mutex<Vec<JoinHandle<()>>>,
    on_all_exited: Box<dyn Fn() + Send + Sync>,
}

thread_local! {
    /// The id of the system whose thread this is (0: none).
    static SYSTEM_OF_THREAD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Threads {
    pub(crate) fn new(system_id: usize, on_all_exited: Box<dyn Fn() + Send + Sync>) -> Self {
        Self {
            system_id,
            // One count is held by the system itself until shutdown begins,
            // so threads that exit early (pinned actors) never reach zero.
            live: AtomicUsize::new(1),
            handles: Mutex::new(Vec::new()),
            on_all_exited,
        }
    }

    /// Start a named thread that counts as live until `body` returns.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        name: String,
        body: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        self.live.fetch_add(1, Ordering::AcqRel);
        let me = self.clone();
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            SYSTEM_OF_THREAD.with(|s| s.set(me.system_id));
            body();
            me.exit();
        });
        match spawned {
            Ok(handle) => {
                let mut handles = self.handles.lock();
                handles.retain(|h| !h.is_finished());
                handles.push(handle);
                Ok(())
            }
            Err(e) => {
                self.live.fetch_sub(1, Ordering::AcqRel);
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
    }

    /// Join every thread that has been started (except the calling one).
    pub(crate) fn join_all(&self) {
        let handles = std::mem::take(&mut *self.handles.lock());
        let me = std::thread::current().id();
        for h in handles {
            if h.thread().id() != me {
                let _ = h.join();
            }
        }
    }

    /// Whether the calling thread belongs to this system.
    pub(crate) fn is_own_thread(&self) -> bool {
        SYSTEM_OF_THREAD.with(|s| s.get()) == self.system_id
    }
}
