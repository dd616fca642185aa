//! Bridges between Weir and async Rust (futures, tokio). A placeholder until the interop issue lands.
