//! Fan-in junctions over fused sources: when every input of a merge,
//! concat, interleave, or-else or zip is a batch iterator ([`Chunks`]),
//! the junction is one too (the planner's fan-in rule,
//! `crate::plan::fan_in`). Each form keeps its junction's documented
//! behaviour:
//!
//! - **merge** serves its inputs in turn, one element each (as
//!   `futures::stream::select` does), skipping an input with nothing
//!   ready; it ends when all inputs have (or, eager, when the first has);
//!   a merge preferring input 0 takes from it whenever it has elements.
//!   As the stage, it keeps each input's next element made (`Ahead`), so
//!   it sees an input end or fail when the stage would.
//! - **concat** drains its inputs one after another.
//! - **interleave** takes `segment_size` elements of each input in turn;
//!   once an input ends, the others go on (or all end, eager).
//! - **or-else** drains its primary input; the secondary is asked for
//!   nothing unless the primary ends empty, and is dropped (cancelled)
//!   once the primary has made an element.
//! - **zip** (two inputs, `N` of one type, or three to five of their own
//!   types) makes rows of one element of each input and ends with the
//!   shortest input; it asks the inputs for as many elements as all are
//!   sure to make ([`Chunks::at_least`]) and one at a time beyond that,
//!   so it makes no more elements than the stage would.
//!
//! A failure of any input in use fails the junction after the elements
//! made before it; a pending input is skipped when another can go on.
//! Each ends with its last element when its inputs are known to have
//! ended (`EndsWithLast`), as the unfused junction does, not on the next
//! request.
//!
//! [`Chunks`]: super::Chunks
//! [`Chunks::at_least`]: super::Chunks::at_least

mod ahead;
mod node;
mod or_else;
mod uniform;
mod zip;

pub(crate) use node::{FanInNode, FusedFanIn};
pub(crate) use uniform::{Uniform, UniformFanIn};
pub(crate) use zip::ZipFanIn;
