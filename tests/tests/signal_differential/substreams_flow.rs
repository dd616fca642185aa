//! The substreams' sources and flows, and the flattening stage, of the
//! model in `substreams_model.rs`.

use super::super::super::model::{Poll, World, map};
use super::super::super::script::Sig;
use super::super::{Inner, sum};
use super::{Ev, Nest};

impl Nest {
    // A substream's source and flow.

    pub(super) fn source_pull(&mut self, s: usize) {
        let sub = &mut self.subs[s];
        if let Some(x) = sub.prefix.pop_front() {
            self.inner_push(s, x);
            let sub = &self.subs[s];
            if sub.prefix.is_empty() && sub.src_ended == Some(Sig::Complete) {
                self.inner_end(s, Sig::Complete);
            }
        } else if let Some(e) = sub.src_ended.clone() {
            self.inner_end(s, e);
        } else {
            self.hops.push_back(Ev::SubPull(s));
        }
    }

    pub(super) fn source_cancel(&mut self, s: usize) {
        let sub = &mut self.subs[s];
        sub.prefix.clear();
        if sub.src_ended.is_none() && !sub.cancelled {
            self.hops.push_back(Ev::SubCancel(s));
        }
    }

    pub(super) fn src_ended(&mut self, s: usize, e: Sig) {
        // (One not taken in yet sees its end when it starts.)
        if self.subs[s].added && self.subs[s].prefix.is_empty() || e != Sig::Complete {
            self.inner_end(s, e);
        }
    }

    pub(super) fn inner_pull(&mut self, s: usize) {
        let sub = &mut self.subs[s];
        sub.sink_pulled = true;
        if sub.inner_done {
            return;
        }
        if sub.fold_end {
            sub.inner_done = true;
            let acc = sub.acc;
            self.sink_push(s, acc);
            self.hops.push_back(Ev::SinkEnd(s, Sig::Complete));
            return;
        }
        self.source_pull(s);
    }

    pub(super) fn inner_push(&mut self, s: usize, x: u64) {
        if self.subs[s].inner_done {
            return;
        }
        match self.inner {
            Inner::Id => self.sink_push(s, x),
            Inner::Map(k) => self.sink_push(s, map(k)(x)),
            Inner::Take(n) => {
                self.subs[s].count += 1;
                self.sink_push(s, x);
                if self.subs[s].count == n {
                    self.subs[s].inner_done = true;
                    self.hops.push_back(Ev::SinkEnd(s, Sig::Complete));
                    self.source_cancel(s);
                }
            }
            Inner::Fold => {
                let sub = &mut self.subs[s];
                sub.acc = sum(sub.acc, x);
                self.source_pull(s);
            }
        }
    }

    pub(super) fn inner_end(&mut self, s: usize, e: Sig) {
        let sub = &mut self.subs[s];
        if sub.inner_done || sub.end_in {
            return;
        }
        sub.end_in = true;
        if sub.ghost {
            sub.inner_done = true;
            self.hops.push_back(Ev::SinkEnd(s, e));
            return;
        }
        if self.inner == Inner::Fold && e == Sig::Complete {
            if sub.sink_pulled {
                sub.inner_done = true;
                let acc = sub.acc;
                self.sink_push(s, acc);
                self.hops.push_back(Ev::SinkEnd(s, e));
            } else {
                sub.fold_end = true;
            }
            return;
        }
        sub.inner_done = true;
        self.hops.push_back(Ev::SinkEnd(s, e));
    }

    pub(super) fn sink_push(&mut self, s: usize, x: u64) {
        self.subs[s].sink_pulled = false;
        self.hops.push_back(Ev::SinkPush(s, x));
    }

    // The flattening stage.

    pub(super) fn try_pull_in(&mut self) {
        if !self.f_in_pulled && !self.f_in_closed {
            self.f_in_pulled = true;
            self.sync.push_back(Ev::SplitterPull);
        }
    }

    pub(super) fn remove(&mut self, s: usize) {
        if std::mem::replace(&mut self.subs[s].removed, true) {
            return;
        }
        let suppressed = self.active == self.breadth;
        self.active -= 1;
        if suppressed {
            self.try_pull_in();
        }
        if self.active == 0 && self.f_in_closed {
            self.completed = true;
        }
    }

    pub(super) fn handle(&mut self, ev: Ev, w: &mut World) {
        let flat_live = !self.cancelled && self.ended.is_none() && !self.completed;
        match ev {
            Ev::SplitterPull => self.splitter_pull(),
            Ev::Added(s) if flat_live => {
                self.subs[s].added = true;
                self.f_in_pulled = false;
                self.active += 1;
                self.hops.push_back(Ev::SinkPull(s));
                if self.active < self.breadth {
                    self.try_pull_in();
                }
            }
            Ev::SplitterEnd(Sig::Complete) if flat_live => {
                self.f_in_closed = true;
                if self.active == 0 {
                    self.completed = true;
                }
            }
            Ev::SplitterEnd(e) if flat_live => self.fail(e, w),
            Ev::SplitterCancel => self.splitter_cancel(w),
            Ev::SubPull(s) => self.sub_pull(s),
            Ev::SubCancel(s) => self.sub_cancel(s, w),
            Ev::SrcPush(s, x) => self.inner_push(s, x),
            Ev::SrcEnd(s, e) => self.src_ended(s, e),
            Ev::SinkPull(s) => self.inner_pull(s),
            Ev::SinkCancel(s) => {
                self.subs[s].inner_done = true;
                self.source_cancel(s);
            }
            Ev::SinkPush(s, x) if flat_live => {
                self.subs[s].slot = Some(x);
                self.queue.push_back(s);
            }
            Ev::SinkEnd(s, Sig::Complete) if flat_live => {
                self.subs[s].sink_closed = true;
                if self.subs[s].slot.is_none() {
                    self.remove(s);
                }
            }
            Ev::SinkEnd(_, e) if flat_live => self.fail(e, w),
            Ev::Added(_) | Ev::SplitterEnd(_) | Ev::SinkPush(..) | Ev::SinkEnd(..) => {}
        }
    }

    /// Runs the events, and upstream's signals, until nothing moves.
    pub(super) fn settle(&mut self, w: &mut World) {
        loop {
            if let Some(ev) = self.sync.pop_front().or_else(|| self.hops.pop_front()) {
                self.handle(ev, w);
                continue;
            }
            if self.up_done {
                return;
            }
            if self.in_pulled {
                match self.up.pull(w) {
                    Poll::Next(x) => self.on_push(x, w),
                    Poll::End(e) => self.on_up_end(e, w),
                    Poll::Pending => return,
                }
            } else if let Some(e) = self.up.end(w) {
                self.on_up_end(e, w);
            } else {
                return;
            }
        }
    }
}
