//! Back-pressured streams on Weir actors. The graph-stage interpreter arrives with its own issue; this crate is a placeholder so the workspace has its final shape.
