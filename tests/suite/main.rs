//! Integration tests, one binary.

mod common;

mod bake_maps;
mod properties;
mod scenarios;
mod tiny;
