//! Shared helpers for the Weir benchmarks (see `benches/`).
