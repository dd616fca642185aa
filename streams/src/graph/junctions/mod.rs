//! Fan-in and fan-out junctions, one family per file.

mod balance;
mod broadcast;
mod concat;
mod interleave;
mod merge;
mod merge_prioritized;
mod merge_sorted;
mod or_else;
mod partition;
mod unzip;
mod wire_tap;
mod zip;
mod zip_latest;
mod zip_n;
mod zip_row;
mod zip_with_tuple;

pub use balance::Balance;
pub use broadcast::Broadcast;
pub use concat::Concat;
pub use interleave::Interleave;
pub use merge::{Merge, MergePreferred};
pub use merge_prioritized::MergePrioritized;
pub use merge_sorted::MergeSorted;
pub use or_else::OrElse;
pub use partition::{Partition, PartitionOutOfRange};
pub use unzip::{Unzip, UnzipWith};
pub use wire_tap::WireTap;
pub use zip::{Zip, ZipWith};
pub use zip_latest::{ZipLatest, ZipLatestWith};
pub use zip_n::{ZipN, ZipWithN};
pub use zip_with_tuple::{ZipWith3, ZipWith4, ZipWith5};
