//! Features: each a layer on the core and the system that neither imports
//! (ask, adapters, function refs, piping futures, async handlers, the
//! stash, routers, backoff, timers as futures, the test probe and the
//! simulation). Features may build on one another.

pub(crate) mod adapter;
pub(crate) mod ask;
pub mod async_handler;
pub mod backoff;
pub(crate) mod function_ref;
pub mod pipe;
pub mod routing;
#[cfg(feature = "testkit")]
pub mod sim;
pub(crate) mod sleep;
pub mod stash;
#[cfg(feature = "testkit")]
pub(crate) mod test_probe;
pub(crate) mod watchers;
