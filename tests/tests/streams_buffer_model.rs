//! `buffer(n, strategy)` against a plain model of each overflow strategy: random offers and pulls through probes.
//!
//! Each probe command is one message to the island, handled to the end
//! before the next, so the stage sees offers and pulls in the order the
//! test makes them, and the model can say exactly what comes out.

use std::collections::VecDeque;

use proptest::prelude::*;
use weir_streams::Materializer;
use weir_streams::prelude::*;
use weir_streams::testkit::{TestSink, TestSource};
use weir_tests::stream_system;

#[derive(Debug, Clone, Copy)]
enum Op {
    /// Upstream offers the next element.
    Offer,
    /// Downstream asks for one more.
    Pull,
}

fn strategy() -> impl Strategy<Value = OverflowStrategy> {
    prop_oneof![
        Just(OverflowStrategy::DropHead),
        Just(OverflowStrategy::DropTail),
        Just(OverflowStrategy::DropBuffer),
        Just(OverflowStrategy::DropNew),
        Just(OverflowStrategy::Fail),
        Just(OverflowStrategy::Backpressure),
    ]
}

/// The operator as the strategies' docs describe it: downstream is served
/// from the buffer first; an element arriving to an empty buffer with
/// demand passes straight through; a full buffer applies the strategy;
/// under `Backpressure` upstream waits while the buffer is full.
struct Model {
    capacity: usize,
    strategy: OverflowStrategy,
    buffered: VecDeque<u32>,
    /// Offered and not yet taken by the stage (only under `Backpressure`).
    waiting: VecDeque<u32>,
    demand: u64,
    out: Vec<u32>,
    failed: bool,
}

impl Model {
    fn settle(&mut self) {
        while !self.failed {
            if self.demand > 0
                && let Some(x) = self.buffered.pop_front()
            {
                self.out.push(x);
                self.demand -= 1;
                continue;
            }
            let room = self.strategy != OverflowStrategy::Backpressure
                || self.buffered.len() < self.capacity;
            if !room {
                break;
            }
            let Some(x) = self.waiting.pop_front() else {
                break;
            };
            if self.buffered.is_empty() && self.demand > 0 {
                self.out.push(x);
                self.demand -= 1;
            } else if self.buffered.len() < self.capacity {
                self.buffered.push_back(x);
            } else {
                match self.strategy {
                    OverflowStrategy::DropHead => {
                        self.buffered.pop_front();
                        self.buffered.push_back(x);
                    }
                    OverflowStrategy::DropTail => {
                        self.buffered.pop_back();
                        self.buffered.push_back(x);
                    }
                    OverflowStrategy::DropBuffer => {
                        self.buffered.clear();
                        self.buffered.push_back(x);
                    }
                    OverflowStrategy::DropNew => {}
                    _ => self.failed = true,
                }
            }
        }
    }
}

/// Run `ops` through the operator and the model; compare what comes out.
fn check(
    mat: &Materializer,
    capacity: usize,
    strategy: OverflowStrategy,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let (mut up, mut down) = TestSource::probe::<u32>()
        .buffer(capacity, strategy)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(mat);
    let mut model = Model {
        capacity,
        strategy,
        buffered: VecDeque::new(),
        waiting: VecDeque::new(),
        demand: 0,
        out: Vec::new(),
        failed: false,
    };
    let mut next = 0;
    for op in ops {
        match op {
            Op::Offer => {
                up.send_next(next);
                model.waiting.push_back(next);
                next += 1;
            }
            Op::Pull => {
                down.request(1);
                model.demand += 1;
            }
        }
        model.settle();
    }
    // The end: upstream completes, downstream takes everything left.
    up.send_complete();
    down.request(u64::from(next) + 1);
    model.demand += u64::from(next) + 1;
    model.settle();
    let got = down.expect_next_n(model.out.len());
    prop_assert_eq!(&got, &model.out);
    if model.failed {
        let error = down.expect_error();
        prop_assert!(error.to_string().contains("overflow"), "{}", error);
    } else {
        down.expect_complete();
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn buffer_follows_the_model(
        capacity in 1usize..5,
        strategy in strategy(),
        ops in proptest::collection::vec(prop_oneof![3 => Just(Op::Offer), 2 => Just(Op::Pull)], 0..40),
    ) {
        let (system, mat) = stream_system("buffer-model");
        let result = check(&mat, capacity, strategy, &ops);
        weir_tests::shutdown(&system);
        result?;
    }
}
