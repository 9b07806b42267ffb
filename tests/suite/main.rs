//! Integration tests, one binary.

mod common;

mod bake_maps;
mod hierarchy;
mod levels;
mod properties;
mod scenarios;
mod tiny;
