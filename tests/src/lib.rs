//! Cross-crate integration tests live in `tests/`; this library holds shared test helpers.
