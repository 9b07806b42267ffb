//! Integration tests, one binary.

mod common;

mod bake_maps;
mod scenarios;
mod tiny;
