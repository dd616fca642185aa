//! Running Weir's threads inside a tokio runtime's context.

use tokio::runtime::Handle;
use weir_actor::ActorSystemBuilder;

/// Puts every thread of an actor system inside a tokio runtime's context
/// (feature `tokio`), so the futures Weir polls there can use tokio's
/// reactor and timers with no manual spawn: `tokio::time::sleep`, a
/// `tokio::net::TcpStream` and the clients built on them work inside
/// `map_async`, `pipe_to_self`, `spawn_task` and `Source::future`.
///
/// The runtime's IO and timer driver is run by the runtime's own threads:
/// use a multi-thread runtime and keep it alive while the system runs (a
/// current-thread runtime drives them only while its thread is inside
/// `block_on`). The system's threads poll the futures; tokio only wakes
/// them. Without it, such a future panics with tokio's "no reactor
/// running" and the stream or actor reports that panic.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_actor::ActorSystem;
/// use weir_interop::TokioContext;
/// use weir_streams::prelude::*;
///
/// let runtime = tokio::runtime::Builder::new_multi_thread()
///     .worker_threads(1)
///     .enable_time()
///     .build()
///     .unwrap();
/// let system = ActorSystem::builder()
///     .name("on-tokio")
///     .tokio_context(runtime.handle().clone())
///     .build()
///     .unwrap();
/// let materializer = Materializer::new(&system);
/// let slept = Source::range(1u32..=3)
///     .map_async(2, |x| async move {
///         tokio::time::sleep(Duration::from_millis(1)).await;
///         Ok::<_, weir_streams::StreamError>(x * 10)
///     })
///     .unwrap()
///     .run_with(Sink::collect(), &materializer);
/// assert_eq!(slept.wait(), Ok(vec![10, 20, 30]));
/// system.terminate().wait().unwrap();
/// ```
pub trait TokioContext {
    /// Every thread the system starts enters `handle`'s runtime for its
    /// whole life.
    #[must_use]
    fn tokio_context(self, handle: Handle) -> Self;
}

impl TokioContext for ActorSystemBuilder {
    fn tokio_context(self, handle: Handle) -> Self {
        self.thread_context(move |work| {
            let _entered = handle.enter();
            work();
        })
    }
}
