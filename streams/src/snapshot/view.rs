//! The snapshot's values: a [`StreamSnapshot`] of islands, stages and
//! connections, what they wait for, and their text and Mermaid renderings.

use std::fmt;
use std::time::Duration;

/// One running stream: the islands it runs as.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("snapshot-doc").unwrap();
/// let materializer = Materializer::new(&system);
/// // A stream that waits for ever: nothing is offered to the queue.
/// let (queue, done) = Source::<u32, _>::queue(4).unwrap()
///     .map(|x| x + 1)
///     .to_mat(Sink::ignore(), Keep::both)
///     .run(&materializer);
/// let streams = materializer.snapshot().wait_timeout(Duration::from_secs(5)).unwrap();
/// assert_eq!(streams.len(), 1);
/// // The sink pulled; the stream waits for the queue to push.
/// let (_, up, _) = streams[0].waiting().next().unwrap();
/// assert_eq!(up.name, "queue");
/// println!("{}", streams[0]);
/// queue.complete();
/// done.wait().unwrap();
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamSnapshot {
    /// The stream's number (the `<n>` of its islands' names
    /// `stream-<n>-<island>-<stage>`).
    pub stream: u64,
    /// Its running islands, in plan order (an island that has finished is
    /// left out).
    pub islands: Vec<IslandSnapshot>,
}

/// One running island: its stages, its connections and how long it has
/// waited.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IslandSnapshot {
    /// The island's number in its stream's plan.
    pub index: usize,
    /// Its name, `stream-<n>-<island>-<first stage>` (dead letters and the
    /// instrumentation hook use it too).
    pub name: String,
    /// Its stages, in plan order; a connection names them by index.
    pub stages: Vec<StageSnapshot>,
    /// Its connections, each joining an outlet of one stage to an inlet of
    /// another.
    pub connections: Vec<ConnectionSnapshot>,
    /// How long since the island last made progress: since the start of
    /// its last turn that ran an event or handled a callback or timer, on
    /// the system's clock (a busy island shows at most one turn).
    pub idle_for: Duration,
}

/// One stage of a running island.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StageSnapshot {
    /// Its name: the operator's, fused operators' joined with `.`, a name
    /// given with attributes, or a boundary half's (`boundary-in`,
    /// `boundary-out`, ...).
    pub name: String,
    /// How many inlets it has (0: a source, or the downstream half of an
    /// async boundary).
    pub inlets: u16,
    /// How many outlets it has (0: a sink, or the upstream half of an
    /// async boundary).
    pub outlets: u16,
    /// Whether it has finished (its ports are closed) while others of its
    /// island still run.
    pub finished: bool,
    /// How full its buffer is, for the stages that hand elements between
    /// islands or threads: the halves of an async boundary, and
    /// `Source::queue` (what was offered and not yet pushed). `None` for
    /// other stages.
    pub buffer: Option<BufferFill>,
    /// Its counters, when the materializer counts
    /// ([`MaterializerBuilder::stage_counters`](crate::MaterializerBuilder::stage_counters));
    /// `None` otherwise.
    pub counters: Option<StageCounters>,
}

/// What a stage has done since its island started, counted when the
/// materializer asks for it
/// ([`MaterializerBuilder::stage_counters`](crate::MaterializerBuilder::stage_counters)).
///
/// Elements are those that crossed the island's connections: operators
/// fused into one stage count as that stage, and a stage with no ports (a
/// fused source run into its sink) counts none. A wait is the time the
/// island sat idle between two turns while the stage waited: for demand
/// (an outlet not pulled, or an element not grabbed) or for an element (an
/// inlet pulled and not pushed); time spent running is not waiting.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("counters-doc").unwrap();
/// let counting = Materializer::builder(&system).stage_counters(true).build();
/// let (queue, done) = Source::<u32, _>::queue(4).unwrap()
///     .map(|x| x + 1)
///     .to_mat(Sink::ignore(), Keep::both)
///     .run(&counting);
/// let streams = counting.snapshot().wait_timeout(Duration::from_secs(5)).unwrap();
/// let stages = &streams[0].islands[0].stages;
/// assert!(stages.iter().all(|s| s.counters.is_some()));
/// println!("{}", streams[0]); // each stage: elements in and out, and its waits
/// queue.complete();
/// done.wait().unwrap();
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StageCounters {
    /// Elements pushed into the stage (over all its inlets).
    pub elements_in: u64,
    /// Elements the stage pushed (over all its outlets).
    pub elements_out: u64,
    /// How long it waited for demand from downstream.
    pub waited_for_demand: Duration,
    /// How long it waited for an element from upstream.
    pub waited_for_element: Duration,
}

impl fmt::Display for StageCounters {
    /// `3 in, 3 out, waited 5s for demand, 0ns for elements`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} in, {} out, waited {:?} for demand, {:?} for elements",
            self.elements_in, self.elements_out, self.waited_for_demand, self.waited_for_element
        )
    }
}

/// How full the buffer of an async boundary (or a `Source::queue`) is,
/// seen from one side.
///
/// The downstream half of a boundary (`async-boundary-in`, or the fused
/// sink after it) counts the elements waiting to enter its island: handed
/// over, and not passed on yet. The upstream half (`async-boundary-out`,
/// or the fused source before it) counts the places it has used and not
/// been given back: elements on their way, and those passed on whose
/// places the downstream half returns in batches (half the buffer at a
/// time). Upstream at `capacity` waits for the downstream island; a
/// downstream half at or near `capacity` is a boundary whose downstream
/// island does not take. A queue counts what was offered and not pushed.
///
/// # Examples
///
/// ```
/// use weir_streams::snapshot::BufferFill;
///
/// let fill = BufferFill { len: 16, capacity: 16 };
/// assert!(fill.is_full());
/// assert_eq!(fill.to_string(), "16/16");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferFill {
    /// Elements held.
    pub len: usize,
    /// The boundary's buffer size (the most elements between its islands).
    pub capacity: usize,
}

impl BufferFill {
    /// Whether it holds `capacity` elements (or more, which the boundary's
    /// credit never lets happen).
    pub fn is_full(&self) -> bool {
        self.len >= self.capacity
    }
}

impl fmt::Display for BufferFill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.len, self.capacity)
    }
}

/// One connection of a running island: an outlet of `from` joined to an
/// inlet of `to`, and what it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionSnapshot {
    /// The upstream stage (an index into [`IslandSnapshot::stages`]).
    pub from: usize,
    /// The downstream stage (an index into [`IslandSnapshot::stages`]).
    pub to: usize,
    /// Where the connection is in the push/pull protocol.
    pub state: ConnectionState,
}

/// Where a connection is in the push/pull protocol (Pekko's
/// `ShouldPull` / `ShouldPush` / `Closed`, with the element in flight told
/// apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionState {
    /// Downstream has not pulled: upstream waits for demand (Pekko's
    /// `ShouldPull`).
    NotPulled,
    /// Downstream pulled and waits for upstream to push (Pekko's
    /// `ShouldPush`).
    Pulled,
    /// An element was pushed and its `on_push` has not run yet: the island
    /// is busy with it.
    Pushed,
    /// An element was pushed and downstream has not grabbed it.
    NotGrabbed,
    /// Completed, failed or cancelled.
    Closed,
}

/// Which side of a connection the stream waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The upstream stage (it was pulled and has not pushed).
    Upstream,
    /// The downstream stage (it has not pulled, or not grabbed what came).
    Downstream,
}

impl ConnectionState {
    /// Which side the connection waits for, if it waits (`None` when an
    /// element is in flight or the connection is closed).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::snapshot::{ConnectionState, Side};
    ///
    /// assert_eq!(ConnectionState::Pulled.waits_for(), Some(Side::Upstream));
    /// assert_eq!(ConnectionState::NotPulled.waits_for(), Some(Side::Downstream));
    /// assert_eq!(ConnectionState::Closed.waits_for(), None);
    /// ```
    pub fn waits_for(self) -> Option<Side> {
        match self {
            Self::Pulled => Some(Side::Upstream),
            Self::NotPulled | Self::NotGrabbed => Some(Side::Downstream),
            Self::Pushed | Self::Closed => None,
        }
    }
}

impl fmt::Display for ConnectionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotPulled => "not pulled",
            Self::Pulled => "pulled",
            Self::Pushed => "pushed",
            Self::NotGrabbed => "pushed, not grabbed",
            Self::Closed => "closed",
        })
    }
}

impl IslandSnapshot {
    /// The connections that wait, each with the stage they wait for.
    pub fn waiting(&self) -> impl Iterator<Item = (&ConnectionSnapshot, &StageSnapshot)> {
        self.connections.iter().filter_map(|c| {
            let stage = match c.state.waits_for()? {
                Side::Upstream => c.from,
                Side::Downstream => c.to,
            };
            Some((c, &self.stages[stage]))
        })
    }
}

impl IslandSnapshot {
    /// The stages that hold the island back: a stage a connection waits
    /// for that does not itself wait the same way. A stage that has not
    /// pulled while its own downstream has not pulled it either only
    /// passes the back-pressure on; the stage at the end of that chain
    /// (a sink that stopped asking, a junction held by one slow branch's
    /// stage) holds the stream. Likewise upstream, for a source that does
    /// not push. Across an async boundary each island names its own: the
    /// boundary's halves pass the wait on.
    pub fn holding(&self) -> impl Iterator<Item = &StageSnapshot> {
        let waits = |stage: usize, inlet: bool, side: Side| {
            self.connections.iter().any(|c| {
                (if inlet { c.to } else { c.from }) == stage && c.state.waits_for() == Some(side)
            })
        };
        self.stages
            .iter()
            .enumerate()
            .filter_map(move |(i, stage)| {
                let holds_demand =
                    waits(i, true, Side::Downstream) && !waits(i, false, Side::Downstream);
                let holds_supply =
                    waits(i, false, Side::Upstream) && !waits(i, true, Side::Upstream);
                (holds_demand || holds_supply).then_some(stage)
            })
    }
}

impl StreamSnapshot {
    /// The stages that hold each island back (see
    /// [`IslandSnapshot::holding`]), with their island.
    pub fn holding(&self) -> impl Iterator<Item = (&IslandSnapshot, &StageSnapshot)> {
        self.islands
            .iter()
            .flat_map(|island| island.holding().map(move |stage| (island, stage)))
    }

    /// Every waiting connection of every island, with its island and the
    /// stage it waits for.
    pub fn waiting(
        &self,
    ) -> impl Iterator<Item = (&IslandSnapshot, &StageSnapshot, &ConnectionSnapshot)> {
        self.islands.iter().flat_map(|island| {
            island
                .waiting()
                .map(move |(connection, stage)| (island, stage, connection))
        })
    }

    /// The snapshot as a Mermaid flowchart: one subgraph per island, each
    /// connection labelled with its state, and the stages that hold the
    /// stream back ([`holding`](Self::holding)) marked `waiting`.
    pub fn to_mermaid(&self) -> String {
        let mut out =
            String::from("flowchart LR\n  classDef waiting stroke:#d33,stroke-width:3px\n");
        for island in &self.islands {
            let id = |stage: usize| format!("i{}s{stage}", island.index);
            out.push_str(&format!(
                "  subgraph island{}[\"{} (idle {:?})\"]\n",
                island.index,
                escape(&island.name),
                island.idle_for
            ));
            for (i, stage) in island.stages.iter().enumerate() {
                let class = if island.holding().any(|s| std::ptr::eq(s, stage)) {
                    ":::waiting"
                } else {
                    ""
                };
                let mut buffer = stage
                    .buffer
                    .map_or(String::new(), |b| format!("<br/>buffer {b}"));
                if let Some(c) = stage.counters {
                    buffer.push_str(&format!(
                        "<br/>{} in, {} out<br/>waited {:?} / {:?}",
                        c.elements_in, c.elements_out, c.waited_for_demand, c.waited_for_element
                    ));
                }
                out.push_str(&format!(
                    "    {}[\"{}{buffer}\"]{class}\n",
                    id(i),
                    escape(&stage.name)
                ));
            }
            for c in &island.connections {
                out.push_str(&format!(
                    "    {} -->|{}| {}\n",
                    id(c.from),
                    c.state,
                    id(c.to)
                ));
            }
            out.push_str("  end\n");
        }
        out
    }
}

fn escape(text: &str) -> String {
    text.replace('"', "#quot;")
}

impl fmt::Display for StreamSnapshot {
    /// One block per island: its stages, then each connection with its
    /// state and, when it waits, the stage it waits for, then the stages
    /// that hold it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "stream {}", self.stream)?;
        for island in &self.islands {
            writeln!(
                f,
                "  island {} `{}`: idle for {:?}",
                island.index, island.name, island.idle_for
            )?;
            for (i, stage) in island.stages.iter().enumerate() {
                let done = if stage.finished { ", finished" } else { "" };
                write!(
                    f,
                    "    [{i}] {} ({} in, {} out{done})",
                    stage.name, stage.inlets, stage.outlets
                )?;
                if let Some(buffer) = stage.buffer {
                    write!(f, ", buffer {buffer}")?;
                }
                if let Some(counters) = stage.counters {
                    write!(f, "; {counters}")?;
                }
                writeln!(f)?;
            }
            for c in &island.connections {
                let (up, down) = (&island.stages[c.from].name, &island.stages[c.to].name);
                write!(f, "    {up} -> {down}: {}", c.state)?;
                match c.state.waits_for() {
                    Some(Side::Upstream) => writeln!(f, ", waits for `{up}` to push")?,
                    Some(Side::Downstream) if c.state == ConnectionState::NotGrabbed => {
                        writeln!(f, ", waits for `{down}` to grab")?
                    }
                    Some(Side::Downstream) => writeln!(f, ", waits for `{down}` to pull")?,
                    None => writeln!(f)?,
                }
            }
            let holding: Vec<&str> = island.holding().map(|s| s.name.as_str()).collect();
            if !holding.is_empty() {
                writeln!(f, "    held back by: {}", holding.join(", "))?;
            }
        }
        Ok(())
    }
}
