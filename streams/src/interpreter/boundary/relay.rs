//! A boundary's downstream end read as a fused source, so that the
//! island between two boundaries (`.async_boundary().map(f).async_boundary()`)
//! runs as one loop: the next boundary's upstream half takes batches from
//! this hand-over, runs the operators between the two boundaries over
//! them as iterator adapters, and hands them on, with no port traffic per
//! element (see the relay rule in `crate::plan`).

use std::task::{Context, Waker};

use crate::error::StreamError;
use crate::fusion::{Chunks, Fill, FusedIter, IterFactory, IterNode};
use crate::handover::{Consumer, Refill, Wait};
use crate::stage::AsyncCallback;
use crate::sync::{Arc, Mutex};

/// The consumer end of a relayed boundary; it is woken through the waker
/// of the fill that found it empty (the next half's resume waker).
pub(super) type RelayEnd<T> = Consumer<T, AsyncCallback<()>, Waker>;

/// The hand-over's consumer end as a source of batches.
struct Relayed<T>(RelayEnd<T>);

impl<T: Send> Chunks<T> for Relayed<T> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        let mut left = max;
        loop {
            let batch = self.0.batch_mut();
            if !batch.is_empty() {
                let n = batch.len().min(left);
                out.extend(batch.drain(..n));
                self.0.consumed(n);
                left -= n;
                if left == 0 {
                    return Fill::More;
                }
            }
            match self.0.refill(Wait::Register(cx.waker())) {
                Refill::Ready => {}
                Refill::Empty => return Fill::Pending,
                Refill::End(Ok(())) | Refill::Done => return Fill::Exhausted,
                Refill::End(Err(error)) => return Fill::Failed(error),
            }
        }
    }

    fn cancel(&mut self, cause: &StreamError) {
        // The cause crosses back to the island before the relay.
        self.0.cancel_failed(cause.clone());
    }
}

/// `end` as the leaf of a fused source, for the next boundary's upstream
/// half (the planner adapts it with the operators in between). The
/// factory is called once, by that half's creation.
pub(super) fn leaf<T: Send + 'static>(end: RelayEnd<T>) -> Arc<dyn IterNode> {
    let end = Mutex::new(Some(end));
    let factory: IterFactory<T> = Arc::new(move || {
        let end = end.lock().take();
        Box::new(Relayed(
            end.expect("a relayed boundary feeds one upstream half"),
        ))
    });
    Arc::new(FusedIter(factory))
}
