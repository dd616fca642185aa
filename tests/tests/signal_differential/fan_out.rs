//! The model of a fan-out to two sink probes (`broadcast`, `balance`):
//! what each output sees, driven by its own requests and cancellation.
//!
//! - `broadcast` pulls upstream when every output still running has asked,
//!   and gives the element to each of them;
//! - `balance` (not waiting for all outputs) pulls upstream while an
//!   output waits and gives the element to the one that asked first; a
//!   pull stays outstanding when the output it was made for cancels (a
//!   pull cannot be taken back), and the element it brings is held for
//!   the next output that asks (nothing is lost; a completion waits
//!   behind it, a failure overtakes it);
//! - `balance` waiting for all outputs pulls upstream only once each
//!   output has asked (or cancelled), then as `balance`;
//! - `partition` (by `x % 2`; `divert_to` the same with odd elements
//!   diverted) pulls upstream while an output waits; an element for an
//!   output that has not asked is held (back-pressuring the other output)
//!   until it asks, dropped if it cancels (then the next is pulled); a
//!   completion waits behind the held element, a failure overtakes it
//!   (Pekko's `Partition`);
//! - `wire_tap` pulls upstream when the main (first) output asks and
//!   gives each element to the tap too if the tap has asked, else drops it
//!   for the tap (the tap never back-pressures); the tap cancelling is
//!   ignored (Pekko's `WireTap`);
//! - `unzip` (into `x` and `x + 1000`) as `broadcast` (Pekko's
//!   `UnzipWith`: upstream cancelled when both outputs have);
//! - an end goes to every output still running; when all have cancelled,
//!   upstream is cancelled; with eager cancel (`divert_to`, `also_to`,
//!   `Balance::eager_cancel`)
//!   when either output cancels, upstream is cancelled and the other output
//!   completed, as when `wire_tap`'s main output cancels.

use std::collections::VecDeque;

use super::model::{BoxNode, Poll, World};
use super::script::{FanOut, Sig};

pub(crate) struct Outputs {
    kind: FanOut,
    demand: [u64; 2],
    done: [bool; 2],
    /// Outputs with a pull outstanding, in the order they pulled.
    waiting: VecDeque<usize>,
    /// `balance`: upstream was pulled and has not answered yet.
    pulled: bool,
    /// `balance`: an element that came for an output that cancelled.
    held: Option<u64>,
    ended: bool,
    /// `partition`: an element for an output that has not asked.
    parked: Option<(usize, u64)>,
    /// `balance` waiting for all: the outputs that asked (or cancelled).
    asked: [bool; 2],
    /// Stopped by a cancellation (eager cancel): the other output is
    /// completed in the next `settle`.
    stop: bool,
}

impl Outputs {
    pub(crate) fn new(kind: FanOut) -> Self {
        Outputs {
            kind,
            demand: [0; 2],
            done: [false; 2],
            waiting: VecDeque::new(),
            pulled: false,
            held: None,
            ended: false,
            parked: None,
            asked: [false; 2],
            stop: false,
        }
    }

    /// Whether output `j` cancelling stops the fan-out.
    fn stops(&self, j: usize) -> bool {
        match self.kind {
            FanOut::DivertTo | FanOut::AlsoTo | FanOut::BalanceEager => true,
            FanOut::WireTap => j == 0,
            _ => false,
        }
    }

    pub(crate) fn request(&mut self, j: usize, n: u64) {
        if !self.done[j] {
            self.demand[j] += n;
        }
    }

    pub(crate) fn cancel(&mut self, j: usize, root: &mut BoxNode, w: &mut World) {
        if self.done[j] {
            return;
        }
        self.done[j] = true;
        self.demand[j] = 0;
        self.asked[j] = true;
        self.waiting.retain(|k| *k != j);
        if self.stops(j) && !self.ended {
            self.stop = true;
            root.cancel(w);
            return;
        }
        if self.done == [true, true] && !self.ended {
            self.ended = true;
            root.cancel(w);
        }
    }

    fn end(&mut self, end: &Sig, down: &mut [Vec<Sig>; 2]) {
        for (done, down) in self.done.iter_mut().zip(down) {
            if !*done {
                down.push(end.clone());
                *done = true;
            }
        }
        self.ended = true;
    }

    /// Run until nothing more happens without a new step.
    pub(crate) fn settle(&mut self, root: &mut BoxNode, w: &mut World, down: &mut [Vec<Sig>; 2]) {
        if self.stop && !self.ended {
            self.end(&Sig::Complete, down);
            return;
        }
        while !self.ended {
            // Eager pulls ripple one stage per pass.
            for _ in 0..8 {
                root.pump(w);
            }
            for j in 0..2 {
                if !self.done[j] && self.demand[j] > 0 && !self.waiting.contains(&j) {
                    self.waiting.push_back(j);
                    self.asked[j] = true;
                }
            }
            if let Some((j, x)) = self.parked {
                // Waits for its output (dropped if it cancelled); a
                // completion waits behind it, a failure does not.
                if self.done[j] {
                    self.parked = None;
                } else if self.waiting.contains(&j) {
                    self.parked = None;
                    self.waiting.retain(|k| *k != j);
                    down[j].push(Sig::Next(x));
                    self.demand[j] -= 1;
                } else {
                    if let Some(end @ Sig::Error(_)) = root.end(w) {
                        self.parked = None;
                        self.end(&end, down);
                    }
                    return;
                }
                continue;
            }
            if let Some(x) = self.held {
                // Held for the next output that asks; a completion waits
                // behind it, a failure does not.
                let Some(j) = self.waiting.pop_front() else {
                    if let Some(end @ Sig::Error(_)) = root.end(w) {
                        self.held = None;
                        self.end(&end, down);
                    }
                    return;
                };
                self.held = None;
                down[j].push(Sig::Next(x));
                self.demand[j] -= 1;
                continue;
            }
            if let Some(end) = root.end(w) {
                self.end(&end, down);
                return;
            }
            let ready = match self.kind {
                FanOut::Broadcast | FanOut::AlsoTo | FanOut::Unzip => {
                    (0..2).all(|j| self.done[j] || self.waiting.contains(&j))
                        && !self.waiting.is_empty()
                }
                FanOut::Balance | FanOut::BalanceEager | FanOut::Partition | FanOut::DivertTo => {
                    !self.waiting.is_empty() || self.pulled
                }
                FanOut::BalanceAll => {
                    self.asked == [true, true] && (!self.waiting.is_empty() || self.pulled)
                }
                FanOut::WireTap => self.waiting.contains(&0) || self.pulled,
            };
            if !ready {
                return;
            }
            let x = match root.pull(w) {
                Poll::Next(x) => x,
                Poll::End(end) => {
                    self.end(&end, down);
                    return;
                }
                Poll::Pending => {
                    self.pulled = true;
                    return;
                }
            };
            self.pulled = false;
            let to: Vec<usize> = match self.kind {
                FanOut::Broadcast | FanOut::AlsoTo | FanOut::Unzip => {
                    self.waiting.drain(..).collect()
                }
                FanOut::Partition | FanOut::DivertTo => {
                    let j = usize::try_from(x % 2).expect("0 or 1");
                    if self.done[j] {
                        // For an output that cancelled: dropped.
                        continue;
                    }
                    if !self.waiting.contains(&j) {
                        self.parked = Some((j, x));
                        continue;
                    }
                    self.waiting.retain(|k| *k != j);
                    vec![j]
                }
                FanOut::WireTap => {
                    let tap = self.waiting.contains(&1);
                    self.waiting.clear();
                    if tap { vec![0, 1] } else { vec![0] }
                }
                FanOut::Balance | FanOut::BalanceAll | FanOut::BalanceEager => {
                    match self.waiting.pop_front() {
                        Some(j) => vec![j],
                        None => {
                            self.held = Some(x);
                            continue;
                        }
                    }
                }
            };
            for j in to {
                let x = if self.kind == FanOut::Unzip && j == 1 {
                    x + 1000
                } else {
                    x
                };
                down[j].push(Sig::Next(x));
                self.demand[j] -= 1;
            }
        }
    }
}
