//! Context propagation (Pekko's `SourceWithContext` / `FlowWithContext`):
//! a context, such as an offset to commit or a message's ack handle,
//! travels beside each element through the operators that keep one
//! context per element.
//!
//! - [`SourceWithContext`]: a source of `(element, context)` pairs, from
//!   [`Source::as_source_with_context`](crate::Source::as_source_with_context)
//!   or [`SourceWithContext::from_tuples`].
//! - [`FlowWithContext`]: a flow of such pairs, from
//!   [`FlowWithContext::new`], [`FlowWithContext::from_tuples`] or
//!   [`Flow::as_flow_with_context`](crate::Flow::as_flow_with_context).
//! - [`ContextOps`]: the operators both have. An element an operator
//!   drops (a filter, a supervised panic) drops its context with it.

mod context_ops;
mod flow_with_context;
mod source_with_context;

pub use context_ops::ContextOps;
pub use flow_with_context::FlowWithContext;
pub use source_with_context::SourceWithContext;
