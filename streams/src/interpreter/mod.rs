//! The graph-stage interpreter.
//!
//! A materialized graph is cut into islands at async boundaries. Each
//! island is one [`Island`](island::Island): its stages' logics, the
//! connections between them (each with one typed slot, see
//! [`crate::stage::core`]), and a FIFO event queue of push / pull / complete / fail /
//! cancel signals. A task of the pool ([`task::IslandTask`]) runs each
//! island, a bounded number of events per poll, so islands share the pool
//! fairly. Islands are joined by [`boundary`] stages that move elements
//! in batches.

pub(crate) mod boundary;
mod counters;
pub(crate) mod inbox;
mod inspect;
pub(crate) mod island;
pub(crate) mod materialize;
pub(crate) mod task;

pub(crate) use materialize::{Materialized, materialize};
