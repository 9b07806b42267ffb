//! Integration tests, one binary.

mod common;

mod bake_maps;
mod batch;
#[cfg(feature = "cli")]
mod cli;
mod edits;
mod exact;
mod follow;
mod group;
mod hierarchy;
mod hostile;
mod levels;
mod properties;
mod raycast;
mod scenarios;
mod schedule;
mod sizes;
mod tiny;
