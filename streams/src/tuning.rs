//! Every tuning number of weir-streams in one place: the per-turn budgets
//! that make a long run share its thread, the batch sizes that trade a
//! call per element for a call per batch, the ring sizes, and the caps on
//! what a user's size may allocate up front. Each says how it was measured
//! or why it has its value; a change to one is a change here, with the
//! measurement that justifies it.
//!
//! Budgets elsewhere, not yet moved: the async boundary's fused half
//! (`interpreter::boundary::FUSED_BUDGET`) and the hosted sub-graphs of
//! `flat_map_*` and substreams (`ops::flatten`, `ops::substreams`).

use std::time::Duration;

// ---- Per-turn budgets: how much one turn does before it yields ----

/// Events an island task handles per poll before it yields its worker to
/// other tasks and actors: the budget the island actor had, kept when
/// islands became tasks (not measured on its own; `profile_streams
/// boundary` is the check that a change to it does not cost).
pub(crate) const ISLAND_EVENT_BUDGET: usize = 1024;

/// Elements a fused run (a fused source into a fused consumer) moves per
/// turn, an actor message or a task's poll, so a long run shares its
/// thread: about 50 µs of simple operators, against about 1 µs to resume.
pub(crate) const FUSED_DRAIN_BUDGET: usize = 32_768;

/// Fills one pull of a fused source may try before its island goes on
/// with other work: a filter rejecting a long run of elements must not
/// hold the thread, nor keep a kill switch from being heard (a fused
/// source whose filter rejected everything hung in one `on_pull` before).
pub(crate) const FILLS_PER_TURN: usize = 64;

/// Rounds one `fill` of a fused operator chain may ask upstream for more
/// when an operator dropped elements (a filter): enough to fill most
/// batches in one call (`profile_streams fused`: 0.11 s to 0.06 s for
/// 5 x 10 M elements against returning short), few enough that a filter
/// rejecting everything still returns after a bounded number of elements.
pub(crate) const FILTER_FILL_ROUNDS: usize = 8;

/// Rounds of asking its inputs one fill of a fused fan-in (merge, zip,
/// concat, interleave) may take when they make fewer elements than asked
/// (a filter inside): the same bound, for the same reason, as
/// [`FILTER_FILL_ROUNDS`].
pub(crate) const FAN_IN_FILL_ROUNDS: usize = 8;

// ---- Batches ----

/// Elements a folding sink takes from a fused source at a time: batches
/// make one indirect call per operator per batch instead of per element
/// (range-map-filter-fold was 3.7 ns per element with a call each).
pub(crate) const FOLD_BATCH: usize = 256;

/// Output space added at a time while inflating (not measured: half the
/// 64 KiB chunks the IO sources read, so a chunk's output takes a few
/// steps, and a step is small next to what a stream carries).
#[cfg(feature = "compression")]
pub(crate) const INFLATE_STEP: usize = 32 * 1024;

/// How many chunks' worth of buffer one read-source allocation holds: the
/// chunks are split off it, so a 64 KiB chunk size allocates once per
/// 512 KiB read. The region is allocated zeroed, which `Read::read` needs;
/// once the allocator hands out freed memory again `calloc` zeroes it with
/// a memset (`weir-bench io` under perf: 5% of line framing's cycles), so
/// a region whose chunks have all been dropped is used again
/// (`io::read_source`).
pub(crate) const CHUNKS_PER_ALLOCATION: usize = 8;

// ---- The actor_ref source's inbox and its fused folding sink ----

/// Slots of the lock-free ring of an `actor_ref` source's inbox; beyond
/// it, the locked overflow (which grows with traffic). The ring is
/// allocated by the first element. An 8-slot ring halved `actor_ref` into
/// a fold (13-15 M against 25-34 M tells/s on a quiet box: a busy stage
/// gathers signals for [`ACTOR_REF_PACE`] between takes and a fast sender
/// spilled into the overflow on every pause); idle streams that never
/// carried an element stay under 4 KiB. One slot under loom, so the
/// models reach the overflow.
#[cfg(not(loom))]
pub(crate) const INBOX_RING: usize = 1024;
/// One slot under loom, so the models reach the overflow.
#[cfg(loom)]
pub(crate) const INBOX_RING: usize = 1;

/// Drains in a row that found the `actor_ref` inbox's overflow unused
/// before its storage is freed: the overflow keeps its storage while
/// bursts come (no allocation per element) and gives it back after one.
/// One under loom, so the models reach the shrink.
#[cfg(not(loom))]
pub(crate) const INBOX_CALM_DRAINS: usize = 64;
/// One under loom, so the models reach the shrink.
#[cfg(loom)]
pub(crate) const INBOX_CALM_DRAINS: usize = 1;

/// Signals the fused `actor_ref`-into-fold stage feeds per turn; the rest
/// waits for the next turn (with [`ACTOR_REF_PACE`], at most about
/// 100 µs of holding per island turn).
pub(crate) const ACTOR_REF_FOLD_BUDGET: usize = 4096;

/// A take of at least this many signals means producers are busy: the
/// fused `actor_ref`-into-fold stage holds the inbox (senders wake nobody)
/// and takes again after [`ACTOR_REF_PACE`]; a smaller take lets go at
/// once, so ping-pong latency is unchanged. Holding took `weir-bench
/// actor-ref` `no_buffer` to about 50 M tells/s (tokio 8 M in the same
/// run).
pub(crate) const ACTOR_REF_BUSY_TAKE: usize = 16;

/// How long a busy `actor_ref`-into-fold stage lets signals gather before
/// it takes again: a wake-up per burst costs a producer more than the
/// elements of the burst, and a consumer right behind the producer fights
/// it for the same cache lines.
pub(crate) const ACTOR_REF_PACE: Duration = Duration::from_micros(4);

// ---- Caps on what a size asks for up front ----

/// The most slots a buffer of a user-given size (`buffer`, `grouped`,
/// `Source::queue`, ...) reserves before anything arrives; beyond it, it
/// grows as elements come. A size is a limit, not a promise that elements
/// will come: `grouped(usize::MAX)` must not ask the allocator for
/// `usize::MAX` slots (a capacity-overflow panic), nor `grouped(1 << 40)`
/// abort the process. 1024 slots is what `Source::queue` always reserved:
/// a few KiB for small elements, so a buffer of ordinary size (the
/// default input buffer is 16) still allocates once, and a huge one pays
/// a doubling regrowth only for elements that actually arrive.
pub(crate) const UPFRONT_CAPACITY_CAP: usize = 1024;

/// The most futures one `map_async` stage keeps in flight, whatever
/// `parallelism` says. A stage cannot see how much downstream wants beyond
/// its one pull, so `parallelism` futures are started ahead of demand:
/// without a cap, `map_async(usize::MAX, ..)` over an endless upstream
/// made futures without end (half a million in 500 ms) before the first
/// result was taken. 65 536 is far beyond any concurrency a single stage
/// profits from (and a few MiB of slots), yet bounded.
pub(crate) const MAX_PARALLELISM: usize = 1 << 16;

/// The most one read of a read source asks for, whatever the chunk size:
/// a chunk size is a limit ("chunks of at most `chunk_size`"), not an
/// allocation. The buffer a read fills must exist before a byte arrives,
/// so `FileIO::from_path(p, 1 << 40)` asked for 8 TiB and aborted the
/// process, and `usize::MAX` panicked with a capacity overflow. Reads
/// beyond a few MiB gain nothing (the copy into the buffer is the cost per
/// byte); 8 MiB chunks keep a region of [`CHUNKS_PER_ALLOCATION`] of them
/// at 64 MiB.
pub(crate) const MAX_READ_SIZE: usize = 8 << 20;
