//! The pinned dispatcher: one thread for one actor.

use super::Task;
use crate::sync::{Arc, Condvar, Mutex};
use crate::threads::Threads;

pub(crate) struct Pinned {
    state: Mutex<State>,
    wake: Condvar,
}

struct State {
    task: Option<Task>,
    retired: bool,
}

impl Pinned {
    /// Start the thread; it runs submitted tasks until [`Pinned::retire`].
    pub(crate) fn start(name: String, registry: &Arc<Threads>) -> std::io::Result<Arc<Self>> {
        let pinned = Arc::new(Self {
            state: Mutex::new(State {
                task: None,
                retired: false,
            }),
            wake: Condvar::new(),
        });
        let me = pinned.clone();
        registry.spawn(name, move || me.work())?;
        Ok(pinned)
    }

    pub(crate) fn submit(&self, task: Task) {
        let mut state = self.state.lock();
        // The run token guarantees at most one pending submission.
        debug_assert!(state.task.is_none());
        state.task = Some(task);
        drop(state);
        self.wake.notify_one();
    }

    pub(crate) fn retire(&self) {
        self.state.lock().retired = true;
        self.wake.notify_one();
    }

    fn work(&self) {
        loop {
            let mut state = self.state.lock();
            while state.task.is_none() && !state.retired {
                state = self.state.wait(&self.wake, state);
            }
            match state.task.take() {
                Some(task) => {
                    drop(state);
                    task.run();
                }
                None => return,
            }
        }
    }
}
