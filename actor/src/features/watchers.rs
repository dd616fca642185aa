//! Death watch for references that have no cell of their own (the
//! temporary actor of `ask`, [`FunctionRef`](crate::FunctionRef)): the
//! watchers to notify when the reference ends, and the answer to a watch
//! that comes after it ended.

use crate::core::actor_ref::{ActorHandle, Control, SystemMsg};
use crate::sync::{AtomicBool, Mutex, Ordering};

pub(crate) struct Watchers {
    /// `(watchee, watcher)` pairs; `None` once ended. The watchee is the
    /// watched reference's own handle, taken from the watch request.
    list: Mutex<Option<Vec<(ActorHandle, ActorHandle)>>>,
    /// Set when `list` is taken; read without the lock.
    ended: AtomicBool,
}

impl Watchers {
    pub(crate) fn new() -> Self {
        Self {
            list: Mutex::new(Some(Vec::new())),
            ended: AtomicBool::new(false),
        }
    }

    /// Handle `Watch` and `Unwatch`; any other system message is given back.
    pub(crate) fn on_system(&self, msg: SystemMsg) -> Result<(), SystemMsg> {
        match msg {
            SystemMsg::Watch { watchee, watcher } => {
                let mut list = self.list.lock();
                match list.as_mut() {
                    Some(list) => list.push((watchee, watcher)),
                    None => {
                        drop(list);
                        // Already ended: the notice goes out at once.
                        watcher.send_control(Control::Terminated(watchee));
                    }
                }
                Ok(())
            }
            SystemMsg::Unwatch(watcher) => {
                if let Some(list) = self.list.lock().as_mut() {
                    list.retain(|(_, w)| *w != watcher);
                }
                Ok(())
            }
            other => Err(other),
        }
    }

    /// The reference ended: notify every watcher once. Idempotent.
    pub(crate) fn end(&self) {
        let list = {
            let mut list = self.list.lock();
            self.ended.store(true, Ordering::Release);
            list.take().unwrap_or_default()
        };
        for (watchee, watcher) in list {
            watcher.send_control(Control::Terminated(watchee));
        }
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}
