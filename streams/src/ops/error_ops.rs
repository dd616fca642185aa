//! [`ErrorOps`]: operators that handle an upstream failure (errors.rs,
//! recover.rs).

use super::util::{logic_flow, ports};
use super::{FlowOps, errors, recover};
use crate::blueprint::Source;
use crate::error::StreamError;

/// Operators that handle an upstream failure: replace it, end with an
/// element, or switch to a fallback source. Every [`FlowOps`] type has
/// them (they are in the prelude).
pub trait ErrorOps: FlowOps {
    /// Replace an upstream failure with `f(error)`.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::<u32>::failed(StreamError::msg("disk"))
    ///     .map_error(|e| StreamError::msg(format!("reading the log: {e}")))
    ///     .run_with(Sink::collect(), &mat);
    /// assert!(out.wait().unwrap_err().to_string().contains("reading the log"));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn map_error<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(StreamError) -> StreamError + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("map_error", move || errors::MapError::<
            Self::Out,
            F,
        > {
            shape: ports(),
            f: f.clone(),
        }))
    }

    /// On an upstream failure, emit `f(&error)` and complete if it is
    /// `Some`; else fail with the error.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::<u32>::failed(StreamError::msg("gone"))
    ///     .recover(|_| Some(0))
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![0]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn recover<F>(self, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&StreamError) -> Option<Self::Out> + Clone + Send + Sync + 'static,
    {
        self.via_flow(logic_flow("recover", move || errors::Recover::<
            Self::Out,
            F,
        > {
            shape: ports(),
            f: f.clone(),
        }))
    }

    /// On an upstream failure, continue with `f(&error)` (when it gives a
    /// source), again when that fails, up to `attempts` times in all
    /// (`u64::MAX`: no limit); otherwise fail as upstream did.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::<u32>::failed(StreamError::msg("primary down"))
    ///     .recover_with_retries(1, |_| Some(Source::range(7..9)))
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![7, 8]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn recover_with_retries<F>(self, attempts: u64, f: F) -> Self::Repr<Self::Out>
    where
        F: FnMut(&StreamError) -> Option<Source<Self::Out>> + Clone + Send + Sync + 'static,
    {
        self.via_flow(recover::recover_with_retries(attempts, f))
    }
}

impl<T: FlowOps> ErrorOps for T {}
