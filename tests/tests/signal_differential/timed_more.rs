//! More time and rate operators (placeholder while the model is written).

#[cfg(test)]
mod regressions {
    use super::super::script::{Join, Op, Src, Step};

    /// A probe `or_else` an iterator, `fold`, `buffer(2)`,
    /// `initial_delay(2 ticks)`: the sink's requests stop at the delay,
    /// so the buffer keeps pulling the fold, and the fold (as Pekko's,
    /// which pulls again in `onPush`) takes each element and asks for the
    /// next. The model's buffer stopped pulling while the sink asked.
    #[test]
    fn a_fold_behind_a_buffer_and_an_initial_delay_asks_after_each_element() {
        super::super::check_all_forms(super::super::case(
            vec![Src::Probe, Src::Iter(vec![962, 510, 532, 518])],
            Some(Join::OrElse),
            vec![Op::Fold, Op::Buffer(2), Op::InitialDelay(2)],
            vec![
                Step::Push(0, 800),
                Step::Push(0, 747),
                Step::Request(3),
                Step::Request(1),
                Step::Push(0, 815),
                Step::Fail(0),
                Step::Request(3),
            ],
        ));
    }
}
