//! The core: a message's whole way (tell, mailbox, cell run, receive), the
//! context an actor gets, dispatch, time, dead letters and instrumentation,
//! and the [`runtime`] trait through which cells reach the system's
//! services. It imports only itself and the leaves (`crate::error`,
//! `crate::path`, `crate::sync`, ...), never the system or a feature; the
//! layers test (`actor/tests/layers`) holds that.

// Under loom only the mailbox state machine, the dispatcher's idle
// protocol and global queue, the wake state of awaited futures, and their
// models are built.
pub(crate) mod await_state;
pub(crate) mod dispatcher;
pub(crate) mod mailbox;

runtime_modules! {
    pub(crate) mod actor;
    pub(crate) mod actor_ref;
    pub(crate) mod bounded;
    pub(crate) mod cell;
    pub(crate) mod context;
    pub(crate) mod dead_letters;
    pub mod instrument;
    pub(crate) mod runtime;
    pub(crate) mod scheduled;
    pub(crate) mod scheduler;
    pub(crate) mod task;
}
