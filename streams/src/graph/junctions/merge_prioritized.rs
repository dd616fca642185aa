//! [`MergePrioritized`]: a merge that serves waiting inputs by weight.

use super::merge::{MergeLogic, Pick};
use crate::error::ArgumentError;
use crate::stage::{GraphStage, GraphStageLogic, MatContext, UniformFanInShape};

/// A merge whose inputs have priorities (Akka's `MergePrioritized`): when
/// several inputs have an element waiting as downstream asks, each is
/// served in proportion to its priority. The choice is a smooth weighted
/// round-robin rather than Akka's random draw, so it is deterministic:
/// with priorities 1 and 3 and both inputs waiting at every ask, every
/// four elements hold one of the first input and three of the second,
/// spread out. An input alone with an element is served whatever its
/// priority, so priorities matter when downstream is the slower side.
///
/// Otherwise as [`Merge`](super::Merge): completes when every input has
/// (or, with [`eager_complete`](Self::eager_complete), when the first
/// does), fails when any input fails, cancels every input when downstream
/// cancels, and asks an input again only after its element is emitted.
///
/// # Examples
///
/// ```
/// use weir_streams::graph::{GraphBuilder, MergePrioritized};
/// use weir_streams::prelude::*;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let system = weir_actor::ActorSystem::new("merge-prioritized").unwrap();
/// let mat = Materializer::new(&system);
/// let mut b = GraphBuilder::new();
/// let merge = b.add(MergePrioritized::<char, 2>::new([1, 3])?);
/// let [low, high] = merge.ins();
/// let low_source = b.source(Source::repeat('l').take(100));
/// let high_source = b.source(Source::repeat('h').take(300));
/// b.connect(low_source, low)?;
/// b.connect(high_source, high)?;
/// let all = b.build_source(merge.out(), |_| ())?;
/// let got = all.run_with(Sink::collect(), &mat).wait().unwrap();
/// assert_eq!(got.iter().filter(|c| **c == 'h').count(), 300);
/// assert_eq!(got.len(), 400);
/// system.terminate().wait().unwrap();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MergePrioritized<T, const N: usize> {
    priorities: [u32; N],
    eager_complete: bool,
    _t: std::marker::PhantomData<fn(T)>,
}

impl<T, const N: usize> MergePrioritized<T, N> {
    /// A merge of `N` inputs with these priorities (input `i` has
    /// `priorities[i]`), completing when every input has.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] when a priority is 0.
    pub fn new(priorities: [u32; N]) -> Result<Self, ArgumentError> {
        if priorities.contains(&0) {
            return Err(ArgumentError::Zero {
                argument: "priorities",
            });
        }
        Ok(Self {
            priorities,
            eager_complete: false,
            _t: std::marker::PhantomData,
        })
    }

    /// Complete as soon as one input completes.
    pub const fn eager_complete(mut self) -> Self {
        self.eager_complete = true;
        self
    }
}

impl<T: Send + 'static, const N: usize> GraphStage for MergePrioritized<T, N> {
    type Shape = UniformFanInShape<T, N>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "merge_prioritized"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let pick = Pick::Weighted {
            weights: self.priorities,
            credit: [0; N],
        };
        (
            Box::new(MergeLogic::<T, N>::new(pick, self.eager_complete)),
            (),
        )
    }
}
