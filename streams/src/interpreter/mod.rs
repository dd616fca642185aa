//! The graph-stage interpreter.
//!
//! A materialized graph is cut into islands at async boundaries. Each
//! island is one [`Island`](island::Island): its stages' logics, the
//! connections between them (each with one typed slot, see
//! [`crate::stage::core`]), and a FIFO event queue of push / pull / complete / fail /
//! cancel signals. One actor ([`actor::IslandActor`]) runs each island,
//! a bounded number of events per message, so islands share the pool
//! fairly. Islands are joined by [`boundary`] stages that move elements
//! in batches.

pub(crate) mod actor;
pub(crate) mod boundary;
pub(crate) mod island;
pub(crate) mod lifecycle;
pub(crate) mod materialize;

pub(crate) use materialize::{Materialized, materialize};
