//! The model of the substream operators (see `substreams.rs`): Pekko's
//! splitting stage (`Split`, `GroupBy`, `PrefixAndTail`), each
//! substream's flow and `FlattenMerge(breadth)` played as events, those
//! crossing into or out of a substream (Pekko's async callbacks) after
//! those within one interpreter.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::super::model::{BoxNode, Node, Poll, World};
use super::super::script::Sig;
use super::{Inner, Sub, too_many};

#[path = "substreams_flow.rs"]
mod flow;

/// The model of `op` over `up`.
pub(crate) fn node(op: Sub, up: BoxNode) -> BoxNode {
    let (inner, breadth) = match op {
        Sub::Split { inner, merge, .. } | Sub::GroupBy { inner, merge, .. } => {
            (inner, if merge { usize::MAX } else { 1 })
        }
        Sub::PrefixAndTail(_) => (Inner::Id, 1),
    };
    Box::new(Nest {
        op,
        inner,
        breadth,
        up,
        in_pulled: false,
        up_done: false,
        sync: VecDeque::new(),
        hops: VecDeque::new(),
        subs: Vec::new(),
        out_avail: false,
        out_closed: false,
        stage_done: false,
        cur: None,
        waiting_push: None,
        will_complete: false,
        after_single: None,
        keys: BTreeMap::new(),
        closed_keys: BTreeSet::new(),
        next: None,
        first_pushes: 0,
        prefix: Some(Vec::new()),
        emit_pending: false,
        f_started: false,
        f_in_pulled: false,
        f_in_closed: false,
        active: 0,
        queue: VecDeque::new(),
        ended: None,
        completed: false,
        cancelled: false,
    })
}

/// An event between the stages.
#[derive(Debug, Clone)]
enum Ev {
    /// Within the outer interpreter: the flattening stage pulls the
    /// splitting stage, which emits substream `s`, ends, or is cancelled.
    SplitterPull,
    Added(usize),
    SplitterEnd(Sig),
    SplitterCancel,
    /// Across a substream's edges: its flow pulls (cancels) its source;
    /// the splitting stage pushes into (ends) it; the flattening stage
    /// pulls (cancels) it; it pushes (ends) into the flattening stage.
    SubPull(usize),
    SubCancel(usize),
    SrcPush(usize, u64),
    SrcEnd(usize, Sig),
    SinkPull(usize),
    SinkCancel(usize),
    SinkPush(usize, u64),
    SinkEnd(usize, Sig),
}

#[derive(Default)]
struct SubS {
    /// `split_when` / `group_by`: the element it opened with, not pushed.
    first: Option<u64>,
    /// Its source (the splitting stage's outlet) was pulled, not pushed.
    avail: bool,
    /// Its flow cancelled its source.
    cancelled: bool,
    /// Its source was ended by the splitting stage (or is a ready one).
    src_ended: Option<Sig>,
    /// Ready elements before the outlet: `split_after`'s single element,
    /// `prefix_and_tail`'s prefix (then the tail).
    prefix: VecDeque<u64>,
    /// The end went into its flow.
    end_in: bool,
    /// The flow: elements taken, the fold's sum, a fold's end waiting
    /// for a pull, done.
    count: u64,
    acc: u64,
    fold_end: bool,
    inner_done: bool,
    sink_pulled: bool,
    /// What the flattening stage holds of it; its end reached it.
    slot: Option<u64>,
    sink_closed: bool,
    /// The flattening stage took it in; it left.
    added: bool,
    /// Elements the splitting stage pushed into it; it vanishes (see
    /// `on_up_end`).
    pushed: u64,
    ghost: bool,
    removed: bool,
}

struct Nest {
    op: Sub,
    inner: Inner,
    breadth: usize,
    up: BoxNode,
    /// The splitting stage pulled upstream; upstream ended or cancelled.
    in_pulled: bool,
    up_done: bool,
    sync: VecDeque<Ev>,
    hops: VecDeque<Ev>,
    subs: Vec<SubS>,
    /// The splitting stage's output is pulled; cancelled.
    out_avail: bool,
    out_closed: bool,
    stage_done: bool,
    /// `split_*`, `prefix_and_tail`: the current substream (the tail).
    cur: Option<usize>,
    /// A substream made, emitted when pulled.
    waiting_push: Option<usize>,
    /// `split_when`: completes once its first element is pushed.
    will_complete: bool,
    /// `split_after`: the empty substream to emit after a waiting single
    /// one (see `on_push`).
    after_single: Option<usize>,
    /// `group_by`: open substreams by key, closed keys, an element held
    /// for a substream that has not asked, first elements not pushed.
    keys: BTreeMap<u64, usize>,
    closed_keys: BTreeSet<u64>,
    next: Option<(u64, u64)>,
    first_pushes: usize,
    /// `prefix_and_tail`: the prefix so far (`None` once emitted); the
    /// pair waits for a pull (upstream ended first).
    prefix: Option<Vec<u64>>,
    emit_pending: bool,
    /// The flattening stage.
    f_started: bool,
    f_in_pulled: bool,
    f_in_closed: bool,
    active: usize,
    queue: VecDeque<usize>,
    ended: Option<Sig>,
    completed: bool,
    cancelled: bool,
}

impl Nest {
    fn new_sub(&mut self, first: Option<u64>) -> usize {
        self.subs.push(SubS {
            first,
            ..SubS::default()
        });
        self.subs.len() - 1
    }

    fn pull_up(&mut self) {
        if !self.up_done && !self.stage_done {
            self.in_pulled = true;
        }
    }

    fn cancel_stage(&mut self, w: &mut World) {
        self.stage_done = true;
        self.in_pulled = false;
        if !self.up_done {
            self.up_done = true;
            self.up.cancel(w);
        }
    }

    /// The stream fails at once (the flattening stage with it).
    fn fail(&mut self, e: Sig, w: &mut World) {
        if self.ended.is_none() && !self.completed && !self.cancelled {
            self.ended = Some(e);
        }
        self.cancel_stage(w);
        self.sync.clear();
        self.hops.clear();
    }

    fn hand_over(&mut self, s: usize) {
        if self.out_avail {
            self.out_avail = false;
            self.sync.push_back(Ev::Added(s));
        } else {
            self.waiting_push = Some(s);
        }
    }

    fn src_push(&mut self, s: usize, x: u64) {
        self.subs[s].avail = false;
        self.subs[s].pushed += 1;
        self.hops.push_back(Ev::SrcPush(s, x));
    }

    fn src_end(&mut self, s: usize, e: Sig) {
        if self.subs[s].src_ended.is_none() {
            self.subs[s].src_ended = Some(e.clone());
            self.hops.push_back(Ev::SrcEnd(s, e));
        }
    }

    fn complete_stage(&mut self) {
        if !self.stage_done {
            self.stage_done = true;
            self.in_pulled = false;
            self.sync.push_back(Ev::SplitterEnd(Sig::Complete));
        }
    }

    /// `group_by`: completes every open substream, and itself, once no
    /// element waits for a substream.
    fn try_complete_all(&mut self) {
        if self.keys.is_empty() || (self.next.is_none() && self.first_pushes == 0) {
            for s in std::mem::take(&mut self.keys).into_values() {
                self.src_end(s, Sig::Complete);
            }
            self.complete_stage();
        }
    }

    fn try_cancel(&mut self, w: &mut World) {
        if self.keys.is_empty() || (self.keys.len() == 1 && self.waiting_push.is_some()) {
            self.cancel_stage(w);
        }
    }

    fn gb_need_pull(&self) -> bool {
        !self.in_pulled && !self.up_done && self.next.is_none() && self.waiting_push.is_none()
    }

    fn gb_close(&mut self, s: usize) {
        self.src_end(s, Sig::Complete);
        if let Some(k) = self.keys.iter().find(|(_, v)| **v == s).map(|(k, _)| *k) {
            self.keys.remove(&k);
            self.closed_keys.insert(k);
        }
    }

    fn emit_prefix(&mut self, tail_ended: bool) {
        let prefix = self.prefix.take().unwrap_or_default();
        let s = self.new_sub(None);
        self.subs[s].prefix = prefix.into();
        if tail_ended {
            self.subs[s].src_ended = Some(Sig::Complete);
            self.stage_done = true;
        }
        self.cur = Some(s);
        self.out_avail = false;
        self.sync.push_back(Ev::Added(s));
        // The pair's output completes; the stage stays for the tail.
        self.sync.push_back(Ev::SplitterEnd(Sig::Complete));
    }

    // The splitting stage.

    fn splitter_pull(&mut self) {
        if self.stage_done || self.out_closed {
            return;
        }
        self.out_avail = true;
        if let Some(s) = self.waiting_push.take() {
            self.out_avail = false;
            self.sync.push_back(Ev::Added(s));
            if let Some(next) = self.after_single.take() {
                if self.will_complete {
                    self.src_end(next, Sig::Complete);
                    self.complete_stage();
                } else {
                    self.waiting_push = Some(next);
                }
            }
            return;
        }
        match self.op {
            Sub::Split { .. } if self.cur.is_none() => self.pull_up(),
            Sub::Split { .. } => {}
            Sub::GroupBy { .. } => match self.next {
                Some((k, x)) => {
                    let s = self.keys[&k];
                    if self.subs[s].avail {
                        self.next = None;
                        self.src_push(s, x);
                    }
                }
                None => self.pull_up(),
            },
            Sub::PrefixAndTail(_) if self.emit_pending => self.emit_prefix(true),
            Sub::PrefixAndTail(0) => self.emit_prefix(false),
            Sub::PrefixAndTail(_) => self.pull_up(),
        }
    }

    fn on_push(&mut self, x: u64, w: &mut World) {
        self.in_pulled = false;
        match self.op {
            Sub::Split { after, m, .. } => {
                let p = x.is_multiple_of(m);
                match self.cur {
                    // Downstream cancelled: the stage stops at the next
                    // substream it would open.
                    None if self.out_closed => self.cancel_stage(w),
                    None if after && p => {
                        // A substream of this element alone, then the
                        // next (empty) one, emitted when pulled. (Pekko
                        // pushes the single one whether pulled or not,
                        // failing when not, after a split with
                        // `concat_substreams`: here it waits for the pull.)
                        let s = self.new_sub(None);
                        self.subs[s].prefix = VecDeque::from([x]);
                        self.subs[s].src_ended = Some(Sig::Complete);
                        let next = self.new_sub(None);
                        self.cur = Some(next);
                        if self.out_avail {
                            self.out_avail = false;
                            self.sync.push_back(Ev::Added(s));
                            self.hand_over(next);
                        } else {
                            self.waiting_push = Some(s);
                            self.after_single = Some(next);
                        }
                    }
                    None => {
                        let s = self.new_sub(Some(x));
                        self.cur = Some(s);
                        self.hand_over(s);
                    }
                    Some(c) if p && after => {
                        if !self.subs[c].cancelled {
                            self.src_push(c, x);
                            self.src_end(c, Sig::Complete);
                        }
                        self.cur = None;
                        self.pull_up();
                    }
                    Some(c) if p => {
                        if !self.subs[c].cancelled {
                            self.src_end(c, Sig::Complete);
                        }
                        if self.out_closed {
                            self.cancel_stage(w);
                            return;
                        }
                        let s = self.new_sub(Some(x));
                        self.cur = Some(s);
                        self.hand_over(s);
                    }
                    Some(c) if self.subs[c].cancelled => self.pull_up(),
                    Some(c) => self.src_push(c, x),
                }
            }
            Sub::GroupBy { m, max, .. } => {
                let k = x % m;
                if let Some(&s) = self.keys.get(&k) {
                    if self.subs[s].avail {
                        self.src_push(s, x);
                    } else {
                        self.next = Some((k, x));
                    }
                } else if self.closed_keys.contains(&k) {
                    self.pull_up();
                } else if self.keys.len() + self.closed_keys.len() == max {
                    self.fail(too_many(max), w);
                } else {
                    let s = self.new_sub(Some(x));
                    self.keys.insert(k, s);
                    self.first_pushes += 1;
                    self.hand_over(s);
                }
            }
            Sub::PrefixAndTail(n) => match &mut self.prefix {
                Some(prefix) => {
                    prefix.push(x);
                    if prefix.len() == n {
                        self.emit_prefix(false);
                    } else {
                        self.pull_up();
                    }
                }
                None => {
                    let t = self.cur.expect("the tail");
                    self.src_push(t, x);
                }
            },
        }
    }

    fn on_up_end(&mut self, e: Sig, w: &mut World) {
        self.up_done = true;
        self.in_pulled = false;
        if e != Sig::Complete {
            self.fail(e, w);
            return;
        }
        match self.op {
            Sub::Split { after, .. } => match self.cur {
                Some(c) if self.subs[c].first.is_some() || self.after_single.is_some() => {
                    self.will_complete = true;
                }
                // Pekko's `split_after` opens the next substream right
                // after a split element that opened none; if upstream
                // ends there it completes empty, a substream a `fold`
                // shows (as its zero). Weir opens none: not modelled,
                // that substream vanishes.
                Some(c) if after && self.subs[c].pushed == 0 => {
                    self.subs[c].ghost = true;
                    self.src_end(c, Sig::Complete);
                    self.complete_stage();
                }
                Some(c) => {
                    self.src_end(c, Sig::Complete);
                    self.complete_stage();
                }
                None => self.complete_stage(),
            },
            Sub::GroupBy { .. } => self.try_complete_all(),
            Sub::PrefixAndTail(_) => match self.cur {
                None if self.out_avail => self.emit_prefix(true),
                None => self.emit_pending = true,
                Some(t) => {
                    self.src_end(t, Sig::Complete);
                    self.stage_done = true;
                }
            },
        }
    }

    fn sub_pull(&mut self, s: usize) {
        if self.stage_done || self.subs[s].src_ended.is_some() || self.subs[s].cancelled {
            return;
        }
        self.subs[s].avail = true;
        match self.op {
            Sub::Split { .. } => {
                if let Some(x) = self.subs[s].first.take() {
                    self.src_push(s, x);
                    if self.will_complete {
                        self.src_end(s, Sig::Complete);
                        self.complete_stage();
                    }
                } else {
                    self.pull_up();
                }
            }
            Sub::GroupBy { .. } => {
                let mine = self
                    .next
                    .is_some_and(|(k, _)| self.keys.get(&k) == Some(&s));
                if let Some(x) = self.subs[s].first.take() {
                    self.first_pushes -= 1;
                    self.src_push(s, x);
                } else if mine {
                    let (_, x) = self.next.take().expect("held");
                    self.src_push(s, x);
                } else if self.gb_need_pull() {
                    self.pull_up();
                }
                let mine = self
                    .next
                    .is_some_and(|(k, _)| self.keys.get(&k) == Some(&s));
                if self.up_done && !mine {
                    self.gb_close(s);
                    self.try_complete_all();
                }
            }
            Sub::PrefixAndTail(_) => self.pull_up(),
        }
    }

    fn sub_cancel(&mut self, s: usize, w: &mut World) {
        if self.stage_done || self.subs[s].src_ended.is_some() {
            return;
        }
        self.subs[s].cancelled = true;
        self.subs[s].avail = false;
        match self.op {
            Sub::Split { .. } => {
                if self.up_done {
                    self.cancel_stage(w);
                } else if !self.in_pulled {
                    // Drained up to the next split.
                    self.pull_up();
                }
            }
            Sub::GroupBy { .. } => {
                if self
                    .next
                    .is_some_and(|(k, _)| self.keys.get(&k) == Some(&s))
                {
                    self.next = None;
                }
                if self.subs[s].first.take().is_some() {
                    self.first_pushes -= 1;
                }
                self.gb_close(s);
                if self.out_closed {
                    self.try_cancel(w);
                }
                if self.up_done {
                    self.try_complete_all();
                } else if self.gb_need_pull() {
                    self.pull_up();
                }
            }
            Sub::PrefixAndTail(_) => self.cancel_stage(w),
        }
    }

    fn splitter_cancel(&mut self, w: &mut World) {
        self.out_closed = true;
        if self.stage_done {
            return;
        }
        match self.op {
            Sub::Split { .. } => {
                let c = self.cur;
                if c.is_none_or(|c| self.subs[c].cancelled) || self.waiting_push.is_some() {
                    self.cancel_stage(w);
                }
            }
            Sub::GroupBy { .. } => self.try_cancel(w),
            Sub::PrefixAndTail(_) if self.prefix.is_some() => self.cancel_stage(w),
            Sub::PrefixAndTail(_) => {}
        }
    }
}

impl Node for Nest {
    fn pull(&mut self, w: &mut World) -> Poll {
        self.settle(w);
        if !self.f_started {
            self.f_started = true;
            self.try_pull_in();
            self.settle(w);
        }
        if let Some(e) = &self.ended {
            return Poll::End(e.clone());
        }
        if let Some(s) = self.queue.pop_front() {
            let x = self.subs[s].slot.take().expect("queued with an element");
            if self.subs[s].sink_closed {
                self.remove(s);
            } else {
                self.hops.push_back(Ev::SinkPull(s));
            }
            self.settle(w);
            return Poll::Next(x);
        }
        if self.completed {
            return Poll::End(Sig::Complete);
        }
        Poll::Pending
    }

    fn end(&mut self, w: &mut World) -> Option<Sig> {
        self.settle(w);
        if let Some(e) = &self.ended {
            return Some(e.clone());
        }
        (self.completed && self.queue.is_empty()).then_some(Sig::Complete)
    }

    fn pump(&mut self, w: &mut World) {
        self.up.pump(w);
        self.settle(w);
    }

    fn cancel(&mut self, w: &mut World) {
        if self.cancelled || self.ended.is_some() {
            return;
        }
        self.cancelled = true;
        self.queue.clear();
        self.sync.push_back(Ev::SplitterCancel);
        for s in 0..self.subs.len() {
            if !self.subs[s].removed {
                self.hops.push_back(Ev::SinkCancel(s));
            }
        }
        self.settle(w);
    }
}
