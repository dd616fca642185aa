//! Extensions (Akka's `Extension`): one value of a type per system, made
//! on first use and kept until the system's memory goes. Weir's own layers
//! (the streams' registry of running streams) keep their per-system state
//! here, without the core knowing their types.

use std::any::{Any, TypeId};
use std::collections::HashMap;

use crate::sync::{Arc, Mutex};
use crate::system::actor_system::ActorSystem;

type Map = HashMap<TypeId, Arc<dyn Any + Send + Sync>, foldhash::fast::RandomState>;

/// The extensions of one system, by type.
#[derive(Default)]
pub(crate) struct Extensions(Mutex<Map>);

impl ActorSystem {
    /// This system's value of type `T`: made by `init` on the first call
    /// (for this system and type), the same one on every later call.
    ///
    /// `init` runs under the extensions' lock: it must not call
    /// `extension` itself. The value lives as long as the system's memory
    /// (past termination); a value that holds an owning `ActorSystem`
    /// keeps the system alive, so hold [`ActorSystem::non_owning`] instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use weir_actor::ActorSystem;
    ///
    /// #[derive(Default)]
    /// struct Counter(AtomicU64);
    ///
    /// let system = ActorSystem::new("ext").unwrap();
    /// system.extension(|_| Counter::default()).0.fetch_add(1, Ordering::Relaxed);
    /// let again = system.extension(|_| Counter(AtomicU64::new(100)));
    /// assert_eq!(again.0.load(Ordering::Relaxed), 1, "made once");
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn extension<T: Any + Send + Sync>(&self, init: impl FnOnce(&ActorSystem) -> T) -> Arc<T> {
        let mut map = self.inner.extensions.0.lock();
        let value = map
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(init(&self.non_owning())))
            .clone();
        drop(map);
        value
            .downcast()
            .unwrap_or_else(|_| unreachable!("stored under its own type id"))
    }
}
